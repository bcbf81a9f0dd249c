/* tmap_cases.h - the table of tensor-map descriptors shared by test_tensormap_validate.c (CPU: each case
 * is accepted or rejected by the named rule, with the field and value in the message) and
 * gpu_tensormap_agree.cu (GPU: kbd_tensor_map_validate and the driver's cuTensorMapEncodeTiled accept and
 * reject exactly the same cases). C11 and C++17 (nvcc): no designated initialisers.
 *
 * A case is a valid baseline (rank, swizzle) plus one mutation that breaks exactly one rule (or moves a
 * value to the accepted side of a limit). Baselines use F16, dense strides, box inner extent = the swizzle
 * span (64 elements without swizzle), element strides 1, no interleave, L2 128B, zero fill.
 */
#ifndef KBD_TESTS_TMAP_CASES_H
#define KBD_TESTS_TMAP_CASES_H

#include <kbd/tensormap.h>

enum {
  TMAP_SM100 = 1,   /* packed 4/6-bit types or a 128B_ATOM swizzle: Blackwell features; a pre-sm_100 driver may differ */
  TMAP_KBD_ONLY = 2 /* a rule kbd adds on purpose (docs/tensor-maps.md): the driver's verdict is only reported */
};

typedef struct tmap_case {
  const char *name;
  unsigned rank;
  int swizzle;
  void (*mutate)(kbd_tensor_map_desc *d);
  const char *rule; /* NULL: the descriptor is valid */
  const char *text; /* a substring the message must contain: the field and its value */
  unsigned tags;
} tmap_case;

/* Dense strides: row pitch = dims[0] * element size rounded up to `align` bytes, then products. */
static inline void tmap_restride(kbd_tensor_map_desc *d, uint64_t align) {
  uint64_t pitch = (d->global_dims[0] * kbd_tmap_dtype_bits((int)d->dtype) + 7) / 8;
  pitch = (pitch + align - 1) / align * align;
  for (unsigned i = 0; i + 1 < d->rank && i < 4; i++) {
    d->global_strides[i] = pitch;
    pitch *= d->global_dims[i + 1];
  }
}

static inline void tmap_baseline(kbd_tensor_map_desc *d, unsigned rank, int swizzle, const void *base) {
  static const uint64_t dims[5] = {256, 64, 8, 4, 2};
  static const uint32_t box[5] = {64, 8, 4, 2, 2};
  memset(d, 0, sizeof *d);
  d->dtype = KBD_TMAP_DT_F16;
  d->rank = rank;
  d->global_address = base;
  for (unsigned i = 0; i < 5; i++) {
    d->global_dims[i] = dims[i];
    d->box_dims[i] = box[i];
    d->element_strides[i] = 1;
  }
  if (swizzle != KBD_TMAP_SWIZZLE_NONE) d->box_dims[0] = kbd_tmap_swizzle_span(swizzle) / 2;
  d->interleave = KBD_TMAP_INTERLEAVE_NONE;
  d->swizzle = (kbd_tmap_swizzle)swizzle;
  d->l2_promotion = KBD_TMAP_L2_128B;
  d->oob_fill = KBD_TMAP_OOB_ZERO;
  tmap_restride(d, 16);
}

/* Small dims {8, 4, 2, 2, 2} (one 16-byte row) for the stride limits, so every stride tried is at least the
 * dense one: only the documented rules decide. */
