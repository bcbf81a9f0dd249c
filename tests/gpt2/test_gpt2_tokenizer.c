/* test_gpt2_tokenizer.c - examples/gpt2's byte-level BPE tokenizer on a small vocabulary this test writes (the 256
 * byte tokens as ids 0..255 plus a few merges), against ids derived by hand from GPT-2's pre-tokenizer regex and
 * encoder.py's merge loop; the exact byte round trip on random bytes; the load errors. With GPT-2's own vocab.json
 * and merges.txt (KBD_GPT2_TOKENIZER_DIR, docs/gpt2-files.md) also ids that GPT-2's tokenizer gives. */
#define _DEFAULT_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpt2_tokenizer.h"
#include "loader_util.h"

static char *g_dir;

/* GPT-2's byte-to-unicode alphabet, from its definition: printable bytes ! .. ~, U+00A1 .. U+00AC, U+00AE .. U+00FF
 * stand for themselves, the other 68 bytes for U+0100, U+0101, ... in byte order. Appends the UTF-8 of byte b. */
static void put_byte_char(kbd_text *t, unsigned char b) {
  unsigned cp = b;
  if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE))) {
    unsigned n = 0;
    for (unsigned c = 0; c < b; ++c)
      n += !((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE));
    cp = 256 + n;
  }
  if (cp < 0x80)
    kbd_text_append(t, "%c", (char)cp);
  else
    kbd_text_append(t, "%c%c", (char)(0xC0 | (cp >> 6)), (char)(0x80 | (cp & 0x3F)));
}
static void put_token(kbd_text *t, const char *bytes) {
  for (const unsigned char *b = (const unsigned char *)bytes; *b; ++b)
    put_byte_char(t, *b);
}
/* as a JSON string: '"' and '\' are the only bytes of the alphabet JSON needs escaped */
static void put_json_token(kbd_text *t, const char *bytes) {
  kbd_text_puts(t, "\"");
  for (const unsigned char *b = (const unsigned char *)bytes; *b; ++b) {
    if (*b == '"' || *b == '\\') kbd_text_puts(t, "\\");
    put_byte_char(t, *b);
  }
  kbd_text_puts(t, "\"");
}

/* The test's merges, in rank order; merge r makes token 256 + r. "aa a" comes before "a a" on purpose (see
 * test_merge_order). */
static const char *const merges[][2] = {
    {" ", "t"},       {"h", "e"},        {" t", "he"},  {"i", "n"},       {" ", "c"},   {"a", "t"},
    {" c", "at"},     {"'", "s"},        {"1", "2"},    {"\n", "\n"},     {" ", " "},   {"!", "!"},
    {"\xF0", "\x9F"}, {"t", "h"},        {"aa", "a"},   {"a", "a"},       {"aa", "aa"}, {"x", "\xF0"},
    {"\xC3", "\xA9"}, {"x", "\xC3\xA9"}, {"\xA3", "3"}, {"\x80", "\xE3"}, {"'", "S"},   {"x", "aa"},
};
enum {
  T_SP_T = 256,
  T_HE,
  T_SP_THE,
  T_IN,
  T_SP_C,
  T_AT,
  T_SP_CAT,
  T_APOS_S,
  T_12,
  T_NLNL,
  T_SPSP,
  T_BANGBANG,
  T_F09F,
  T_TH,
  T_AAA,
  T_AA,
  T_AAAA,
  T_X_F0,
  T_E_ACUTE,
  T_X_E_ACUTE,
  T_A3_3,
  T_80_E3,
  T_APOS_CAP_S,
  T_X_AA,
  T_N_MERGES,
  T_EOT = 300 /* ids T_N_MERGES .. 299 are left unused: a vocabulary may have holes */
};
#define N_MERGES ((int)(sizeof merges / sizeof merges[0]))

