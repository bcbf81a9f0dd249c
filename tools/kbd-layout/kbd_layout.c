/* kbd-layout - pictures of kbd's fragment layouts and shared-tile swizzles, drawn by the library's own code.
 *
 *   kbd-layout frag --layout ROW|WGMMA_ACC|MMA_A|MMA_B|MMA_C|TMEM_ACC --dtype DT --rows R --cols C
 *                   [--scope warp|warpgroup|N] [--text] [--window r0,c0,R,C] [-o FILE]
 *   kbd-layout smem --dtype DT --rows R --cols C --swizzle NONE|32B|64B|128B|128B_ATOM32 [--major k|mn]
 *                   [--text] [--window r0,c0,R,C] [-o FILE]
 *
 * frag: for every element (r, c) of a register tile, the thread of the owning scope that holds it and its
 * value index in that thread's fragment (T<t> V<i>), from kbd_tile_coord - the function every tile operation
 * uses - over each thread's elements; the ROW vector width is KBD__VEC, what KBD_TILE computes.
 * smem: for every element, the byte offset kbd_smem_tile_offset gives (the function the moves, the TMA
 * emulation and the MMA descriptors use), shown as its 4-byte bank ((offset / 4) % 32) and its 16-byte chunk
 * (offset / 16). Shapes are checked by the library's rules (kbd_layout_valid / KBD_LAYOUT_RULE_*,
 * kbd_smem_shape_check); a broken rule is one line on stderr and exit status 1. SVG by default, a plain-text
 * grid with --text. docs/layout-pictures.md.
 */
