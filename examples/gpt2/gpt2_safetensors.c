/* gpt2_safetensors.c - safetensors reader (mmap) and writer for the GPT-2 example (gpt2_safetensors.h). */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L /* mmap, open, fstat under -std=c11 */
#endif
#include "gpt2_safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpt2_json.h"

/* The data section is little-endian and is copied into host floats as it is. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gpt2_safetensors.c reads little-endian data directly: a big-endian host needs byte swaps here"
#endif

typedef struct st_priv {
  gpt2_json *hdr; /* owns the tensor names */
  int mapped;     /* map came from mmap (else malloc) */
  int *by_name;   /* tensor indices sorted by name, for gpt2_st_find */
} st_priv;

const char *gpt2_st_dtype_name(gpt2_st_dtype d) {
  switch (d) {
  case GPT2_ST_F32: return "F32";
  case GPT2_ST_F16: return "F16";
  case GPT2_ST_BF16: return "BF16";
  }
  return "?";
}

size_t gpt2_st_dtype_size(gpt2_st_dtype d) {
  return d == GPT2_ST_F32 ? 4 : d == GPT2_ST_F16 || d == GPT2_ST_BF16 ? 2 : 0;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

float gpt2_st_f16_to_f32(unsigned short h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0) {
    /* zero or subnormal: m * 2^-24, exact in f32 (a 10-bit integer times a power of two) */
    const float v = (float)m * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (e == 31) return bits_f32(sign | 0x7F800000u | (m << 13)); /* inf, NaN with its payload */
  return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

float gpt2_st_bf16_to_f32(unsigned short h) { return bits_f32((uint32_t)h << 16); }

unsigned short gpt2_st_f32_to_f16(float f) {
  const uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return (unsigned short)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu)); /* NaN stays NaN */
  if (ax >= 0x477FF000u) return (unsigned short)(sign | 0x7C00u);                        /* >= 65520: rounds to inf */
  const uint32_t e = ax >> 23, mant = ax & 0x7FFFFFu;
  if (e < 113) {                              /* below 2^-14: a half subnormal, units of 2^-24 */
    if (e < 102) return (unsigned short)sign; /* below 2^-25: rounds to zero */
    const uint32_t m = mant | 0x800000u, s = 126u - e;
    uint32_t q = m >> s;
    const uint32_t rem = m & ((1u << s) - 1u), half = 1u << (s - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return (unsigned short)(sign | q);
  }
  uint32_t h = ((e - 112u) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h; /* a carry into the exponent is the right result */
  return (unsigned short)(sign | h);
}

unsigned short gpt2_st_f32_to_bf16(float f) {
  const uint32_t x = f32_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((x >> 16) | 0x40u);
  return (unsigned short)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

static void st_unmap(gpt2_st_file *f) {
  st_priv *p = (st_priv *)f->priv;
  if (f->map) {
    if (p && p->mapped)
      munmap(f->map, f->size);
    else
      free(f->map);
  }
}

void gpt2_st_close(gpt2_st_file *f) {
  if (!f) return;
  st_priv *p = (st_priv *)f->priv;
  st_unmap(f);
  if (p) {
    gpt2_json_free(p->hdr);
    free(p->by_name);
    free(p);
  }
  free(f->t);
  free(f->path);
  memset(f, 0, sizeof *f);
}

/* An error about the file (prefix "PATH: "), the partly opened file closed. */
KBD_PRINTF(3, 4) static kbd_status st_fail(gpt2_st_file *f, const char *path, const char *fmt, ...) {
  kbd_text t = KBD_TEXT_INIT;
  kbd_text_append(&t, "%s: ", path);
  va_list ap;
  va_start(ap, fmt);
  kbd_text_vappend(&t, fmt, ap);
  va_end(ap);
  kbd_status s = kbd_status_text(KBD_ERR_INVALID, &t);
  kbd_text_free(&t);
  gpt2_st_close(f);
  return s;
}

/* An error about one tensor: "PATH: tensor "NAME": PROBLEM". */
KBD_PRINTF(5, 6)
static kbd_status st_fail_tensor(gpt2_st_file *f, const char *path, const char *name, size_t nlen, const char *fmt,
                                 ...) {
  kbd_text t = KBD_TEXT_INIT;
  kbd_text_append(&t, "%s: tensor ", path);
  gpt2_json_quote(&t, name, nlen);
  kbd_text_puts(&t, ": ");
  va_list ap;
  va_start(ap, fmt);
  kbd_text_vappend(&t, fmt, ap);
  va_end(ap);
  kbd_status s = kbd_status_text(KBD_ERR_INVALID, &t);
  kbd_text_free(&t);
  gpt2_st_close(f);
  return s;
}

/* Sort keys carry what they compare (qsort has no context argument, and a global would race between threads). */
typedef struct st_key {
  const char *name;
  size_t offset, bytes;
  int idx;
} st_key;
static int st_by_name_cmp(const void *a, const void *b) {
  return strcmp(((const st_key *)a)->name, ((const st_key *)b)->name);
}
static int st_by_offset_cmp(const void *a, const void *b) {
  const st_key *x = (const st_key *)a, *y = (const st_key *)b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static void shape_text(kbd_text *t, int ndim, const long long *shape) {
  kbd_text_puts(t, "[");
  for (int d = 0; d < ndim; ++d)
    kbd_text_append(t, d ? ", %lld" : "%lld", shape[d]);
  kbd_text_puts(t, "]");
}

/* The dtypes of the safetensors format that this loader does not convert: named as unsupported, not unknown. */
static const char *const st_other_dtypes[] = {"F64",     "I64",     "U64",     "I32",  "U32",     "I16",
                                              "U16",     "I8",      "U8",      "BOOL", "F8_E4M3", "F8_E5M2",
                                              "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",   "C64"};

/* Checks one header entry and fills *t. Returns 0, or -1 after st_fail_tensor (f closed, *s set). */
static int st_entry(gpt2_st_file *f, const char *path, const char *name, size_t nlen, const gpt2_json *v,
                    gpt2_st_tensor *t, kbd_status *s) {
  if (strlen(name) != nlen) {
    *s = st_fail_tensor(f, path, name, nlen, "the name holds a NUL byte");
    return -1;
  }
  if (gpt2_json_kind(v) != GPT2_JSON_OBJ) {
    *s = st_fail_tensor(f, path, name, nlen,
                        "the entry is %s, expected an object {\"dtype\", \"shape\", \"data_offsets\"}",
                        gpt2_json_kind_name(gpt2_json_kind(v)));
    return -1;
  }
  const gpt2_json *dt = gpt2_json_get(v, "dtype"), *sh = gpt2_json_get(v, "shape"),
                  *off = gpt2_json_get(v, "data_offsets");
  if (!dt || !sh || !off) {
    *s = st_fail_tensor(f, path, name, nlen, "\"%s\" is missing", !dt ? "dtype" : !sh ? "shape" : "data_offsets");
    return -1;
  }
  size_t dlen;
  const char *ds = gpt2_json_str(dt, &dlen);
  if (!ds) {
    *s = st_fail_tensor(f, path, name, nlen, "\"dtype\" is %s, expected a string such as \"F32\"",
                        gpt2_json_kind_name(gpt2_json_kind(dt)));
    return -1;
  }
  if (!strcmp(ds, "F32"))
    t->dtype = GPT2_ST_F32;
  else if (!strcmp(ds, "F16"))
    t->dtype = GPT2_ST_F16;
  else if (!strcmp(ds, "BF16"))
    t->dtype = GPT2_ST_BF16;
  else {
    int known = 0;
    for (size_t k = 0; k < sizeof st_other_dtypes / sizeof st_other_dtypes[0]; ++k)
      known |= !strcmp(ds, st_other_dtypes[k]);
    kbd_text m = KBD_TEXT_INIT;
    gpt2_json_quote(&m, ds, dlen);
    *s = st_fail_tensor(f, path, name, nlen, "dtype %s is %s (this loader reads F32, F16 and BF16)", kbd_text_str(&m),
                        known ? "not supported" : "not a safetensors dtype");
    kbd_text_free(&m);
    return -1;
  }
  if (gpt2_json_kind(sh) != GPT2_JSON_ARR) {
    *s = st_fail_tensor(f, path, name, nlen, "\"shape\" is %s, expected an array of sizes",
                        gpt2_json_kind_name(gpt2_json_kind(sh)));
    return -1;
  }
  const size_t nd = gpt2_json_count(sh);
  if (nd > 8) {
    *s = st_fail_tensor(f, path, name, nlen, "\"shape\" has %zu dimensions (at most 8)", nd);
    return -1;
  }
  t->ndim = (int)nd;
  const size_t esize = gpt2_st_dtype_size(t->dtype);
  size_t need = esize;
  for (size_t d = 0; d < nd; ++d) {
    long long e;
    if (gpt2_json_num(gpt2_json_at(sh, d, NULL), NULL, &e) != 2 || e < 0) {
      *s = st_fail_tensor(f, path, name, nlen, "shape[%zu] is not a size (a non-negative integer)", d);
      return -1;
    }
    t->shape[d] = e;
    if (e && need > SIZE_MAX / (unsigned long long)e) {
      *s = st_fail_tensor(f, path, name, nlen, "shape overflows the address space");
      return -1;
    }
    need *= (size_t)e;
  }
  long long b0, b1;
  if (gpt2_json_kind(off) != GPT2_JSON_ARR || gpt2_json_count(off) != 2 ||
      gpt2_json_num(gpt2_json_at(off, 0, NULL), NULL, &b0) != 2 ||
      gpt2_json_num(gpt2_json_at(off, 1, NULL), NULL, &b1) != 2 || b0 < 0 || b1 < 0) {
    *s = st_fail_tensor(f, path, name, nlen, "\"data_offsets\" is not [begin, end] (two non-negative integers)");
    return -1;
  }
  if (b1 < b0 || (unsigned long long)b1 > f->data_bytes) {
    *s = st_fail_tensor(f, path, name, nlen,
                        "data_offsets [%lld, %lld] are out of range: the data section has %zu bytes (begin <= end <= "
                        "%zu); the file may be truncated",
                        b0, b1, f->data_bytes, f->data_bytes);
    return -1;
  }
  if ((unsigned long long)(b1 - b0) != need) {
    kbd_text m = KBD_TEXT_INIT;
    shape_text(&m, t->ndim, t->shape);
    *s = st_fail_tensor(f, path, name, nlen, "data_offsets [%lld, %lld] hold %lld bytes, but shape %s of %s needs %zu",
                        b0, b1, b1 - b0, kbd_text_str(&m), ds, need);
    kbd_text_free(&m);
    return -1;
  }
  t->name = name;
  t->offset = (size_t)b0;
  t->bytes = need;
  return 0;
}

kbd_status gpt2_st_open(gpt2_st_file *f, const char *path) {
  if (!f) return kbd_status_make(KBD_ERR_INVALID, "gpt2_st_open: f is NULL");
  memset(f, 0, sizeof *f);
  if (!path) return kbd_status_make(KBD_ERR_INVALID, "gpt2_st_open: path is NULL");
  st_priv *p = (st_priv *)calloc(1, sizeof *p);
  f->path = (char *)malloc(strlen(path) + 1);
  if (!p || !f->path) {
    free(p);
    free(f->path);
    f->path = NULL;
    return kbd_status_make(KBD_ERR_OOM, "%s: out of memory", path);
  }
  f->priv = p;
  strcpy(f->path, path);

  const int fd = open(path, O_RDONLY);
  if (fd < 0) return st_fail(f, path, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return st_fail(f, path, "not a regular file");
  }
  const size_t size = (size_t)st.st_size;
  if (size < 8) {
    close(fd);
    return st_fail(
        f, path, "%zu bytes, shorter than the 8-byte header length a safetensors file starts with (truncated?)", size);
  }
  void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m != MAP_FAILED) {
    p->mapped = 1;
    f->map = (unsigned char *)m;
  } else {
    /* Some file systems cannot map; read the file instead. */
    f->map = (unsigned char *)malloc(size);
    if (!f->map) {
      close(fd);
      return st_fail(f, path, "cannot map (%s) and out of memory to read its %zu bytes", strerror(errno), size);
    }
    size_t got = 0;
    while (got < size) {
      const ssize_t r = read(fd, f->map + got, size - got);
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (got < size) {
      close(fd);
      f->size = size;
      return st_fail(f, path, "read %zu of %zu bytes: %s", got, size, strerror(errno));
    }
  }
  close(fd);
  f->size = size;

  unsigned long long hlen = 0;
  for (int k = 7; k >= 0; --k)
    hlen = hlen << 8 | f->map[k];
  if (hlen > size - 8)
    return st_fail(f, path,
                   "header length %llu bytes runs past the end of the file (%zu bytes follow the 8-byte length): the "
                   "file is truncated or not safetensors",
                   hlen, size - 8);
  f->data = f->map + 8 + hlen;
  f->data_bytes = size - 8 - (size_t)hlen;

  kbd_text what = KBD_TEXT_INIT;
  kbd_text_append(&what, "%s: header", path);
  kbd_status s = gpt2_json_parse(&p->hdr, (const char *)f->map + 8, (size_t)hlen, kbd_text_str(&what));
  kbd_text_free(&what);
  if (!kbd_ok(s)) {
    gpt2_st_close(f);
    return s;
  }
  if (gpt2_json_kind(p->hdr) != GPT2_JSON_OBJ)
    return st_fail(f, path, "the header is %s, not a JSON object of tensors",
                   gpt2_json_kind_name(gpt2_json_kind(p->hdr)));
  const size_t ne = gpt2_json_count(p->hdr);
  if (ne > INT_MAX) return st_fail(f, path, "%zu header entries: too many", ne);
  f->t = (gpt2_st_tensor *)calloc(ne ? ne : 1, sizeof *f->t);
  p->by_name = (int *)malloc((ne ? ne : 1) * sizeof *p->by_name);
  if (!f->t || !p->by_name) {
    gpt2_st_close(f);
    return kbd_status_make(KBD_ERR_OOM, "%s: out of memory for %zu tensors", path, ne);
  }
  for (size_t i = 0; i < ne; ++i) {
    size_t nlen;
    const char *name = gpt2_json_key(p->hdr, i, &nlen);
    const gpt2_json *v = gpt2_json_at(p->hdr, i, NULL);
    if (!strcmp(name, "__metadata__")) {
      /* the format says: a map of strings to strings */
      if (gpt2_json_kind(v) != GPT2_JSON_OBJ) return st_fail(f, path, "\"__metadata__\" is not an object");
      for (size_t k = 0; k < gpt2_json_count(v); ++k)
        if (gpt2_json_kind(gpt2_json_at(v, k, NULL)) != GPT2_JSON_STR)
          return st_fail(f, path, "\"__metadata__\" entry %zu is not a string", k);
      continue;
    }
    if (st_entry(f, path, name, nlen, v, &f->t[f->n], &s)) return s;
    ++f->n;
  }
  /* Overlaps: sorted by offset, each tensor must begin where or after the one before ends. */
  st_key *ks = (st_key *)malloc((f->n ? (size_t)f->n : 1) * sizeof *ks);
  if (!ks) {
    gpt2_st_close(f);
    return kbd_status_make(KBD_ERR_OOM, "%s: out of memory for %zu tensors", path, ne);
  }
  for (int i = 0; i < f->n; ++i) {
    ks[i].name = f->t[i].name;
    ks[i].offset = f->t[i].offset;
    ks[i].bytes = f->t[i].bytes;
    ks[i].idx = i;
  }
  qsort(ks, (size_t)f->n, sizeof *ks, st_by_offset_cmp);
  for (int i = 1; i < f->n; ++i) {
    const st_key *a = &ks[i - 1], *b = &ks[i];
    if (b->offset < a->offset + a->bytes) {
      kbd_text msg = KBD_TEXT_INIT;
      kbd_text_append(&msg, "%s: tensors ", path);
      gpt2_json_quote(&msg, a->name, strlen(a->name));
      kbd_text_append(&msg, " (bytes %zu..%zu) and ", a->offset, a->offset + a->bytes);
      gpt2_json_quote(&msg, b->name, strlen(b->name));
      kbd_text_append(&msg, " (bytes %zu..%zu) overlap in the data section", b->offset, b->offset + b->bytes);
      s = kbd_status_text(KBD_ERR_INVALID, &msg);
      kbd_text_free(&msg);
      free(ks);
      gpt2_st_close(f);
      return s;
    }
  }
  qsort(ks, (size_t)f->n, sizeof *ks, st_by_name_cmp);
  for (int i = 0; i < f->n; ++i)
    p->by_name[i] = ks[i].idx;
  free(ks);
  return kbd_status_ok();
}

const gpt2_st_tensor *gpt2_st_find(const gpt2_st_file *f, const char *name) {
  if (!f || !f->priv || !name) return NULL;
  const st_priv *p = (const st_priv *)f->priv;
  int lo = 0, hi = f->n;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const int c = strcmp(f->t[p->by_name[mid]].name, name);
    if (!c) return &f->t[p->by_name[mid]];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

kbd_status gpt2_st_read_f32(const gpt2_st_file *f, const char *name, int ndim, const long long *shape, float *out) {
  if (!f || !f->priv) return kbd_status_make(KBD_ERR_INVALID, "gpt2_st_read_f32: the file is not open");
  if (!name) return kbd_status_make(KBD_ERR_INVALID, "%s: gpt2_st_read_f32: name is NULL", f->path);
  const gpt2_st_tensor *t = gpt2_st_find(f, name);
  if (!t) return kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\" is missing", f->path, name);
  if (ndim < 0 || ndim > 8 || (ndim && !shape))
    return kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\": asked for %d dimensions (0..8, shape given)", f->path,
                           name, ndim);
  int same = t->ndim == ndim;
  for (int d = 0; same && d < ndim; ++d)
    same = t->shape[d] == shape[d];
  if (!same) {
    kbd_text m = KBD_TEXT_INIT;
    kbd_text_append(&m, "%s: tensor \"%s\" has shape ", f->path, name);
    shape_text(&m, t->ndim, t->shape);
    kbd_text_puts(&m, ", expected ");
    shape_text(&m, ndim, shape);
    kbd_status s = kbd_status_text(KBD_ERR_INVALID, &m);
    kbd_text_free(&m);
    return s;
  }
  if (!out && t->bytes) return kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\": out is NULL", f->path, name);
  const unsigned char *src = f->data + t->offset;
  const size_t n = t->bytes / gpt2_st_dtype_size(t->dtype);
  if (t->dtype == GPT2_ST_F32) {
    if (n) memcpy(out, src, t->bytes);
  } else {
    for (size_t k = 0; k < n; ++k) {
      const unsigned short h = (unsigned short)(src[2 * k] | src[2 * k + 1] << 8);
      out[k] = t->dtype == GPT2_ST_F16 ? gpt2_st_f16_to_f32(h) : gpt2_st_bf16_to_f32(h);
    }
  }
  return kbd_status_ok();
}

/* A JSON string literal for a tensor name: '"' and '\' escaped, control bytes as \u00XX. */
static void json_str_lit(kbd_text *t, const char *s) {
  kbd_text_puts(t, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; ++c) {
    if (*c == '"' || *c == '\\')
      kbd_text_append(t, "\\%c", *c);
    else if (*c < 0x20)
      kbd_text_append(t, "\\u%04X", *c);
    else
      kbd_text_append(t, "%c", *c);
  }
  kbd_text_puts(t, "\"");
}

kbd_status gpt2_st_write(const char *path, const gpt2_st_out *t, int n) {
  if (!path) return kbd_status_make(KBD_ERR_INVALID, "gpt2_st_write: path is NULL");
  if (n < 0 || (n && !t))
    return kbd_status_make(KBD_ERR_INVALID, "%s: gpt2_st_write: %d tensors at %p", path, n, (const void *)t);
  size_t *bytes = (size_t *)calloc(n ? (size_t)n : 1, sizeof *bytes);
  if (!bytes) return kbd_status_make(KBD_ERR_OOM, "%s: out of memory", path);
  kbd_text h = KBD_TEXT_INIT;
  kbd_text_puts(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
  size_t at = 0;
  kbd_status s = kbd_status_ok();
  for (int i = 0; i < n && kbd_ok(s); ++i) {
    const gpt2_st_out *o = &t[i];
    const size_t es = gpt2_st_dtype_size(o->dtype);
    if (!o->name || !strcmp(o->name, "__metadata__"))
      s = kbd_status_make(KBD_ERR_INVALID, "%s: tensor %d: the name is %s", path, i, o->name ? "reserved" : "NULL");
    else if (!es)
      s = kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\": dtype %d is not GPT2_ST_F32/F16/BF16", path, o->name,
                          (int)o->dtype);
    else if (o->ndim < 0 || o->ndim > 8)
      s = kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\": ndim %d (0..8)", path, o->name, o->ndim);
    for (int j = 0; j < i && kbd_ok(s); ++j)
      if (!strcmp(t[j].name, o->name))
        s = kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\" is given twice (%d and %d)", path, o->name, j, i);
    size_t b = es;
    for (int d = 0; d < o->ndim && kbd_ok(s); ++d) {
      if (o->shape[d] < 0 || (o->shape[d] && b > SIZE_MAX / (unsigned long long)o->shape[d]))
        s = kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\": shape[%d] = %lld", path, o->name, d, o->shape[d]);
      else
        b *= (size_t)o->shape[d];
    }
    if (!kbd_ok(s)) break;
    if (b && !o->data) {
      s = kbd_status_make(KBD_ERR_INVALID, "%s: tensor \"%s\": data is NULL", path, o->name);
      break;
    }
    bytes[i] = b;
    kbd_text_puts(&h, ",");
    json_str_lit(&h, o->name);
    kbd_text_append(&h, ":{\"dtype\":\"%s\",\"shape\":", gpt2_st_dtype_name(o->dtype));
    shape_text(&h, o->ndim, o->shape);
    kbd_text_append(&h, ",\"data_offsets\":[%zu,%zu]}", at, at + b);
    at += b;
  }
  kbd_text_puts(&h, "}");
  /* The data section then starts 8-byte aligned in the file, as the format's writers do. */
  while (kbd_ok(s) && h.len % 8)
    kbd_text_puts(&h, " ");
  if (kbd_ok(s) && h.oom) s = kbd_status_make(KBD_ERR_OOM, "%s: out of memory for the header", path);
  if (!kbd_ok(s)) {
    kbd_text_free(&h);
    free(bytes);
    return s;
  }
  FILE *fp = fopen(path, "wb");
  if (!fp) {
    s = kbd_status_make(KBD_ERR_INVALID, "%s: cannot create: %s", path, strerror(errno));
  } else {
    unsigned char len8[8];
    for (int k = 0; k < 8; ++k)
      len8[k] = (unsigned char)((unsigned long long)h.len >> (8 * k));
    int ok = fwrite(len8, 1, 8, fp) == 8 && fwrite(h.s, 1, h.len, fp) == h.len;
    for (int i = 0; ok && i < n; ++i)
      ok = !bytes[i] || fwrite(t[i].data, 1, bytes[i], fp) == bytes[i];
    const int err = errno;
    if (fclose(fp) != 0) ok = 0;
    if (!ok) {
      s = kbd_status_make(KBD_ERR_INVALID, "%s: write failed: %s", path, strerror(err));
      remove(path);
    }
  }
  kbd_text_free(&h);
  free(bytes);
  return s;
}