static void write_vocab(const char *dir, int with_version) {
  kbd_text v = KBD_TEXT_INIT, m = KBD_TEXT_INIT;
  kbd_text_puts(&v, "{");
  for (int b = 0; b < 256; ++b) {
    const char s[2] = {(char)b, 0};
    if (b == 0) {
      kbd_text_puts(&v, "\""); /* NUL stands for U+0100, so it never ends the C string */
      put_byte_char(&v, 0);
      kbd_text_puts(&v, "\"");
    } else {
      put_json_token(&v, s);
    }
    kbd_text_append(&v, ": %d,\n", b);
  }
  if (with_version) kbd_text_puts(&m, "#version: 0.2\n");
  for (int r = 0; r < N_MERGES; ++r) {
    char both[16];
    snprintf(both, sizeof both, "%s%s", merges[r][0], merges[r][1]);
    put_json_token(&v, both);
    kbd_text_append(&v, ": %d,\n", 256 + r);
    put_token(&m, merges[r][0]);
    kbd_text_puts(&m, " ");
    put_token(&m, merges[r][1]);
    kbd_text_puts(&m, "\n");
  }
  kbd_text_append(&v, "\"<|endoftext|>\": %d}\n", T_EOT);
  lu_write_str(lu_path(dir, "vocab.json"), kbd_text_str(&v));
  lu_write_str(lu_path(dir, "merges.txt"), kbd_text_str(&m));
  kbd_text_free(&v);
  kbd_text_free(&m);
}

static int setup(void **state) {
  (void)state;
  g_dir = lu_mkdtemp("tok");
  return 0;
}
static int teardown(void **state) {
  (void)state;
  lu_rmdir(g_dir);
  return 0;
}

static gpt2_tokenizer *load_test_vocab(void) {
  write_vocab(g_dir, 1);
  gpt2_tokenizer *t = NULL;
  LU_OK(gpt2_tok_load(&t, g_dir));
  return t;
}

/* Encodes `text` (len bytes) and compares with want[0..n). */
static void expect_ids(const gpt2_tokenizer *t, const char *text, size_t len, const int *want, int n) {
  int *ids = NULL, got = -1;
  LU_OK(gpt2_tok_encode(t, text, len, &ids, &got));
  int same = got == n;
  for (int k = 0; same && k < n; ++k)
    same = ids[k] == want[k];
  if (!same) {
    kbd_text m = KBD_TEXT_INIT;
    for (int k = 0; k < got; ++k)
      kbd_text_append(&m, " %d", ids[k]);
    kbd_text_puts(&m, " | expected");
    for (int k = 0; k < n; ++k)
      kbd_text_append(&m, " %d", want[k]);
    print_error("encode(\"%.*s\"):%s\n", (int)len, text, kbd_text_str(&m));
    kbd_text_free(&m);
    free(ids);
    fail();
  }
  /* and back */
  size_t total = 0;
  for (int k = 0; k < got; ++k) {
    size_t l;
    const char *b = gpt2_tok_bytes(t, ids[k], &l);
    assert_non_null(b);
    total += l;
    assert_true(total <= len);
    assert_memory_equal(b, text + total - l, l);
  }
  assert_int_equal(total, len);
  free(ids);
}
#define EXPECT(t, text, ...)                                                                                           \
  do {                                                                                                                 \
    const int want_[] = {__VA_ARGS__};                                                                                 \
    expect_ids((t), (text), sizeof(text) - 1, want_, (int)(sizeof want_ / sizeof want_[0]));                           \
  } while (0)

static void test_vocab_shape(void **state) {
  (void)state;
  gpt2_tokenizer *t = load_test_vocab();
  assert_int_equal(gpt2_tok_vocab(t), T_EOT + 1);
  size_t l = 99;
  assert_null(gpt2_tok_bytes(t, T_N_MERGES, &l)); /* a hole */
  assert_int_equal(l, 0);
  assert_null(gpt2_tok_bytes(t, -1, &l));
  assert_null(gpt2_tok_bytes(t, T_EOT + 1, &l));
  const char *b = gpt2_tok_bytes(t, T_EOT, &l);
  assert_int_equal(l, 13);
  assert_memory_equal(b, "<|endoftext|>", 13);
  b = gpt2_tok_bytes(t, 0, &l);
  assert_int_equal(l, 1);
  assert_int_equal(b[0], 0);
  b = gpt2_tok_bytes(t, T_SP_CAT, &l);
  assert_int_equal(l, 4);
  assert_memory_equal(b, " cat", 4);
  assert_int_equal(gpt2_tok_find(t, "<|endoftext|>", 13), T_EOT);
  assert_int_equal(gpt2_tok_find(t, "\n\n", 2), T_NLNL);
  assert_int_equal(gpt2_tok_find(t, "zz", 2), -1);
  gpt2_tok_free(t);
  gpt2_tok_free(NULL);
}

