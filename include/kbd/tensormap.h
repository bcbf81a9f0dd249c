/* kbd/tensormap.h - host-side tensor maps: the description of a 1-5D global tensor and of the box a TMA
 * copy moves (cuTensorMapEncodeTiled's parameters), its validation, and its encoding.
 *
 *   kbd_tensor_map_desc d = kbd_tensor_map_desc_2d(KBD_TMAP_DT_BF16, ptr, rows, cols, cols * 2, 64, 64,
 *                                                  KBD_TMAP_SWIZZLE_128B);
 *   kbd_tensor_map map;                          // 128-byte aligned; a member of the kernel's params
 *   KBD_CHECK(kbd_tensor_map_encode(&map, &d));  // validates, then encodes (GPU) or stores (CPU)
 *
 * The driver answers every bad descriptor with CUDA_ERROR_INVALID_VALUE and nothing more, so every rule
 * that cuda.h (CUDA 13.0) documents for cuTensorMapEncodeTiled is checked here first, in a fixed order,
 * by ONE pure function, kbd_tensor_map_validate(), used by both builds: the CPU build rejects exactly what
 * the driver would, with a message naming the rule, the field and its value. The rule table with every
 * message is in docs/tensor-maps.md; the reasons in docs/design/tensor-maps.md.
 *
 * On the GPU, kbd_tensor_map is the driver's 128-byte CUtensorMap (opaque), encoded through the CUDA
 * runtime's driver entry point (no -lcuda). On the CPU it holds the validated description, which the TMA
 * emulation reads. Either way it is a plain value: put it in the params struct of a kernel, which kbd passes
 * as a __grid_constant__ parameter, so the TMA unit reads it from the parameter space.
 */
#ifndef KBD_TENSORMAP_H
#define KBD_TENSORMAP_H

#include <stdint.h>
#include <string.h>

#include "config.h"
#include "status.h"
#include "swizzle.h"
#include "types.h"

/* ---- the descriptor ----------------------------------------------------------------------------------- */

/* Element types of a tensor map. The values are CUtensorMapDataType's (cuda.h 13.0), so the GPU encode
 * passes them unchanged (ptx/tmap.h asserts it). The packed 4/6-bit types count dimensions in U4/U6 values. */
typedef enum kbd_tmap_dtype {
  KBD_TMAP_DT_U8 = 0,
  KBD_TMAP_DT_U16 = 1,
  KBD_TMAP_DT_U32 = 2,
  KBD_TMAP_DT_I32 = 3,
  KBD_TMAP_DT_U64 = 4,
  KBD_TMAP_DT_I64 = 5,
  KBD_TMAP_DT_F16 = 6,
  KBD_TMAP_DT_F32 = 7,
  KBD_TMAP_DT_F64 = 8,
  KBD_TMAP_DT_BF16 = 9,
  KBD_TMAP_DT_F32_FTZ = 10,
  KBD_TMAP_DT_TF32 = 11,
  KBD_TMAP_DT_TF32_FTZ = 12,
  KBD_TMAP_DT_16U4_ALIGN8B = 13,  /* 16 x U4 packed in 8 bytes, no gaps (sm_100) */
  KBD_TMAP_DT_16U4_ALIGN16B = 14, /* 16 x U4 in 16 bytes: 8 data bytes, 8 gap bytes (sm_100) */
  KBD_TMAP_DT_16U6_ALIGN16B = 15  /* 16 x U6 in 16 bytes: 12 data bytes, 4 gap bytes (sm_100) */
} kbd_tmap_dtype;
#define KBD_TMAP_DT_COUNT 16

/* kbd dtype id (kbd/types.h) -> tensor-map type; -1 for an unknown id. TMA has no fp8 or s8 type: e4m3, e5m2
 * and s8 move as bytes (U8), which is exact because TMA copies bits (only the NaN OOB fill needs a float type;
 * an out-of-bounds s8 reads as 0, the same bits as a U8 zero). */
