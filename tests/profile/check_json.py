#!/usr/bin/env python3
"""check_json.py SWZ NOSWZ OUT - run the transpose example (SWZ) and its unswizzled build (NOSWZ) with
KBD_CPU_PROFILE_JSON=OUT and check the JSON lines: one object per launch, the schema's keys with integer values,
every shared site of SWZ at its ideal, and a shared site of NOSWZ at 8 x ideal. Exit 1 naming the failure."""
import json
import os
import subprocess
import sys

TOP = ["kernel", "arch", "grid", "block", "cluster", "global_read_bytes", "global_write_bytes",
       "global_unique_read_bytes", "global_unique_write_bytes", "tma_load_bytes",
       "tma_store_bytes", "shared_read_bytes", "shared_write_bytes", "shared_wavefronts", "shared_ideal_wavefronts",
       "global_sectors", "global_ideal_sectors", "barrier_waits", "barrier_blocked", "mma_flops", "sites"]
TYPES = ["bf16", "f16", "tf32", "e4m3", "e5m2", "s8"]


def fail(msg):
    print("check_json: " + msg)
    sys.exit(1)


def main():
    swz, noswz, out = sys.argv[1:4]
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, KBD_CPU_PROFILE_JSON=out)
    env.pop("KBD_CPU_PROFILE", None)
    for prog in (swz, noswz):
        r = subprocess.run([prog, "200", "300"], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            fail("%s failed: %s%s" % (prog, r.stdout, r.stderr))
        if "kbd profile:" in r.stderr:
            fail("%s printed the table without KBD_CPU_PROFILE" % prog)
    lines = open(out).read().splitlines()
    if len(lines) != 2:
        fail("%d lines in %s, want 2 (one per launch)" % (len(lines), out))
    objs = [json.loads(l) for l in lines]
    for o in objs:
        if list(o.keys()) != TOP:
            fail("keys %s, want %s" % (list(o.keys()), TOP))
        if o["arch"] not in ("sm_100a", "sm_90a") or len(o["grid"]) != 3 or list(o["mma_flops"].keys()) != TYPES:
            fail("bad arch/grid/mma_flops in %s" % o)
        for k in TOP[5:19]:
            if not isinstance(o[k], int) or o[k] < 0:
                fail("%s = %r is not a count" % (k, o[k]))
        for s in o["sites"]:
            want = ["file", "line", "what", "space", "op", "bytes_per_lane", "instructions"]
            want += ["wavefronts", "ideal"] if s["space"] == "shared" else ["sectors", "lines", "ideal"]
            if list(s.keys()) != want:
                fail("site keys %s, want %s" % (list(s.keys()), want))
    a, b = objs
    if a["kernel"] != "tr_transpose" or b["kernel"] != "tr_transpose":
        fail("kernel names %s, %s" % (a["kernel"], b["kernel"]))
    tiles = 4 * 5  # ceil(200/64) x ceil(300/64)
    if a["tma_load_bytes"] != tiles * 8192 or a["shared_ideal_wavefronts"] != tiles * 128:
        fail("swizzled run: %d TMA bytes, %d ideal wavefronts; want %d, %d" %
             (a["tma_load_bytes"], a["shared_ideal_wavefronts"], tiles * 8192, tiles * 128))
    # compulsory traffic: whole 32-byte sectors, each once, however the 64 x 64 boxes overlap the edges. The
    # 200 x 300 bf16 input has rows padded to a 16-byte pitch (tr_ld: 600 -> 608 bytes); the 8 pad bytes of a
    # row share sectors with data, so all 200 x 608 = 121600 bytes (3800 sectors) are read. The 300 x 200 output
    # (400-byte rows, no pad) is written once: 120000 bytes (3750 sectors).
    for o in objs:
        if o["global_unique_read_bytes"] != 121600 or o["global_unique_write_bytes"] != 120000:
            fail("unique bytes %d read, %d written; want 121600, 120000" %
                 (o["global_unique_read_bytes"], o["global_unique_write_bytes"]))
    if any(s["wavefronts"] != s["ideal"] for s in a["sites"] if s["space"] == "shared"):
        fail("swizzled run has a shared site above its ideal: %s" % a["sites"])
    if not any(s["space"] == "shared" and s["wavefronts"] == 8 * s["ideal"] for s in b["sites"]):
        fail("unswizzled run has no shared site at 8 x ideal: %s" % b["sites"])
    print("check_json: 2 launches, schema ok; swizzled at ideal, unswizzled %d / %d wavefronts" %
          (b["shared_wavefronts"], b["shared_ideal_wavefronts"]))


main()
