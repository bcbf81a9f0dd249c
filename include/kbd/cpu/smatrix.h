/* kbd/cpu/smatrix.h - ldmatrix / stmatrix emulated as the PTX ISA defines them (ptx-reference §7.2), every
 * row through the shared-memory checks (bounds, never-written and pending bytes, races), and sized
 * shared-memory moves (CPU twin of ptx/smatrix.h; the arguments are described there). Under KBD_CPU_PROFILE each
 * instruction is one record of its 8 * nmat rows (kbd/cpu/profile.h). */
#ifndef KBD_CPU_SMATRIX_H
#define KBD_CPU_SMATRIX_H

#include "../layout.h"
#include "mem.h"

#if KBD_MODE_CPU

/* M_m[i][k] of the instruction: element k of the row that lane 8m + i addressed. */
static inline uint16_t kbd_cpu_matrix_get(char *const *row, int m, int i, int k) {
  uint16_t v;
  memcpy(&v, row[8 * m + i] + 2 * k, 2);
  return v;
}
static inline void kbd_cpu_matrix_set(char *const *row, int m, int i, int k, uint16_t v) {
  memcpy(row[8 * m + i] + 2 * k, &v, 2);
}

static inline void kbd_hw_ldmatrix(uint32_t (*d)[4], char *const *row, const kbd_coord *at, int nmat, int tr,
                                   int cont_col, const char *what, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(kbd_cpu_prof_cur))
    kbd__prof_smem(what, KBD_PROFILE_LDMATRIX, 16, row, NULL, 8 * nmat, KBD_SITE_ARGS);
  for (int l = 0; l < 8 * nmat; ++l) /* the rows the instruction reads: 16 bytes each */
    kbd_hw_smem_read(row[l], 16, cont_col ? 2 : 16, what, at[l].row, at[l].col, KBD_SITE_ARGS);
  for (int t = 0; t < KBD_WARP_SIZE; ++t)
    for (int m = 0; m < nmat; ++m) {
      const int g = t / 4, q = t % 4;
      const uint16_t lo = tr ? kbd_cpu_matrix_get(row, m, 2 * q, g) : kbd_cpu_matrix_get(row, m, g, 2 * q);
      const uint16_t hi = tr ? kbd_cpu_matrix_get(row, m, 2 * q + 1, g) : kbd_cpu_matrix_get(row, m, g, 2 * q + 1);
      d[t][m] = (uint32_t)lo | (uint32_t)hi << 16;
    }
}

static inline void kbd_hw_stmatrix(uint32_t (*d)[4], char *const *row, const kbd_coord *at, int nmat, int tr,
                                   int cont_col, const char *what, KBD_SITE_PARAMS) {
  if (KBD_UNLIKELY(kbd_cpu_prof_cur))
    kbd__prof_smem(what, KBD_PROFILE_STMATRIX, 16, row, NULL, 8 * nmat, KBD_SITE_ARGS);
  for (int l = 0; l < 8 * nmat; ++l)
    kbd_hw_smem_write(row[l], 16, cont_col ? 2 : 16, what, at[l].row, at[l].col, KBD_SITE_ARGS);
  for (int t = 0; t < KBD_WARP_SIZE; ++t)
    for (int m = 0; m < nmat; ++m) {
      const int g = t / 4, q = t % 4;
      const uint16_t lo = (uint16_t)(d[t][m] & 0xffffu), hi = (uint16_t)(d[t][m] >> 16);
      if (tr) {
        kbd_cpu_matrix_set(row, m, 2 * q, g, lo);
        kbd_cpu_matrix_set(row, m, 2 * q + 1, g, hi);
      } else {
        kbd_cpu_matrix_set(row, m, g, 2 * q, lo);
        kbd_cpu_matrix_set(row, m, g, 2 * q + 1, hi);
      }
    }
}

static inline void kbd_hw_smem_copy(char *mem, void *frag, int bytes, int store) {
  if (store)
    memcpy(mem, frag, (size_t)bytes);
  else
    memcpy(frag, mem, (size_t)bytes);
}
#endif /* KBD_MODE_CPU */
#endif /* KBD_CPU_SMATRIX_H */
