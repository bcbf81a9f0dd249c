/* kbd/ptx/tma.h - asynchronous bulk copies (GPU twin of cpu/tma.h).
 *
 * cp.async.bulk runs on the TMA unit: the issuing thread hands over a descriptor and goes on; the data
 * lands in shared memory through the async proxy, and the copy's completion performs complete-tx of its
 * size on the mbarrier (.release at cluster scope), which is how consumers learn it has landed.
 */
#ifndef KBD_PTX_TMA_H
#define KBD_PTX_TMA_H

#include "../config.h"
#include "../tensormap.h"
#include "mbar.h"

#if KBD_MODE_CUDA

/* cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar];
 *     PTX ISA 8.6, sm_90 (the .shared::cta destination; .shared::cluster since ISA 8.0). size, dst and src
 *     multiples of 16. */
KBD_DEV void kbd_hw_bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   kbd_ptx_smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(kbd_ptx_smem_u32(bar))
               : "memory");
}

/* cp.async.bulk.tensor.{1..5}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [map, {c}], [mbar];
 *     PTX ISA 8.0, sm_90. The .shared::cluster destination with this CTA's shared::cta address is this CTA's
 *     shared memory (the .shared::cta form needs PTX ISA 8.6; both assemble on sm_90a/sm_100a: ptx-reference
 *     §2.1). The map operand is the generic address of the __grid_constant__ parameter, read through the
 *     tensormap proxy. rank is a constant at every kbd call site, so the switch folds to one instruction. */
KBD_DEV void kbd_hw_tma_load(void *dst, uint32_t line_bytes, uint32_t lines, int swizzle, const kbd_tensor_map *map,
                             uint64_t *bar, int rank, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4,
                             KBD_SITE_PARAMS) {
  (void)line_bytes, (void)lines, (void)swizzle, KBD_SITE_UNUSED;
  const uint32_t d = kbd_ptx_smem_u32(dst), b = kbd_ptx_smem_u32(bar);
  switch (rank) {
  case 1:
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3}], "
                 "[%2];" ::"r"(d),
                 "l"(map), "r"(b), "r"(c0)
                 : "memory");
    break;
  case 2:
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, "
                 "%4}], [%2];" ::"r"(d),
                 "l"(map), "r"(b), "r"(c0), "r"(c1)
                 : "memory");
    break;
  case 3:
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, "
                 "%4, %5}], [%2];" ::"r"(d),
                 "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
    break;
  case 4:
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, "
                 "%4, %5, %6}], [%2];" ::"r"(d),
                 "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
    break;
  default:
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, "
                 "%4, %5, %6, %7}], [%2];" ::"r"(d),
                 "l"(map), "r"(b), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
    break;
  }
}

/* The store and reduction forms differ only in the opcode text: one macro per rank spells them. */
#define KBD__TMA_ST(op, dims, coords, ...)                                                                             \
  asm volatile(op "." dims ".global.shared::cta" KBD__TMA_RED_TXT ".tile.bulk_group [%0, " coords                      \
                  "], [%1];" ::"l"(map),                                                                               \
               "r"(s), __VA_ARGS__                                                                                     \
               : "memory")

/* cp.async.bulk.tensor.{1..5}d.global.shared::cta.tile.bulk_group [map, {c}], [src];         PTX ISA 8.0, sm_90
 * cp.reduce.async.bulk.tensor.{1..5}d.global.shared::cta.{add,min,max}.tile.bulk_group ...;  PTX ISA 8.0, sm_90
 * op: 0 store, 1 add, 2 min, 3 max (the element type is the map's). */