#define KBD_TMAP_DT_OF(dt)                                                                                             \
  ((dt) == KBD_DT_f32    ? KBD_TMAP_DT_F32                                                                             \
   : (dt) == KBD_DT_f16  ? KBD_TMAP_DT_F16                                                                             \
   : (dt) == KBD_DT_bf16 ? KBD_TMAP_DT_BF16                                                                            \
   : (dt) == KBD_DT_e4m3 ? KBD_TMAP_DT_U8                                                                              \
   : (dt) == KBD_DT_e5m2 ? KBD_TMAP_DT_U8                                                                              \
   : (dt) == KBD_DT_i32  ? KBD_TMAP_DT_I32                                                                             \
   : (dt) == KBD_DT_s8   ? KBD_TMAP_DT_U8                                                                              \
   : (dt) == KBD_DT_u8   ? KBD_TMAP_DT_U8                                                                              \
                         : -1)

/* CUtensorMapInterleave values. Interleaved layouts (NC/8HWC8, NC/16HWC16) need rank >= 3. */
typedef enum kbd_tmap_interleave {
  KBD_TMAP_INTERLEAVE_NONE = 0,
  KBD_TMAP_INTERLEAVE_16B = 1,
  KBD_TMAP_INTERLEAVE_32B = 2
} kbd_tmap_interleave;

/* CUtensorMapSwizzle values (NOT kbd_swizzle's numbering beyond 128B_ATOM_32B: use kbd_tmap_swizzle_of()). */
typedef enum kbd_tmap_swizzle {
  KBD_TMAP_SWIZZLE_NONE = 0,
  KBD_TMAP_SWIZZLE_32B = 1,                   /* 16-byte chunks within a 32-byte span  */
  KBD_TMAP_SWIZZLE_64B = 2,                   /* 16-byte chunks within a 64-byte span  */
  KBD_TMAP_SWIZZLE_128B = 3,                  /* 16-byte chunks within a 128-byte span */
  KBD_TMAP_SWIZZLE_128B_ATOM_32B = 4,         /* 32-byte chunks within 128 bytes (sm_100) */
  KBD_TMAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5, /* as ATOM_32B, 8-byte halves swapped on alternate rows (sm_100) */
  KBD_TMAP_SWIZZLE_128B_ATOM_64B = 6          /* 64-byte chunks within 128 bytes (sm_100) */
} kbd_tmap_swizzle;

/* CUtensorMapL2promotion values: the granule in which L2 fills the TMA's requests from DRAM. */
typedef enum kbd_tmap_l2 {
  KBD_TMAP_L2_NONE = 0,
  KBD_TMAP_L2_64B = 1,
  KBD_TMAP_L2_128B = 2,
  KBD_TMAP_L2_256B = 3
} kbd_tmap_l2;

/* CUtensorMapFloatOOBfill values: what a load writes for box elements outside the tensor. */
typedef enum kbd_tmap_oob {
  KBD_TMAP_OOB_ZERO = 0,                /* zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) */
  KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA = 1 /* the special "OOB-NaN"; floating-point types only */
} kbd_tmap_oob;

#define KBD_TMAP_MAX_RANK 5
#define KBD_TMAP_MAX_BOX 256u                     /* box_dims[i] <= 256 elements */
#define KBD_TMAP_MAX_ELEM_STRIDE 8u               /* element_strides[i] <= 8 */
#define KBD_TMAP_MAX_DIM (UINT64_C(1) << 32)      /* global_dims[i] <= 2^32 elements */
#define KBD_TMAP_STRIDE_LIMIT (UINT64_C(1) << 40) /* global_strides[i] < 2^40 bytes */

/* A 1-5D global tensor and the box one TMA copy moves. Entries at index >= rank (rank - 1 for the strides)
 * are ignored.
 * !! THE ARRAYS ARE IN THE HARDWARE'S ORDER, THE REVERSE OF EVERY kbd CALL !! Index 0 is the innermost
 * (contiguous) dimension: a row-major R x C matrix is global_dims {C, R}, box_dims {box_cols, box_rows}. The
 * struct mirrors cuTensorMapEncodeTiled for people who fill it by hand; everything else in kbd takes the
 * outermost first (kbd_tensor_map_desc_2d(..., rows, cols, ...), kbd_tma_load2d(..., row, col): docs/api.md
 * "Conventions"). */
