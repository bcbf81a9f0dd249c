/* test_gpt2_json.c - examples/gpt2's JSON parser: valid documents (nesting, escapes, surrogate pairs, numbers),
 * every kind of malformed input reported with its byte offset and line:column, and a seeded mutation fuzz that
 * must never crash or leak (the san_gpt2_json build runs it under ASan + UBSan + LeakSanitizer). */
#define _DEFAULT_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpt2_json.h"
#include "loader_util.h"

static gpt2_json *parse_ok(const char *text) {
  gpt2_json *v = NULL;
  LU_OK(gpt2_json_parse(&v, text, strlen(text), "t.json"));
  assert_non_null(v);
  return v;
}

static void assert_str(const gpt2_json *v, const char *want, size_t wlen) {
  size_t n = 99;
  const char *s = gpt2_json_str(v, &n);
  assert_non_null(s);
  assert_int_equal(n, wlen);
  assert_memory_equal(s, want, wlen);
  assert_int_equal(s[n], '\0');
}

static void test_values(void **state) {
  (void)state;
  const char *doc = "\xEF\xBB\xBF {\"arr\" : [1, -2, 3.5e2, -0.25E-1, true, false, null, {\"b\": {}}, []],\n"
                    "  \"s\": \"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\\u0000z\",\n"
                    "  \"raw\": \"h\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80\",\n"
                    "  \"max\": 9223372036854775807, \"min\": -9223372036854775808,\n"
                    "  \"p53\": 9007199254740993, \"huge\": 12345678901234567890, \"e3\": 1e3, \"neg0\": -0,\n"
                    "  \"tiny\": 4.9e-324, \"frac\": 0.5, \"\": \"empty key\", \"p63\": 9223372036854775808,\n"
                    "  \"m63\": -9223372036854775809} \n";
  gpt2_json *v = parse_ok(doc);
  assert_int_equal(gpt2_json_kind(v), GPT2_JSON_OBJ);
  assert_int_equal(gpt2_json_count(v), 14);
  /* document order, and get agrees with at */
  const char *k = NULL;
  assert_ptr_equal(gpt2_json_at(v, 0, &k), gpt2_json_get(v, "arr"));
  assert_string_equal(k, "arr");
  assert_ptr_equal(gpt2_json_at(v, 11, &k), gpt2_json_get(v, ""));
  assert_string_equal(k, "");
  assert_null(gpt2_json_at(v, 14, &k));
  assert_null(k);
  assert_null(gpt2_json_get(v, "absent"));
  assert_null(gpt2_json_get(v, "ar"));

  const gpt2_json *a = gpt2_json_get(v, "arr");
  assert_int_equal(gpt2_json_kind(a), GPT2_JSON_ARR);
  assert_int_equal(gpt2_json_count(a), 9);
  assert_null(gpt2_json_get(a, "x")); /* not an object */
  double d;
  long long i = 77;
  assert_int_equal(gpt2_json_num(gpt2_json_at(a, 0, NULL), &d, &i), 2);
  assert_int_equal(i, 1);
  assert_int_equal(gpt2_json_num(gpt2_json_at(a, 1, NULL), &d, &i), 2);
  assert_int_equal(i, -2);
  assert_int_equal(gpt2_json_num(gpt2_json_at(a, 2, NULL), &d, &i), 2); /* 350: integral though written 3.5e2 */
  assert_int_equal(i, 350);
  assert_true(d == 350.0);
  i = 77;
  assert_int_equal(gpt2_json_num(gpt2_json_at(a, 3, NULL), &d, &i), 1);
  assert_true(d == -0.025);
  assert_int_equal(i, 77); /* not set for a fraction */
  assert_int_equal(gpt2_json_kind(gpt2_json_at(a, 4, NULL)), GPT2_JSON_BOOL);
  assert_int_equal(gpt2_json_bool(gpt2_json_at(a, 4, NULL)), 1);
  assert_int_equal(gpt2_json_bool(gpt2_json_at(a, 5, NULL)), 0);
  assert_int_equal(gpt2_json_kind(gpt2_json_at(a, 5, NULL)), GPT2_JSON_BOOL);
  assert_int_equal(gpt2_json_kind(gpt2_json_at(a, 6, NULL)), GPT2_JSON_NULL);
  const gpt2_json *o = gpt2_json_at(a, 7, &k);
  assert_null(k); /* array entries have no key */
  assert_int_equal(gpt2_json_kind(gpt2_json_get(o, "b")), GPT2_JSON_OBJ);
  assert_int_equal(gpt2_json_count(gpt2_json_get(o, "b")), 0);
  assert_null(gpt2_json_get(gpt2_json_get(o, "b"), "b"));
  assert_int_equal(gpt2_json_kind(gpt2_json_at(a, 8, NULL)), GPT2_JSON_ARR);
  assert_int_equal(gpt2_json_count(gpt2_json_at(a, 8, NULL)), 0);
  assert_int_equal(gpt2_json_num(a, &d, &i), 0);
  assert_null(gpt2_json_str(a, NULL));

  /* escapes: \u00e9 = C3 A9, \u20AC = E2 82 AC, the pair D83D DE00 = U+1F600 = F0 9F 98 80, \u0000 kept */
  assert_str(gpt2_json_get(v, "s"), "q\"\\/\b\f\n\r\t\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\0z", 20);
  assert_str(gpt2_json_get(v, "raw"), "h\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80", 12);
  assert_str(gpt2_json_get(v, ""), "empty key", 9);

  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "max"), &d, &i), 2);
  assert_true(i == 9223372036854775807ll);
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "min"), &d, &i), 2);
  assert_true(i == -9223372036854775807ll - 1);
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "p53"), &d, &i), 2);
  assert_true(i == 9007199254740993ll); /* 2^53 + 1: exact from the digits, a double would say ...992 */
  i = 77;
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "huge"), &d, &i), 1); /* beyond long long: double only */
  assert_true(d == 12345678901234567890.0);
  assert_int_equal(i, 77);
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "p63"), &d, &i), 1); /* 2^63: one past long long */
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "m63"), &d, &i), 1); /* -2^63 - 1 */
  assert_int_equal(i, 77);
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "e3"), &d, &i), 2);
  assert_int_equal(i, 1000);
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "neg0"), &d, &i), 2);
  assert_int_equal(i, 0);
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "tiny"), &d, &i), 1);
  assert_true(d > 0 && d < 1e-323);
  assert_int_equal(gpt2_json_num(gpt2_json_get(v, "frac"), &d, NULL), 1);
  assert_true(d == 0.5);
  gpt2_json_free(v);

  /* scalars as whole documents */
  v = parse_ok(" 42 ");
  assert_int_equal(gpt2_json_num(v, NULL, &i), 2);
  assert_int_equal(i, 42);
  gpt2_json_free(v);
  v = parse_ok("\"\"");
  assert_str(v, "", 0);
  gpt2_json_free(v);
  v = parse_ok("null");
  assert_int_equal(gpt2_json_kind(v), GPT2_JSON_NULL);
  gpt2_json_free(v);
  gpt2_json_free(NULL);
}