#define KBD__TMA_STORE_RANKS(opc)                                                                                      \
  switch (rank) {                                                                                                      \
  case 1: KBD__TMA_ST(opc, "1d", "{%2}", "r"(c0)); break;                                                              \
  case 2: KBD__TMA_ST(opc, "2d", "{%2, %3}", "r"(c0), "r"(c1)); break;                                                 \
  case 3: KBD__TMA_ST(opc, "3d", "{%2, %3, %4}", "r"(c0), "r"(c1), "r"(c2)); break;                                    \
  case 4: KBD__TMA_ST(opc, "4d", "{%2, %3, %4, %5}", "r"(c0), "r"(c1), "r"(c2), "r"(c3)); break;                       \
  default: KBD__TMA_ST(opc, "5d", "{%2, %3, %4, %5, %6}", "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)); break;         \
  }
KBD_DEV void kbd_hw_tma_store(const void *src, uint32_t line_bytes, uint32_t lines, int swizzle,
                              const kbd_tensor_map *map, int op, int rank, int32_t c0, int32_t c1, int32_t c2,
                              int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  (void)line_bytes, (void)lines, (void)swizzle, KBD_SITE_UNUSED;
  const uint32_t s = kbd_ptx_smem_u32(src);
  if (op == 0) {
#define KBD__TMA_RED_TXT ""
    KBD__TMA_STORE_RANKS("cp.async.bulk.tensor")
#undef KBD__TMA_RED_TXT
  } else if (op == 1) {
#define KBD__TMA_RED_TXT ".add"
    KBD__TMA_STORE_RANKS("cp.reduce.async.bulk.tensor")
#undef KBD__TMA_RED_TXT
  } else if (op == 2) {
#define KBD__TMA_RED_TXT ".min"
    KBD__TMA_STORE_RANKS("cp.reduce.async.bulk.tensor")
#undef KBD__TMA_RED_TXT
  } else {
#define KBD__TMA_RED_TXT ".max"
    KBD__TMA_STORE_RANKS("cp.reduce.async.bulk.tensor")
#undef KBD__TMA_RED_TXT
  }
}

/* cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size;     PTX ISA 8.0, sm_90 */
KBD_DEV void kbd_hw_bulk_store(void *dst, const void *src, uint32_t bytes, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(kbd_ptx_smem_u32(src)),
               "r"(bytes)
               : "memory");
}

/* cp.async.bulk.commit_group;     PTX ISA 8.0, sm_90 */
KBD_DEV void kbd_hw_bulk_commit(KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* cp.async.bulk.wait_group[.read] N;     PTX ISA 8.0, sm_90. N must be an immediate: the public macro only
 * passes constants 0..7 (a compile-time rule), so the switch folds to the one instruction. */
#define KBD__BULK_WAIT(nn)                                                                                             \
  case nn:                                                                                                             \
    if (read)                                                                                                          \
      asm volatile("cp.async.bulk.wait_group.read " #nn ";" ::: "memory");                                             \
    else                                                                                                               \
      asm volatile("cp.async.bulk.wait_group " #nn ";" ::: "memory");                                                  \
    break;
KBD_DEV void kbd_hw_bulk_wait(int n, int read, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  switch (n) {
    KBD__BULK_WAIT(0)
    KBD__BULK_WAIT(1)
    KBD__BULK_WAIT(2)
    KBD__BULK_WAIT(3)
    KBD__BULK_WAIT(4)
    KBD__BULK_WAIT(5)
    KBD__BULK_WAIT(6)
  default: KBD__BULK_WAIT(7)
  }
}
#undef KBD__BULK_WAIT

/* prefetch.tensormap [map];     PTX ISA 8.0, sm_90 - brings the descriptor into the TMA unit's cache. */
KBD_DEV void kbd_hw_tma_prefetch_map(const kbd_tensor_map *map, KBD_SITE_PARAMS) {
  KBD_SITE_UNUSED;
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

/* cp.async.bulk.prefetch.tensor.{1..5}d.L2.global.tile [map, {c}];     PTX ISA 8.0, sm_90 */
KBD_DEV void kbd_hw_tma_prefetch(uint32_t line_bytes, uint32_t lines, int swizzle, const kbd_tensor_map *map, int rank,
                                 int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4, KBD_SITE_PARAMS) {
  (void)line_bytes, (void)lines, (void)swizzle, KBD_SITE_UNUSED;
  switch (rank) {
  case 1:
    asm volatile("cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%0, {%1}];" ::"l"(map), "r"(c0) : "memory");
    break;
  case 2:
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map), "r"(c0), "r"(c1)
                 : "memory");
    break;
  case 3:
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(map), "r"(c0), "r"(c1),
                 "r"(c2)
                 : "memory");
    break;
  case 4:
    asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];" ::"l"(map), "r"(c0), "r"(c1),
                 "r"(c2), "r"(c3)
                 : "memory");
    break;
  default:
    asm volatile("cp.async.bulk.prefetch.tensor.5d.L2.global.tile [%0, {%1, %2, %3, %4, %5}];" ::"l"(map), "r"(c0),
                 "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
    break;
  }
}

#endif /* KBD_MODE_CUDA */
#endif /* KBD_PTX_TMA_H */
