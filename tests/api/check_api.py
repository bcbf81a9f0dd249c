#!/usr/bin/env python3
"""check_api.py - docs/api.md names every public symbol of include/kbd/*.h, and nothing else.

Usage:
  check_api.py INCLUDE_KBD_DIR API_MD     check; exit 1 listing each missing / stale symbol
  check_api.py --list INCLUDE_KBD_DIR     print every extracted symbol with its header:line and kind
  check_api.py --self-test INCLUDE_KBD_DIR API_MD
                                          copy the headers, add one public symbol and remove one documented
                                          symbol, and require the check to fail naming both (and to pass on
                                          the unmodified copy)

What counts as a public symbol (top-level headers only; include/kbd/cpu and include/kbd/ptx are the CPU and GPU
machine's internals):
  - every `#define KBD_X` / `#define kbd_x` (object- or function-like macro);
  - every kbd_/KBD_ function defined or declared at file scope (static inline, KBD_HD, KBD_DEV, KBD_TILE_FN, ...),
    including those a file-scope macro invocation generates by token pasting (KBD_DEV_HOST_API(f32, ...) defines
    kbd_device_reduce_f32);
  - every kbd_/KBD_ typedef name, struct/enum tag and enum constant;
  - file-scope extern variables.
Excluded: names starting kbd__ KBD__ kbd_hw_ KBD_HW_ kbd_cpu_ KBD_CPU_, and include guards (KBD_*_H).

What counts as an entry of docs/api.md:
  - a table row (a line starting with '|', not the header separator) whose FIRST cell holds the symbol in
    backticks (`kbd_load(t, p, n, start)` names kbd_load; several symbols may share a cell);
  - a list item ('- ' or '* ') of the section '## Internal names' starting with the symbol(s) in backticks
    (`A`, `B` - why).
Every extracted symbol must be an entry; every entry must be an extracted symbol, or (for the excluded prefixes
and the -DKBD_CPU build flag, which users do set) a name that occurs somewhere under include/kbd/.
"""
import os
import re
import shutil
import sys
import tempfile

EXCLUDED = ("kbd__", "KBD__", "kbd_hw_", "KBD_HW_", "kbd_cpu_", "KBD_CPU_")
IDENT = re.compile(r"[A-Za-z_]\w*")


def is_kbd(name):
    return name.startswith("kbd_") or name.startswith("KBD_")


def is_public(name):
    return is_kbd(name) and not name.startswith(EXCLUDED) and not (name.startswith("KBD_") and name.endswith("_H"))


