/* attention_cudnn.h - cuDNN's fused attention as the second baseline of bench/attention_gpu.c (docs/benchmarks.md,
 * "Attention"). Built only when bench/CMakeLists.txt finds cuDNN (libcudnn) and the cudnn_frontend headers
 * (KBD_CUDNN_FRONTEND_INCLUDE, tools/fetch-cudnn-frontend.sh); then KBD_BENCH_HAVE_CUDNN is defined for
 * attention_gpu.c. The implementation (attention_cudnn.cpp) is C++17: the frontend is a C++ header library. */
#ifndef KBD_BENCH_ATTENTION_CUDNN_H
#define KBD_BENCH_ATTENTION_CUDNN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One forward attention call in kbd's tensor layout: q [batch, heads_q, seq_q, head_dim], k and v [batch,
 * heads_kv, seq_k, head_dim], o like q, all contiguous, bf16 (f16 = 0) or f16, softmax scale `scale`, causal
 * aligned bottom-right (key j visible to query i when j <= i + seq_k - seq_q), as examples/attention. */
typedef struct attn_cudnn_case {
  int batch, heads_q, heads_kv, seq_q, seq_k, head_dim, causal, f16;
  float scale;
  const void *q, *k, *v;
  void *o;
} attn_cudnn_case;

/* Builds cuDNN's SDPA graph for c (cached: a call with the same shape reuses the plan) and enqueues one call on
 * the default stream (no wait, as attn_run).
 * Returns 0, or -1 with a message in err (cuDNN has no engine for the shape, no device, ...). */
int attn_cudnn_run(const attn_cudnn_case *c, char *err, size_t errlen);

/* cuDNN's version as the library reports it (e.g. 91900), 0 if it cannot be loaded. */
long attn_cudnn_version(void);

/* Frees the cached graph, handle and workspace. */
void attn_cudnn_release(void);

#ifdef __cplusplus
}
#endif
#endif
