/* kbd/types.h - element types of tiles and their ids.
 *
 * f32, i32 and the 8-bit integers s8 / u8 are the C types. The 16- and 8-bit floats are one-member
 * structs holding the bit pattern, so that C code cannot mix f16 and bf16 by accident and both modes
 * agree on the storage (2 or 1 bytes, same endianness as the GPU). Arithmetic on them happens in f32
 * (see convert.h); on the integer types in 32-bit integers, narrowed with saturation.
 *
 * Tile macros name a dtype by a short token: f32 f16 bf16 e4m3 e5m2 i32 s8 u8.
 *   kbd_<tok>          the storage type
 *   KBD_DT_<tok>       its id (a compile-time integer constant)
 */
#ifndef KBD_TYPES_H
#define KBD_TYPES_H

#include "config.h"

typedef float kbd_f32;
typedef int32_t kbd_i32;
typedef int8_t kbd_s8;  /* the MMA's s8 operand (kind::i8, wgmma .s8) */
typedef uint8_t kbd_u8; /* the MMA's u8 operand */
typedef struct kbd_f16 {
  uint16_t bits;
} kbd_f16;
typedef struct kbd_bf16 {
  uint16_t bits;
} kbd_bf16;
typedef struct kbd_e4m3 {
  uint8_t bits;
} kbd_e4m3;
typedef struct kbd_e5m2 {
  uint8_t bits;
} kbd_e5m2;

#define KBD_DT_f32 1
#define KBD_DT_f16 2
#define KBD_DT_bf16 3
#define KBD_DT_e4m3 4
#define KBD_DT_e5m2 5
#define KBD_DT_i32 6
#define KBD_DT_s8 7
#define KBD_DT_u8 8

/* Bytes of one element of dtype id `dt` (compile-time constant when dt is). */
#define KBD_DT_SIZE(dt)                                                                                                \
  ((dt) == KBD_DT_f32 || (dt) == KBD_DT_i32 ? 4 : (dt) == KBD_DT_f16 || (dt) == KBD_DT_bf16 ? 2 : 1)
#define KBD_DT_IS_INT(dt) ((dt) == KBD_DT_i32 || (dt) == KBD_DT_s8 || (dt) == KBD_DT_u8)
#define KBD_DT_IS_FLOAT(dt) (!KBD_DT_IS_INT(dt))
/* The MMA's two 8-bit families: they mix within a family, never across (ptx-reference 4.1, 5.4). */
#define KBD_DT_IS_FP8(dt) ((dt) == KBD_DT_e4m3 || (dt) == KBD_DT_e5m2)
#define KBD_DT_IS_INT8(dt) ((dt) == KBD_DT_s8 || (dt) == KBD_DT_u8)
#define KBD_DT_VALID(dt) ((dt) >= KBD_DT_f32 && (dt) <= KBD_DT_u8)

KBD_STATIC_ASSERT(sizeof(kbd_f16) == 2 && sizeof(kbd_bf16) == 2, "kbd: 16-bit float storage must be 2 bytes");
KBD_STATIC_ASSERT(sizeof(kbd_e4m3) == 1 && sizeof(kbd_e5m2) == 1, "kbd: fp8 storage must be 1 byte");
KBD_STATIC_ASSERT(sizeof(kbd_s8) == 1 && sizeof(kbd_u8) == 1, "kbd: 8-bit integer storage must be 1 byte");

#endif /* KBD_TYPES_H */