#include <kbd/tile.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ME "kbd-layout"

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs(ME ": ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* The names are kbd/print.h's (the ones kbd_print's headers use): ids lo..hi, the first whose name is s. */
typedef const char *(*kl_namer)(int);
static int kl_lookup(kl_namer name, int lo, int hi, const char *what, const char *s) {
  for (int id = lo; id <= hi; ++id)
    if (strcmp(name(id), s) == 0) return id;
  kbd_text list = KBD_TEXT_INIT; /* die() exits: the process frees it */
  for (int id = lo; id <= hi; ++id)
    kbd_text_append(&list, "%s%s", id > lo ? ", " : "", name(id));
  die("unknown %s '%s' (one of: %s)", what, s, kbd_text_str(&list));
  return -1;
}
#define KL_LAYOUTS kbd__print_layout_name, KBD_LAYOUT_ROW, KBD_LAYOUT_TMEM_ACC
#define KL_DTYPES kbd__print_dtype_name, KBD_DT_f32, KBD_DT_u8
#define KL_SWIZZLES kbd__print_swizzle_name, KBD_SWIZZLE_NONE, KBD_SWIZZLE_COUNT - 1

static int kl_int(const char *opt, const char *s) {
  char *end;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (errno || *end || end == s || v < -1000000 || v > 1000000) die("%s takes an integer, not '%s'", opt, s);
  return (int)v;
}

/* The rule a layout breaks (the same text the tile macros' static assertions carry). */
static const char *kl_layout_rule(int layout) {
  switch (layout) {
  case KBD_LAYOUT_ROW: return KBD_LAYOUT_RULE_ROW;
  case KBD_LAYOUT_WGMMA_ACC: return KBD_LAYOUT_RULE_WGMMA_ACC;
  case KBD_LAYOUT_MMA_A: return KBD_LAYOUT_RULE_MMA_A;
  case KBD_LAYOUT_MMA_B: return KBD_LAYOUT_RULE_MMA_B;
  case KBD_LAYOUT_MMA_C: return KBD_LAYOUT_RULE_MMA_C;
  default: return KBD_LAYOUT_RULE_TMEM_ACC;
  }
}

/* One cell of the picture: two numbers and a colour class. frag: a = thread, b = value index; smem: a = bank,
 * b = 16-byte chunk. */
typedef struct {
  int a, b;
} kl_cell;

typedef struct {
  int rows, cols;
  int r0, c0, wr, wc; /* the window drawn */
  kl_cell *cell;      /* rows x cols */
  int smem;
  kbd_text title;
} kl_pic;

static kl_cell *kl_at(kl_pic *p, int r, int c) { return &p->cell[(size_t)r * (size_t)p->cols + (size_t)c]; }

static void kl_frag(kl_pic *p, int layout, int dt, int rows, int cols, int scope) {
  const int esize = KBD_DT_SIZE(dt);
  const int vec = layout == KBD_LAYOUT_ROW ? KBD__VEC(esize, rows, cols, scope) : 1;
  if (layout != KBD_LAYOUT_ROW && scope != KBD_LAYOUT_THREADS(layout, 0))
    die("%s (here --scope %d)", kl_layout_rule(layout), scope);
  if (scope < 32 || scope > 1024 || scope % 32) die("kbd: a tile's scope must be whole warps (here --scope %d)", scope);
  if ((long long)rows * cols % scope)
    die("kbd: tile rows*cols must be a multiple of the owning scope's thread count (here rows = %d, cols = %d, "
        "scope %d)",
        rows, cols, scope);
  if (!kbd_layout_valid(layout, rows, cols, scope, vec))
    die("%s (here rows = %d, cols = %d)", kl_layout_rule(layout), rows, cols);
  const int npt = KBD__NPT(rows, cols, scope);
  const kbd_tile_shape s = kbd_tile_shape_of(rows, cols, scope, layout, dt, npt, vec, esize);
  for (int t = 0; t < scope; ++t)
    for (int i = 0; i < npt; ++i) {
      const kbd_coord k = kbd_tile_coord(s, t, i);
      if (k.row < 0 || k.row >= rows || k.col < 0 || k.col >= cols)
        die("internal: thread %d value %d maps to (%d, %d), outside the tile", t, i, k.row, k.col);
      kl_cell *c = kl_at(p, k.row, k.col);
      if (c->a >= 0) die("internal: (%d, %d) is held by threads %d and %d", k.row, k.col, c->a, t);
      c->a = t;
      c->b = i;
    }
  kbd_text_append(&p->title, "%s %s %d x %d, %d threads, %d per thread (vec %d): T<thread> V<value>",
                  kbd__print_layout_name(layout), kbd__print_dtype_name(dt), rows, cols, scope, npt, vec);
}

static void kl_smem(kl_pic *p, int dt, int rows, int cols, int swz, int major) {
  const kbd_smem_shape s = kbd_smem_shape_make(KBD_DT_SIZE(dt), rows, cols, swz, major); /* checked in main */
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int off = kbd_smem_tile_offset(&s, r, c);
      kl_at(p, r, c)->a = (off / 4) % 32;
      kl_at(p, r, c)->b = off / 16;
    }
  kbd_text_append(&p->title, "shared %s %d x %d, swizzle %s, %s-major: B<bank> (4-byte, 0-31) C<16-byte chunk>",
                  kbd__print_dtype_name(dt), rows, cols, kbd__print_swizzle_name(swz), major ? "MN" : "K");
}

static void kl_text(const kl_pic *p, FILE *f) {
  fprintf(f, "%s\n", kbd_text_str(&p->title));
  fprintf(f, "%6s", "");
  for (int c = p->c0; c < p->c0 + p->wc; ++c)
    fprintf(f, " %9d", c);
  fputc('\n', f);
  for (int r = p->r0; r < p->r0 + p->wr; ++r) {
    fprintf(f, "%6d", r);
    for (int c = p->c0; c < p->c0 + p->wc; ++c) {
      const kl_cell *k = &p->cell[(size_t)r * (size_t)p->cols + (size_t)c];
      char b[sizeof "T-2147483648 V-2147483648"];
      snprintf(b, sizeof b, p->smem ? "B%d C%d" : "T%d V%d", k->a, k->b);
      fprintf(f, " %9s", b);
    }
    fputc('\n', f);
  }
}

/* Fill colours: frag by thread (32 hues per warp, warps told apart by lightness), smem by bank group of 4 (the
 * 8 16-byte chunks of a 128-byte line). */
