/* test_global.c - global memory on the CPU machine: tile loads/stores, flags and atomics are checked against
 * kbd_malloc's live allocations (file:line and the allocation named: wholly outside, straddling, freed, host
 * pointer) and their written state (never-written reads); host copies and memsets against the allocation they
 * name; masking keeps in-bounds accesses legal, and kbd_malloc/kbd_free reject bad arguments. Each misuse is
 * caught in its first run under the default schedule. */
#include <kbd/tile.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine_test.h"

#define TN 128 /* tile columns */
#define ALLOC_N 100

typedef struct {
  const float *in;
  float *out;
  long long n_in, n_out, start;
} gb_params;

static int gb_load_line, gb_store_line;

/* out[start + i] = 2 * in[start + i] for the tile's TN columns, masked to n_in / n_out. */
KBD_KERNEL(copy2_k, 32, gb_params) {
  KBD_TILE(f32, 1, TN, KBD_WARP) t;
  MT_MARK(gb_load_line); kbd_load(t, p.in, p.n_in, p.start);
  kbd_mul_s(t, t, 2.0f);
  MT_MARK(gb_store_line); kbd_store(p.out, t, p.n_out, p.start);
}

typedef struct {
  float *in, *out;
  float host_in[ALLOC_N];
} gb_fixture;

static int gb_setup(void **state) {
  mt_group_setup(state);
  gb_fixture *f = (gb_fixture *)calloc(1, sizeof *f);
  if (!f) return -1;
  for (int i = 0; i < ALLOC_N; ++i)
    f->host_in[i] = (float)(i + 1);
  if (!kbd_ok(kbd_malloc((void **)&f->in, ALLOC_N * sizeof(float)))) return -1;
  if (!kbd_ok(kbd_malloc((void **)&f->out, ALLOC_N * sizeof(float)))) return -1;
  if (!kbd_ok(kbd_copy_to_device(f->in, f->host_in, sizeof f->host_in))) return -1;
  *state = f;
  return 0;
}

static int gb_teardown(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  const int ok = kbd_ok(kbd_free(f->in)) && kbd_ok(kbd_free(f->out));
  free(f);
  return ok ? 0 : -1;
}

static kbd_status run_copy(gb_fixture *f, long long n_in, long long n_out, long long start) {
  gb_params p = {f->in, f->out, n_in, n_out, start};
  return copy2_k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
}

static void test_load_past_allocation(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  kbd_status s = run_copy(f, TN, ALLOC_N, 0); /* 128 floats read from a 100-float allocation */
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(gb_load_line));
  MT_ASSERT_HAS(s, "kbd_load touches bytes [0, 512) of a 400-byte allocation (base");
  /* n beyond the allocation but a tile window that ends before its end is fine ... */
  MT_ASSERT_OK(run_copy(f, 1000, ALLOC_N, -40));
  /* ... one that ends 4 bytes past it is not */
  s = run_copy(f, 1000, ALLOC_N, -27);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_HAS(s, "bytes [0, 404)");
}

static void test_store_past_allocation(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  kbd_status s = run_copy(f, ALLOC_N, TN, 0);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(gb_store_line));
  MT_ASSERT_HAS(s, "kbd_store touches bytes [0, 512) of a 400-byte allocation (base");
}

static void test_masked_access_within_allocation(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  float host[ALLOC_N];
  MT_ASSERT_OK(kbd_memset_device(f->out, 0, ALLOC_N * sizeof(float)));
  MT_ASSERT_OK(run_copy(f, ALLOC_N, ALLOC_N, 0)); /* the tile hangs 28 floats over n: masked */
  MT_ASSERT_OK(kbd_copy_to_host(host, f->out, sizeof host));
  for (int i = 0; i < ALLOC_N; ++i)
    assert_true(host[i] == 2.0f * (float)(i + 1));
  /* a window starting 28 floats before the array: elements 0..99 of the tile map to -28..99 */
  MT_ASSERT_OK(kbd_memset_device(f->out, 0, ALLOC_N * sizeof(float)));
  MT_ASSERT_OK(run_copy(f, ALLOC_N, ALLOC_N, -28));
  MT_ASSERT_OK(kbd_copy_to_host(host, f->out, sizeof host));
  for (int i = 0; i < ALLOC_N; ++i)
    assert_true(host[i] == 2.0f * (float)(i + 1));
}

