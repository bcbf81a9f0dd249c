/* gpt2_config.c - config.json reader and writer (gpt2_config.h). */
#include "gpt2_config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpt2_json.h"

kbd_status gpt2_read_file(const char *path, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp) return kbd_status_make(KBD_ERR_INVALID, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = (char *)malloc(cap);
  for (;;) {
    if (!buf) {
      fclose(fp);
      return kbd_status_make(KBD_ERR_OOM, "%s: out of memory after %zu bytes", path, n);
    }
    n += fread(buf + n, 1, cap - n - 1, fp);
    if (n < cap - 1) break;
    char *nb = (char *)realloc(buf, cap * 2);
    if (!nb) free(buf);
    buf = nb;
    cap *= 2;
  }
  const int bad = ferror(fp);
  const int err = errno;
  fclose(fp);
  if (bad) {
    free(buf);
    return kbd_status_make(KBD_ERR_INVALID, "%s: read error: %s (a directory?)", path, strerror(err));
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return kbd_status_ok();
}

/* A positive int under `key` (alt: a second name tried when key is absent; NULL for none). */
static kbd_status cfg_int(const gpt2_json *root, const char *path, const char *key, const char *alt, int *out) {
  const gpt2_json *v = gpt2_json_get(root, key);
  const char *used = key;
  if (!v && alt) {
    v = gpt2_json_get(root, alt);
    used = alt;
  }
  if (!v)
    return alt ? kbd_status_make(KBD_ERR_INVALID, "%s: key \"%s\" (or \"%s\") is missing", path, key, alt)
               : kbd_status_make(KBD_ERR_INVALID, "%s: key \"%s\" is missing", path, key);
  long long i;
  double d;
  const int r = gpt2_json_num(v, &d, &i);
  if (!r)
    return kbd_status_make(KBD_ERR_INVALID, "%s: key \"%s\" is %s, expected a positive integer", path, used,
                           gpt2_json_kind_name(gpt2_json_kind(v)));
  if (r != 2 || i <= 0 || i > INT_MAX)
    return kbd_status_make(KBD_ERR_INVALID, "%s: key \"%s\" is %.17g, expected a positive integer below 2^31", path,
                           used, d);
  *out = (int)i;
  return kbd_status_ok();
}

kbd_status gpt2_config_load(gpt2_config *c, const char *dir) {
  if (!c || !dir) return kbd_status_make(KBD_ERR_INVALID, "gpt2_config_load: %s is NULL", c ? "dir" : "c");
  kbd_text path = KBD_TEXT_INIT;
  kbd_text_append(&path, "%s/config.json", dir);
  const char *pn = kbd_text_str(&path);
  char *text;
  size_t len;
  gpt2_json *root = NULL;
  kbd_status s = gpt2_read_file(pn, &text, &len);
  if (kbd_ok(s)) {
    s = gpt2_json_parse(&root, text, len, pn);
    free(text);
  }
  if (kbd_ok(s) && gpt2_json_kind(root) != GPT2_JSON_OBJ)
    s = kbd_status_make(KBD_ERR_INVALID, "%s: the document is %s, expected an object", pn,
                        gpt2_json_kind_name(gpt2_json_kind(root)));
  gpt2_config cf;
  memset(&cf, 0, sizeof cf);
  if (kbd_ok(s)) s = cfg_int(root, pn, "n_layer", NULL, &cf.n_layer);
  if (kbd_ok(s)) s = cfg_int(root, pn, "n_head", NULL, &cf.n_head);
  if (kbd_ok(s)) s = cfg_int(root, pn, "n_embd", NULL, &cf.n_embd);
  if (kbd_ok(s)) s = cfg_int(root, pn, "vocab_size", NULL, &cf.vocab_size);
  if (kbd_ok(s)) s = cfg_int(root, pn, "n_positions", "n_ctx", &cf.n_ctx);
  if (kbd_ok(s)) {
    const gpt2_json *e = gpt2_json_get(root, "layer_norm_epsilon");
    double d = 1e-5;
    if (e && !gpt2_json_num(e, &d, NULL))
      s = kbd_status_make(KBD_ERR_INVALID, "%s: key \"layer_norm_epsilon\" is %s, expected a number", pn,
                          gpt2_json_kind_name(gpt2_json_kind(e)));
    else if (!(d > 0 && d < 1))
      s = kbd_status_make(KBD_ERR_INVALID, "%s: key \"layer_norm_epsilon\" is %g, expected a number in (0, 1)", pn, d);
    cf.ln_eps = (float)d;
  }
  if (kbd_ok(s) && cf.n_embd % cf.n_head != 0)
    s = kbd_status_make(KBD_ERR_INVALID,
                        "%s: key \"n_embd\" = %d is not a multiple of \"n_head\" = %d (each head gets n_embd / n_head "
                        "channels)",
                        pn, cf.n_embd, cf.n_head);
  gpt2_json_free(root);
  kbd_text_free(&path);
  if (kbd_ok(s)) *c = cf;
  return s;
}

kbd_status gpt2_config_write(const gpt2_config *c, const char *dir) {
  if (!c || !dir) return kbd_status_make(KBD_ERR_INVALID, "gpt2_config_write: %s is NULL", c ? "dir" : "c");
  kbd_text path = KBD_TEXT_INIT;
  kbd_text_append(&path, "%s/config.json", dir);
  FILE *fp = fopen(kbd_text_str(&path), "w");
  kbd_status s = kbd_status_ok();
  if (!fp) {
    s = kbd_status_make(KBD_ERR_INVALID, "%s: cannot create: %s", kbd_text_str(&path), strerror(errno));
  } else {
    const int w = fprintf(fp,
                          "{\n  \"model_type\": \"gpt2\",\n  \"activation_function\": \"gelu_new\",\n"
                          "  \"n_layer\": %d,\n  \"n_head\": %d,\n  \"n_embd\": %d,\n  \"vocab_size\": %d,\n"
                          "  \"n_positions\": %d,\n  \"n_ctx\": %d,\n  \"layer_norm_epsilon\": %.9g\n}\n",
                          c->n_layer, c->n_head, c->n_embd, c->vocab_size, c->n_ctx, c->n_ctx, (double)c->ln_eps);
    if (fclose(fp) != 0 || w < 0)
      s = kbd_status_make(KBD_ERR_INVALID, "%s: write failed: %s", kbd_text_str(&path), strerror(errno));
  }
  kbd_text_free(&path);
  return s;
}