/* The text need not be NUL-terminated: the parser stops at len (a number at the very end is the hard case, strtod
 * would read on). */
static void test_length_bound(void **state) {
  (void)state;
  gpt2_json *v = NULL;
  LU_OK(gpt2_json_parse(&v, "[1,2]xyz", 5, "t"));
  assert_int_equal(gpt2_json_count(v), 2);
  gpt2_json_free(v);
  long long i;
  LU_OK(gpt2_json_parse(&v, "12345", 3, "t"));
  assert_int_equal(gpt2_json_num(v, NULL, &i), 2);
  assert_int_equal(i, 123);
  gpt2_json_free(v);
  LU_OK(gpt2_json_parse(&v, "1.5e10", 3, "t"));
  double d;
  assert_int_equal(gpt2_json_num(v, &d, NULL), 1);
  assert_true(d == 1.5);
  gpt2_json_free(v);
  /* a long number (the parser copies it for strtod) */
  char big[301]; /* 300 digits: 7.77e299 */
  memset(big, '7', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  v = parse_ok(big);
  assert_int_equal(gpt2_json_num(v, &d, NULL), 1);
  assert_true(d > 7.77e299 && d < 7.78e299);
  gpt2_json_free(v);
}

typedef struct bad_case {
  const char *text; /* NUL-terminated unless len is set */
  size_t len;
  const char *where; /* "byte N (line L, column C)" */
  const char *problem;
} bad_case;

static void test_malformed(void **state) {
  (void)state;
  static const bad_case cases[] = {
      {"", 0, "byte 0 (line 1, column 1)", "empty document"},
      {" \n\t ", 0, "byte 4 (line 2, column 3)", "empty document"},
      {"{", 0, "byte 1 (line 1, column 2)", "expected a string key in an object, found the end of the text"},
      {"{\"a\" 1}", 0, "byte 5 (line 1, column 6)", "expected ':' after an object key, found '1'"},
      {"{\"a\":1,}", 0, "byte 7 (line 1, column 8)", "expected a string key in an object, found '}'"},
      {"{a:1}", 0, "byte 1", "expected a string key in an object, found 'a'"},
      {"{\"a\":1 \"b\":2}", 0, "byte 7", "expected ',' or '}' after an object member, found '\"'"},
      {"{\"a\":}", 0, "byte 5", "expected a value"},
      {"[1,]", 0, "byte 3 (line 1, column 4)", "expected a value"},
      {"[1 2]", 0, "byte 3", "expected ',' or ']' after an array element, found '2'"},
      {"[1,2", 0, "byte 4", "expected ',' or ']' after an array element, found the end of the text"},
      {"[", 0, "byte 1", "expected a value"},
      {"]", 0, "byte 0", "expected a value"},
      {"tru", 0, "byte 0", "invalid literal (expected 'true')"},
      {"nul", 0, "byte 0", "invalid literal (expected 'null')"},
      {"[falsy]", 0, "byte 1", "invalid literal (expected 'false')"},
      {"True", 0, "byte 0", "expected a value"},
      {"01", 0, "byte 0", "leading zero"},
      {"-", 0, "byte 1", "expected a digit in a number, found the end of the text"},
      {"-a", 0, "byte 1", "expected a digit in a number, found 'a'"},
      {"1.", 0, "byte 2", "expected a digit after the decimal point"},
      {"1.e5", 0, "byte 2", "expected a digit after the decimal point"},
      {"1e", 0, "byte 2", "expected a digit in the exponent"},
      {"1e+", 0, "byte 3", "expected a digit in the exponent"},
      {"+1", 0, "byte 0", "expected a value"},
      {".5", 0, "byte 0", "expected a value"},
      {"1e999", 0, "byte 0", "out of the range of a double"},
      {"-1e999", 0, "byte 0", "out of the range of a double"},
      {"\"abc", 0, "byte 0", "unterminated string"},
      {"\"abc\\\"", 0, "byte 0", "unterminated string"},
      {"\"a\\x\"", 0, "byte 2", "invalid escape '\\x'"},
      {"\"\\u12G4\"", 0, "byte 1", "invalid \\u escape"},
      {"\"\\u12\"", 0, "byte 1", "invalid \\u escape"},
      {"\"\\ud800\"", 0, "byte 1", "high surrogate \\uD800 is not followed by a low surrogate"},
      {"\"\\ud800\\u0041\"", 0, "byte 1", "high surrogate \\uD800 is not followed by a low surrogate"},
      {"\"\\udc00\"", 0, "byte 1", "unpaired UTF-16 low surrogate \\uDC00"},
      {"\"a\nb\"", 0, "byte 2 (line 1, column 3)", "control character 0x0A in a string"},
      {"\"a\tb\"", 0, "byte 2", "control character 0x09"},
      {"\"\xFF\"", 0, "byte 1", "invalid UTF-8 (byte 0xFF)"},
      {"\"\xC0\xAF\"", 0, "byte 1", "invalid UTF-8 (byte 0xC0)"},         /* overlong '/' */
      {"\"\xE0\x80\xAF\"", 0, "byte 1", "invalid UTF-8 (byte 0xE0)"},     /* overlong */
      {"\"\xED\xA0\x80\"", 0, "byte 1", "invalid UTF-8 (byte 0xED)"},     /* a surrogate in UTF-8 */
      {"\"\xF4\x90\x80\x80\"", 0, "byte 1", "invalid UTF-8 (byte 0xF4)"}, /* past U+10FFFF */
      {"\"\xE6\x97\"", 0, "byte 1", "invalid UTF-8 (byte 0xE6)"},         /* cut sequence */
      {"[1] x", 0, "byte 4", "unexpected 'x' after the JSON value"},
      {"{} {}", 0, "byte 3", "unexpected '{' after the JSON value"},
      {"[1]\x01", 0, "byte 3", "unexpected byte 0x01 after the JSON value"},
      {"{\"a\":1,\"b\":2,\"a\":3}", 0, "byte 13 (line 1, column 14)",
       "duplicate key \"a\" in an object (first at byte 1)"},
      {"{\n  \"x\": [\n    tru\n  ]\n}", 0, "byte 15 (line 3, column 5)", "invalid literal"},
      {"[1,\r\n 2,\r\n x]", 0, "line 3, column 2", "expected a value"},
      {"[\"a\0b\"]", 7, "byte 3", "control character 0x00"},
      {"[1\0]", 4, "byte 2", "expected ',' or ']' after an array element, found byte 0x00"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const bad_case *b = &cases[c];
    gpt2_json *v = (gpt2_json *)&v; /* must become NULL */
    const kbd_status s = gpt2_json_parse(&v, b->text, b->len ? b->len : strlen(b->text), "bad.json");
    if (kbd_ok(s)) print_error("case %zu (%s) parsed\n", c, b->text);
    LU_FAILS_WITH(s, "bad.json: ", b->where, b->problem);
    assert_null(v);
  }
}

/* Nesting is limited (each level is a recursion): GPT2_JSON_MAX_DEPTH levels parse, one more is an error. */
static void test_depth(void **state) {
  (void)state;
  const int n = GPT2_JSON_MAX_DEPTH;
  char *t = (char *)malloc(2 * (size_t)n + 8);
  for (int k = 0; k < n; ++k) {
    t[k] = '[';
    t[2 * n - 1 - k] = ']';
  }
  gpt2_json *v = NULL;
  LU_OK(gpt2_json_parse(&v, t, 2 * (size_t)n, "deep"));
  const gpt2_json *e = v;
  for (int k = 1; k < n; ++k)
    e = gpt2_json_at(e, 0, NULL);
  assert_int_equal(gpt2_json_kind(e), GPT2_JSON_ARR);
  assert_int_equal(gpt2_json_count(e), 0);
  gpt2_json_free(v);
  /* one level more, through objects too */
  memmove(t + 5, t, 2 * (size_t)n);
  memcpy(t, "{\"k\":", 5);
  t[2 * n + 5] = '}';
  LU_FAILS_WITH(gpt2_json_parse(&v, t, 2 * (size_t)n + 6, "deep"), "deep: byte 260", "nesting deeper than 256");
  free(t);
  /* a million '[' is an error, not a stack overflow */
  const size_t m = 1000000;
  t = (char *)malloc(m);
  memset(t, '[', m);
  LU_FAILS_WITH(gpt2_json_parse(&v, t, m, "deep"), "nesting deeper than 256");
  assert_null(v);
  free(t);
}

/* Big objects: every key found by gpt2_json_get (binary search over the sorted keys) at its document position. */
static void test_big_object(void **state) {
  (void)state;
  kbd_text t = KBD_TEXT_INIT;
  kbd_text_puts(&t, "{");
  const int n = 5000;
  uint64_t seed = 5;
  for (int k = 0; k < n; ++k)
    kbd_text_append(&t, "%s\"k%llx_%d\":%d", k ? "," : "", (unsigned long long)lu_rand(&seed) % 4096, k, k);
  kbd_text_puts(&t, "}");
  gpt2_json *v = parse_ok(kbd_text_str(&t));
  assert_int_equal(gpt2_json_count(v), n);
  for (int k = 0; k < n; ++k) {
    const char *key;
    const gpt2_json *e = gpt2_json_at(v, (size_t)k, &key);
    assert_ptr_equal(gpt2_json_get(v, key), e);
    long long i;
    assert_int_equal(gpt2_json_num(e, NULL, &i), 2);
    assert_int_equal(i, k);
  }
  gpt2_json_free(v);
  kbd_text_free(&t);
}

/* Walks a tree, touching every accessor; returns the number of values. */
static size_t walk(const gpt2_json *v) {
  size_t n = 1;
  double d;
  long long i;
  size_t l;
  switch (gpt2_json_kind(v)) {
  case GPT2_JSON_STR: assert_non_null(gpt2_json_str(v, &l)); break;
  case GPT2_JSON_NUM: assert_true(gpt2_json_num(v, &d, &i) >= 1); break;
  case GPT2_JSON_ARR:
  case GPT2_JSON_OBJ:
    for (size_t k = 0; k < gpt2_json_count(v); ++k) {
      const char *key;
      const gpt2_json *e = gpt2_json_at(v, k, &key);
      if (gpt2_json_kind(v) == GPT2_JSON_OBJ) {
        size_t kl;
        assert_ptr_equal(gpt2_json_key(v, k, &kl), key);
        if (strlen(key) == kl) assert_ptr_equal(gpt2_json_get(v, key), e);
      }
      n += walk(e);
    }
    break;
  default: break;
  }
  return n;
}

static const char *const fuzz_seeds[] = {
    "{\"__metadata__\":{\"format\":\"pt\"},\"wte.weight\":{\"dtype\":\"F32\",\"shape\":[300,64],\"data_offsets\":[0,"
    "76800]},\"h.0.ln_1.bias\":{\"dtype\":\"BF16\",\"shape\":[64],\"data_offsets\":[76800,76928]}}",
    "{\"n_layer\": 12, \"n_head\": 12, \"n_embd\": 768, \"vocab_size\": 50257, \"n_positions\": 1024,\n"
    " \"layer_norm_epsilon\": 1e-05, \"activation_function\": \"gelu_new\", \"task\": null, \"ok\": [true, false]}",
    "{\"!\":0,\"\\\"\":1,\"\xC4\xA0the\":262,\"\\u0120a\":257,\"\xC3\xA9\":2634,\"<|endoftext|>\":50256}",
    "[[1,-2.5e-3,{\"a\":[\"x\\u00e9\\ud83d\\ude00\",null]}],[],{},\"\\n\\t\\\\\",123456789012345678901234]",
};

/* Mutations of valid documents (truncation, byte flips, insertions of JSON punctuation, deletions, copied runs):
 * every result parses or fails with a message, none crashes, reads past the text or leaks (ASan/LSan build). */
static void test_fuzz(void **state) {
  (void)state;
  static const char punct[] = "{}[]\":,\\u0123456789eE+-.tfn \n\x80\xC3\xED\xF0\xFF";
  uint64_t seed = 2026;
  int ok = 0, bad = 0;
  char *buf = NULL;
  for (int it = 0; it < 4000; ++it) {
    const char *src = fuzz_seeds[lu_below(&seed, sizeof fuzz_seeds / sizeof fuzz_seeds[0])];
    size_t n = strlen(src);
    buf = (char *)realloc(buf, 2 * n + 64);
    memcpy(buf, src, n);
    const int muts = 1 + (int)lu_below(&seed, 4);
    for (int m = 0; m < muts; ++m) {
      const size_t at = lu_below(&seed, n + 1);
      switch (lu_below(&seed, 5)) {
      case 0: n = at; break; /* truncate */
      case 1:
        if (at < n) buf[at] = (char)lu_rand(&seed);
        break;
      case 2: /* insert */
        if (n < 2 * strlen(src) + 32) {
          memmove(buf + at + 1, buf + at, n - at);
          buf[at] = punct[lu_below(&seed, sizeof punct - 1)];
          ++n;
        }
        break;
      case 3: /* delete */
        if (at < n) {
          memmove(buf + at, buf + at + 1, n - at - 1);
          --n;
        }
        break;
      default: /* copy a run over another place */
        if (at < n) {
          const size_t len = lu_below(&seed, n - at) + 1, to = lu_below(&seed, n - len + 1);
          memmove(buf + to, buf + at, len);
        }
        break;
      }
    }
    /* an exact-size heap copy: ASan sees any read past the end of the text */
    char *exact = (char *)malloc(n ? n : 1);
    memcpy(exact, buf, n);
    gpt2_json *v = NULL;
    const kbd_status s = gpt2_json_parse(&v, exact, n, "fuzz.json");
    if (kbd_ok(s)) {
      assert_non_null(v);
      assert_true(walk(v) >= 1);
      gpt2_json_free(v);
      ++ok;
    } else {
      assert_null(v);
      assert_int_equal(s.code, KBD_ERR_INVALID);
      assert_true(strncmp(s.msg, "fuzz.json: byte ", 16) == 0);
      assert_non_null(strstr(s.msg, "(line "));
      ++bad;
    }
    free(exact);
  }
  free(buf);
  print_message("fuzz: 4000 mutated documents, %d parsed, %d rejected\n", ok, bad);
  /* the mutations must reach both outcomes, or the loop tests nothing */
  assert_true(ok > 100 && bad > 1000);
}

static void test_quote(void **state) {
  (void)state;
  kbd_text t = KBD_TEXT_INIT;
  gpt2_json_quote(&t, "a\"b\\\n\xC3", 6);
  assert_string_equal(kbd_text_str(&t), "\"a\\x22b\\x5C\\x0A\\xC3\"");
  kbd_text_truncate(&t, 0);
  char long_name[100];
  memset(long_name, 'x', sizeof long_name);
  gpt2_json_quote(&t, long_name, sizeof long_name);
  assert_int_equal(t.len, 64 + 5);
  assert_string_equal(kbd_text_str(&t) + 65, "\"...");
  kbd_text_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_values), cmocka_unit_test(test_length_bound), cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_depth),  cmocka_unit_test(test_big_object),   cmocka_unit_test(test_fuzz),
      cmocka_unit_test(test_quote),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
