"""benchline.py - the BENCH line of the kbd benchmarks, for the python programs of tools/gpu-check.

kbd's benchmark programs (bench/*.c) print one machine-readable line per measurement:

    BENCH bench=<name> key=value key=value ...

tokens separated by one space; a value that holds white space (or is empty) is written in double quotes, e.g.
device="NVIDIA H100 80GB HBM3" (bench/vector_add_gpu.c, bench/tma_copy_gpu.c). There is no escape inside the
quotes: tools/gpu-check.sh reads a quoted value as `key="[^"]*"`. So make() writes a value's own double quotes
as single quotes and its line breaks and tabs as spaces - the one lossy case, never met by numbers and names.

make(bench, fields) and parse(line) are the one implementation used by torch_bench.py and profile_compare.py
(and by their --selftest / tests): parse(make(b, f)) gives back b and f (with values as strings).
"""

import math
import re

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEY_EQ = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")


def value_text(v):
    """The token text of one value: ints and strings as written, bools as 1/0, floats through num() (6 significant
    digits; pass num(x, spec) - a string - for another precision)."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return num(v)
    s = str(v)
    s = s.replace('"', "'")
    s = re.sub(r"[\r\n\t\v\f]", " ", s)
    if s == "" or " " in s:
        return '"' + s + '"'
    return s


def num(x, spec=".6g"):
    """A float as a BENCH value: nan / inf / -inf spelled out (float() reads them back), else format(x, spec)."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return format(x, spec)


def make(bench, fields):
    """'BENCH bench=<bench> k=v ...' from fields, a sequence of (key, value) pairs (order kept)."""
    if not _KEY.match(bench):
        raise ValueError("bench name %r is not an identifier" % (bench,))
    out = ["BENCH", "bench=" + bench]
    seen = {"bench"}
    for k, v in fields:
        if not _KEY.match(k):
            raise ValueError("BENCH key %r is not an identifier" % (k,))
        if k in seen:
            raise ValueError("BENCH key %r given twice" % (k,))
        seen.add(k)
        out.append(k + "=" + value_text(v))
    return " ".join(out)


def parse(line):
    """(bench, [(key, value), ...]) of a BENCH line, values as strings (quotes removed); ValueError if malformed."""
    if not line.startswith("BENCH "):
        raise ValueError("not a BENCH line")
    rest = line[len("BENCH "):]
    fields = []
    i, n = 0, len(rest)
    while i < n:
        if rest[i] == " ":
            i += 1
            continue
        m = _KEY_EQ.match(rest, i)
        if not m:
            raise ValueError("token at column %d is not key=value" % (i + 6))
        key, i = m.group(1), m.end()
        if i < n and rest[i] == '"':
            j = rest.find('"', i + 1)
            if j < 0:
                raise ValueError("unterminated quoted value of %s" % key)
            val, i = rest[i + 1:j], j + 1
            if i < n and rest[i] != " ":
                raise ValueError("text after the quoted value of %s" % key)
        else:
            j = rest.find(" ", i)
            j = n if j < 0 else j
            val, i = rest[i:j], j
        fields.append((key, val))
    if not fields or fields[0][0] != "bench":
        raise ValueError("the first token is not bench=<name>")
    return fields[0][1], fields[1:]