/* Each expected list derived by hand: the pre-tokens the regex makes, then the merges by rank. */
static void test_encode(void **state) {
  (void)state;
  gpt2_tokenizer *t = load_test_vocab();
  /* "the" -> t h e: (h,e) rank 1 beats (t,h) rank 13 -> t|he; " cat" -> Ġc (4), at (5), Ġc+at (6) */
  EXPECT(t, "the cat", 't', T_HE, T_SP_CAT);
  EXPECT(t, " the", T_SP_THE);
  EXPECT(t, "th", T_TH);
  /* contractions: lower case only, as GPT-2's regex: "'S" is "'" then "S", so the merge ' + S never applies */
  EXPECT(t, "it's", 'i', 't', T_APOS_S);
  EXPECT(t, "IT'S", 'I', 'T', '\'', 'S');
  EXPECT(t, "'S'", '\'', 'S', '\'');
  EXPECT(t, "we'll've", 'w', 'e', '\'', 'l', 'l', '\'', 'v', 'e');
  EXPECT(t, "'re'd'm't", '\'', 'r', 'e', '\'', 'd', '\'', 'm', '\'', 't');
  EXPECT(t, "a' b", 'a', '\'', ' ', 'b');
  /* digits: one run of \p{N}, split from letters */
  EXPECT(t, "x 1234 12", 'x', ' ', T_12, '3', '4', ' ', T_12);
  EXPECT(t, "in12", T_IN, T_12);
  /* punctuation runs, with one leading space */
  EXPECT(t, "hi!!! ?", 'h', 'i', T_BANGBANG, '!', ' ', '?');
  /* whitespace: \s+(?!\S) leaves the last space to the next word; at the end the run stays whole */
  EXPECT(t, "a\n\nb", 'a', '\n', '\n', 'b');
  EXPECT(t, "a\n\n", 'a', T_NLNL);
  EXPECT(t, "a\n\n\nb", 'a', T_NLNL, '\n', 'b');
  EXPECT(t, "a   b", 'a', T_SPSP, ' ', 'b');
  EXPECT(t, "a  ", 'a', T_SPSP);
  EXPECT(t, " ", ' ');
  EXPECT(t, "  ", T_SPSP);
  EXPECT(t, "\t x", '\t', ' ', 'x');
  EXPECT(t, "\r\n", '\r', '\n');
  /* UTF-8: emoji are "other" (a run with '!'), é is a letter (merges with x), U+0663 ARABIC-INDIC DIGIT THREE is a
   * number (one run with '3', so 0xA3 + '3' merge), U+3000 IDEOGRAPHIC SPACE is whitespace (no run across two) */
  EXPECT(t, " \xF0\x9F\x98\x80!", ' ', T_F09F, 0x98, 0x80, '!');
  EXPECT(t, "x\xF0\x9F\x98\x80", 'x', T_F09F, 0x98, 0x80);
  EXPECT(t, "\xC3\xA9", T_E_ACUTE);
  EXPECT(t, "x\xC3\xA9", T_X_E_ACUTE);
  EXPECT(t,
         " \xD9\xA3"
         "3",
         ' ', 0xD9, T_A3_3);
  EXPECT(t,
         "a\xE3\x80\x80\xE3\x80\x80"
         "b",
         'a', 0xE3, 0x80, 0x80, 0xE3, 0x80, 0x80, 'b');
  /* U+00A0 NO-BREAK SPACE is \s too: x | NBSP (\s+(?!\S)) | NBSP (\s+) | y; the optional space before a word is
   * U+0020 only */
  EXPECT(t, "x\xC2\xA0\xC2\xA0y", 'x', 0xC2, 0xA0, 0xC2, 0xA0, 'y');
  /* invalid UTF-8 bytes are single "other" characters */
  EXPECT(t,
         "\xFF"
         "ab",
         0xFF, 'a', 'b');
  EXPECT(t, "x\xC3", 'x', 0xC3);
  EXPECT(t, "\xC3x", 0xC3, 'x');
  /* special tokens are ordinary text */
  EXPECT(t, "<|endoftext|>", '<', '|', 'e', 'n', 'd', 'o', 'f', 't', 'e', 'x', 't', '|', '>');
  /* NUL bytes are text too */
  EXPECT(t, "a\0b", 'a', 0, 'b');
  int *ids = NULL, n = -1;
  LU_OK(gpt2_tok_encode(t, "", 0, &ids, &n));
  assert_int_equal(n, 0);
  assert_non_null(ids);
  free(ids);
  LU_OK(gpt2_tok_encode(t, NULL, 0, &ids, &n));
  assert_int_equal(n, 0);
  free(ids);
  LU_FAILS_WITH(gpt2_tok_encode(t, NULL, 3, &ids, &n), "text is NULL");
  LU_FAILS_WITH(gpt2_tok_encode(NULL, "a", 1, &ids, &n), "tokenizer is NULL");
  gpt2_tok_free(t);
}