static void kl_color(const kl_pic *p, const kl_cell *k, char *out, size_t n) {
  int hue, light;
  if (p->smem) {
    hue = (k->a / 4) * 45;
    light = 78 + (k->b % 2) * 8;
  } else {
    hue = (k->a % 32) * 360 / 32;
    light = 88 - ((k->a / 32) % 4) * 10;
  }
  snprintf(out, n, "hsl(%d,70%%,%d%%)", hue, light);
}

/* XML text: the titles name fields as T<thread>, which must not read as markup. */
static void kl_xml(FILE *f, const char *s) {
  for (; *s; ++s)
    if (*s == '<')
      fputs("&lt;", f);
    else if (*s == '>')
      fputs("&gt;", f);
    else if (*s == '&')
      fputs("&amp;", f);
    else
      fputc(*s, f);
}

static void kl_svg(const kl_pic *p, FILE *f) {
  const int cw = 44, ch = 26, left = 36, top = 40;
  const int w = left + p->wc * cw + 8, h = top + p->wr * ch + 8;
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"monospace\" "
          "font-size=\"9\">\n",
          w, h);
  /* one style for every cell keeps the file small: a 64 x 16 picture is 1024 cells */
  fputs("<style>text{text-anchor:middle}g rect{stroke:#555;stroke-width:.5}</style>\n", f);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h);
  fputs("<text x=\"4\" y=\"14\" font-size=\"11\" style=\"text-anchor:start\">", f);
  kl_xml(f, kbd_text_str(&p->title));
  fputs("</text>\n", f);
  for (int c = 0; c < p->wc; ++c)
    fprintf(f, "<text x=\"%d\" y=\"%d\">%d</text>\n", left + c * cw + cw / 2, top - 6, p->c0 + c);
  for (int r = 0; r < p->wr; ++r) {
    fprintf(f, "<text x=\"%d\" y=\"%d\">%d</text>\n", left / 2, top + r * ch + ch / 2 + 3, p->r0 + r);
    for (int c = 0; c < p->wc; ++c) {
      const int rr = p->r0 + r, cc = p->c0 + c;
      const kl_cell *k = &p->cell[(size_t)rr * (size_t)p->cols + (size_t)cc];
      char col[sizeof "hsl(-2147483648,70%,-2147483648%)"];
      kl_color(p, k, col, sizeof col);
      const int x = left + c * cw, y = top + r * ch;
      fprintf(f,
              "<g data-row=\"%d\" data-col=\"%d\" data-%s=\"%d\" data-%s=\"%d\"><rect x=\"%d\" y=\"%d\" "
              "width=\"%d\" height=\"%d\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s%d</text><text x=\"%d\" "
              "y=\"%d\">%s%d</text></g>\n",
              rr, cc, p->smem ? "bank" : "thread", k->a, p->smem ? "chunk" : "value", k->b, x, y, cw, ch, col,
              x + cw / 2, y + 11, p->smem ? "B" : "T", k->a, x + cw / 2, y + 22, p->smem ? "C" : "V", k->b);
    }
  }
  fputs("</svg>\n", f);
}

static void kl_usage(FILE *f) {
  fputs("usage: kbd-layout frag --layout ROW|WGMMA_ACC|MMA_A|MMA_B|MMA_C|TMEM_ACC --dtype DT --rows R --cols C\n"
        "                       [--scope warp|warpgroup|N] [--text] [--window r0,c0,R,C] [-o FILE]\n"
        "       kbd-layout smem --dtype DT --rows R --cols C --swizzle NONE|32B|64B|128B|128B_ATOM32 [--major k|mn]\n"
        "                       [--text] [--window r0,c0,R,C] [-o FILE]\n"
        "DT: f32 f16 bf16 e4m3 e5m2 i32 s8 u8. SVG on stdout (or FILE) unless --text. docs/layout-pictures.md\n",
        f);
}