static inline void tmap_small(kbd_tensor_map_desc *d) {
  static const uint64_t dims[5] = {8, 4, 2, 2, 2};
  for (unsigned i = 0; i < 5; i++) {
    d->global_dims[i] = dims[i];
    d->box_dims[i] = (uint32_t)dims[i];
  }
  tmap_restride(d, 16);
}
/* NC/8HWC8 (16B) and NC/16HWC16 (32B) f16 layouts: dim 0 is the 16- or 32-byte channel group. */
static inline void tmap_il16(kbd_tensor_map_desc *d) {
  d->interleave = KBD_TMAP_INTERLEAVE_16B;
  d->global_dims[0] = 8;
  d->box_dims[0] = 8;
  tmap_restride(d, 16);
}
static inline void tmap_il32(kbd_tensor_map_desc *d) {
  d->interleave = KBD_TMAP_INTERLEAVE_32B;
  d->swizzle = KBD_TMAP_SWIZZLE_32B;
  d->global_dims[0] = 16;
  d->box_dims[0] = 16;
  tmap_restride(d, 32);
}
/* Packed types with the shapes cuda.h requires: dims[0] a multiple of 128 (2 for 16U4_ALIGN8B), box[0] = 128
 * for the ALIGN16B types (32 U4 = 16 bytes for ALIGN8B). */
static inline void tmap_packed(kbd_tensor_map_desc *d, kbd_tmap_dtype dt) {
  d->dtype = dt;
  d->global_dims[0] = 256;
  d->box_dims[0] = dt == KBD_TMAP_DT_16U4_ALIGN8B ? 32 : 128;
  tmap_restride(d, 32);
}

#define TMAP_MUT(name, body)                                                                                           \
  static void name(kbd_tensor_map_desc *d) { body; }

/* enumerations and rank */
TMAP_MUT(m_dtype16, d->dtype = (kbd_tmap_dtype)16)
TMAP_MUT(m_dtype_neg, d->dtype = (kbd_tmap_dtype)-1)
TMAP_MUT(m_rank0, d->rank = 0)
TMAP_MUT(m_rank6, d->rank = 6)
TMAP_MUT(m_il3, d->interleave = (kbd_tmap_interleave)3)
TMAP_MUT(m_sw7, d->swizzle = (kbd_tmap_swizzle)7)
TMAP_MUT(m_l2_4, d->l2_promotion = (kbd_tmap_l2)4)
TMAP_MUT(m_l2_0, d->l2_promotion = KBD_TMAP_L2_NONE)
TMAP_MUT(m_l2_3, d->l2_promotion = KBD_TMAP_L2_256B)
TMAP_MUT(m_oob2, d->oob_fill = (kbd_tmap_oob)2)
TMAP_MUT(m_il16, tmap_il16(d))
TMAP_MUT(m_il32, tmap_il32(d))
/* address */
TMAP_MUT(m_addr_null, d->global_address = NULL)
TMAP_MUT(m_addr8, d->global_address = (const char *)d->global_address + 8)
TMAP_MUT(m_addr16, d->global_address = (const char *)d->global_address + 16)
TMAP_MUT(m_il32_addr16, tmap_il32(d); d->global_address = (const char *)d->global_address + 16)
TMAP_MUT(m_il32_addr32, tmap_il32(d); d->global_address = (const char *)d->global_address + 32)
TMAP_MUT(m_u4a16_addr16, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN16B);
         d->global_address = (const char *)d->global_address + 16)
TMAP_MUT(m_u6_addr16, tmap_packed(d, KBD_TMAP_DT_16U6_ALIGN16B);
         d->global_address = (const char *)d->global_address + 16)
TMAP_MUT(m_u6_addr32, tmap_packed(d, KBD_TMAP_DT_16U6_ALIGN16B);
         d->global_address = (const char *)d->global_address + 32)