/* encoder.py's bpe(): each round merges EVERY occurrence of the lowest-ranked pair. Here "aa a" (rank 14) is listed
 * before "a a" (15): "aaaaa" -> [aa, aa, a] -> [aa, aaa]. Merging one occurrence at a time would give [aaa, aa]. */
static void test_merge_order(void **state) {
  (void)state;
  gpt2_tokenizer *t = load_test_vocab();
  EXPECT(t, "aaaa", T_AAAA);
  EXPECT(t, "aaa", T_AAA);
  EXPECT(t, "aaaaa", T_AA, T_AAA);
  EXPECT(t, "aaaaaa", T_AAAA, T_AA);
  gpt2_tok_free(t);
}

/* encoder.py's bpe() written out plainly on the test's merges: ids in w[0..m), returns the merged count. */
static int ref_bpe(int *w, int m) {
  int L[N_MERGES], R[N_MERGES];
  for (int r = 0; r < N_MERGES; ++r) {
    int lr[2];
    for (int side = 0; side < 2; ++side) {
      const char *b = merges[r][side];
      lr[side] = strlen(b) == 1 ? (unsigned char)b[0] : -1;
      for (int q = 0; q < N_MERGES && lr[side] < 0; ++q) {
        char both[16];
        snprintf(both, sizeof both, "%s%s", merges[q][0], merges[q][1]);
        if (!strcmp(both, b)) lr[side] = 256 + q;
      }
      assert_true(lr[side] >= 0);
    }
    L[r] = lr[0];
    R[r] = lr[1];
  }
  for (;;) {
    int best = -1;
    for (int k = 0; k + 1 < m; ++k)
      for (int r = 0; r < N_MERGES; ++r)
        if (w[k] == L[r] && w[k + 1] == R[r] && (best < 0 || r < best)) best = r;
    if (best < 0) return m;
    int o = 0;
    for (int k = 0; k < m;) {
      if (k + 1 < m && w[k] == L[best] && w[k + 1] == R[best]) {
        w[o++] = 256 + best;
        k += 2;
      } else {
        w[o++] = w[k++];
      }
    }
    m = o;
  }
}

/* Words of one to 3000 letters (one pre-token each), so both of the tokenizer's merge loops run (a quadratic scan for
 * words up to 64 bytes, a heap beyond): ids equal to ref_bpe's. The letters are those of the merges, "aa a" before
 * "a a" included. */
static void test_long_words(void **state) {
  (void)state;
  gpt2_tokenizer *t = load_test_vocab();
  static const char *const alphabets[] = {"a", "ath", "theinax", "ahe", "ax"};
  uint64_t seed = 11;
  char *buf = (char *)malloc(3001);
  int *ref = (int *)malloc(3001 * sizeof *ref);
  for (int it = 0; it < 400; ++it) {
    const char *al = alphabets[lu_below(&seed, sizeof alphabets / sizeof alphabets[0])];
    const size_t n = it < 100 ? 1 + lu_below(&seed, 64) : 65 + lu_below(&seed, 2936);
    for (size_t k = 0; k < n; ++k) {
      buf[k] = al[lu_below(&seed, strlen(al))];
      ref[k] = (unsigned char)buf[k];
    }
    const int rn = ref_bpe(ref, (int)n);
    int *ids = NULL, k = 0;
    LU_OK(gpt2_tok_encode(t, buf, n, &ids, &k));
    if (k != rn || memcmp(ids, ref, (size_t)k * sizeof *ids) != 0) {
      int first = 0;
      while (first < k && first < rn && ids[first] == ref[first])
        ++first;
      fail_msg("word of %zu letters from \"%s\": %d ids, reference %d, first difference at %d", n, al, k, rn, first);
    }
    free(ids);
  }
  free(buf);
  free(ref);
  gpt2_tok_free(t);
}

