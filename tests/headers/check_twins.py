#!/usr/bin/env python3
"""check_twins.py - one interface, two implementations (kbd/hw.h), enforced on the header tree.

    check_twins.py <include>/kbd      check the tree; exit 0 when clean, 1 with one line per violation
    check_twins.py --self-test        run the check on small fixture trees that each break one rule (each
                                      must fail, naming what it broke) and on a clean one (must pass)

Rules (docs/adding-a-primitive.md):
  twin     every kbd_hw_<name> function and KBD_HW_<NAME> / kbd_hw_<name> macro defined in ptx/X.h is defined
           in cpu/X.h and vice versa (same file name), with the same number of parameters and both or neither
           taking the call site last (KBD_SITE_PARAMS); kbd_hw_* is defined nowhere but ptx/ and cpu/
  hw.h     kbd/hw.h includes every ptx/X.h and cpu/X.h that defines a twin
  asm      no inline asm outside ptx/ (cpu/fiber.h, the CPU machine's context switch, is the one exception)
  api      API headers (kbd/*.h) use no kbd_cpu_* or kbd_ptx_* identifier, nor the CPU profiler's own kbd__prof_*
           (its recording points are the kbd_hw_prof_* twins): they call kbd_hw_*
  include  API headers include ptx/ and cpu/ only through kbd/hw.h

The parse is deliberately simple: comments and string literals are blanked, a function definition is
`kbd_hw_<name>(...) {` at brace depth 0, a macro is `#define KBD_HW_<NAME>` (or kbd_hw_<name>).
"""
import os
import re
import subprocess
import sys
import tempfile

TWIN_DIRS = ("ptx", "cpu")
ASM_ALLOWED = {"cpu/fiber.h"}  # the CPU machine's context switch
HW = "hw.h"
SITE = "KBD_SITE_PARAMS"  # expands to two parameters: const char *file, int line

WHY = {  # printed once under the violations of each rule
    "twin": "a kbd_hw_* function or KBD_HW_* macro is defined in ptx/X.h and in cpu/X.h, same arity and call-site "
            "parameter, and nowhere else",
    "hw.h": "kbd/hw.h, the one switch, includes every twin file",
    "asm": "inline asm lives in ptx/ only (and %s, the CPU context switch)" % ", ".join(sorted(ASM_ALLOWED)),
    "api": "API headers (kbd/*.h) call only kbd_hw_*; kbd_cpu_*, kbd_ptx_* and the profiler's kbd__prof_* belong to "
           "cpu/ and ptx/ (profiling: the kbd_hw_prof_* twins)",
    "include": "API headers include ptx/ and cpu/ only through kbd/hw.h",
}

TWIN_NAME = re.compile(r"\b(kbd_hw_\w+|KBD_HW_\w+)\b")
ASM = re.compile(r"\b(asm|__asm__|__asm)\b")
PRIVATE = re.compile(r"\b(kbd_(?:cpu|ptx)_\w*|kbd__prof_\w*)")
INCLUDE = re.compile(r'^\s*#\s*include\s*["<](?:kbd/)?((?:cpu|ptx)/[^">]+)[">]')
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)(\()?")


def lex(text):
    """(code, nocomment): comments replaced by spaces (newlines kept); `code` also blanks the contents of
    string and character literals, so that neither comments nor strings can match a rule."""
    code, noc = [], []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            code.append(" " * (j - i))
            noc.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank = re.sub(r"[^\n]", " ", text[i:j])
            code.append(blank)
            noc.append(blank)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            lit = text[i:j]
            code.append(c + re.sub(r"[^\n]", " ", lit[1:-1]) + lit[-1:] if len(lit) > 1 else lit)
            noc.append(lit)
            i = j
        else:
            code.append(c)
            noc.append(c)
            i += 1
    return "".join(code), "".join(noc)


def logical_lines(text):
    """[(first line number, joined text)] with backslash continuations joined."""
    out, buf, start = [], [], None
    for no, line in enumerate(text.split("\n"), 1):
        if start is None:
            start = no
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, " ".join(buf)))
        buf, start = [], None
    if buf:
        out.append((start, " ".join(buf)))
    return out