/* dims */
TMAP_MUT(m_dim1_0, d->global_dims[1] = 0)
TMAP_MUT(m_dim0_2p32p1, d->global_dims[0] = (UINT64_C(1) << 32) + 1)
TMAP_MUT(m_dim0_2p32, d->global_dims[0] = UINT64_C(1) << 32)
TMAP_MUT(m_dim1_2p32, tmap_small(d); d->global_dims[1] = UINT64_C(1) << 32)
TMAP_MUT(m_dim1_2p32p1, tmap_small(d); d->global_dims[1] = (UINT64_C(1) << 32) + 1)
TMAP_MUT(m_u6_dim192, tmap_packed(d, KBD_TMAP_DT_16U6_ALIGN16B); d->global_dims[0] = 192)
TMAP_MUT(m_u4a16_dim384, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN16B); d->global_dims[0] = 384; tmap_restride(d, 32))
TMAP_MUT(m_u4a8_dim255, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN8B); d->global_dims[0] = 255)
TMAP_MUT(m_u4a8_dim254, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN8B); d->global_dims[0] = 254)
/* strides */
TMAP_MUT(m_st0_200, tmap_small(d); d->global_strides[0] = 200)
TMAP_MUT(m_st0_208, tmap_small(d); d->global_strides[0] = 208)
TMAP_MUT(m_st1_200, tmap_small(d); d->global_strides[1] = 200)
TMAP_MUT(m_st1_208, tmap_small(d); d->global_strides[1] = 208)
TMAP_MUT(m_st3_8, tmap_small(d); d->global_strides[3] += 8)
TMAP_MUT(m_st0_2p40, tmap_small(d); d->global_strides[0] = UINT64_C(1) << 40)
TMAP_MUT(m_st0_2p40m16, tmap_small(d); d->global_strides[0] = (UINT64_C(1) << 40) - 16)
TMAP_MUT(m_il32_st1_p16, tmap_il32(d); d->global_strides[1] += 16)
TMAP_MUT(m_il32_st1_p32, tmap_il32(d); d->global_strides[1] += 32)
TMAP_MUT(m_u4a16_st144, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN16B); d->global_dims[0] = 128; d->global_strides[0] = 144)
TMAP_MUT(m_u4a16_st160, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN16B); d->global_dims[0] = 128; d->global_strides[0] = 160)
/* box */
TMAP_MUT(m_box1_0, d->box_dims[1] = 0)
TMAP_MUT(m_box1_257, d->box_dims[1] = 257)
TMAP_MUT(m_box1_256, d->box_dims[1] = 256)
TMAP_MUT(m_box4_257, d->box_dims[4] = 257)
TMAP_MUT(m_u8_box0_256, d->dtype = KBD_TMAP_DT_U8; d->box_dims[0] = 256; tmap_restride(d, 16))
TMAP_MUT(m_u8_box0_257, d->dtype = KBD_TMAP_DT_U8; d->box_dims[0] = 257; tmap_restride(d, 16))
TMAP_MUT(m_u6_box64, tmap_packed(d, KBD_TMAP_DT_16U6_ALIGN16B); d->box_dims[0] = 64)
TMAP_MUT(m_u4a16_box256, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN16B); d->box_dims[0] = 256)
TMAP_MUT(m_box0_4, d->box_dims[0] = 4)
TMAP_MUT(m_box0_8, d->box_dims[0] = 8)
TMAP_MUT(m_f32_box0_6, d->dtype = KBD_TMAP_DT_F32; d->box_dims[0] = 6; tmap_restride(d, 16))
TMAP_MUT(m_f32_box0_12, d->dtype = KBD_TMAP_DT_F32; d->box_dims[0] = 12; tmap_restride(d, 16))
TMAP_MUT(m_u4a8_box16, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN8B); d->box_dims[0] = 16)
TMAP_MUT(m_il16_box0_4, tmap_il16(d); d->box_dims[0] = 4)
/* element strides */
TMAP_MUT(m_es1_0, d->element_strides[1] = 0)
TMAP_MUT(m_es1_9, d->element_strides[1] = 9)
TMAP_MUT(m_es1_8, d->element_strides[1] = 8)
TMAP_MUT(m_es0_9, d->element_strides[0] = 9)
TMAP_MUT(m_es0_8, d->element_strides[0] = 8)
TMAP_MUT(m_es4_9, d->element_strides[4] = 9)
/* interleave x swizzle, packed types */
TMAP_MUT(m_il32_sw0, tmap_il32(d); d->swizzle = KBD_TMAP_SWIZZLE_NONE)
TMAP_MUT(m_il32_sw128, tmap_il32(d); d->swizzle = KBD_TMAP_SWIZZLE_128B)
TMAP_MUT(m_il16_sw128, tmap_il16(d); d->swizzle = KBD_TMAP_SWIZZLE_128B)
TMAP_MUT(m_il16_sw32, tmap_il16(d); d->swizzle = KBD_TMAP_SWIZZLE_32B)
TMAP_MUT(m_u6_il16, tmap_il16(d); tmap_packed(d, KBD_TMAP_DT_16U6_ALIGN16B))
TMAP_MUT(m_u4a16_il16, tmap_il16(d); tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN16B))
TMAP_MUT(m_u6, tmap_packed(d, KBD_TMAP_DT_16U6_ALIGN16B))
TMAP_MUT(m_u4a16, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN16B))
TMAP_MUT(m_u4a8, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN8B))
/* swizzle span */
TMAP_MUT(m_box0_24, d->box_dims[0] = 24)
TMAP_MUT(m_box0_40, d->box_dims[0] = 40)
TMAP_MUT(m_box0_64, d->box_dims[0] = 64)
TMAP_MUT(m_box0_72, d->box_dims[0] = 72)
TMAP_MUT(m_f32_box0_32, d->dtype = KBD_TMAP_DT_F32; d->box_dims[0] = 32; tmap_restride(d, 16))
TMAP_MUT(m_f32_box0_36, d->dtype = KBD_TMAP_DT_F32; d->box_dims[0] = 36; tmap_restride(d, 16))
TMAP_MUT(m_u8_box0_128, d->dtype = KBD_TMAP_DT_U8; d->box_dims[0] = 128; tmap_restride(d, 16))
TMAP_MUT(m_u8_box0_144, d->dtype = KBD_TMAP_DT_U8; d->box_dims[0] = 144; tmap_restride(d, 16))
/* OOB fill */
TMAP_MUT(m_nan_u8, d->dtype = KBD_TMAP_DT_U8; d->box_dims[0] = 128; tmap_restride(d, 16);
         d->oob_fill = KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
TMAP_MUT(m_nan_i32, d->dtype = KBD_TMAP_DT_I32; d->box_dims[0] = 32; tmap_restride(d, 16);
         d->oob_fill = KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
TMAP_MUT(m_nan_u4a8, tmap_packed(d, KBD_TMAP_DT_16U4_ALIGN8B); d->oob_fill = KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
TMAP_MUT(m_nan_f16, d->oob_fill = KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
TMAP_MUT(m_nan_bf16, d->dtype = KBD_TMAP_DT_BF16; d->oob_fill = KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
TMAP_MUT(m_nan_tf32, d->dtype = KBD_TMAP_DT_TF32; d->box_dims[0] = 32; tmap_restride(d, 16);
         d->oob_fill = KBD_TMAP_OOB_NAN_REQUEST_ZERO_FMA)

#define SW0 KBD_TMAP_SWIZZLE_NONE
#define SW32 KBD_TMAP_SWIZZLE_32B
#define SW64 KBD_TMAP_SWIZZLE_64B
#define SW128 KBD_TMAP_SWIZZLE_128B
#define SWA32 KBD_TMAP_SWIZZLE_128B_ATOM_32B
#define SWFLIP KBD_TMAP_SWIZZLE_128B_ATOM_32B_FLIP_8B
#define SWA64 KBD_TMAP_SWIZZLE_128B_ATOM_64B

/* {name, rank, swizzle of the baseline, mutation, rule (NULL: valid), message text, tags} */
static const tmap_case tmap_cases[] = {
    {"dtype 16", 2, SW128, m_dtype16, "dtype_enum", "dtype = 16 ", 0},
    {"dtype -1", 2, SW128, m_dtype_neg, "dtype_enum", "dtype = -1 ", 0},
    {"rank 0", 2, SW0, m_rank0, "rank_range", "rank = 0 ", 0},
    {"rank 6", 5, SW0, m_rank6, "rank_range", "rank = 6 ", 0},
    {"interleave 3", 3, SW0, m_il3, "interleave_enum", "interleave = 3 ", 0},
    {"swizzle 7", 2, SW0, m_sw7, "swizzle_enum", "swizzle = 7 ", 0},
    {"l2 4", 2, SW128, m_l2_4, "l2_enum", "l2_promotion = 4 ", 0},
    {"l2 NONE", 2, SW128, m_l2_0, NULL, NULL, 0},
    {"l2 256B", 2, SW128, m_l2_3, NULL, NULL, 0},
    {"oob 2", 2, SW128, m_oob2, "oob_enum", "oob_fill = 2 ", 0},
    {"interleave 16B rank 2", 2, SW0, m_il16, "rank_interleave", "rank = 2 with interleave = 16B", 0},
    {"interleave 32B rank 2", 2, SW0, m_il32, "rank_interleave", "rank = 2 with interleave = 32B", 0},
    {"interleave 16B rank 3", 3, SW0, m_il16, NULL, NULL, 0},
    {"interleave 16B rank 5", 5, SW0, m_il16, NULL, NULL, 0},
    {"interleave 32B rank 3", 3, SW0, m_il32, NULL, NULL, 0},
    {"address NULL", 2, SW128, m_addr_null, "addr_null", "global_address = NULL", TMAP_KBD_ONLY},
    {"address +8", 2, SW128, m_addr8, "addr_align16", "8 is not 16-byte aligned", 0},
    {"address +16", 2, SW128, m_addr16, NULL, NULL, 0},
    {"interleave 32B address +16", 3, SW0, m_il32_addr16, "addr_align32_interleave", "0 is not 32-byte aligned (interleave = 32B)", 0},
    {"interleave 32B address +32", 3, SW0, m_il32_addr32, NULL, NULL, 0},
    {"16U4_ALIGN16B address +16", 2, SW0, m_u4a16_addr16, "addr_align32_packed", "0 is not 32-byte aligned (dtype = 16U4_ALIGN16B)", TMAP_SM100},
    {"16U6_ALIGN16B address +16", 2, SW0, m_u6_addr16, "addr_align32_packed", "0 is not 32-byte aligned (dtype = 16U6_ALIGN16B)", TMAP_SM100},
    {"16U6_ALIGN16B address +32", 2, SW0, m_u6_addr32, NULL, NULL, TMAP_SM100},
    {"dims[1] 0", 2, SW128, m_dim1_0, "dim_range", "global_dims[1] = 0 ", 0},
    {"dims[0] 2^32+1", 1, SW0, m_dim0_2p32p1, "dim_range", "global_dims[0] = 4294967297 ", 0},
    {"dims[0] 2^32", 1, SW0, m_dim0_2p32, NULL, NULL, 0},
    {"dims[1] 2^32", 2, SW0, m_dim1_2p32, NULL, NULL, 0},
    {"dims[1] 2^32+1", 2, SW0, m_dim1_2p32p1, "dim_range", "global_dims[1] = 4294967297 ", 0},
    {"16U6_ALIGN16B dims[0] 192", 2, SW0, m_u6_dim192, "dim0_packed128", "global_dims[0] = 192 ", TMAP_SM100},
    {"16U4_ALIGN16B dims[0] 384", 2, SW0, m_u4a16_dim384, NULL, NULL, TMAP_SM100},
    {"16U4_ALIGN8B dims[0] 255", 2, SW0, m_u4a8_dim255, "dim0_packed2", "global_dims[0] = 255 ", TMAP_SM100},
    {"16U4_ALIGN8B dims[0] 254", 2, SW0, m_u4a8_dim254, NULL, NULL, TMAP_SM100},
    {"strides[0] 200", 2, SW0, m_st0_200, "stride_mult16", "global_strides[0] = 200 is not a multiple of 16", 0},
    {"strides[0] 208", 2, SW0, m_st0_208, NULL, NULL, 0},
    {"strides[1] 200", 3, SW0, m_st1_200, "stride_mult16", "global_strides[1] = 200 is not a multiple of 16", 0},
    {"strides[1] 208", 3, SW0, m_st1_208, NULL, NULL, 0},
    {"strides[3] +8", 5, SW0, m_st3_8, "stride_mult16", "global_strides[3] = 264 ", 0},
    {"strides[0] 2^40", 2, SW0, m_st0_2p40, "stride_max", "global_strides[0] = 1099511627776 is not below 2^40", 0},
    {"strides[0] 2^40-16", 2, SW0, m_st0_2p40m16, NULL, NULL, 0},
    {"interleave 32B strides[1] +16", 3, SW0, m_il32_st1_p16, "stride_mult32_interleave", "global_strides[1] = 2064 is not a multiple of 32", 0},
    {"interleave 32B strides[1] +32", 3, SW0, m_il32_st1_p32, NULL, NULL, 0},
    {"16U4_ALIGN16B strides[0] 144", 2, SW0, m_u4a16_st144, "stride_mult32_packed", "global_strides[0] = 144 is not a multiple of 32", TMAP_SM100},
    {"16U4_ALIGN16B strides[0] 160", 2, SW0, m_u4a16_st160, NULL, NULL, TMAP_SM100},
    {"box[1] 0", 2, SW128, m_box1_0, "box_range", "box_dims[1] = 0 ", 0},
    {"box[1] 257", 2, SW128, m_box1_257, "box_range", "box_dims[1] = 257 ", 0},
    {"box[1] 256", 2, SW128, m_box1_256, NULL, NULL, 0},
    {"box[4] 257", 5, SW0, m_box4_257, "box_range", "box_dims[4] = 257 ", 0},
    {"U8 box[0] 256", 2, SW0, m_u8_box0_256, NULL, NULL, 0},
    {"U8 box[0] 257", 2, SW0, m_u8_box0_257, "box_range", "box_dims[0] = 257 ", 0},
    {"16U6_ALIGN16B box[0] 64", 2, SW0, m_u6_box64, "box0_packed128", "box_dims[0] = 64 is not 128", TMAP_SM100},
    {"16U4_ALIGN16B box[0] 256", 2, SW0, m_u4a16_box256, "box0_packed128", "box_dims[0] = 256 is not 128", TMAP_SM100},
    {"F16 box[0] 4", 2, SW0, m_box0_4, "box_inner_mult16", "box_dims[0] = 4 elements of 16 bits", 0},
    {"F16 box[0] 8", 2, SW0, m_box0_8, NULL, NULL, 0},
    {"F32 box[0] 6", 2, SW0, m_f32_box0_6, "box_inner_mult16", "box_dims[0] = 6 elements of 32 bits", 0},
    {"F32 box[0] 12", 2, SW0, m_f32_box0_12, NULL, NULL, 0},
    {"16U4_ALIGN8B box[0] 16", 2, SW0, m_u4a8_box16, "box_inner_mult16", "box_dims[0] = 16 elements of 4 bits", TMAP_SM100},
    {"interleave 16B box[0] 4", 3, SW0, m_il16_box0_4, NULL, NULL, 0},
    {"element_strides[1] 0", 2, SW128, m_es1_0, "estride_range", "element_strides[1] = 0 ", 0},
    {"element_strides[1] 9", 2, SW128, m_es1_9, "estride_range", "element_strides[1] = 9 ", 0},
    {"element_strides[1] 8", 2, SW128, m_es1_8, NULL, NULL, 0},
    {"element_strides[0] 9", 2, SW128, m_es0_9, "estride_range", "element_strides[0] = 9 ", 0},
    {"element_strides[0] 8", 2, SW128, m_es0_8, NULL, NULL, 0},
    {"element_strides[4] 9", 5, SW0, m_es4_9, "estride_range", "element_strides[4] = 9 ", 0},
    {"interleave 32B swizzle NONE", 3, SW0, m_il32_sw0, "interleave32_swizzle", "swizzle = NONE with interleave = 32B", 0},
    {"interleave 32B swizzle 128B", 3, SW0, m_il32_sw128, "interleave32_swizzle", "swizzle = 128B with interleave = 32B", 0},
    {"interleave 16B swizzle 128B", 3, SW0, m_il16_sw128, NULL, NULL, 0},
    {"interleave 16B swizzle 32B", 3, SW0, m_il16_sw32, NULL, NULL, 0},
    {"16U6_ALIGN16B interleave 16B", 3, SW0, m_u6_il16, "packed_u6_interleave", "interleave = 16B with dtype = 16U6_ALIGN16B", TMAP_SM100},
    {"16U4_ALIGN16B interleave 16B", 3, SW0, m_u4a16_il16, NULL, NULL, TMAP_SM100},
    {"16U6_ALIGN16B swizzle NONE", 2, SW0, m_u6, NULL, NULL, TMAP_SM100},
    {"16U6_ALIGN16B swizzle 128B", 2, SW128, m_u6, NULL, NULL, TMAP_SM100},
    {"16U6_ALIGN16B swizzle 128B_ATOM_32B", 2, SWA32, m_u6, NULL, NULL, TMAP_SM100},
    {"16U6_ALIGN16B swizzle 128B_ATOM_64B", 2, SWA64, m_u6, NULL, NULL, TMAP_SM100},
    {"16U6_ALIGN16B swizzle 32B", 2, SW32, m_u6, "packed_swizzle", "swizzle = 32B with dtype = 16U6_ALIGN16B", TMAP_SM100},
    {"16U6_ALIGN16B swizzle 64B", 2, SW64, m_u6, "packed_swizzle", "swizzle = 64B with dtype = 16U6_ALIGN16B", TMAP_SM100},
    {"16U6_ALIGN16B swizzle FLIP_8B", 2, SWFLIP, m_u6, "packed_swizzle", "swizzle = 128B_ATOM_32B_FLIP_8B with dtype = 16U6_ALIGN16B", TMAP_SM100},
    {"16U4_ALIGN16B swizzle 128B", 2, SW128, m_u4a16, NULL, NULL, TMAP_SM100},
    {"16U4_ALIGN16B swizzle 128B_ATOM_32B", 2, SWA32, m_u4a16, NULL, NULL, TMAP_SM100},
    {"16U4_ALIGN16B swizzle 128B_ATOM_64B", 2, SWA64, m_u4a16, "packed_swizzle", "swizzle = 128B_ATOM_64B with dtype = 16U4_ALIGN16B", TMAP_SM100},
    {"16U4_ALIGN16B swizzle FLIP_8B", 2, SWFLIP, m_u4a16, "packed_swizzle", "swizzle = 128B_ATOM_32B_FLIP_8B with dtype = 16U4_ALIGN16B", TMAP_SM100},
    {"16U4_ALIGN8B swizzle 32B", 2, SW32, m_u4a8, NULL, NULL, TMAP_SM100},
    {"swizzle 32B box[0] 24", 2, SW32, m_box0_24, "box_inner_span", "box_dims[0] = 24 elements of 16 bits = 48 bytes exceeds the 32-byte span", 0},
    {"swizzle 64B box[0] 40", 2, SW64, m_box0_40, "box_inner_span", "box_dims[0] = 40 elements of 16 bits = 80 bytes exceeds the 64-byte span", 0},
    {"swizzle 128B box[0] 72", 2, SW128, m_box0_72, "box_inner_span", "box_dims[0] = 72 elements of 16 bits = 144 bytes exceeds the 128-byte span", 0},
    {"swizzle 128B_ATOM_32B box[0] 72", 2, SWA32, m_box0_72, "box_inner_span", "144 bytes exceeds the 128-byte span of swizzle = 128B_ATOM_32B", TMAP_SM100},
    {"swizzle 128B_ATOM_64B box[0] 72", 2, SWA64, m_box0_72, "box_inner_span", "144 bytes exceeds the 128-byte span of swizzle = 128B_ATOM_64B", TMAP_SM100},
    {"swizzle 32B box[0] 8", 2, SW32, m_box0_8, NULL, NULL, 0},
    {"swizzle 64B box[0] 24", 2, SW64, m_box0_24, NULL, NULL, 0},
    {"swizzle 128B box[0] 64", 2, SW128, m_box0_64, NULL, NULL, 0},
    {"swizzle 128B F32 box[0] 32", 2, SW128, m_f32_box0_32, NULL, NULL, 0},
    {"swizzle 128B F32 box[0] 36", 2, SW128, m_f32_box0_36, "box_inner_span", "box_dims[0] = 36 elements of 32 bits = 144 bytes", 0},
    {"swizzle 128B U8 box[0] 128", 2, SW128, m_u8_box0_128, NULL, NULL, 0},
    {"swizzle 128B U8 box[0] 144", 2, SW128, m_u8_box0_144, "box_inner_span", "box_dims[0] = 144 elements of 8 bits = 144 bytes", 0},
    {"NaN fill U8", 2, SW128, m_nan_u8, "oob_nan_float", "oob_fill = NAN_REQUEST_ZERO_FMA with dtype = U8", 0},
    {"NaN fill I32", 2, SW128, m_nan_i32, "oob_nan_float", "oob_fill = NAN_REQUEST_ZERO_FMA with dtype = I32", 0},
    {"NaN fill 16U4_ALIGN8B", 2, SW0, m_nan_u4a8, "oob_nan_float", "oob_fill = NAN_REQUEST_ZERO_FMA with dtype = 16U4_ALIGN8B", TMAP_SM100},
    {"NaN fill F16", 2, SW128, m_nan_f16, NULL, NULL, 0},
    {"NaN fill BF16", 2, SW128, m_nan_bf16, NULL, NULL, 0},
    {"NaN fill TF32", 2, SW128, m_nan_tf32, NULL, NULL, 0},
};
#define TMAP_NCASES (sizeof tmap_cases / sizeof tmap_cases[0])

/* Every rule kbd_tensor_map_validate applies, in its order (docs/tensor-maps.md): the CPU test checks that
 * the table above breaks each one at least once. desc_null is checked by the test directly. */
static const char *const tmap_rules[] = {
    "desc_null",        "dtype_enum",       "rank_range",         "interleave_enum",          "swizzle_enum",
    "l2_enum",          "oob_enum",         "rank_interleave",    "addr_null",                "addr_align16",
    "addr_align32_interleave", "addr_align32_packed", "dim_range", "dim0_packed128",          "dim0_packed2",
    "stride_mult16",    "stride_max",       "stride_mult32_interleave", "stride_mult32_packed", "box_range",
    "box0_packed128",   "box_inner_mult16", "estride_range",      "interleave32_swizzle",     "packed_u6_interleave",
    "packed_swizzle",   "box_inner_span",   "oob_nan_float"};
#define TMAP_NRULES (sizeof tmap_rules / sizeof tmap_rules[0])

static inline void tmap_build(kbd_tensor_map_desc *d, const tmap_case *c, const void *base) {
  tmap_baseline(d, c->rank, c->swizzle, base);
  c->mutate(d);
}

#endif /* KBD_TESTS_TMAP_CASES_H */