/* decode(encode(x)) == x for random bytes: text-like pieces, multi-byte characters, invalid UTF-8, any byte. */
static void test_round_trip(void **state) {
  (void)state;
  gpt2_tokenizer *t = load_test_vocab();
  static const char *const pieces[] = {"a",    "the",  " ",    "  ",       "\n",           "'s",
                                       "'",    "12",   "!",    "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80",
                                       "\xFF", "\xC3", "\x80", "\t",       "\xE3\x80\x80", "\xD9\xA3",
                                       "aaa",  "x",    "'ll",  "\r\n"};
  uint64_t seed = 31;
  char buf[600];
  long total_ids = 0;
  for (int it = 0; it < 3000; ++it) {
    size_t n = 0;
    const size_t want = lu_below(&seed, 300);
    while (n < want) {
      if (lu_below(&seed, 3) == 0) {
        buf[n++] = (char)lu_rand(&seed);
      } else {
        const char *p = pieces[lu_below(&seed, sizeof pieces / sizeof pieces[0])];
        const size_t l = strlen(p);
        memcpy(buf + n, p, l);
        n += l;
      }
    }
    int *ids = NULL, k = 0;
    LU_OK(gpt2_tok_encode(t, buf, n, &ids, &k));
    assert_true((size_t)k <= n);
    size_t at = 0;
    for (int i = 0; i < k; ++i) {
      size_t l;
      const char *b = gpt2_tok_bytes(t, ids[i], &l);
      assert_non_null(b);
      assert_true(at + l <= n);
      assert_memory_equal(b, buf + at, l);
      at += l;
    }
    assert_int_equal(at, n);
    total_ids += k;
    free(ids);
  }
  print_message("round trip: 3000 random byte strings, %ld ids\n", total_ids);
  gpt2_tok_free(t);
}

static void test_version_line_and_crlf(void **state) {
  (void)state;
  write_vocab(g_dir, 0); /* no "#version" line */
  gpt2_tokenizer *t = NULL;
  LU_OK(gpt2_tok_load(&t, g_dir));
  EXPECT(t, "the cat", 't', T_HE, T_SP_CAT);
  gpt2_tok_free(t);
  /* CRLF line ends and a blank last line */
  lu_write_str(lu_path(g_dir, "merges.txt"), "#version: 0.2\r\n\xC4\xA0 t\r\nh e\r\n\r\n");
  LU_OK(gpt2_tok_load(&t, g_dir));
  EXPECT(t, " the", T_SP_T, T_HE);
  gpt2_tok_free(t);
}

typedef struct bad_tok {
  const char *vocab;  /* NULL: the good one */
  const char *merges; /* NULL: the good one */
  const char *file, *problem;
} bad_tok;