typedef struct kbd_tensor_map_desc {
  kbd_tmap_dtype dtype;
  uint32_t rank;               /* 1..5 */
  const void *global_address;  /* device address of element (0, ..., 0) */
  uint64_t global_dims[5];     /* elements along each dimension (packed types: U4/U6 values) */
  uint64_t global_strides[4];  /* BYTES between consecutive indices of dimensions 1..rank-1 */
  uint32_t box_dims[5];        /* elements the box spans along each dimension */
  uint32_t element_strides[5]; /* traversal step along each dimension (1 = every element) */
  kbd_tmap_interleave interleave;
  kbd_tmap_swizzle swizzle;
  kbd_tmap_l2 l2_promotion;
  kbd_tmap_oob oob_fill;
} kbd_tensor_map_desc;

/* ---- the encoded map ---------------------------------------------------------------------------------- */

/* CUtensorMap is declared alignas(128); the driver itself asks for 64. kbd uses 128 on both builds, so the
 * GPU storage IS a valid CUtensorMap object and a params struct has the same alignment in both modes. */
#define KBD_TENSOR_MAP_ALIGN 128
#ifdef __cplusplus
#define KBD_TMAP_ALIGNAS_(n) alignas(n)
#else
#define KBD_TMAP_ALIGNAS_(n) _Alignas(n)
#endif

#if KBD_MODE_CPU
/* The CPU build keeps the validated description: the TMA emulation reads it (and `encoded` tells an encoded
 * map from a zero-initialised one, so a load through a map never encoded can be reported). */
#define KBD_TENSOR_MAP_ENCODED 0x6b62746du /* "kbtm" */
typedef struct kbd_tensor_map {
  KBD_TMAP_ALIGNAS_(KBD_TENSOR_MAP_ALIGN) kbd_tensor_map_desc desc;
  uint32_t encoded;
} kbd_tensor_map;
#else
/* The GPU build holds the driver's opaque 128 bytes (CU_TENSOR_MAP_NUM_QWORDS = 16 quad-words). */
typedef struct kbd_tensor_map {
  KBD_TMAP_ALIGNAS_(KBD_TENSOR_MAP_ALIGN) uint64_t opaque[16];
} kbd_tensor_map;
KBD_STATIC_ASSERT(sizeof(kbd_tensor_map) == 128, "kbd_tensor_map must be exactly a CUtensorMap (128 bytes)");
#endif
KBD_STATIC_ASSERT(KBD_ALIGNOF(kbd_tensor_map) == KBD_TENSOR_MAP_ALIGN, "kbd_tensor_map must be 128-byte aligned");

/* ---- type facts --------------------------------------------------------------------------------------- */

/* Bits of global memory one element occupies. The packed ALIGN16B types are 16 values in 16 bytes (gaps
 * included), i.e. 8 bits each; 16U4_ALIGN8B is 16 values in 8 bytes, 4 bits each. 0 for an unknown type. */
static inline uint32_t kbd_tmap_dtype_bits(int dt) {
  static const unsigned char bits[KBD_TMAP_DT_COUNT] = {8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 8, 8};
  return dt >= 0 && dt < KBD_TMAP_DT_COUNT ? bits[dt] : 0;
}

static inline const char *kbd_tmap_dtype_name(int dt) {
  static const char *const names[KBD_TMAP_DT_COUNT] = {
      "U8",  "U16",  "U32",     "I32",  "U64",      "I64",          "F16",           "F32",
      "F64", "BF16", "F32_FTZ", "TF32", "TF32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"};
  return dt >= 0 && dt < KBD_TMAP_DT_COUNT ? names[dt] : "?";
}

static inline const char *kbd_tmap_swizzle_name(int s) {
  static const char *const names[7] = {"NONE",         "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B",
                                       "128B_ATOM_64B"};
  return s >= 0 && s < 7 ? names[s] : "?";
}