def split_params(s):
    """Top-level comma split of a parameter list (without its parentheses)."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if parts or last:
        parts.append(last)
    parts = [" ".join(p.split()) for p in parts]
    return [] if parts in ([], ["void"]) else parts


def signature(params):
    """(arity, takes the call site last); KBD_SITE_PARAMS counts as the two parameters it is."""
    if params is None:
        return None, False
    return sum(2 if p == SITE else 1 for p in params), bool(params) and params[-1] == SITE


class Def:
    def __init__(self, rel, line, name, kind, params):
        self.rel, self.line, self.name, self.kind, self.params = rel, line, name, kind, params
        self.arity, self.site = signature(params)

    def where(self):
        return "%s:%d" % (self.rel, self.line)

    def shape(self):
        if self.kind == "object-macro":
            return "an object-like macro"
        what = "macro" if self.kind == "macro" else "function"
        return "a %s of %d parameter%s (%s)" % (what, self.arity, "" if self.arity == 1 else "s",
                                                ", ".join(self.params) or "void")


def definitions(rel, code):
    """Every kbd_hw_* / KBD_HW_* function definition and macro in one file's lexed code."""
    defs = []
    lines = logical_lines(code)
    # Macros, from the preprocessor lines; the other lines (blanked directives) make the C text.
    guards = {m.group(1) for _, t in lines for m in [re.match(r"^\s*#\s*ifndef\s+(\w+)\s*$", t)] if m}
    c_lines = []
    for no, text in lines:
        if text.lstrip().startswith("#"):
            m = DEFINE.match(text)
            is_guard = m and not m.group(2) and m.group(1) in guards and not text[m.end():].strip()
            if m and TWIN_NAME.fullmatch(m.group(1)) and not is_guard:
                if m.group(2):
                    close = text.index(")", m.end())
                    defs.append(Def(rel, no, m.group(1), "macro", split_params(text[m.end():close])))
                else:
                    defs.append(Def(rel, no, m.group(1), "object-macro", None))
            c_lines.append((no, ""))
        else:
            c_lines.append((no, text))
    # Functions: `kbd_hw_x(...)` at brace depth 0 followed by a body.
    text, line_of = [], []
    for no, t in c_lines:
        text.append(t + "\n")
        line_of.extend([no] * (len(t) + 1))
    text = "".join(text)
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and (ch == "k" or ch == "K"):
            m = TWIN_NAME.match(text, i)
            if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                j = m.end()
                while j < n and text[j].isspace():
                    j += 1
                if j < n and text[j] == "(":
                    k, d = j, 0
                    while k < n:
                        d += text[k] == "("
                        d -= text[k] == ")"
                        if d == 0:
                            break
                        k += 1
                    rest = text[k + 1:].lstrip()
                    rest = re.sub(r"^(__attribute__\s*\(\(.*?\)\)\s*)+", "", rest)
                    if rest.startswith("{"):
                        defs.append(Def(rel, line_of[i], m.group(1), "function", split_params(text[j + 1:k])))
                i = m.end()
                continue
        i += 1
    return defs


def headers(root):
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith((".h", ".hpp", ".cuh")):
                full = os.path.join(dirpath, f)
                yield os.path.relpath(full, root).replace(os.sep, "/"), full