static void test_errors(void **state) {
  (void)state;
  gpt2_tokenizer *t = (gpt2_tokenizer *)&t;
  /* missing files */
  char *empty = lu_mkdtemp("tok_empty");
  LU_FAILS_WITH(gpt2_tok_load(&t, empty), empty, "/vocab.json: cannot open: No such file or directory");
  assert_null(t);
  write_vocab(empty, 1);
  unlink(lu_path(empty, "merges.txt"));
  LU_FAILS_WITH(gpt2_tok_load(&t, empty), "/merges.txt: cannot open");
  lu_rmdir(empty);

  static const bad_tok cases[] = {
      {"{\"a\": 1,", NULL, "vocab.json", "vocab.json: byte 8 (line 1, column 9): expected a string key"},
      {"[\"a\"]", NULL, "vocab.json", "the document is an array, expected an object of token -> id"},
      {"{}", NULL, "vocab.json", "vocab.json: no tokens"},
      {"{\"a\": \"1\"}", NULL, "vocab.json", "the id of token \"a\" is not an integer"},
      {"{\"a\": -1}", NULL, "vocab.json", "the id of token \"a\" is not an integer in 0..16777215"},
      {"{\"a\": 99999999}", NULL, "vocab.json", "is not an integer in 0..16777215"},
      {"{\"a\": 1, \"b\": 1}", NULL, "vocab.json", "id 1 is given to two tokens"},
      {"{\"a b\": 1}", NULL, "vocab.json",
       "token \"a b\" (id 1) has U+0020, a character outside GPT-2's byte-to-unicode"},
      {"{\"\": 1}", NULL, "vocab.json", "token \"\" (id 1) is empty"},
      {"{\"a\": 0}", NULL, "vocab.json", "no token for byte 0x00"},
      {NULL, "#version: 0.2\nh e\nzz q\n", "merges.txt", "merges.txt: line 3: token \"zz\" is not in vocab.json"},
      {NULL, "h e\ne zz\n", "merges.txt", "line 2: token \"zz\" is not in vocab.json"},
      {NULL, "h e\nh e f\n", "merges.txt", "line 2: expected two tokens separated by one space, found \"h e f\""},
      {NULL, "he\n", "merges.txt", "line 1: expected two tokens separated by one space, found \"he\""},
      {NULL, "h  e\n", "merges.txt", "line 1: expected two tokens separated by one space"},
      {NULL, " h\n", "merges.txt", "line 1: expected two tokens"},
      {NULL, "h \n", "merges.txt", "line 1: expected two tokens"},
      {NULL, "#version: 0.2\n#version: 0.2\n", "merges.txt", "line 2: token \"#version:\" is not in vocab.json"},
      {NULL, "q z\n", "merges.txt", "line 1: the merged token \"q\" + \"z\" is not in vocab.json"},
      {NULL, "h e\nt h\nh e\n", "merges.txt", "line 3: the pair \"h e\" repeats merge 0"},
      {NULL, "h \xFF\n", "merges.txt", "line 1: token \"\\xFF\" is not valid UTF-8"},
      {NULL, "h \xE2\x82\xAC\n", "merges.txt", "line 1: token \"\\xE2\\x82\\xAC\" has U+20AC, a character outside"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    write_vocab(g_dir, 1);
    if (cases[c].vocab) lu_write_str(lu_path(g_dir, "vocab.json"), cases[c].vocab);
    if (cases[c].merges) lu_write_str(lu_path(g_dir, "merges.txt"), cases[c].merges);
    t = (gpt2_tokenizer *)&t;
    const kbd_status s = gpt2_tok_load(&t, g_dir);
    if (kbd_ok(s)) print_error("case %zu loaded\n", c);
    LU_FAILS_WITH(s, g_dir, cases[c].file, cases[c].problem);
    assert_null(t);
  }
  LU_FAILS_WITH(gpt2_tok_load(&t, NULL), "dir is NULL");
}

/* GPT-2's real files, when the build names a folder holding them: ids GPT-2's tokenizer gives (tiktoken's "gpt2"
 * encoding on the same files, and the well-known "Hello world" = 15496, 995). */
static void test_real_gpt2(void **state) {
  (void)state;
  const char *dir = getenv("KBD_GPT2_TOKENIZER_DIR");
  if (!dir || !*dir) {
    print_message("skipped: KBD_GPT2_TOKENIZER_DIR is not set (cmake -DKBD_GPT2_TOKENIZER_DIR=<folder with GPT-2's "
                  "vocab.json and merges.txt>; docs/gpt2-files.md)\n");
    skip();
  }
  gpt2_tokenizer *t = NULL;
  LU_OK(gpt2_tok_load(&t, dir));
  assert_int_equal(gpt2_tok_vocab(t), 50257);
  assert_int_equal(gpt2_tok_find(t, "<|endoftext|>", 13), 50256);
  EXPECT(t, "Hello world", 15496, 995);
  EXPECT(t, "It's a test, isn't it?  I'll 123456 go!!", 1026, 338, 257, 1332, 11, 2125, 470, 340, 30, 220, 314, 1183,
         17031, 29228, 467, 3228);
  EXPECT(t, "\n\nfoo  bar   \n", 198, 198, 21943, 220, 2318, 220, 220, 220, 198);
  EXPECT(t, "h\xC3\xA9llo w\xC3\xB6rld \xF0\x9F\x98\x80 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 71, 2634, 18798, 266,
         30570, 335, 30325, 222, 10545, 245, 98, 17312, 105, 45739, 252);
  EXPECT(t, "<|endoftext|>", 27, 91, 437, 1659, 5239, 91, 29);
  EXPECT(t, "The quick brown fox jumps over the lazy dog.", 464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13);
  EXPECT(t, "def f(x):\n    return x**2  # square\n", 4299, 277, 7, 87, 2599, 198, 220, 220, 220, 1441, 2124, 1174, 17,
         220, 1303, 6616, 198);
  EXPECT(t, "GPT-2's tokenizer: 3.14159, $100, 1,000,000!!!", 38, 11571, 12, 17, 338, 11241, 7509, 25, 513, 13, 1415,
         19707, 11, 720, 3064, 11, 352, 11, 830, 11, 830, 10185);
  gpt2_tok_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vocab_shape), cmocka_unit_test(test_encode),
      cmocka_unit_test(test_merge_order), cmocka_unit_test(test_long_words),
      cmocka_unit_test(test_round_trip),  cmocka_unit_test(test_version_line_and_crlf),
      cmocka_unit_test(test_errors),      cmocka_unit_test(test_real_gpt2),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
