/* kbd/ptx/smatrix.h - ldmatrix / stmatrix and sized ld/st.shared for kbd/stile_move.h (GPU twin of
 * cpu/smatrix.h). d[lane][m]: register m of each held lane; row[lane]: the row address that lane supplies;
 * at[lane]: its shared-tile coordinates and cont_col: rows run along shared-tile columns (both for the CPU
 * machine's reports only). All threads of the warp execute the matrix instructions (.sync.aligned). */
#ifndef KBD_PTX_SMATRIX_H
#define KBD_PTX_SMATRIX_H

#include <string.h>

#include "../config.h"
#include "../layout.h"

#if KBD_MODE_CUDA
/* ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16 {d...}, [a];     PTX ISA 6.5, sm_75 */
KBD_DEV void kbd_hw_ldmatrix(uint32_t (*d)[4], char *const *row, const kbd_coord *at, int nmat, int tr, int cont_col,
                             const char *what, KBD_SITE_PARAMS) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(row[0]);
  uint32_t *r = d[0];
  (void)at, (void)cont_col, (void)what, KBD_SITE_UNUSED;
  if (nmat == 4) {
    if (tr)
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                   : "r"(a)
                   : "memory");
    else
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                   : "r"(a)
                   : "memory");
  } else if (nmat == 2) {
    if (tr)
      asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                   : "=r"(r[0]), "=r"(r[1])
                   : "r"(a)
                   : "memory");
    else
      asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                   : "=r"(r[0]), "=r"(r[1])
                   : "r"(a)
                   : "memory");
  } else {
    if (tr)
      asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a) : "memory");
    else
      asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a) : "memory");
  }
}

/* stmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16 [a], {d...};     PTX ISA 7.8, sm_90 */
KBD_DEV void kbd_hw_stmatrix(uint32_t (*d)[4], char *const *row, const kbd_coord *at, int nmat, int tr, int cont_col,
                             const char *what, KBD_SITE_PARAMS) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(row[0]);
  const uint32_t *r = d[0];
  (void)at, (void)cont_col, (void)what, KBD_SITE_UNUSED;
  if (nmat == 4) {
    if (tr)
      asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(r[0]),
                   "r"(r[1]), "r"(r[2]), "r"(r[3])
                   : "memory");
    else
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(r[0]), "r"(r[1]),
                   "r"(r[2]), "r"(r[3])
                   : "memory");
  } else if (nmat == 2) {
    if (tr)
      asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(a), "r"(r[0]), "r"(r[1])
                   : "memory");
    else
      asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(a), "r"(r[0]), "r"(r[1])
                   : "memory");
  } else {
    if (tr)
      asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(a), "r"(r[0]) : "memory");
    else
      asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(a), "r"(r[0]) : "memory");
  }
}

/* One aligned run of 1..16 bytes: ld.shared / st.shared of that width on the 32-bit shared-window address
 * (explicit .shared: a generic access would cost the address-space check of a generic ld/st). The register
 * side goes through memcpy so that nvcc keeps the fragment in registers. */
KBD_DEV void kbd_hw_smem_copy(char *mem, void *frag, int bytes, int store) {
  const uint32_t a = (uint32_t)__cvta_generic_to_shared(mem);
  if (bytes == 16) {
    uint4 x;
    if (store) {
      memcpy(&x, frag, 16);
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(x.x), "r"(x.y), "r"(x.z), "r"(x.w)
                   : "memory");
    } else {
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w)
                   : "r"(a)
                   : "memory");
      memcpy(frag, &x, 16);
    }
  } else if (bytes == 8) {
    uint2 x;
    if (store) {
      memcpy(&x, frag, 8);
      asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(a), "r"(x.x), "r"(x.y) : "memory");
    } else {
      asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(x.x), "=r"(x.y) : "r"(a) : "memory");
      memcpy(frag, &x, 8);
    }
  } else if (bytes == 4) {
    uint32_t x;
    if (store) {
      memcpy(&x, frag, 4);
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(x) : "memory");
    } else {
      asm volatile("ld.shared.b32 %0, [%1];" : "=r"(x) : "r"(a) : "memory");
      memcpy(frag, &x, 4);
    }
  } else if (bytes == 2) {
    unsigned short x;
    if (store) {
      memcpy(&x, frag, 2);
      asm volatile("st.shared.b16 [%0], %1;" ::"r"(a), "h"(x) : "memory");
    } else {
      asm volatile("ld.shared.b16 %0, [%1];" : "=h"(x) : "r"(a) : "memory");
      memcpy(frag, &x, 2);
    }
  } else {
    /* PTX has no 8-bit registers: .u8 moves the low byte of a 16-bit one */
    unsigned short x = 0;
    if (store) {
      memcpy(&x, frag, 1);
      asm volatile("st.shared.u8 [%0], %1;" ::"r"(a), "h"(x) : "memory");
    } else {
      asm volatile("ld.shared.u8 %0, [%1];" : "=h"(x) : "r"(a) : "memory");
      memcpy(frag, &x, 1);
    }
  }
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_SMATRIX_H */