def check(root):
    """All violations in the tree under `root` (the kbd/ directory), as sorted (rule, message) pairs."""
    bad = []
    lexed = {}
    for rel, full in headers(root):
        with open(full, encoding="utf-8", errors="replace") as fh:
            lexed[rel] = lex(fh.read())

    # twin: collect the definitions of every ptx/ and cpu/ file, pair them by file name.
    fams = {d: {} for d in TWIN_DIRS}  # side -> family file name -> [Def]
    for rel, (code, _) in lexed.items():
        defs = definitions(rel, code)
        side = rel.split("/")[0] if "/" in rel else None
        if side in TWIN_DIRS and rel.count("/") == 1:
            if defs:
                fams[side][rel.split("/")[1]] = defs
        else:
            for d in defs:
                bad.append(("twin", "%s defines %s: kbd_hw_* twins live in ptx/ and cpu/ only" % (d.where(), d.name)))
    where_else = {}  # name -> files defining it, for hints
    for side in TWIN_DIRS:
        for fam, defs in fams[side].items():
            for d in defs:
                where_else.setdefault(d.name, set()).add(d.rel)
    pairs = 0
    for fam in sorted(set(fams["ptx"]) | set(fams["cpu"])):
        for side, other in (("ptx", "cpu"), ("cpu", "ptx")):
            mine, theirs = fams[side].get(fam), fams[other].get(fam)
            if mine is None:
                continue
            if theirs is None and not os.path.exists(os.path.join(root, other, fam)):
                names = sorted({d.name for d in mine})
                bad.append(("twin", "%s/%s defines %s but there is no %s/%s (its twin)" % (
                    side, fam, ", ".join(names), other, fam)))
                continue
            have = {d.name for d in theirs or []}
            for d in mine:
                if d.name not in have:
                    elsewhere = sorted(where_else.get(d.name, set()) - {d.rel})
                    hint = " (it is in %s: twins share the file name)" % ", ".join(elsewhere) if elsewhere else ""
                    bad.append(("twin", "%s defines %s, which %s/%s does not%s" % (d.where(), d.name, other, fam, hint)))
        # Same name on both sides (and repeated definitions in one file, e.g. per-arch branches): one shape.
        by_name = {}
        for side in TWIN_DIRS:
            for d in fams[side].get(fam, []):
                by_name.setdefault(d.name, []).append(d)
        for name, ds in sorted(by_name.items()):
            sides = {d.rel.split("/")[0] for d in ds}
            if sides == set(TWIN_DIRS):
                pairs += 1
            first = ds[0]
            for d in ds[1:]:
                if (d.kind == "object-macro") != (first.kind == "object-macro") or d.arity != first.arity:
                    bad.append(("twin", "%s %s is %s, but %s %s is %s" % (
                        first.where(), name, first.shape(), d.where(), name, d.shape())))
                elif d.site != first.site:
                    yes, no = (first, d) if first.site else (d, first)
                    bad.append(("twin", "%s %s takes the call site last (KBD_SITE_PARAMS), but %s does not" % (
                        yes.where(), name, no.where())))

    # hw.h: the one switch includes every twin file.
    hw = lexed.get(HW)
    if hw is None:
        bad.append(("hw.h", "there is no kbd/hw.h"))
    else:
        included = {m.group(1) for line in hw[1].split("\n") for m in [INCLUDE.match(line)] if m}
        for side in TWIN_DIRS:
            for fam in sorted(fams[side]):
                if "%s/%s" % (side, fam) not in included:
                    names = sorted({d.name for d in fams[side][fam]})
                    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
                    bad.append(("hw.h", "%s/%s defines twins (%s) but kbd/hw.h does not include it" % (
                        side, fam, shown)))

    # asm: only ptx/ (and the context switch).
    for rel, (code, _) in sorted(lexed.items()):
        if rel.startswith("ptx/") or rel in ASM_ALLOWED:
            continue
        for no, line in enumerate(code.split("\n"), 1):
            if ASM.search(line):
                bad.append(("asm", "%s:%d: inline asm outside ptx/" % (rel, no)))

    # api, include: the API headers directly under kbd/.
    for rel, (code, noc) in sorted(lexed.items()):
        if "/" in rel:
            continue
        for no, line in enumerate(code.split("\n"), 1):
            for ident in sorted(set(PRIVATE.findall(line))):
                bad.append(("api", "%s:%d uses %s" % (rel, no, ident)))
        if rel == HW:
            continue
        for no, line in enumerate(noc.split("\n"), 1):
            m = INCLUDE.match(line)
            if m:
                bad.append(("include", '%s:%d includes "%s"' % (rel, no, m.group(1))))

    stats = {"files": len(lexed), "pairs": pairs,
             "families": len(set(fams["ptx"]) | set(fams["cpu"]))}
    return sorted(set(bad), key=lambda rm: (list(WHY).index(rm[0]), rm[1])), stats


