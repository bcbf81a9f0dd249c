#!/usr/bin/env python3
"""Differential check of examples/gpt2's tokenizer against tiktoken on random texts (not part of the suite: it needs
tiktoken and GPT-2's vocab.json + merges.txt, docs/gpt2-files.md).

    python3 -m venv /tmp/tk && /tmp/tk/bin/pip install tiktoken
    /tmp/tk/bin/python tests/gpt2/tok_diff_tiktoken.py DIR [--seed S] [--texts N]

tiktoken gets GPT-2's pattern and ranks taken from DIR/vocab.json (a GPT-2 id is its tiktoken rank), so the two sides
share the files but not the algorithm: tiktoken merges by the rank of the merged token, gpt2_tokenizer.c by the rank
of the pair in merges.txt. The C side is a small driver built here with cc from the example's sources.
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

import tiktoken

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PAT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

DRIVER = r"""
#include "gpt2_tokenizer.h"
#include <stdio.h>
/* stdin: texts as u32 little-endian length + bytes; stdout: one line of ids per text */
int main(int argc, char **argv) {
  gpt2_tokenizer *t;
  kbd_status s = gpt2_tok_load(&t, argv[argc - 1]);
  if (!kbd_ok(s)) { fprintf(stderr, "%s\n", s.msg); return 1; }
  unsigned char l4[4];
  static char buf[1 << 20];
  while (fread(l4, 1, 4, stdin) == 4) {
    size_t n = l4[0] | l4[1] << 8 | l4[2] << 16 | (size_t)l4[3] << 24;
    if (n > sizeof buf || fread(buf, 1, n, stdin) != n) return 2;
    int *ids, k;
    s = gpt2_tok_encode(t, buf, n, &ids, &k);
    if (!kbd_ok(s)) { fprintf(stderr, "%s\n", s.msg); return 3; }
    for (int i = 0; i < k; ++i) printf(i ? " %d" : "%d", ids[i]);
    printf("\n");
    free(ids);
  }
  gpt2_tok_free(t);
  return 0;
}
"""

WORDS = ["the", "The", " quick", "brown", "fox", "it's", "I'm", "we'll", "they're", "you've", "he'd", "don't", "IT'S",
         "1234", "3.14", "$100", "!!!", "?!", "...", "\n", "\n\n", "  ", "   ", "\t", "\r\n", " ", "é", "naïve", "日本語",
         "中文", "😀", "👍🏽", "🇫🇷", "Привет", "مرحبا", "١٢٣", "½", "Ⅻ", "©", "™", "\u00a0", "\u3000", "\u2028", "\u200b",
         "\x85", "\x1c", "\x00", "ǅ", "ß", "ﬁ", "\u0301", "a\u0301", "٣3", "x²", "@user", "#tag", "<|endoftext|>",
         "http://example.com/a?b=c", "snake_case", "CamelCase", "e-mail", "'", "''", "'s'", "ʼ", "’s"]


def byte_alphabet():
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cp, n = {}, 0
    for b in range(256):
        if b in keep:
            cp[b] = b
        else:
            cp[b] = 256 + n
            n += 1
    return {chr(c): b for b, c in cp.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--texts", type=int, default=20000)
    ap.add_argument("--long", action="store_true", help="long words (65..3000 characters: the heap path of the BPE)")
    a = ap.parse_args()
    to_byte = byte_alphabet()
    vocab = json.load(open(os.path.join(a.dir, "vocab.json"), encoding="utf-8"))
    ranks = {}
    for tok, i in vocab.items():
        if all(ch in to_byte for ch in tok) and tok != "<|endoftext|>":
            ranks[bytes(to_byte[ch] for ch in tok)] = i
    enc = tiktoken.Encoding("gpt2-from-vocab", pat_str=PAT, mergeable_ranks=ranks, special_tokens={})

    rng = random.Random(a.seed)

    def rand_cp():
        while True:
            c = rng.choice([rng.randint(0x20, 0x7E), rng.randint(0xA0, 0x24F), rng.randint(0x370, 0x4FF),
                            rng.randint(0x600, 0x6FF), rng.randint(0x900, 0x97F), rng.randint(0x2000, 0x206F),
                            rng.randint(0x3000, 0x30FF), rng.randint(0x4E00, 0x4EFF), rng.randint(0x1F300, 0x1F6FF),
                            rng.randint(0, 0x10FFFF)])
            if not 0xD800 <= c <= 0xDFFF:
                return chr(c)

    texts = []
    alphabets = ["abcdefghijklmnopqrstuvwxyz", "aeiou", "ab", "a", "etaoinshrdlu", "0123456789", "!?.,-=+*",
                 "éèàçôü", "абвгдеж", "日本語中文字", "😀👍🏽🎸"]
    for _ in range(a.texts if a.long else 0):
        al = rng.choice(alphabets)
        texts.append((" " if rng.random() < 0.5 else "") + "".join(rng.choice(al) for _ in range(rng.randint(65, 3000))))
    for _ in range(0 if a.long else a.texts):
        parts = []
        for _ in range(rng.randint(0, 12)):
            parts.append(rng.choice(WORDS) if rng.random() < 0.7 else "".join(rand_cp() for _ in range(rng.randint(1, 4))))
            if rng.random() < 0.5:
                parts.append(rng.choice([" ", "", "  ", "\n"]))
        texts.append("".join(parts))

    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "drv.c"), os.path.join(tmp, "drv")
        open(src, "w").write(DRIVER)
        g = os.path.join(ROOT, "examples", "gpt2")
        subprocess.run(["cc", "-O2", "-std=c11", "-I" + g, "-I" + os.path.join(ROOT, "include"), src,
                        os.path.join(g, "gpt2_tokenizer.c"), os.path.join(g, "gpt2_json.c"),
                        os.path.join(g, "gpt2_config.c"), "-o", exe], check=True)
        data = b"".join(struct.pack("<I", len(t.encode())) + t.encode() for t in texts)
        out = subprocess.run([exe, a.dir], input=data, capture_output=True, check=True).stdout.decode().split("\n")
    bad = total = 0
    for t, line in zip(texts, out):
        want = enc.encode_ordinary(t)
        got = [int(x) for x in line.split()]
        total += len(want)
        if got != want:
            bad += 1
            if bad <= 5:
                print("DIFF", ascii(t), "\n  gpt2_tokenizer", got, "\n  tiktoken      ", want)
    print(f"seed {a.seed}: {len(texts)} texts, {total} ids, {bad} texts differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