static void test_free_errors(void **state) {
  (void)state;
  static int local;
  int *volatile not_heap = &local; /* volatile: keeps gcc's -Wfree-nonheap-object out of the inlined path */
  kbd_status s = kbd_free(not_heap);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "was not returned by kbd_malloc");

  void *host = malloc(64);
  assert_non_null(host);
  MT_ASSERT_CODE(kbd_free(host), KBD_ERR_INVALID);
  free(host);

  void *p = NULL;
  MT_ASSERT_OK(kbd_malloc(&p, 64));
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 256, 0);
  char *volatile interior = (char *)p + 16; /* volatile: as above */
  MT_ASSERT_CODE(kbd_free(interior), KBD_ERR_INVALID);
  MT_ASSERT_OK(kbd_free(p));
  s = kbd_free(p); /* double free */
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "or was freed already");

  MT_ASSERT_OK(kbd_free(NULL));
  s = kbd_malloc(NULL, 4);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_HAS(s, "kbd_malloc: NULL output pointer");

  MT_ASSERT_OK(kbd_malloc(&p, 0)); /* a valid pointer no access may touch */
  assert_non_null(p);
  MT_ASSERT_OK(kbd_free(p));
}

/* A kbd_malloc of 0 bytes: a tile access that touches nothing (n = 0) is fine; one that touches a byte is
 * not wholly inside the allocation (memory.h: no access may touch it). */
static void test_zero_byte_allocation(void **state) {
  (void)state;
  float *z = NULL, *out = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&z, 0));
  MT_ASSERT_OK(kbd_malloc((void **)&out, TN * sizeof(float)));
  gb_params p = {z, out, 0, TN, 0};
  MT_ASSERT_OK(copy2_k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p));
  p.n_in = 1;
  kbd_status s = copy2_k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(gb_load_line));
  MT_ASSERT_HAS(s, "of a 0-byte allocation");
  MT_ASSERT_OK(kbd_free(z));
  MT_ASSERT_OK(kbd_free(out));
}

/* ---- accesses outside every live allocation, and reads of never-written bytes ------------------------------
 * Each is its own diagnostic naming the allocation, caught in the first run. */
static kbd_status run_on(const float *in, long long n, float *out) {
  gb_params p = {in, out, n, n, 0};
  return copy2_k(kbd_cfg(kbd_dim(1, 1, 1), 0, NULL), p);
}

static void test_wholly_past_the_end(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  float *big = NULL; /* 1 MiB: its own mapping, nothing of ours right after it */
  MT_ASSERT_OK(kbd_malloc((void **)&big, 1 << 20));
  kbd_status s = run_on(big + (1 << 18) + 16, TN, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(gb_load_line));
  MT_ASSERT_HAS(s, "64 bytes past the end of the 1048576-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  MT_ASSERT_OK(kbd_free(big));
}

static void test_straddling_the_start(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  kbd_status s = run_on(f->in - 4, TN, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(gb_load_line));
  MT_ASSERT_HAS(s, "kbd_load touches bytes [-16, 496) of a 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
}

static void test_use_after_free(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  float *tmp = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&tmp, TN * sizeof(float)));
  MT_ASSERT_OK(kbd_copy_to_device(tmp, f->host_in, ALLOC_N * sizeof(float)));
  const int free_line = __LINE__ + 1;
  MT_ASSERT_OK(kbd_free(tmp));
  kbd_status s = run_on(tmp, ALLOC_N, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(gb_load_line));
  MT_ASSERT_HAS(s, "that was freed: allocated at " __FILE__);
  char freed_at[4096];
  MT_ASSERT_HAS(s, mt_fmt(freed_at, sizeof freed_at, "freed at %s:%d", __FILE__, free_line));
  MT_ASSERT_HAS(s, "(use after free");
}