def main_check(root):
    if not os.path.isfile(os.path.join(root, HW)):
        print("check_twins: %s has no hw.h; pass the kbd/ directory (include/kbd)" % root)
        return 2
    bad, st = check(root)
    print("check_twins: %s: %d headers, %d twin families, %d kbd_hw_*/KBD_HW_* names defined on both sides" % (
        root, st["files"], st["families"], st["pairs"]))
    if not bad:
        print("OK: every twin has its twin, asm stays in ptx/, API headers go through kbd/hw.h")
        return 0
    print("FAILED: %d violation%s (rules and how to add a primitive: docs/adding-a-primitive.md)" % (
        len(bad), "" if len(bad) == 1 else "s"))
    for rule, msg in bad:
        print("  [%s] %s" % (rule, msg))
    for rule in sorted({r for r, _ in bad}, key=list(WHY).index):
        print("[%s] %s" % (rule, WHY[rule]))
    bad_files = sorted({re.split(r"[: ]", msg, 1)[0] for _, msg in bad})
    print("files to fix: %s" % " ".join(bad_files))
    return 1


# ---- self-test --------------------------------------------------------------------------------------------

CLEAN = {
    "hw.h": '#ifndef HW\n#define HW\n#if KBD_MODE_CPU\n#include "cpu/fam.h"\n#else\n#include "ptx/fam.h"\n#endif\n'
            "#endif\n",
    "api.h": '/* api.h - calls kbd_hw_foo; a comment may say asm, kbd_cpu_x and #include "cpu/fam.h" */\n'
             '#include "hw.h"\n'
             'static inline int api(int x) { const char *s = "asm kbd_ptx_y"; (void)s; return kbd_hw_foo(x, KBD_SITE); }\n'
             "#define API_ONE_LANE(v) KBD_HW_ONE(v)\n",
    "ptx/fam.h": "/* foo.sync d, a;     PTX ISA 1.0, sm_90 */\n"
                 "KBD_DEV int kbd_hw_foo(int a,\n                      KBD_SITE_PARAMS) {\n"
                 '  int d; asm volatile("foo.sync %0, %1;" : "=r"(d) : "r"(a)); return d;\n}\n'
                 "#define KBD_HW_ONE(v) \\\n  do { (void)(v); } while (0)\n#define KBD_HW_FLAG 1\n",
    "cpu/fam.h": "static inline int kbd_hw_foo(int a, KBD_SITE_PARAMS) {\n  if (a) { return kbd_cpu_bar(a); }\n"
                 "  return 0;\n}\n#define KBD_HW_ONE(v) kbd_cpu_one(v)\n#define KBD_HW_FLAG 0\n",
    "cpu/fiber.h": '__asm__(".text\\n");\n',
    "cpu/state.h": "typedef struct { int x; } kbd_cpu_warp;\n",
}

