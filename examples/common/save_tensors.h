/* save_tensors.h - `--save DIR` of the GEMM and attention examples: the tensors a run read and wrote, for a second
 * opinion (tools/gpu-check/torch_check.py recomputes them with PyTorch). Host code, plain C; copy it along with an
 * example that uses it.
 *
 * Every tensor is one file holding the buffer the kernel read or wrote, padding included, as raw little-endian
 * elements; DIR/manifest.txt has key=value lines: the parameters, and per tensor <key>.file, .dtype, .layout,
 * .dims (names of the logical indices), .shape, .strides (elements per step of each logical index) and .elems (elements
 * in the file). The manifest is written as manifest.txt.part and renamed when everything was written, so a manifest.txt
 * always describes a whole run. Any error is reported with the path and errno's text. */
#ifndef KBD_EXAMPLE_SAVE_TENSORS_H
#define KBD_EXAMPLE_SAVE_TENSORS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct save_ctx {
  const char *dir;
  FILE *man; /* DIR/manifest.txt.part */
  int failed;
} save_ctx;

static char *save_path(const char *dir, const char *name) {
  const size_t len = strlen(dir) + strlen(name) + 2;
  char *p = (char *)malloc(len);
  if (p)
    snprintf(p, len, "%s/%s", dir, name);
  else
    fprintf(stderr, "--save: out of memory\n");
  return p;
}

static void save_error(save_ctx *s, const char *path, int err) {
  fprintf(stderr, "--save: cannot write %s: %s\n", path, err ? strerror(err) : "I/O error");
  s->failed = 1;
}

static int save_begin(save_ctx *s, const char *dir) {
  const unsigned short one = 1;
  s->dir = dir, s->man = NULL, s->failed = 1;
  if (*(const unsigned char *)&one != 1) {
    fprintf(stderr, "--save: this host is big-endian; the files are defined as little-endian\n");
    return 0;
  }
  char *path = save_path(dir, "manifest.txt"), *part = save_path(dir, "manifest.txt.part");
  if (path && part) {
    remove(path); /* a stale manifest must not describe this run's files */
    errno = 0;
    if (!(s->man = fopen(part, "w")))
      save_error(s, part, errno);
    else
      s->failed = 0;
  }
  free(path), free(part);
  return !s->failed;
}

/* Writes elems elements of esize bytes to DIR/<key>.bin and describes them in the manifest. */
static void save_tensor(save_ctx *s, const char *key, const char *dtype, const char *layout, const char *dims,
                        const void *data, long long elems, int esize, int rank, const long long *shape,
                        const long long *strides) {
  if (s->failed) return;
  const size_t nlen = strlen(key) + 5;
  char *name = (char *)malloc(nlen), *path = NULL;
  if (name)
    snprintf(name, nlen, "%s.bin", key);
  else
    fprintf(stderr, "--save: out of memory\n");
  if (!name || !(path = save_path(s->dir, name))) {
    s->failed = 1;
    free(name);
    return;
  }
  errno = 0;
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(data, (size_t)esize, (size_t)elems, f) == (size_t)elems, err = errno;
  if (f && fclose(f) != 0 && ok) ok = 0, err = errno;
  if (!ok) {
    save_error(s, path, err);
    if (f) remove(path);
  }
  fprintf(s->man, "%s.file=%s\n%s.dtype=%s\n%s.layout=%s\n%s.dims=%s\n%s.shape=", key, name, key, dtype, key, layout,
          key, dims, key);
  for (int i = 0; i < rank; ++i)
    fprintf(s->man, "%s%lld", i ? "," : "", shape[i]);
  fprintf(s->man, "\n%s.strides=", key);
  for (int i = 0; i < rank; ++i)
    fprintf(s->man, "%s%lld", i ? "," : "", strides[i]);
  fprintf(s->man, "\n%s.elems=%lld\n", key, elems);
  free(name), free(path);
}

/* Closes the manifest and gives it its name; 0 when everything was written, else 1 (the manifest removed). */
static int save_end(save_ctx *s) {
  char *path = save_path(s->dir, "manifest.txt"), *part = save_path(s->dir, "manifest.txt.part");
  int ok = !s->failed && path && part;
  errno = 0;
  if (s->man && (ferror(s->man) | fclose(s->man)) != 0 && ok) ok = 0, save_error(s, part, errno);
  if (ok && rename(part, path) != 0) ok = 0, save_error(s, path, errno);
  if (!ok && part) remove(part);
  free(path), free(part);
  return ok ? 0 : 1;
}

#endif /* KBD_EXAMPLE_SAVE_TENSORS_H */
