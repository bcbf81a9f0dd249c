/* ref_gpt2.h - an independent GPT-2 forward pass in plain C, double precision, for the tests of examples/gpt2. It
 * shares no code with the example: it reads the test's own f32 weight arrays (the Hugging Face layout: Conv1D weights
 * [in][out]) and recomputes the whole sequence for every call, the textbook way (no KV cache, no fusion). */
#ifndef REF_GPT2_H
#define REF_GPT2_H

typedef struct ref_gpt2_layer {
  const float *ln1_g, *ln1_b, *w_qkv, *b_qkv, *w_o, *b_o, *ln2_g, *ln2_b, *w_fc, *b_fc, *w_proj, *b_proj;
} ref_gpt2_layer;

typedef struct ref_gpt2 {
  int n_layer, n_head, n_embd, vocab, n_ctx;
  double eps;
  const float *wte, *wpe, *lnf_g, *lnf_b; /* wte [vocab][n_embd] (tied LM head), wpe [n_ctx][n_embd] */
  const ref_gpt2_layer *layers;
} ref_gpt2;

/* logits [t][vocab] of every position of ids[0 .. t-1]. Returns 0, or -1 when out of memory. */
int ref_gpt2_forward(const ref_gpt2 *m, const int *ids, int t, double *logits);
/* The argmax of a row (lowest id on a tie) and the gap to the runner-up. */
int ref_gpt2_argmax(const double *row, int n, double *gap);

#endif