static inline const char *kbd_tmap_interleave_name(int i) {
  static const char *const names[3] = {"NONE", "16B", "32B"};
  return i >= 0 && i < 3 ? names[i] : "?";
}

/* Bytes of one swizzle span: the largest inner box extent a swizzled, non-interleaved box may have. */
static inline uint32_t kbd_tmap_swizzle_span(int s) {
  return s == KBD_TMAP_SWIZZLE_32B              ? 32u
         : s == KBD_TMAP_SWIZZLE_64B            ? 64u
         : s >= KBD_TMAP_SWIZZLE_128B && s <= 6 ? 128u
                                                : 0u;
}

/* The tensor-map mode that produces a shared tile's swizzle (kbd/swizzle.h). */
static inline kbd_tmap_swizzle kbd_tmap_swizzle_of(kbd_swizzle m) {
  switch (m) {
  case KBD_SWIZZLE_32B: return KBD_TMAP_SWIZZLE_32B;
  case KBD_SWIZZLE_64B: return KBD_TMAP_SWIZZLE_64B;
  case KBD_SWIZZLE_128B: return KBD_TMAP_SWIZZLE_128B;
  case KBD_SWIZZLE_128B_ATOM32: return KBD_TMAP_SWIZZLE_128B_ATOM_32B;
  case KBD_SWIZZLE_NONE: break;
  }
  return KBD_TMAP_SWIZZLE_NONE;
}

static inline int kbd_tmap_dtype_is_float(int dt) {
  return dt == KBD_TMAP_DT_F16 || dt == KBD_TMAP_DT_F32 || dt == KBD_TMAP_DT_F64 || dt == KBD_TMAP_DT_BF16 ||
         dt == KBD_TMAP_DT_F32_FTZ || dt == KBD_TMAP_DT_TF32 || dt == KBD_TMAP_DT_TF32_FTZ;
}

/* ---- validation --------------------------------------------------------------------------------------- */

/* Every rule of cuTensorMapEncodeTiled (cuda.h 13.0; ptx-reference §2.3-2.4), checked in this order; the
 * first one violated is reported as "tensor map: <field> = <value> <what is wrong> [rule <name>]" with
 * KBD_ERR_INVALID. docs/tensor-maps.md lists them. Pure: reads *d only, never the tensor's memory. */