static void test_host_pointer(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  static float host[TN];
  kbd_status s = run_on(host, ALLOC_N, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(gb_load_line));
  MT_ASSERT_HAS(s, "which is not device memory from kbd_malloc (a host pointer?");
  /* Mapped host memory is device-accessible, until it is unregistered. */
  MT_ASSERT_OK(kbd_host_register(host, sizeof host));
  MT_ASSERT_OK(run_on(host, ALLOC_N, f->out));
  MT_ASSERT_OK(kbd_host_unregister(host));
  s = run_on(host, ALLOC_N, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_HAS(s, "after kbd_host_unregister");
}

static void test_never_written_read(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  float *fresh = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&fresh, ALLOC_N * sizeof(float)));
  kbd_status s = run_on(fresh, ALLOC_N, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_AT(s, MT_LINE(gb_load_line));
  MT_ASSERT_HAS(s, "reads never-written global memory: byte 0 of the 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  /* Half written by a copy: the first never-written byte is named. */
  MT_ASSERT_OK(kbd_copy_to_device(fresh, f->host_in, 50 * sizeof(float)));
  s = run_on(fresh, ALLOC_N, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_HAS(s, "byte 200 of the 400-byte allocation");
  /* Written by a kernel store: readable. */
  MT_ASSERT_OK(run_on(f->in, ALLOC_N, fresh));
  MT_ASSERT_OK(run_on(fresh, ALLOC_N, f->out));
  MT_ASSERT_OK(kbd_free(fresh));
}

/* ---- flags and atomics: the same bounds and written checks as tile accesses ------------------------------ */
typedef struct {
  uint32_t *flag;
} fl_params;
static int fl_line;

KBD_KERNEL(atomic_k, 32, fl_params) {
  KBD_ELECT_ONE {
    (void)(MT_MARK(fl_line), kbd_atomic_add_u32(p.flag, 1u)); /* one line: the line the machine reports */
  }
}
KBD_KERNEL(acquire_k, 32, fl_params) { (void)(MT_MARK(fl_line), kbd_ld_acquire_u32(p.flag)); }

static void test_atomics_checked(void **state) {
  (void)state;
  uint32_t *flags = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&flags, 2 * sizeof(uint32_t)));
  fl_params p = {flags};
  /* an atomic reads the old value: of a never-written counter that is garbage on the GPU */
  kbd_status s = atomic_k(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_AT(s, MT_LINE(fl_line));
  MT_ASSERT_HAS(s, "kbd_atomic_add_u32 reads never-written global memory: byte 0 of the 8-byte allocation");
  s = acquire_k(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_HAS(s, "kbd_ld_acquire_u32 reads never-written global memory");
  MT_ASSERT_OK(kbd_memset_device(flags, 0, 2 * sizeof(uint32_t)));
  MT_ASSERT_OK(atomic_k(kbd_cfg_1d(1), p));
  MT_ASSERT_OK(acquire_k(kbd_cfg_1d(1), p));
  p.flag = flags + 2; /* one past the end */
  s = atomic_k(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, MT_LINE(fl_line));
  MT_ASSERT_HAS(s, "0 bytes past the end of the 8-byte allocation");
  MT_ASSERT_OK(kbd_free(flags));
  p.flag = flags;
  s = acquire_k(kbd_cfg_1d(1), p);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_HAS(s, "(use after free)");
}

/* ---- host copies and memsets: the device side must be one live allocation too ----------------------------- */
static void test_host_copies_checked(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  float host[TN] = {0};
  int line = __LINE__ + 1;
  kbd_status s = kbd_copy_to_device(f->in, host, sizeof host); /* 512 bytes into a 400-byte allocation */
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_copy_to_device (destination) touches bytes [0, 512) of a 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  s = kbd_copy_to_host(host, f->in + 50, sizeof host);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_HAS(s, "kbd_copy_to_host (source) touches bytes [200, 712)");
  s = kbd_memset_device(f->out - 1, 0, sizeof(float) * ALLOC_N);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_HAS(s, "kbd_memset_device (destination) touches bytes [-4, 396)");
  /* a host array where device memory belongs: cudaMemcpy's behaviour is undefined there (a static one: heap
   * memory may reuse the addresses of a freed allocation, and is then named as that use after free) */
  static float not_device[TN];
  s = kbd_copy_to_host(host, not_device, sizeof not_device);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_HAS(s, "kbd_copy_to_host (source) touches");
  MT_ASSERT_HAS(s, "which is not device memory from kbd_malloc");
  float *tmp = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&tmp, sizeof host));
  MT_ASSERT_OK(kbd_free(tmp));
  line = __LINE__ + 1;
  s = kbd_copy_on_device(tmp, f->in, ALLOC_N * sizeof(float));
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_copy_on_device (destination) touches byte 0 of a 512-byte allocation");
  MT_ASSERT_HAS(s, "(use after free)");
  /* in bounds: fine, and 0 bytes touch nothing anywhere */
  MT_ASSERT_OK(kbd_copy_to_host(host, f->in, ALLOC_N * sizeof(float)));
  MT_ASSERT_OK(kbd_copy_to_device(f->host_in, host, 0));
}