int main(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    kl_usage(stdout);
    return 0;
  }
  if (argc < 2 || (strcmp(argv[1], "frag") && strcmp(argv[1], "smem")))
    die("first argument: frag or smem (see --help)");
  const int smem = !strcmp(argv[1], "smem");
  int layout = -1, dt = -1, rows = -1, cols = -1, scope = -1, swz = -1, major = KBD_SMEM_K_MAJOR, text = 0;
  int win[4] = {0, 0, -1, -1};
  const char *out = NULL;
  for (int i = 2; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--text")) {
      text = 1;
      continue;
    }
    if (i + 1 >= argc) die("%s needs a value", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--layout") && !smem)
      layout = kl_lookup(KL_LAYOUTS, "layout", v);
    else if (!strcmp(a, "--dtype"))
      dt = kl_lookup(KL_DTYPES, "dtype", v);
    else if (!strcmp(a, "--rows"))
      rows = kl_int(a, v);
    else if (!strcmp(a, "--cols"))
      cols = kl_int(a, v);
    else if (!strcmp(a, "--scope") && !smem)
      scope = !strcmp(v, "warp") ? KBD_WARP_SIZE : !strcmp(v, "warpgroup") ? KBD_WARPGROUP_SIZE : kl_int(a, v);
    else if (!strcmp(a, "--swizzle") && smem)
      swz = kl_lookup(KL_SWIZZLES, "swizzle", v);
    else if (!strcmp(a, "--major") && smem) {
      if (strcmp(v, "k") && strcmp(v, "mn")) die("--major takes k or mn, not '%s'", v);
      major = !strcmp(v, "mn") ? KBD_SMEM_MN_MAJOR : KBD_SMEM_K_MAJOR;
    } else if (!strcmp(a, "--window")) {
      if (sscanf(v, "%d,%d,%d,%d", &win[0], &win[1], &win[2], &win[3]) != 4)
        die("--window takes r0,c0,R,C, not '%s'", v);
    } else if (!strcmp(a, "-o"))
      out = v;
    else
      die("unknown option '%s' for %s (see --help)", a, argv[1]);
  }
  if (dt < 0) die("--dtype is required");
  if (rows < 0 || cols < 0) die("--rows and --cols are required");
  if (!smem && layout < 0) die("--layout is required");
  if (smem && swz < 0) die("--swizzle is required");
  if (smem) { /* the shared tile's rules, before anything is sized by rows x cols */
    const kbd_smem_shape s = kbd_smem_shape_make(KBD_DT_SIZE(dt), rows, cols, swz, major);
    const char *rule = kbd_smem_shape_check(&s);
    if (rule) die("%s (here rows = %d, cols = %d)", rule, rows, cols);
  } else if (!KBD_LAYOUT_DIMS_OK_(rows, cols)) {
    die("kbd: tile rows and cols must be positive, rows*cols <= 2^20 (here rows = %d, cols = %d)", rows, cols);
  }
  if (!smem && scope < 0) {
    if (layout == KBD_LAYOUT_ROW) die("--scope is required for ROW tiles (warp, warpgroup or a thread count)");
    scope = KBD_LAYOUT_THREADS(layout, 0);
  }
  kl_pic p;
  memset(&p, 0, sizeof p);
  p.rows = rows;
  p.cols = cols;
  p.smem = smem;
  p.cell = (kl_cell *)malloc((size_t)rows * (size_t)cols * sizeof *p.cell);
  if (!p.cell) die("out of memory");
  for (long long k = 0; k < (long long)rows * cols; ++k)
    p.cell[k].a = p.cell[k].b = -1;
  if (smem)
    kl_smem(&p, dt, rows, cols, swz, major);
  else
    kl_frag(&p, layout, dt, rows, cols, scope);
  p.r0 = win[0];
  p.c0 = win[1];
  p.wr = win[2] < 0 ? rows : win[2];
  p.wc = win[3] < 0 ? cols : win[3];
  if (p.r0 < 0 || p.c0 < 0 || p.wr < 1 || p.wc < 1 || p.r0 + p.wr > rows || p.c0 + p.wc > cols)
    die("--window %d,%d,%d,%d is not inside the %d x %d tile", p.r0, p.c0, p.wr, p.wc, rows, cols);
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) die("cannot write %s: %s", out, strerror(errno));
  if (text)
    kl_text(&p, f);
  else
    kl_svg(&p, f);
  if (out && fclose(f)) die("cannot write %s", out);
  free(p.cell);
  kbd_text_free(&p.title);
  return 0;
}
