/* gpt2_tokenizer.h - GPT-2's byte-level BPE tokenizer from a model folder's vocab.json + merges.txt.
 *
 * Encoding as OpenAI's encoder.py (and tiktoken's "gpt2" encoding) does: the regex pre-tokenizer splits the text
 * into words, each word's bytes start as the 256 byte tokens, then the adjacent pair of lowest merge rank is merged
 * (every occurrence, left to right) until no pair has a rank. Decoding is the concatenation of the tokens' bytes, so
 * decode(encode(x)) == x for any bytes. docs/gpt2-files.md says what is approximated (Unicode version, invalid
 * UTF-8, special tokens).
 */
#ifndef GPT2_TOKENIZER_H
#define GPT2_TOKENIZER_H

#include <stddef.h>

#include <kbd/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpt2_tokenizer gpt2_tokenizer;

/* Loads dir/vocab.json (token -> id; every token spelled in GPT-2's byte-to-unicode alphabet, all 256 byte tokens
 * present) and dir/merges.txt (first line "#version: ..." optional; then one "LEFT RIGHT" pair a line, both tokens
 * and their concatenation in the vocabulary). Errors name the file (and line) and the problem. */
kbd_status gpt2_tok_load(gpt2_tokenizer **t, const char *dir);
void gpt2_tok_free(gpt2_tokenizer *t);       /* NULL is fine */
int gpt2_tok_vocab(const gpt2_tokenizer *t); /* largest id + 1 */
/* Encodes text[0..len) (UTF-8; any bytes are accepted). *ids is malloc'ed (never NULL on success; free it), *n ids.
 * "<|endoftext|>" in the text is ordinary text, as in encoder.py and tiktoken's encode_ordinary. */
kbd_status gpt2_tok_encode(const gpt2_tokenizer *t, const char *text, size_t len, int **ids, int *n);
/* The raw bytes of one token (for streaming output); NULL and *len 0 for an id out of range. */
const char *gpt2_tok_bytes(const gpt2_tokenizer *t, int id, size_t *len);
/* The id of the token whose bytes are s[0..len), -1 if none (e.g. "<|endoftext|>" -> 50256 in GPT-2). */
int gpt2_tok_find(const gpt2_tokenizer *t, const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* GPT2_TOKENIZER_H */
