/* gpt2_json.h - a small JSON parser for the GPT-2 example's files (safetensors header, config.json, vocab.json).
 *
 * Our own rather than a distribution library (cJSON and jansson are Debian packages): kbd is header-only and its
 * examples build with nothing but a compiler and CMake, so a loader that needed libcjson-dev would make the GPT-2
 * example the one program that does not build on a bare machine. The parser is small, strict (RFC 8259 grammar,
 * valid UTF-8, no duplicate keys) and fuzzed under ASan/UBSan by tests/gpt2/test_gpt2_json.c; docs/gpt2-files.md.
 *
 * A parsed document is a tree owned by its root: gpt2_json_free(root) releases everything, and every pointer the
 * accessors return (values, keys, strings) lives until then.
 */
#ifndef GPT2_JSON_H
#define GPT2_JSON_H

#include <stddef.h>

#include <kbd/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpt2_json_type {
  GPT2_JSON_NULL,
  GPT2_JSON_BOOL,
  GPT2_JSON_NUM,
  GPT2_JSON_STR,
  GPT2_JSON_ARR,
  GPT2_JSON_OBJ
} gpt2_json_type;

typedef struct gpt2_json gpt2_json;

/* Nesting deeper than this is an error, not a stack overflow: the parser recurses once per level. */
#define GPT2_JSON_MAX_DEPTH 256

/* Parses text[0..len) (no NUL needed). On error (KBD_ERR_INVALID; KBD_ERR_OOM when memory runs out) *out is NULL and
 * the message reads "WHAT: byte B (line L, column C): PROBLEM". Strings are unescaped to UTF-8 (\uXXXX with
 * surrogate pairs; a string may hold NUL bytes: use the length gpt2_json_str gives). Numbers are kept as a double
 * and, when integral and within long long, exactly as an integer (digits beyond 2^53 included). */
kbd_status gpt2_json_parse(gpt2_json **out, const char *text, size_t len, const char *what);
/* Length of the valid UTF-8 sequence at p (avail bytes) and its code point in *cp, or 0 when invalid: overlong forms,
 * UTF-16 surrogates and code points past U+10FFFF are invalid (RFC 3629). The JSON parser and the tokenizer's
 * pre-tokenizer share it. */
size_t gpt2_utf8_decode(const unsigned char *p, size_t avail, unsigned *cp);
void gpt2_json_free(gpt2_json *v); /* NULL is fine */

gpt2_json_type gpt2_json_kind(const gpt2_json *v);
/* The value of `key` (a C string: keys holding NUL bytes are not found), NULL if absent or obj is not an object.
 * O(log n): objects keep their keys sorted beside the document order. */
const gpt2_json *gpt2_json_get(const gpt2_json *obj, const char *key);
size_t gpt2_json_count(const gpt2_json *v); /* entries of an array or object, 0 otherwise */
/* Entry i in document order (NULL when out of range or v is neither); for an object *key is its key. */
const gpt2_json *gpt2_json_at(const gpt2_json *v, size_t i, const char **key /* may be NULL */);
/* Key of object entry i and its length in bytes (keys may hold NUL); NULL when out of range. */
const char *gpt2_json_key(const gpt2_json *obj, size_t i, size_t *len);
const char *gpt2_json_str(const gpt2_json *v, size_t *len /* may be NULL */); /* NULL if not a string */
/* 0 when v is not a number; 1 when it is (*d set); 2 when it is also an integer within long long (*i set too). */
int gpt2_json_num(const gpt2_json *v, double *d /* may be NULL */, long long *i /* may be NULL */);
int gpt2_json_bool(const gpt2_json *v);            /* 1 for true, 0 for false or not a bool */
const char *gpt2_json_kind_name(gpt2_json_type t); /* "null", "a boolean", "a number", ... for messages */
/* Appends s[0..len) to a message in double quotes, bytes outside printable ASCII as \xNN, cut after 64 bytes with
 * "..." after the quote: untrusted names (keys, token strings) stay one readable line in an error message. */
void gpt2_json_quote(kbd_text *t, const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* GPT2_JSON_H */