static inline kbd_status kbd_tensor_map_validate(const kbd_tensor_map_desc *d) {
#define KBD_TMAP_FAIL_(rule, ...)                                                                                      \
  do {                                                                                                                 \
    kbd_text t_ = KBD_TEXT_INIT;                                                                                       \
    kbd_text_append(&t_, "tensor map: " __VA_ARGS__);                                                                  \
    kbd_text_append(&t_, " [rule %s]", rule);                                                                          \
    kbd_status s_ = kbd_status_text(KBD_ERR_INVALID, &t_);                                                             \
    kbd_text_free(&t_);                                                                                                \
    return s_;                                                                                                         \
  } while (0)
  if (!d) KBD_TMAP_FAIL_("desc_null", "the descriptor pointer is NULL");
  const int dt = (int)d->dtype, il = (int)d->interleave, sw = (int)d->swizzle;
  const int packed16 = dt == KBD_TMAP_DT_16U4_ALIGN16B || dt == KBD_TMAP_DT_16U6_ALIGN16B;
  /* Enumerations and rank first: every later rule depends on them. */
  if (dt < 0 || dt >= KBD_TMAP_DT_COUNT)
    KBD_TMAP_FAIL_("dtype_enum", "dtype = %d is not a kbd_tmap_dtype (0..%d)", dt, KBD_TMAP_DT_COUNT - 1);
  if (d->rank < 1 || d->rank > KBD_TMAP_MAX_RANK)
    KBD_TMAP_FAIL_("rank_range", "rank = %u is outside 1..%d", (unsigned)d->rank, KBD_TMAP_MAX_RANK);
  if (il < 0 || il > KBD_TMAP_INTERLEAVE_32B)
    KBD_TMAP_FAIL_("interleave_enum", "interleave = %d is not a kbd_tmap_interleave (0..2)", il);
  if (sw < 0 || sw > KBD_TMAP_SWIZZLE_128B_ATOM_64B)
    KBD_TMAP_FAIL_("swizzle_enum", "swizzle = %d is not a kbd_tmap_swizzle (0..6)", sw);
  if ((int)d->l2_promotion < 0 || (int)d->l2_promotion > KBD_TMAP_L2_256B)
    KBD_TMAP_FAIL_("l2_enum", "l2_promotion = %d is not a kbd_tmap_l2 (0..3)", (int)d->l2_promotion);
  if ((int)d->oob_fill < 0 || (int)d->oob_fill > KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
    KBD_TMAP_FAIL_("oob_enum", "oob_fill = %d is not a kbd_tmap_oob (0..1)", (int)d->oob_fill);
  if (il != KBD_TMAP_INTERLEAVE_NONE && d->rank < 3)
    KBD_TMAP_FAIL_("rank_interleave", "rank = %u with interleave = %s: an interleaved layout needs rank >= 3",
                   (unsigned)d->rank, kbd_tmap_interleave_name(il));
  const unsigned rank = d->rank;
  const uint32_t ebits = kbd_tmap_dtype_bits(dt);
  /* Global address. NULL is kbd's own rule: the driver cannot tell a bad pointer, but no tensor lives at 0. */
  const uintptr_t addr = (uintptr_t)d->global_address;
  if (!addr) KBD_TMAP_FAIL_("addr_null", "global_address = NULL: the tensor needs a device address");
  if (addr % 16)
    KBD_TMAP_FAIL_("addr_align16", "global_address = 0x%llx is not 16-byte aligned", (unsigned long long)addr);
  if (il == KBD_TMAP_INTERLEAVE_32B && addr % 32)
    KBD_TMAP_FAIL_("addr_align32_interleave", "global_address = 0x%llx is not 32-byte aligned (interleave = 32B)",
                   (unsigned long long)addr);
  if (packed16 && addr % 32)
    KBD_TMAP_FAIL_("addr_align32_packed", "global_address = 0x%llx is not 32-byte aligned (dtype = %s)",
                   (unsigned long long)addr, kbd_tmap_dtype_name(dt));
  /* Global dimensions (elements). */
  for (unsigned i = 0; i < rank; i++)
    if (d->global_dims[i] == 0 || d->global_dims[i] > KBD_TMAP_MAX_DIM)
      KBD_TMAP_FAIL_("dim_range", "global_dims[%u] = %llu is outside 1..2^32", i,
                     (unsigned long long)d->global_dims[i]);
  if (packed16 && d->global_dims[0] % 128)
    KBD_TMAP_FAIL_("dim0_packed128", "global_dims[0] = %llu is not a multiple of 128 (dtype = %s)",
                   (unsigned long long)d->global_dims[0], kbd_tmap_dtype_name(dt));
  if (dt == KBD_TMAP_DT_16U4_ALIGN8B && d->global_dims[0] % 2)
    KBD_TMAP_FAIL_("dim0_packed2", "global_dims[0] = %llu is not a multiple of 2 (dtype = %s)",
                   (unsigned long long)d->global_dims[0], kbd_tmap_dtype_name(dt));
  /* Global strides (bytes, dimensions 1..rank-1). */
  for (unsigned i = 0; i + 1 < rank; i++) {
    const unsigned long long st = (unsigned long long)d->global_strides[i];
    if (st % 16) KBD_TMAP_FAIL_("stride_mult16", "global_strides[%u] = %llu is not a multiple of 16", i, st);
    if (st >= KBD_TMAP_STRIDE_LIMIT) KBD_TMAP_FAIL_("stride_max", "global_strides[%u] = %llu is not below 2^40", i, st);
    if (il == KBD_TMAP_INTERLEAVE_32B && st % 32)
      KBD_TMAP_FAIL_("stride_mult32_interleave", "global_strides[%u] = %llu is not a multiple of 32 (interleave = 32B)",
                     i, st);
    if (packed16 && st % 32)
      KBD_TMAP_FAIL_("stride_mult32_packed", "global_strides[%u] = %llu is not a multiple of 32 (dtype = %s)", i, st,
                     kbd_tmap_dtype_name(dt));
  }
  /* Box (elements). */
  for (unsigned i = 0; i < rank; i++)
    if (d->box_dims[i] == 0 || d->box_dims[i] > KBD_TMAP_MAX_BOX)
      KBD_TMAP_FAIL_("box_range", "box_dims[%u] = %u is outside 1..256", i, (unsigned)d->box_dims[i]);
  if (packed16 && d->box_dims[0] != 128)
    KBD_TMAP_FAIL_("box0_packed128", "box_dims[0] = %u is not 128 (dtype = %s)", (unsigned)d->box_dims[0],
                   kbd_tmap_dtype_name(dt));
  const uint64_t inner_bits = (uint64_t)d->box_dims[0] * ebits;
  if (il == KBD_TMAP_INTERLEAVE_NONE && inner_bits % 128)
    KBD_TMAP_FAIL_("box_inner_mult16",
                   "box_dims[0] = %u elements of %u bits = %llu bits is not a multiple of 16 bytes (dtype = %s, "
                   "interleave = NONE)",
                   (unsigned)d->box_dims[0], (unsigned)ebits, (unsigned long long)inner_bits, kbd_tmap_dtype_name(dt));
  for (unsigned i = 0; i < rank; i++)
    if (d->element_strides[i] == 0 || d->element_strides[i] > KBD_TMAP_MAX_ELEM_STRIDE)
      KBD_TMAP_FAIL_("estride_range", "element_strides[%u] = %u is outside 1..8", i, (unsigned)d->element_strides[i]);
  /* Layout combinations. */
  if (il == KBD_TMAP_INTERLEAVE_32B && sw != KBD_TMAP_SWIZZLE_32B)
    KBD_TMAP_FAIL_("interleave32_swizzle", "swizzle = %s with interleave = 32B: interleave 32B requires swizzle 32B",
                   kbd_tmap_swizzle_name(sw));
  if (dt == KBD_TMAP_DT_16U6_ALIGN16B && il != KBD_TMAP_INTERLEAVE_NONE)
    KBD_TMAP_FAIL_("packed_u6_interleave", "interleave = %s with dtype = 16U6_ALIGN16B: it requires interleave NONE",
                   kbd_tmap_interleave_name(il));
  if (dt == KBD_TMAP_DT_16U6_ALIGN16B && sw != KBD_TMAP_SWIZZLE_NONE && sw != KBD_TMAP_SWIZZLE_128B &&
      sw != KBD_TMAP_SWIZZLE_128B_ATOM_32B && sw != KBD_TMAP_SWIZZLE_128B_ATOM_64B)
    KBD_TMAP_FAIL_("packed_swizzle",
                   "swizzle = %s with dtype = 16U6_ALIGN16B: it supports swizzle NONE, 128B, 128B_ATOM_32B and "
                   "128B_ATOM_64B (stores only) only",
                   kbd_tmap_swizzle_name(sw));
  if (dt == KBD_TMAP_DT_16U4_ALIGN16B && sw != KBD_TMAP_SWIZZLE_NONE && sw != KBD_TMAP_SWIZZLE_128B &&
      sw != KBD_TMAP_SWIZZLE_128B_ATOM_32B)
    KBD_TMAP_FAIL_("packed_swizzle",
                   "swizzle = %s with dtype = 16U4_ALIGN16B: it supports swizzle NONE, 128B and 128B_ATOM_32B only",
                   kbd_tmap_swizzle_name(sw));
  if (il == KBD_TMAP_INTERLEAVE_NONE && sw != KBD_TMAP_SWIZZLE_NONE &&
      inner_bits > 8u * (uint64_t)kbd_tmap_swizzle_span(sw))
    KBD_TMAP_FAIL_("box_inner_span",
                   "box_dims[0] = %u elements of %u bits = %llu bytes exceeds the %u-byte span of swizzle = %s",
                   (unsigned)d->box_dims[0], (unsigned)ebits, (unsigned long long)(inner_bits / 8),
                   (unsigned)kbd_tmap_swizzle_span(sw), kbd_tmap_swizzle_name(sw));
  if (d->oob_fill == KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA && !kbd_tmap_dtype_is_float(dt))
    KBD_TMAP_FAIL_("oob_nan_float",
                   "oob_fill = NAN_REQUEST_ZERO_FMA with dtype = %s: the NaN fill needs a floating-point type",
                   kbd_tmap_dtype_name(dt));
#undef KBD_TMAP_FAIL_
  return kbd_status_ok();
}

/* ---- helpers ------------------------------------------------------------------------------------------ */

/* A row-major rows x cols matrix (row pitch in bytes) and a box_rows x box_cols box, outermost first as every
 * kbd call (the arrays get them reversed): element strides 1, no interleave, L2 promotion 128B (what CUTLASS
 * uses for such tiles), zero OOB fill. Not validated here. */
static inline kbd_tensor_map_desc kbd_tensor_map_desc_2d(kbd_tmap_dtype dtype, const void *ptr, uint64_t rows,
                                                         uint64_t cols, uint64_t row_pitch_bytes, uint32_t box_rows,
                                                         uint32_t box_cols, kbd_tmap_swizzle swizzle) {
  kbd_tensor_map_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = dtype;
  d.rank = 2;
  d.global_address = ptr;
  d.global_dims[0] = cols;
  d.global_dims[1] = rows;
  d.global_strides[0] = row_pitch_bytes;
  d.box_dims[0] = box_cols;
  d.box_dims[1] = box_rows;
  d.element_strides[0] = d.element_strides[1] = 1;
  d.interleave = KBD_TMAP_INTERLEAVE_NONE;
  d.swizzle = swizzle;
  d.l2_promotion = KBD_TMAP_L2_128B;
  d.oob_fill = KBD_TMAP_OOB_ZERO;
  return d;
}

/* ---- encoding ----------------------------------------------------------------------------------------- */

/* The twins (ptx/tmap.h, cpu/tmap.h) include this file for the types above; when kbd/hw.h was included
 * first, this point is reached before the twin is defined, hence the declaration. */
static inline kbd_status kbd_hw_tensor_map_encode(kbd_tensor_map *out, const kbd_tensor_map_desc *d, KBD_SITE_PARAMS);

#include "hw.h"

/* Validate *d, then encode it into *out: the driver's CUtensorMap on the GPU, the stored description on the
 * CPU. On any failure *out is left unchanged and the status names the call site, the rule or the driver call.
 * out must be 128-byte aligned (automatic for a declared kbd_tensor_map; use aligned_alloc on the heap). */
#define kbd_tensor_map_encode(out, d) kbd_tensor_map_encode_at((out), (d), KBD_SITE)
static inline kbd_status kbd_tensor_map_encode_at(kbd_tensor_map *out, const kbd_tensor_map_desc *d, KBD_SITE_PARAMS) {
  if (!out)
    return kbd_status_make(
        KBD_ERR_INVALID, "%s:%d: kbd_tensor_map_encode: the output map pointer is NULL [rule map_null]", KBD_SITE_ARGS);
  if ((uintptr_t)out % KBD_TENSOR_MAP_ALIGN)
    return kbd_status_make(KBD_ERR_INVALID,
                           "%s:%d: kbd_tensor_map_encode: the output map at %p is not %d-byte aligned [rule map_align]",
                           KBD_SITE_ARGS, (void *)out, KBD_TENSOR_MAP_ALIGN);
  kbd_status v = kbd_tensor_map_validate(d);
  if (!kbd_ok(v)) return kbd_status_make(v.code, "%s:%d: kbd_tensor_map_encode: %s", KBD_SITE_ARGS, v.msg);
  return kbd_hw_tensor_map_encode(out, d, KBD_SITE_ARGS);
}

#endif /* KBD_TENSORMAP_H */
