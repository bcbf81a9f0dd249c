/* gpt2_safetensors.h - read and write safetensors files (the format of Hugging Face's model.safetensors).
 *
 * A file is: 8 bytes, the header length N (little-endian u64); N bytes of JSON, an object mapping each tensor name
 * to {"dtype": "F32" | "F16" | "BF16" | ..., "shape": [d0, d1, ...], "data_offsets": [begin, end]} (offsets within
 * the data section, end exclusive) plus an optional "__metadata__" object of strings; then the data section, each
 * tensor row-major, little-endian. docs/gpt2-files.md lists every check gpt2_st_open makes.
 */
#ifndef GPT2_SAFETENSORS_H
#define GPT2_SAFETENSORS_H

#include <stddef.h>

#include <kbd/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpt2_st_dtype { GPT2_ST_F32 = 0, GPT2_ST_F16 = 1, GPT2_ST_BF16 = 2 } gpt2_st_dtype;

typedef struct gpt2_st_tensor {
  const char *name;
  gpt2_st_dtype dtype;
  int ndim;
  long long shape[8];
  size_t offset, bytes; /* within the data section */
} gpt2_st_tensor;

typedef struct gpt2_st_file {
  char *path;
  unsigned char *map;
  size_t size; /* whole file (mmap or read) */
  const unsigned char *data;
  size_t data_bytes;
  gpt2_st_tensor *t; /* in header order */
  int n;
  void *priv;
} gpt2_st_file;

/* Opens and checks the whole header (every malformed file: KBD_ERR_INVALID naming the file and the problem; on any
 * error *f is left zeroed). The file is mapped read-only, not read: a 6 GB gpt2-xl checkpoint costs no copy. */
kbd_status gpt2_st_open(gpt2_st_file *f, const char *path);
void gpt2_st_close(gpt2_st_file *f); /* safe on a zeroed or failed-open struct; zeroes it */
const gpt2_st_tensor *gpt2_st_find(const gpt2_st_file *f, const char *name); /* NULL if absent */
/* Tensor `name` converted to f32 into out (prod(shape) floats): fails (message names the file and tensor) when it is
 * missing, or when its shape is not shape[0..ndim). F16 and BF16 convert exactly (every value, subnormals, inf and
 * NaN included). */
kbd_status gpt2_st_read_f32(const gpt2_st_file *f, const char *name, int ndim, const long long *shape, float *out);

typedef struct gpt2_st_out {
  const char *name;
  gpt2_st_dtype dtype;
  int ndim;
  long long shape[8];
  const void *data; /* prod(shape) elements of dtype, little-endian */
} gpt2_st_out;

/* Writes a real safetensors file (8-byte little-endian header length, JSON header with dtype/shape/data_offsets,
 * "__metadata__" {"format":"pt"}, header padded with spaces to 8 bytes, tensors in order): tests and tools use it. */
kbd_status gpt2_st_write(const char *path, const gpt2_st_out *t, int n);

const char *gpt2_st_dtype_name(gpt2_st_dtype d); /* "F32", "F16", "BF16" */
size_t gpt2_st_dtype_size(gpt2_st_dtype d);      /* 4, 2, 2 */
/* The exact conversions gpt2_st_read_f32 uses, and the rounding ones (to nearest even) tools writing f16/bf16 use. */
float gpt2_st_f16_to_f32(unsigned short h);
float gpt2_st_bf16_to_f32(unsigned short h);
unsigned short gpt2_st_f32_to_f16(float f);
unsigned short gpt2_st_f32_to_bf16(float f);

#ifdef __cplusplus
}
#endif

#endif /* GPT2_SAFETENSORS_H */