/* Each host-side misuse names the caller's file:line and the allocation (where it was allocated, and freed). */
static void test_host_copies_name_the_allocation(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  float host[TN] = {0};
  char b[4096];
  /* into freed memory: a copy to the device and a memset */
  float *tmp = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&tmp, ALLOC_N * sizeof(float)));
  const int free_line = __LINE__ + 1;
  MT_ASSERT_OK(kbd_free(tmp));
  int line = __LINE__ + 1;
  kbd_status s = kbd_copy_to_device(tmp, host, 16);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_copy_to_device (destination) touches byte 0 of a 400-byte allocation");
  MT_ASSERT_HAS(s, "that was freed: allocated at " __FILE__);
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "freed at %s:%d", __FILE__, free_line));
  MT_ASSERT_HAS(s, "(use after free");
  line = __LINE__ + 1;
  s = kbd_memset_device(tmp + 10, 0, 8);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_memset_device (destination) touches byte 40 of a 400-byte allocation");
  MT_ASSERT_HAS(s, mt_fmt(b, sizeof b, "freed at %s:%d", __FILE__, free_line));
  /* from a device range that straddles the end, to the host and on the device; one that straddles the start */
  line = __LINE__ + 1;
  s = kbd_copy_to_host(host, f->in + 50, sizeof host);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_copy_to_host (source) touches bytes [200, 712) of a 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  line = __LINE__ + 1;
  s = kbd_copy_on_device(f->out, f->in + 50, ALLOC_N * sizeof(float));
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_copy_on_device (source) touches bytes [200, 600) of a 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  line = __LINE__ + 1;
  s = kbd_copy_to_host(host, f->in - 2, 16);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_copy_to_host (source) touches bytes [-8, 8) of a 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  /* a memset of a host pointer (static: see test_host_copies_checked) */
  static float not_device[TN];
  line = __LINE__ + 1;
  s = kbd_memset_device(not_device, 0, sizeof not_device);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_memset_device (destination) touches");
  MT_ASSERT_HAS(s, "which is not device memory from kbd_malloc");
  /* the stream-ordered variants are checked the same way */
  line = __LINE__ + 1;
  s = kbd_memset_device_async(f->out + 99, 0, 8, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_memset_device (destination) touches bytes [396, 404) of a 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  line = __LINE__ + 1;
  s = kbd_copy_to_device_async(f->out + 98, host, 16, NULL);
  MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_copy_to_device_async (destination) touches bytes [392, 408) of a 400-byte allocation");
  MT_ASSERT_HAS(s, "allocated at " __FILE__);
  /* nothing was written by the refused calls: f->out is still never-written, f->in still holds host_in */
  MT_ASSERT_OK(kbd_copy_to_host(host, f->in, ALLOC_N * sizeof(float)));
  for (int i = 0; i < ALLOC_N; ++i)
    assert_true(host[i] == f->host_in[i]);
  MT_ASSERT_CODE(run_on(f->out, 1, f->in), KBD_ERR_POISON);
}

