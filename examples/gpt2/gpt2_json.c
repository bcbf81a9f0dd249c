/* gpt2_json.c - the JSON parser of gpt2_json.h: recursive descent over a byte range, strict RFC 8259 grammar. */
#include "gpt2_json.h"

#include <stdlib.h>
#include <string.h>

struct gpt2_json {
  gpt2_json_type type;
  int b;     /* BOOL */
  int has_i; /* NUM: i holds the value exactly */
  double d;  /* NUM */
  long long i;
  char *s; /* STR: NUL-terminated copy, slen bytes (may hold NUL) */
  size_t slen;
  char *key; /* set on an object's members: its key, klen bytes, NUL-terminated */
  size_t klen;
  gpt2_json *kids; /* ARR / OBJ entries in document order */
  size_t n, cap;
  size_t *order; /* OBJ: kids' indices sorted by key, for gpt2_json_get */
};

typedef struct jp {
  const unsigned char *p;
  size_t len, pos;
  const char *what;
  kbd_status err;
} jp;

static void jp_where(kbd_text *t, const jp *J, size_t at) {
  size_t line = 1, col = 1;
  for (size_t k = 0; k < at && k < J->len; ++k) {
    if (J->p[k] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  kbd_text_append(t, "%s: byte %zu (line %zu, column %zu): ", J->what, at, line, col);
}

/* Describes the byte at `at` for "unexpected X" messages. */
static void jp_describe(kbd_text *t, const jp *J, size_t at) {
  if (at >= J->len) {
    kbd_text_puts(t, "the end of the text");
    return;
  }
  const unsigned char c = J->p[at];
  if (c >= 0x20 && c < 0x7f)
    kbd_text_append(t, "'%c'", c);
  else
    kbd_text_append(t, "byte 0x%02X", c);
}

KBD_PRINTF(3, 4) static int jp_fail(jp *J, size_t at, const char *fmt, ...) {
  kbd_text t = KBD_TEXT_INIT;
  jp_where(&t, J, at);
  va_list ap;
  va_start(ap, fmt);
  kbd_text_vappend(&t, fmt, ap);
  va_end(ap);
  J->err = kbd_status_text(KBD_ERR_INVALID, &t);
  kbd_text_free(&t);
  return -1;
}

/* "expected X, found Y" with Y the byte at J->pos. */
static int jp_expected(jp *J, const char *what) {
  kbd_text t = KBD_TEXT_INIT;
  jp_where(&t, J, J->pos);
  kbd_text_append(&t, "expected %s, found ", what);
  jp_describe(&t, J, J->pos);
  J->err = kbd_status_text(KBD_ERR_INVALID, &t);
  kbd_text_free(&t);
  return -1;
}

static int jp_oom(jp *J) {
  J->err = kbd_status_make(KBD_ERR_OOM, "%s: out of memory while parsing JSON (%zu bytes)", J->what, J->len);
  return -1;
}

static void jp_ws(jp *J) {
  while (J->pos < J->len) {
    const unsigned char c = J->p[J->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++J->pos;
  }
}

size_t gpt2_utf8_decode(const unsigned char *p, size_t avail, unsigned *cpo) {
  const unsigned char c = p[0];
  if (c < 0x80) {
    *cpo = c;
    return 1;
  }
  size_t n;
  unsigned cp, min;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1Fu;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0Fu;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (avail < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((p[k] & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (p[k] & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *cpo = cp;
  return n;
}
static size_t utf8_seq(const unsigned char *p, size_t avail) {
  unsigned cp;
  return gpt2_utf8_decode(p, avail, &cp);
}

static size_t utf8_put(char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

static int hex4(const unsigned char *p, unsigned *v) {
  unsigned r = 0;
  for (int k = 0; k < 4; ++k) {
    const unsigned char c = p[k];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10u;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10u;
    else
      return 0;
    r = r * 16u + d;
  }
  *v = r;
  return 1;
}

/* A string at J->pos (the opening quote): *out malloc'ed, NUL-terminated, *olen bytes. */
static int jp_string(jp *J, char **out, size_t *olen) {
  const size_t start = J->pos;
  size_t k = start + 1;
  /* First pass: the closing quote, so the copy is allocated once; the unescaped text is never longer. */
  while (k < J->len && J->p[k] != '"')
    k += J->p[k] == '\\' ? 2 : 1;
  if (k >= J->len) return jp_fail(J, start, "unterminated string (no closing '\"')");
  char *o = (char *)malloc(k - start);
  if (!o) return jp_oom(J);
  size_t n = 0, q = start + 1;
  while (q < k) {
    const unsigned char c = J->p[q];
    if (c == '\\') {
      const unsigned char e = J->p[q + 1];
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      const char *simple = strchr(from, e);
      if (e && simple) {
        o[n++] = to[simple - from];
        q += 2;
        continue;
      }
      if (e != 'u') {
        free(o);
        return jp_fail(J, q, "invalid escape '\\%c' in a string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
                       e >= 0x20 && e < 0x7f ? e : '?');
      }
      unsigned u;
      if (q + 6 > k || !hex4(J->p + q + 2, &u)) {
        free(o);
        return jp_fail(J, q, "invalid \\u escape: four hex digits must follow \\u");
      }
      size_t used = 6;
      if (u >= 0xDC00 && u <= 0xDFFF) {
        free(o);
        return jp_fail(J, q, "unpaired UTF-16 low surrogate \\u%04X in a string", u);
      }
      if (u >= 0xD800 && u <= 0xDBFF) {
        unsigned lo;
        if (q + 12 > k || J->p[q + 6] != '\\' || J->p[q + 7] != 'u' || !hex4(J->p + q + 8, &lo) || lo < 0xDC00 ||
            lo > 0xDFFF) {
          free(o);
          return jp_fail(J, q, "UTF-16 high surrogate \\u%04X is not followed by a low surrogate \\uDC00..\\uDFFF", u);
        }
        u = 0x10000u + ((u - 0xD800u) << 10) + (lo - 0xDC00u);
        used = 12;
      }
      n += utf8_put(o + n, u);
      q += used;
      continue;
    }
    if (c < 0x20) {
      free(o);
      return jp_fail(J, q, "control character 0x%02X in a string (it must be escaped)", c);
    }
    const size_t sl = utf8_seq(J->p + q, k - q);
    if (!sl) {
      free(o);
      return jp_fail(J, q, "invalid UTF-8 (byte 0x%02X) in a string", c);
    }
    memcpy(o + n, J->p + q, sl);
    n += sl;
    q += sl;
  }
  o[n] = '\0';
  *out = o;
  *olen = n;
  J->pos = k + 1;
  return 0;
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static int jp_number(jp *J, gpt2_json *v) {
  const size_t start = J->pos;
  size_t k = start;
  int neg = 0, integral = 1;
  if (k < J->len && J->p[k] == '-') {
    neg = 1;
    ++k;
  }
  if (k >= J->len || !is_digit(J->p[k])) {
    J->pos = k;
    return jp_expected(J, "a digit in a number");
  }
  if (J->p[k] == '0' && k + 1 < J->len && is_digit(J->p[k + 1]))
    return jp_fail(J, start, "number with a leading zero (JSON allows none)");
  const size_t int_start = k;
  while (k < J->len && is_digit(J->p[k]))
    ++k;
  const size_t int_end = k;
  if (k < J->len && J->p[k] == '.') {
    integral = 0;
    ++k;
    if (k >= J->len || !is_digit(J->p[k])) {
      J->pos = k;
      return jp_expected(J, "a digit after the decimal point");
    }
    while (k < J->len && is_digit(J->p[k]))
      ++k;
  }
  if (k < J->len && (J->p[k] == 'e' || J->p[k] == 'E')) {
    integral = 0;
    ++k;
    if (k < J->len && (J->p[k] == '+' || J->p[k] == '-')) ++k;
    if (k >= J->len || !is_digit(J->p[k])) {
      J->pos = k;
      return jp_expected(J, "a digit in the exponent");
    }
    while (k < J->len && is_digit(J->p[k]))
      ++k;
  }
  /* strtod needs a NUL-terminated copy; the text is not necessarily terminated. */
  char small[64], *buf = small;
  const size_t nl = k - start;
  if (nl >= sizeof small) {
    buf = (char *)malloc(nl + 1);
    if (!buf) return jp_oom(J);
  }
  memcpy(buf, J->p + start, nl);
  buf[nl] = '\0';
  const double d = strtod(buf, NULL);
  if (buf != small) free(buf);
  if (d > 1.7976931348623157e308 || d < -1.7976931348623157e308)
    return jp_fail(J, start, "number %.*s%s is out of the range of a double", nl > 40 ? 40 : (int)nl,
                   (const char *)J->p + start, nl > 40 ? "..." : "");
  v->type = GPT2_JSON_NUM;
  v->d = d;
  v->has_i = 0;
  if (integral) {
    /* Exact from the digits: a double holds integers exactly only up to 2^53. */
    unsigned long long m = 0;
    const unsigned long long lim = neg ? 9223372036854775808ull : 9223372036854775807ull;
    int fits = 1;
    for (size_t q = int_start; q < int_end; ++q) {
      const unsigned dig = J->p[q] - '0';
      if (m > (lim - dig) / 10) {
        fits = 0;
        break;
      }
      m = m * 10 + dig;
    }
    if (fits) {
      v->has_i = 1;
      v->i = neg ? (m == 9223372036854775808ull ? (-9223372036854775807ll - 1) : -(long long)m) : (long long)m;
    }
  } else if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(long long)d) {
    v->has_i = 1;
    v->i = (long long)d;
  }
  J->pos = k;
  return 0;
}

static int jp_value(jp *J, gpt2_json *v, int depth);

/* Room for one more entry in v->kids, zeroed: on a later failure gpt2_json_free sees only valid or NULL fields. */
static gpt2_json *jp_push(jp *J, gpt2_json *v) {
  if (v->n == v->cap) {
    const size_t cap = v->cap ? v->cap * 2 : 4;
    gpt2_json *k = (gpt2_json *)realloc(v->kids, cap * sizeof *k);
    if (!k) {
      jp_oom(J);
      return NULL;
    }
    v->kids = k;
    v->cap = cap;
  }
  gpt2_json *e = &v->kids[v->n++];
  memset(e, 0, sizeof *e);
  return e;
}

typedef struct jkey {
  const char *k;
  size_t len, idx;
} jkey;

static int jkey_cmp_raw(const char *a, size_t al, const char *b, size_t bl) {
  const int c = memcmp(a, b, al < bl ? al : bl);
  if (c) return c;
  return al < bl ? -1 : al > bl;
}

static int jkey_cmp(const void *x, const void *y) {
  const jkey *a = (const jkey *)x, *b = (const jkey *)y;
  const int c = jkey_cmp_raw(a->k, a->len, b->k, b->len);
  if (c) return c;
  return a->idx < b->idx ? -1 : a->idx > b->idx; /* document order among equal keys: the first is reported first */
}

/* Sorts the object's keys for gpt2_json_get; duplicate keys are an error (RFC 8259 leaves their meaning open, and
 * a safetensors header or vocab.json with one is corrupt). key_pos[i]: where entry i's key starts. */
static int jp_index(jp *J, gpt2_json *v, const size_t *key_pos) {
  if (!v->n) return 0;
  jkey *ks = (jkey *)malloc(v->n * sizeof *ks);
  v->order = (size_t *)malloc(v->n * sizeof *v->order);
  if (!ks || !v->order) {
    free(ks);
    return jp_oom(J);
  }
  for (size_t i = 0; i < v->n; ++i) {
    ks[i].k = v->kids[i].key;
    ks[i].len = v->kids[i].klen;
    ks[i].idx = i;
  }
  qsort(ks, v->n, sizeof *ks, jkey_cmp);
  for (size_t i = 0; i < v->n; ++i) {
    if (i && !jkey_cmp_raw(ks[i - 1].k, ks[i - 1].len, ks[i].k, ks[i].len)) {
      kbd_text t = KBD_TEXT_INIT;
      jp_where(&t, J, key_pos[ks[i].idx]);
      kbd_text_puts(&t, "duplicate key ");
      gpt2_json_quote(&t, ks[i].k, ks[i].len);
      kbd_text_append(&t, " in an object (first at byte %zu)", key_pos[ks[i - 1].idx]);
      J->err = kbd_status_text(KBD_ERR_INVALID, &t);
      kbd_text_free(&t);
      free(ks);
      return -1;
    }
    v->order[i] = ks[i].idx;
  }
  free(ks);
  return 0;
}

static int jp_object(jp *J, gpt2_json *v, int depth) {
  v->type = GPT2_JSON_OBJ;
  ++J->pos; /* '{' */
  jp_ws(J);
  if (J->pos < J->len && J->p[J->pos] == '}') {
    ++J->pos;
    return 0;
  }
  size_t *key_pos = NULL, kp_cap = 0;
  int rc = -1;
  for (;;) {
    jp_ws(J);
    if (J->pos >= J->len || J->p[J->pos] != '"') {
      jp_expected(J, "a string key in an object");
      break;
    }
    const size_t kpos = J->pos;
    gpt2_json *e = jp_push(J, v);
    if (!e) break;
    if (v->n > kp_cap) {
      kp_cap = v->cap;
      size_t *np = (size_t *)realloc(key_pos, kp_cap * sizeof *np);
      if (!np) {
        jp_oom(J);
        break;
      }
      key_pos = np;
    }
    key_pos[v->n - 1] = kpos;
    if (jp_string(J, &e->key, &e->klen)) break;
    jp_ws(J);
    if (J->pos >= J->len || J->p[J->pos] != ':') {
      jp_expected(J, "':' after an object key");
      break;
    }
    ++J->pos;
    jp_ws(J);
    if (jp_value(J, e, depth + 1)) break;
    jp_ws(J);
    if (J->pos < J->len && J->p[J->pos] == ',') {
      ++J->pos;
      continue;
    }
    if (J->pos < J->len && J->p[J->pos] == '}') {
      ++J->pos;
      rc = jp_index(J, v, key_pos);
      break;
    }
    jp_expected(J, "',' or '}' after an object member");
    break;
  }
  free(key_pos);
  return rc;
}

static int jp_array(jp *J, gpt2_json *v, int depth) {
  v->type = GPT2_JSON_ARR;
  ++J->pos; /* '[' */
  jp_ws(J);
  if (J->pos < J->len && J->p[J->pos] == ']') {
    ++J->pos;
    return 0;
  }
  for (;;) {
    jp_ws(J);
    gpt2_json *e = jp_push(J, v);
    if (!e) return -1;
    if (jp_value(J, e, depth + 1)) return -1;
    jp_ws(J);
    if (J->pos < J->len && J->p[J->pos] == ',') {
      ++J->pos;
      continue;
    }
    if (J->pos < J->len && J->p[J->pos] == ']') {
      ++J->pos;
      return 0;
    }
    return jp_expected(J, "',' or ']' after an array element");
  }
}

static int jp_literal(jp *J, const char *word) {
  const size_t n = strlen(word);
  if (J->len - J->pos < n || memcmp(J->p + J->pos, word, n) != 0)
    return jp_fail(J, J->pos, "invalid literal (expected '%s')", word);
  J->pos += n;
  return 0;
}

static int jp_value(jp *J, gpt2_json *v, int depth) {
  if (depth > GPT2_JSON_MAX_DEPTH)
    return jp_fail(J, J->pos, "nesting deeper than %d arrays/objects", GPT2_JSON_MAX_DEPTH);
  if (J->pos >= J->len) return jp_expected(J, "a value");
  switch (J->p[J->pos]) {
  case '{': return jp_object(J, v, depth);
  case '[': return jp_array(J, v, depth);
  case '"': v->type = GPT2_JSON_STR; return jp_string(J, &v->s, &v->slen);
  case 't':
    v->type = GPT2_JSON_BOOL;
    v->b = 1;
    return jp_literal(J, "true");
  case 'f': v->type = GPT2_JSON_BOOL; return jp_literal(J, "false");
  case 'n': v->type = GPT2_JSON_NULL; return jp_literal(J, "null");
  default:
    if (J->p[J->pos] == '-' || is_digit(J->p[J->pos])) return jp_number(J, v);
    return jp_expected(J, "a value (object, array, string, number, true, false or null)");
  }
}

static void json_free_contents(gpt2_json *v) {
  free(v->s);
  free(v->key);
  for (size_t i = 0; i < v->n; ++i)
    json_free_contents(&v->kids[i]);
  free(v->kids);
  free(v->order);
}

void gpt2_json_free(gpt2_json *v) {
  if (!v) return;
  json_free_contents(v);
  free(v);
}

kbd_status gpt2_json_parse(gpt2_json **out, const char *text, size_t len, const char *what) {
  if (!out) return kbd_status_make(KBD_ERR_INVALID, "gpt2_json_parse: out is NULL");
  *out = NULL;
  if (!what) what = "JSON";
  if (!text && len) return kbd_status_make(KBD_ERR_INVALID, "%s: text is NULL", what);
  jp J;
  J.p = (const unsigned char *)(text ? text : "");
  J.len = len;
  J.pos = 0;
  J.what = what;
  J.err = kbd_status_ok();
  gpt2_json *root = (gpt2_json *)calloc(1, sizeof *root);
  if (!root) return kbd_status_make(KBD_ERR_OOM, "%s: out of memory", what);
  /* A UTF-8 byte order mark: RFC 8259 lets a parser ignore it, and editors on some systems write one. */
  if (len >= 3 && J.p[0] == 0xEF && J.p[1] == 0xBB && J.p[2] == 0xBF) J.pos = 3;
  jp_ws(&J);
  int rc;
  if (J.pos >= len)
    rc = jp_fail(&J, J.pos, "empty document (expected a JSON value)");
  else
    rc = jp_value(&J, root, 1);
  if (!rc) {
    jp_ws(&J);
    if (J.pos < len) {
      kbd_text t = KBD_TEXT_INIT;
      jp_where(&t, &J, J.pos);
      kbd_text_puts(&t, "unexpected ");
      jp_describe(&t, &J, J.pos);
      kbd_text_puts(&t, " after the JSON value (one value per document)");
      J.err = kbd_status_text(KBD_ERR_INVALID, &t);
      kbd_text_free(&t);
      rc = -1;
    }
  }
  if (rc) {
    gpt2_json_free(root);
    return J.err;
  }
  *out = root;
  return kbd_status_ok();
}

gpt2_json_type gpt2_json_kind(const gpt2_json *v) { return v ? v->type : GPT2_JSON_NULL; }

const gpt2_json *gpt2_json_get(const gpt2_json *obj, const char *key) {
  if (!obj || obj->type != GPT2_JSON_OBJ || !key || !obj->n) return NULL;
  const size_t kl = strlen(key);
  size_t lo = 0, hi = obj->n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const gpt2_json *e = &obj->kids[obj->order[mid]];
    const int c = jkey_cmp_raw(e->key, e->klen, key, kl);
    if (!c) return e;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

size_t gpt2_json_count(const gpt2_json *v) {
  return v && (v->type == GPT2_JSON_ARR || v->type == GPT2_JSON_OBJ) ? v->n : 0;
}

const gpt2_json *gpt2_json_at(const gpt2_json *v, size_t i, const char **key) {
  if (key) *key = NULL;
  if (i >= gpt2_json_count(v)) return NULL;
  if (key && v->type == GPT2_JSON_OBJ) *key = v->kids[i].key;
  return &v->kids[i];
}

const char *gpt2_json_key(const gpt2_json *obj, size_t i, size_t *len) {
  if (len) *len = 0;
  if (!obj || obj->type != GPT2_JSON_OBJ || i >= obj->n) return NULL;
  if (len) *len = obj->kids[i].klen;
  return obj->kids[i].key;
}

const char *gpt2_json_str(const gpt2_json *v, size_t *len) {
  if (len) *len = 0;
  if (!v || v->type != GPT2_JSON_STR) return NULL;
  if (len) *len = v->slen;
  return v->s;
}

int gpt2_json_num(const gpt2_json *v, double *d, long long *i) {
  if (!v || v->type != GPT2_JSON_NUM) return 0;
  if (d) *d = v->d;
  if (!v->has_i) return 1;
  if (i) *i = v->i;
  return 2;
}

int gpt2_json_bool(const gpt2_json *v) { return v && v->type == GPT2_JSON_BOOL && v->b; }

const char *gpt2_json_kind_name(gpt2_json_type t) {
  switch (t) {
  case GPT2_JSON_NULL: return "null";
  case GPT2_JSON_BOOL: return "a boolean";
  case GPT2_JSON_NUM: return "a number";
  case GPT2_JSON_STR: return "a string";
  case GPT2_JSON_ARR: return "an array";
  case GPT2_JSON_OBJ: return "an object";
  }
  return "an unknown value";
}

void gpt2_json_quote(kbd_text *t, const char *s, size_t len) {
  const size_t show = len > 64 ? 64 : len;
  kbd_text_puts(t, "\"");
  for (size_t k = 0; k < show; ++k) {
    const unsigned char c = (unsigned char)s[k];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
      kbd_text_append(t, "%c", c);
    else
      kbd_text_append(t, "\\x%02X", c);
  }
  kbd_text_puts(t, show < len ? "\"..." : "\"");
}