# (what it breaks, files replaced (None: removed), text the report must contain)
CASES = [
    ("missing twin function", {"cpu/fam.h": "#define KBD_HW_ONE(v) (v)\n#define KBD_HW_FLAG 0\n"},
     "ptx/fam.h:2 defines kbd_hw_foo, which cpu/fam.h does not"),
    ("missing twin macro", {"ptx/fam.h": "KBD_DEV int kbd_hw_foo(int a, KBD_SITE_PARAMS) { return a; }\n"
                                         "#define KBD_HW_FLAG 1\n"},
     "cpu/fam.h:5 defines KBD_HW_ONE, which ptx/fam.h does not"),
    ("missing twin file", {"ptx/extra.h": "KBD_DEV void kbd_hw_extra(void) {}\n"},
     "ptx/extra.h defines kbd_hw_extra but there is no cpu/extra.h"),
    ("twin in another file", {"cpu/fam.h": "#define KBD_HW_ONE(v) (v)\n#define KBD_HW_FLAG 0\n",
                              "cpu/other.h": "static inline int kbd_hw_foo(int a, KBD_SITE_PARAMS) { return a; }\n"},
     "which cpu/fam.h does not (it is in cpu/other.h"),
    ("arity", {"cpu/fam.h": "static inline int kbd_hw_foo(int a, int b, KBD_SITE_PARAMS) { return a + b; }\n"
                            "#define KBD_HW_ONE(v) (v)\n#define KBD_HW_FLAG 0\n"},
     "ptx/fam.h:2 kbd_hw_foo is a function of 3 parameters (int a, KBD_SITE_PARAMS), but cpu/fam.h:1 kbd_hw_foo "
     "is a function of 4"),
    ("macro arity", {"cpu/fam.h": "static inline int kbd_hw_foo(int a, KBD_SITE_PARAMS) { return a; }\n"
                                  "#define KBD_HW_ONE(v, w) (v)\n#define KBD_HW_FLAG 0\n"},
     "ptx/fam.h:6 KBD_HW_ONE is a macro of 1 parameter (v), but cpu/fam.h:2 KBD_HW_ONE is a macro of 2"),
    ("call site", {"cpu/fam.h": "static inline int kbd_hw_foo(int a, const char *f, int l) { return a; }\n"
                                "#define KBD_HW_ONE(v) (v)\n#define KBD_HW_FLAG 0\n"},
     "ptx/fam.h:2 kbd_hw_foo takes the call site last (KBD_SITE_PARAMS), but cpu/fam.h:1 does not"),
    ("twin outside ptx/, cpu/", {"api.h": "static inline int kbd_hw_own(void) { return 0; }\n"},
     "api.h:1 defines kbd_hw_own: kbd_hw_* twins live in ptx/ and cpu/ only"),
    ("hw.h misses a family", {"hw.h": '#include "cpu/fam.h"\n'},
     "ptx/fam.h defines twins (KBD_HW_FLAG, KBD_HW_ONE, kbd_hw_foo) but kbd/hw.h does not include it"),
    ("asm in an API header", {"api.h": 'static inline void api(void) { __asm__ volatile("nop"); }\n'},
     "api.h:1: inline asm outside ptx/"),
    ("asm in a machine file", {"cpu/state.h": 'static inline void st(void) { asm("pause"); }\n'},
     "cpu/state.h:1: inline asm outside ptx/"),
    ("kbd_cpu_ in an API header", {"api.h": '#include "hw.h"\nstatic inline int api(void) { return kbd_cpu_self(); }\n'},
     "api.h:2 uses kbd_cpu_self"),
    ("kbd_ptx_ in an API header", {"api.h": "#define API_X(a) kbd_ptx_thing(a)\n"},
     "api.h:1 uses kbd_ptx_thing"),
    ("profiler door into cpu/", {"api.h": '#include "hw.h"\n#if KBD_MODE_CPU\n'
                                          "#define API_P(w, a) if (kbd__prof_on()) kbd__prof_smem(w, 0, 4, a, 0, 32, KBD_SITE)\n"
                                          "#endif\n"},
     "api.h:3 uses kbd__prof_on"),
    ("API header includes cpu/", {"api.h": '#include "hw.h"\n#include "cpu/state.h"\n'},
     'api.h:2 includes "cpu/state.h"'),
    ("API header includes <kbd/ptx/>", {"api.h": "#  include <kbd/ptx/fam.h>\n"},
     'api.h:1 includes "ptx/fam.h"'),
]


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, "kbd", rel)
        if text is None:
            if os.path.exists(path):
                os.remove(path)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
    return os.path.join(root, "kbd")


def run_cli(root):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), root], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return p.returncode, p.stdout


def self_test():
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kbd-twins-") as tmp:
        clean = write_tree(os.path.join(tmp, "clean"), CLEAN)
        rc, out = run_cli(clean)
        ok = rc == 0
        print("%s  clean fixture passes (comments and strings do not count)" % ("ok  " if ok else "FAIL"))
        if not ok:
            failures += 1
            print("    exit %d, output:\n%s" % (rc, out))
        for i, (what, change, expect) in enumerate(CASES):
            files = dict(CLEAN)
            files.update(change)
            root = write_tree(os.path.join(tmp, "case%02d" % i), files)
            rc, out = run_cli(root)
            ok = rc == 1 and expect in out
            print("%s  %s: fails, naming it" % ("ok  " if ok else "FAIL", what))
            if not ok:
                failures += 1
                print("    expected exit 1 and a report containing: %s\n    got exit %d, output:\n%s" % (
                    expect, rc, "\n".join("      " + line for line in out.splitlines())))
    if failures:
        print("check_twins self-test FAILED: %d of %d fixtures" % (failures, len(CASES) + 1))
        return 1
    print("check_twins self-test OK: %d fixtures" % (len(CASES) + 1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main_check(sys.argv[1]))
