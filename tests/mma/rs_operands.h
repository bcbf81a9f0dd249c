/* rs_operands.h - the 64 x 64 x 64 bf16 operands of the register-A wgmma rule tests on the CPU machine emulating
 * sm_90a (test_mma_rs.c's A-register rule, test_acc_discard.c): A and B filled from the caller's generator and
 * uploaded, a device buffer for the results, B staged in a shared tile by the kernel, the double reference of one
 * element of A B^T, and the file:line checks of a report. Include after cmocka.h and machine_test.h.
 */
#ifndef KBD_TEST_RS_OPERANDS_H
#define KBD_TEST_RS_OPERANDS_H

#include <math.h>

typedef KBD_STILE(bf16, 64, 64, KBD_SWIZZLE_128B) ro_b;

typedef struct ro_ops {
  kbd_bf16 ha[64 * 64], hb[64 * 64]; /* row-major; B is N x K */
  void *da, *db, *dd;
} ro_ops;

/* A, then B, from gen(&s) with s starting at seed (each test keeps its own generator and values), both uploaded;
 * dd: dbytes of device memory for the results. */
static inline void ro_setup(ro_ops *o, float (*gen)(uint32_t *), uint32_t seed, size_t dbytes) {
  uint32_t s = seed;
  for (int i = 0; i < 64 * 64; ++i)
    kbd_dt_store_f32(&o->ha[i], KBD_DT_bf16, gen(&s));
  for (int i = 0; i < 64 * 64; ++i)
    kbd_dt_store_f32(&o->hb[i], KBD_DT_bf16, gen(&s));
  assert_int_equal(kbd_malloc(&o->da, sizeof o->ha).code, KBD_OK);
  assert_int_equal(kbd_malloc(&o->db, sizeof o->hb).code, KBD_OK);
  assert_int_equal(kbd_malloc(&o->dd, dbytes).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(o->da, o->ha, sizeof o->ha).code, KBD_OK);
  assert_int_equal(kbd_copy_to_device(o->db, o->hb, sizeof o->hb).code, KBD_OK);
}

static inline void ro_free(ro_ops *o) { kbd_free(o->da), kbd_free(o->db), kbd_free(o->dd); }

/* (A B^T)[i][j] in double; *mag = sum |a b|; bsum / bmag (may be NULL): the sum and the sum of |b| over row j of B. */
static inline double ro_dot(const ro_ops *o, int i, int j, double *mag, double *bsum, double *bmag) {
  double ref = 0, m = 0, bs = 0, bm = 0;
  for (int q = 0; q < 64; ++q) {
    const double bv = (double)kbd_dt_load_f32(&o->hb[j * 64 + q], KBD_DT_bf16);
    const double pr = (double)kbd_dt_load_f32(&o->ha[i * 64 + q], KBD_DT_bf16) * bv;
    ref += pr, m += fabs(pr), bs += bv, bm += fabs(bv);
  }
  *mag = m;
  if (bsum) *bsum = bs;
  if (bmag) *bmag = bm;
  return ref;
}

/* In the kernel: B (64 x 64 bf16 at b) through the warpgroup's registers into the shared tile s, fenced for the
 * wgmma's async-proxy reads (the stores are generic-proxy writes) and synced. */
KBD_DEV void ro_stage_b(ro_b s, const void *b) {
  KBD_TILE(bf16, 64, 64, KBD_WARPGROUP) rb;
  kbd_load2d(rb, (const kbd_bf16 *)b, 64, 64, 64, 0, 0);
  kbd_stile_store(s, rb);
  kbd_fence_proxy_async();
  kbd_sync();
}

/* The report names file:line (a site it mentions) or, when `fault`, is a fault there ("file:line:"). */
static inline void ro_expect_site(const char *msg, const char *file, int line, int fault) {
  char site[128];
  snprintf(site, sizeof site, fault ? "%s:%d:" : "%s:%d", file, line);
  if (!strstr(msg, site)) fail_msg("the report %s %s: %s", fault ? "is not at" : "does not name", site, msg);
}

#endif /* KBD_TEST_RS_OPERANDS_H */