def strip_comments(text):
    """Comments and string/char literals blanked (newlines kept, so offsets map to the same lines)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + (c if j - 1 > i else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_directives(text):
    """(code with preprocessor lines blanked, [(line, directive text joined over continuations)])."""
    lines = text.split("\n")
    code, directives = [], []
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("#"):
            start, parts = i, []
            while True:
                parts.append(lines[i].rstrip("\\"))
                code.append("")
                if not lines[i].endswith("\\") or i + 1 >= len(lines):
                    break
                i += 1
            directives.append((start + 1, " ".join(parts)))
        else:
            code.append(lines[i])
        i += 1
    return "\n".join(code), directives


def match_paren(s, i):
    """Index just past the ')' matching the '(' at s[i] (len(s) if unbalanced)."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "(":
            depth += 1
        elif s[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(s)


def split_args(s):
    args, depth, cur = [], 0, []
    for ch in s:
        if ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        cur.append(ch)
    args.append("".join(cur).strip())
    return args


def top_level_chunks(code):
    """File-scope declarations: (offset, text up to ';' or to a body's '{', body text or None)."""
    chunks = []
    depth, start, i, n = 0, 0, 0, len(code)
    while i < n:
        c = code[i]
        if c == "(":
            i = match_paren(code, i)
            continue
        if c == "{":
            head = code[start:i]
            if re.fullmatch(r'\s*extern\s+"[^"]*"\s*', head):
                start = i = i + 1  # a C++ linkage block holds file-scope declarations: read inside it
                continue
            j, d = i, 0
            while j < n:
                if code[j] == "{":
                    d += 1
                elif code[j] == "}":
                    d -= 1
                    if d == 0:
                        break
                j += 1
            body = code[i + 1:j]
            # a function body ends the declaration; a struct/enum body continues to its ';' (typedef ... name;)
            if re.search(r"\b(struct|enum|union)\b[^()]*$", head) or re.search(r"=\s*$", head):
                k = code.find(";", j)
                k = n if k < 0 else k
                chunks.append((start, head + "{}" + code[j + 1:k], body))
                start = i = k + 1
            else:
                chunks.append((start, head, body))
                start = i = j + 1
            continue
        if c == ";":
            chunks.append((start, code[start:i], None))
            start = i + 1
        elif c == "}" and depth == 0:
            start = i + 1  # stray '}' (extern "C" { ... } closes): skip
        i += 1
    return chunks


def names_in_chunk(head, body):
    """Names a file-scope declaration defines: functions, typedefs, tags, enum constants, variables."""
    names = []
    h = head.strip()
    if not h:
        return names
    for m in re.finditer(r"\b(?:struct|enum|union)\s+(\w+)\s*\{", h + ("{" if body is not None and not h.endswith("}") and re.search(r"\b(struct|enum|union)\s+\w+\s*$", h) else "")):
        names.append(m.group(1))
    if body is not None and re.search(r"\benum\b", h):
        for part in split_args(re.sub(r"\s+", " ", body)):
            m = IDENT.match(part.strip())
            if m:
                names.append(m.group(0))
    flat = re.sub(r"\{\}", " ", h)
    if re.match(r"typedef\b", flat):
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", flat)  # typedef void (*name)(...)
        if fp:
            names.append(fp.group(1))
        else:
            ids = IDENT.findall(re.sub(r"\[[^\]]*\]", "", flat))
            if ids:
                names.append(ids[-1])
        return names
    if re.match(r"extern\b", flat) and "(" in flat and re.search(r"\(\s*\*", flat):
        ids = [x for x in IDENT.findall(flat) if is_kbd(x)]
        if ids:
            names.append(ids[-1])
        return names
    # functions: an identifier directly before a '(' at paren depth 0 whose ')' ends the declarator
    i = 0
    while i < len(flat):
        if flat[i] == "(":
            end = match_paren(flat, i)
            m = re.search(r"(\w+)\s*$", flat[:i])
            rest = flat[end:].strip()
            if m and (rest == "" or rest.startswith(("{", ";", "KBD_", "__attribute__"))) and not rest.startswith("("):
                names.append(m.group(1))
            i = end
            continue
        i += 1
    if body is None and "(" not in flat:  # a variable: the last identifier
        ids = IDENT.findall(re.sub(r"\[[^\]]*\]", "", flat.split("=")[0]))
        if ids:
            names.append(ids[-1])
    return names


def parse_macros(directives):
    macros = {}
    for line, d in directives:
        m = re.match(r"\s*#\s*define\s+(\w+)(\(([^)]*)\))?\s?(.*)$", d)
        if m:
            params = [p.strip() for p in m.group(3).split(",")] if m.group(2) else None
            macros.setdefault(m.group(1), (line, params, m.group(4)))
    return macros


def expand_once(text, macros, depth=0):
    """Expand file-scope invocations of function-like macros (enough of cpp for the token-pasting generators)."""
    if depth > 4:
        return text
    out, i = [], 0
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", text):
        if m.start() < i:
            continue
        name = m.group(1)
        if name not in macros or macros[name][1] is None:
            continue
        end = match_paren(text, m.end() - 1)
        args = split_args(text[m.end():end - 1])
        params, body = macros[name][1], macros[name][2]
        sub = body
        for p, a in zip(params, args):
            if p:
                sub = re.sub(r"\b%s\b" % re.escape(p), lambda _m, a=a: a, sub)
        sub = re.sub(r"\s*##\s*", "", sub)
        out.append(text[i:m.start()])
        out.append(" " + expand_once(sub, macros, depth + 1) + " ")
        i = end
    out.append(text[i:])
    return "".join(out)


def extract(kbd_dir):
    """{name: (header:line, kind)} of the public symbols of kbd_dir/*.h, and the set of all tokens under kbd_dir."""
    symbols, tokens = {}, set()
    for root, _, files in os.walk(kbd_dir):
        for f in files:
            if f.endswith(".h"):
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    tokens.update(IDENT.findall(fh.read()))
    for f in sorted(os.listdir(kbd_dir)):
        path = os.path.join(kbd_dir, f)
        if not f.endswith(".h") or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
        text = strip_comments(raw)
        code, directives = split_directives(text)
        macros = parse_macros(directives)

        def add(name, off_or_line, kind, is_line=False, head=""):
            if not is_public(name) or name in symbols:
                return
            if not is_line:
                m = re.compile(r"\b%s\b" % re.escape(name)).search(code, off_or_line) if head else None
                off_or_line = code.count("\n", 0, m.start() if m else off_or_line) + 1
            symbols[name] = ("%s:%d" % (f, off_or_line), kind)

        for name, (line, params, _) in macros.items():
            add(name, line, "macro", True)
        for off, head, body in top_level_chunks(code):
            for name in names_in_chunk(head, body):
                add(name, off, "declaration", head="search")
            # token-pasting generators invoked at file scope (KBD_DEV_HOST_API(f32, ...))
            for m in re.finditer(r"(?:^|[;}]|\n)\s*([A-Z_]\w*)\s*\(", head):
                gen = m.group(1)
                if gen not in macros or macros[gen][1] is None:
                    continue
                call = head[m.start(1):match_paren(head, m.end() - 1)]
                chain = expand_chain_bodies(gen, all_macros(kbd_dir))
                for arg in IDENT.findall(call[len(gen):]):
                    chain += expand_chain_bodies(arg, all_macros(kbd_dir))
                if "##" not in chain:
                    continue
                ecode, _ = split_directives(strip_comments(expand_once(call + ";", all_macros(kbd_dir))))
                for _, h2, b2 in top_level_chunks(ecode):
                    for name in names_in_chunk(h2, b2):
                        add(name, off + m.start(1), "generated by %s" % call.split(")")[0] + ")", is_line=False)
    return symbols, tokens


_ALL = {}


def all_macros(kbd_dir):
    if kbd_dir not in _ALL:
        macros = {}
        for f in sorted(os.listdir(kbd_dir)):
            if f.endswith(".h"):
                with open(os.path.join(kbd_dir, f), encoding="utf-8") as fh:
                    _, d = split_directives(strip_comments(fh.read()))
                for k, v in parse_macros(d).items():
                    macros.setdefault(k, v)
        _ALL[kbd_dir] = macros
    return _ALL[kbd_dir]


def expand_chain_bodies(name, macros, seen=None):
    """The body of macro `name` and of every macro it names (transitively): does any of it paste tokens?"""
    seen = seen if seen is not None else set()
    if name in seen or name not in macros:
        return ""
    seen.add(name)
    body = macros[name][2]
    return body + " ".join(expand_chain_bodies(x, macros, seen) for x in IDENT.findall(body))


def doc_entries(md_path):
    """{name: line} of the entries of the API page (tables' first cells, the Internal names list)."""
    entries = {}
    internal = False
    with open(md_path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    in_code = False
    for no, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        if line.startswith("#"):
            internal = re.match(r"#+\s*Internal names\b", line) is not None
            continue
        cell = None
        if line.startswith("|") and not re.match(r"\|[\s:|-]+\|?\s*$", line):
            cells = line.split("|")
            cell = cells[1] if len(cells) > 2 else None
        elif internal and re.match(r"\s*[-*]\s+`", line):
            cell = re.split(r"\s[-:]\s|\s—\s", re.sub(r"^\s*[-*]\s+", "", line), maxsplit=1)[0]
        if cell is None:
            continue
        for span in re.findall(r"`([^`]+)`", cell):
            m = IDENT.match(span.strip())
            if m:
                entries.setdefault(m.group(0), no)
    return entries


def check(kbd_dir, md_path, out=sys.stdout):
    symbols, tokens = extract(kbd_dir)
    entries = doc_entries(md_path)
    md = os.path.basename(md_path)
    missing = sorted(n for n in symbols if n not in entries)
    stale = sorted(n for n in entries
                   if n not in symbols and not ((n.startswith(EXCLUDED) or n == "KBD_CPU") and n in tokens))
    for n in missing:
        where, kind = symbols[n]
        print("missing: %s (%s, %s) has no entry in %s (add a table row or an Internal names line)"
              % (n, where, kind, md), file=out)
    for n in stale:
        print("stale: %s:%d: %s is documented but no header in %s defines it" % (md, entries[n], n, kbd_dir), file=out)
    if missing or stale:
        print("check_api: %d public symbols, %d entries: %d missing, %d stale"
              % (len(symbols), len(entries), len(missing), len(stale)), file=out)
        return 1
    print("check_api: %d public symbols of %s all documented in %s (%d entries)"
          % (len(symbols), kbd_dir, md, len(entries)), file=out)
    return 0


def self_test(kbd_dir, md_path):
    import io
    symbols, _ = extract(kbd_dir)
    if len(symbols) < 200:
        print("self-test: only %d symbols extracted from %s: the extractor is broken" % (len(symbols), kbd_dir))
        return 1
    failures = 0
    # extraction cases, one per rule
    for want in ("kbd_load", "KBD_TILE", "kbd_dim", "kbd_status", "KBD_ERR_DEADLOCK", "kbd_layout_row",
                 "kbd_device_reduce_f32", "kbd_device_scan_i32", "KBD_RED_SUM", "kbd_tile_shape_of",
                 # declared inside tune.h's extern "C" { } block
                 "kbd_tune_pick", "kbd_tune_space", "KBD_TUNE_MODEL"):
        if want not in symbols:
            print("self-test: %s not extracted" % want)
            failures += 1
    for unwanted in ("kbd_hw_bar_sync", "KBD__SHAPE", "KBD_TILE_H", "kbd_file_"):
        if unwanted in symbols:
            print("self-test: %s extracted but is excluded" % unwanted)
            failures += 1
    tmp = tempfile.mkdtemp(prefix="kbd-api-selftest-")
    try:
        inc = os.path.join(tmp, "kbd")
        shutil.copytree(kbd_dir, inc)
        md = os.path.join(tmp, "api.md")
        shutil.copy(md_path, md)
        buf = io.StringIO()
        if check(inc, md, buf) != 0:
            print("self-test: the unmodified copy fails:\n" + buf.getvalue())
            failures += 1
        # add a public function, a public macro and an enum constant; remove a documented macro; rename a
        # documented function (its new name is missing, its old one stale)
        with open(os.path.join(inc, "tile_ops.h"), encoding="utf-8") as fh:
            ops = fh.read()
        ops, n = re.subn(r"#define kbd_rsqrt\(d, a\)[^\n]*\n", "", ops)
        if n != 1:
            print("self-test: kbd_rsqrt's definition not found in tile_ops.h: update the self-test")
            failures += 1
        guard = ops.rindex("#endif")
        added_line = ops.count("\n", 0, guard) + 1
        ops = (ops[:guard] + "KBD_HD int kbd_selftest_fn(int x) { return x; }\n#define KBD_SELFTEST_MACRO 1\n"
               "enum { KBD_SELFTEST_ENUM = 7 };\n" + ops[guard:])
        with open(os.path.join(inc, "tile_ops.h"), "w", encoding="utf-8") as fh:
            fh.write(ops)
        with open(os.path.join(inc, "layout.h"), encoding="utf-8") as fh:
            lay = fh.read()
        lay, n = re.subn(r"\bkbd_layout_npt\(int", "kbd_layout_npt_renamed(int", lay)
        if n != 1:
            print("self-test: kbd_layout_npt's definition not found in layout.h: update the self-test")
            failures += 1
        with open(os.path.join(inc, "layout.h"), "w", encoding="utf-8") as fh:
            fh.write(lay)
        buf = io.StringIO()
        rc = check(inc, md, buf)
        report = buf.getvalue()
        if rc == 0:
            print("self-test: a copy with added and removed symbols passes:\n" + report)
            failures += 1
        for name, line in (("kbd_selftest_fn", added_line), ("KBD_SELFTEST_MACRO", added_line + 1),
                           ("KBD_SELFTEST_ENUM", added_line + 2)):
            if "missing: %s (tile_ops.h:%d," % (name, line) not in report:
                print("self-test: the report does not name the added %s at tile_ops.h:%d:\n%s" % (name, line, report))
                failures += 1
        if not re.search(r"missing: kbd_layout_npt_renamed \(layout\.h:\d+,", report):
            print("self-test: the report does not name the renamed kbd_layout_npt_renamed:\n" + report)
            failures += 1
        for name in ("kbd_rsqrt", "kbd_layout_npt"):
            if not re.search(r"stale: api\.md:\d+: %s " % name, report):
                print("self-test: the report does not name the removed %s as stale:\n%s" % (name, report))
                failures += 1
        if len(report.strip().split("\n")) != 7:
            print("self-test: expected exactly 4 missing, 2 stale and a summary line:\n" + report)
            failures += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("self-test: %s" % ("FAILED" if failures else "passed (%d symbols extracted)" % len(symbols)))
    return 1 if failures else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        symbols, _ = extract(argv[2])
        for n in sorted(symbols, key=lambda x: (symbols[x][0].split(":")[0], int(symbols[x][0].split(":")[1]))):
            print("%-45s %-22s %s" % (n, symbols[n][0], symbols[n][1]))
        return 0
    if len(argv) == 4 and argv[1] == "--self-test":
        return self_test(argv[2], argv[3])
    if len(argv) == 3:
        return check(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
