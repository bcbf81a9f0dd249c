/* gpt2_config.h - the model shape from a Hugging Face GPT-2 config.json. */
#ifndef GPT2_CONFIG_H
#define GPT2_CONFIG_H

#include <kbd/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hugging Face config.json keys: n_layer, n_head, n_embd, vocab_size, n_positions (or n_ctx when n_positions is
 * absent), layer_norm_epsilon (default 1e-5). */
typedef struct gpt2_config {
  int n_layer, n_head, n_embd, vocab_size, n_ctx;
  float ln_eps;
} gpt2_config;

/* Reads dir/config.json. Each size must be a positive integer within int, n_embd a multiple of n_head,
 * layer_norm_epsilon a positive finite number; errors (KBD_ERR_INVALID) name the file and the key. Other keys
 * (activation_function, model_type, ...) are ignored: the example implements GPT-2's gelu_new only. */
kbd_status gpt2_config_load(gpt2_config *c, const char *dir);
/* Writes dir/config.json as Hugging Face does (n_positions and n_ctx both set), with no checks, so tests can write
 * bad shapes too. */
kbd_status gpt2_config_write(const gpt2_config *c, const char *dir);
/* Reads a whole file into a malloc'ed buffer (NUL-terminated, *len bytes before it); errors name the path. Shared by
 * the loaders here. */
kbd_status gpt2_read_file(const char *path, char **text, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* GPT2_CONFIG_H */
