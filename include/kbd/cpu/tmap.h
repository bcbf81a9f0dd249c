/* kbd/cpu/tmap.h - tensor-map encoding on the CPU machine (twin of ptx/tmap.h).
 *
 * kbd_tensor_map_encode() has already validated the description with the rules the driver applies
 * (kbd_tensor_map_validate, kbd/tensormap.h), so the CPU build accepts and rejects exactly what the GPU build
 * does. What the GPU keeps as the driver's opaque 128 bytes, the CPU keeps as the description itself: the
 * TMA emulation reads the dims, strides, box, swizzle and OOB fill from it. Entries past the rank are zeroed,
 * so two maps of the same tensor compare equal bytewise whatever the caller left there.
 */
#ifndef KBD_CPU_TMAP_H
#define KBD_CPU_TMAP_H

#include "../tensormap.h"

#if KBD_MODE_CPU

static inline kbd_status kbd_hw_tensor_map_encode(kbd_tensor_map *out, const kbd_tensor_map_desc *d, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  kbd_tensor_map m;
  memset(&m, 0, sizeof m);
  m.desc.dtype = d->dtype;
  m.desc.rank = d->rank;
  m.desc.global_address = d->global_address;
  for (unsigned i = 0; i < d->rank; i++) {
    m.desc.global_dims[i] = d->global_dims[i];
    m.desc.box_dims[i] = d->box_dims[i];
    m.desc.element_strides[i] = d->element_strides[i];
    if (i + 1 < d->rank) m.desc.global_strides[i] = d->global_strides[i];
  }
  m.desc.interleave = d->interleave;
  m.desc.swizzle = d->swizzle;
  m.desc.l2_promotion = d->l2_promotion;
  m.desc.oob_fill = d->oob_fill;
  m.encoded = KBD_TENSOR_MAP_ENCODED;
  *out = m;
  return kbd_status_ok();
}

#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_TMAP_H */