/* A device-to-device copy carries the written state: copied garbage is still garbage. */
static void test_copy_on_device_carries_written_state(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  float *half = NULL, *dst = NULL;
  MT_ASSERT_OK(kbd_malloc((void **)&half, ALLOC_N * sizeof(float)));
  MT_ASSERT_OK(kbd_malloc((void **)&dst, ALLOC_N * sizeof(float)));
  MT_ASSERT_OK(kbd_copy_to_device(half + 3, f->host_in, 40 * sizeof(float))); /* floats 3..42 written */
  MT_ASSERT_OK(kbd_memset_device(dst, 0, ALLOC_N * sizeof(float)));
  MT_ASSERT_OK(kbd_copy_on_device(dst + 1, half, 60 * sizeof(float))); /* dst 1..3 and 44..60 now garbage */
  kbd_status s = run_on(dst, ALLOC_N, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_HAS(s, "byte 4 of the 400-byte allocation");
  MT_ASSERT_OK(run_on(dst + 4, 40, f->out)); /* dst 4..43 came from written bytes */
  s = run_on(dst + 4, 41, f->out);
  MT_ASSERT_CODE(s, KBD_ERR_POISON);
  MT_ASSERT_HAS(s, "byte 176 of the 400-byte allocation");
  MT_ASSERT_OK(kbd_free(half));
  MT_ASSERT_OK(kbd_free(dst));
}

/* Many live arrays (more than a host thread's cache of recent hits) and many freed ones: every access still
 * finds its own allocation, and a use after free still names the right one. */
static void test_many_allocations(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  enum { NA = 40 };
  float *v[NA];
  for (int i = 0; i < NA; ++i) {
    MT_ASSERT_OK(kbd_malloc((void **)&v[i], (size_t)(ALLOC_N + i) * sizeof(float)));
    MT_ASSERT_OK(kbd_copy_to_device(v[i], f->host_in, ALLOC_N * sizeof(float)));
  }
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < NA; ++i)
      MT_ASSERT_OK(run_on(v[(i * 7) % NA], ALLOC_N, v[(i * 7 + 1) % NA]));
  for (int i = 0; i < NA; i += 2)
    MT_ASSERT_OK(kbd_free(v[i]));
  for (int i = 0; i < NA; ++i) {
    kbd_status s = run_on(v[i], ALLOC_N, f->out);
    if (i % 2) {
      MT_ASSERT_OK(s);
    } else {
      MT_ASSERT_CODE(s, KBD_ERR_BOUNDS);
      char want[96];
      snprintf(want, sizeof want, "of a %d-byte allocation (base %p) that was freed", (ALLOC_N + i) * 4, (void *)v[i]);
      MT_ASSERT_HAS(s, want);
    }
  }
  for (int i = 1; i < NA; i += 2)
    MT_ASSERT_OK(kbd_free(v[i]));
}

/* Registering memory twice, or memory kbd_malloc owns, is refused (cudaErrorHostMemoryAlreadyRegistered). */
static void test_register_overlap(void **state) {
  gb_fixture *f = (gb_fixture *)*state;
  static float host[TN];
  MT_ASSERT_OK(kbd_host_register(host, sizeof host));
  int line = __LINE__ + 1;
  kbd_status s = kbd_host_register(host + 8, 16);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "kbd_host_register: [");
  MT_ASSERT_HAS(s, "overlaps memory already registered or allocated");
  /* a range that only begins inside the registered one, and one that covers it */
  MT_ASSERT_CODE(kbd_host_register(host + TN - 1, 64), KBD_ERR_INVALID);
  static float around[3 * TN];
  MT_ASSERT_OK(kbd_host_register(around + TN, TN * sizeof(float)));
  MT_ASSERT_CODE(kbd_host_register(around, sizeof around), KBD_ERR_INVALID);
  MT_ASSERT_OK(kbd_host_unregister(around + TN));
  line = __LINE__ + 1;
  s = kbd_host_register(f->in, 16);
  MT_ASSERT_CODE(s, KBD_ERR_INVALID);
  MT_ASSERT_AT(s, line);
  MT_ASSERT_HAS(s, "overlaps memory already registered or allocated");
  /* the refused registrations left the first one as it was: still registered, and unregistered once */
  MT_ASSERT_OK(run_on(host, ALLOC_N, f->out));
  MT_ASSERT_OK(kbd_host_unregister(host));
  MT_ASSERT_CODE(kbd_host_unregister(host), KBD_ERR_INVALID);
  MT_ASSERT_OK(kbd_host_register(around, sizeof around)); /* nothing left there: accepted now */
  MT_ASSERT_OK(kbd_host_unregister(around));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_load_past_allocation, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_store_past_allocation, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_masked_access_within_allocation, gb_setup, gb_teardown),
      MT_TEST(test_free_errors),
      MT_TEST(test_zero_byte_allocation),
      cmocka_unit_test_setup_teardown(test_wholly_past_the_end, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_straddling_the_start, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_use_after_free, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_host_pointer, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_never_written_read, gb_setup, gb_teardown),
      MT_TEST(test_atomics_checked),
      cmocka_unit_test_setup_teardown(test_host_copies_checked, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_host_copies_name_the_allocation, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_copy_on_device_carries_written_state, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_many_allocations, gb_setup, gb_teardown),
      cmocka_unit_test_setup_teardown(test_register_overlap, gb_setup, gb_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
