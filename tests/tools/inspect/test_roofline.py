"""Unit tests of tools/kbd-roofline (label cpu): the roofline math on hand-derived cases, the merging of launches,
the SVG (parses as XML, one point per MMA kernel, memory-only kernels listed) and one-line errors."""
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.dom.minidom

TOOL = os.environ.get("KBD_ROOFLINE") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools",
                                                       "kbd-roofline")
_loader = importlib.machinery.SourceFileLoader("kbd_roofline", TOOL)
_spec = importlib.util.spec_from_loader("kbd_roofline", _loader)
kr = importlib.util.module_from_spec(_spec)
_loader.exec_module(kr)


def rec(kernel, arch="sm_90a", rd=0, wr=0, **flops):
    return {"kernel": kernel, "arch": arch, "grid": [1, 1, 1], "block": 128, "cluster": 1, "global_read_bytes": rd,
            "global_write_bytes": wr, "tma_load_bytes": 0, "tma_store_bytes": 0, "mma_flops": flops, "sites": []}


def merged(*recs):
    return kr.merge(list(recs), False)


class Math(unittest.TestCase):
    def test_h100_compute_bound(self):
        # 2^30 bf16 FLOPs over 2^20 bytes: AI 1024; the H100 SXM ridge is 989.5e12 / 3.35e12 = 295.4 FLOP/B, so
        # compute-bound at the 989.5 TFLOP/s peak; time >= 2^30 / 989.5e12 s.
        r = kr.analyse(merged(rec("k", rd=2 ** 19, wr=2 ** 19, bf16=2 ** 30))[0], kr.GPUS["h100-sxm"])
        self.assertEqual(r["ai"], 1024.0)
        self.assertAlmostEqual(r["ridge"], 989.5e12 / 3.35e12)
        self.assertEqual(r["side"], "compute-bound")
        self.assertEqual(r["attainable"], 989.5e12)
        self.assertAlmostEqual(r["time_bound_s"], 2 ** 30 / 989.5e12)

    def test_h100_memory_bound(self):
        # 2^30 FLOPs over 2^24 bytes: AI 64 < 295.4 -> memory-bound at 64 * 3.35e12 = 214.4e12 FLOP/s; time >= 2^24
        # / 3.35e12 s (larger than the compute time 2^30 / 989.5e12).
        r = kr.analyse(merged(rec("k", rd=2 ** 24, bf16=2 ** 30))[0], kr.GPUS["h100-sxm"])
        self.assertEqual(r["side"], "memory-bound")
        self.assertAlmostEqual(r["attainable"], 64 * 3.35e12)
        self.assertAlmostEqual(r["time_bound_s"], 2 ** 24 / 3.35e12)

    def test_h200_moves_the_ridge(self):
        # The same kernel (AI 256) is memory-bound on H100 SXM (ridge 295.4) and compute-bound on H200 (ridge
        # 989.5e12 / 4.8e12 = 206.1): only the bandwidth differs.
        k = merged(rec("k", rd=2 ** 22, bf16=2 ** 30))[0]
        self.assertEqual(kr.analyse(k, kr.GPUS["h100-sxm"])["side"], "memory-bound")
        self.assertEqual(kr.analyse(k, kr.GPUS["h200"])["side"], "compute-bound")

    def test_mixed_dtypes_b200(self):
        # 1e12 bf16 + 1e12 e4m3 FLOPs on B200: time 1e12/2.25e15 + 1e12/4.5e15 = 6.667e-4 s, so the kernel's peak
        # is 2e12 / 6.667e-4 = 3e15 FLOP/s.
        r = kr.analyse(merged(rec("k", arch="sm_100a", rd=10 ** 9, bf16=10 ** 12, e4m3=10 ** 12))[0], kr.GPUS["b200"])
        self.assertAlmostEqual(r["peak"] / 3e15, 1.0)
        self.assertEqual(r["flops"], 2 * 10 ** 12)
        self.assertEqual(r["flops_by_dtype"], {"bf16": 10 ** 12, "e4m3": 10 ** 12})

    def test_memory_only(self):
        r = kr.analyse(merged(rec("v", rd=8000, wr=4000))[0], kr.GPUS["h100-sxm"])
        self.assertEqual((r["kind"], r["side"], r["ai"]), ("memory-only", "memory-bound", 0.0))
        self.assertAlmostEqual(r["time_bound_s"], 12000 / 3.35e12)

    def test_compulsory_bytes(self):
        # 2^30 bf16 FLOPs; every access 2^24 bytes (AI 64: memory-bound on H100 SXM, ridge 295.4), compulsory 2^21
        # (AI 512: compute-bound). The bound uses the compulsory bytes (the best case), no-reuse is reported beside.
        r0 = rec("g", rd=2 ** 23, wr=2 ** 23, bf16=2 ** 30)
        r0["global_unique_read_bytes"], r0["global_unique_write_bytes"] = 2 ** 20, 2 ** 20
        r = kr.analyse(merged(r0)[0], kr.GPUS["h100-sxm"])
        self.assertTrue(r["compulsory"])
        self.assertEqual((r["bytes"], r["bytes_all"]), (2 ** 21, 2 ** 24))
        self.assertEqual((r["ai"], r["ai_all"]), (512.0, 64.0))
        self.assertEqual((r["side"], r["side_all"]), ("compute-bound", "memory-bound"))
        self.assertAlmostEqual(r["attainable_all"], 64 * 3.35e12)
        self.assertAlmostEqual(r["time_bound_s"], 2 ** 30 / 989.5e12)
        # two launches: compulsory bytes add (each launch starts cold); a record without them drops the count
        r1 = dict(r0)
        self.assertEqual(kr.merge([r0, r1], False)[0]["ubytes"], 2 ** 22)
        self.assertIsNone(kr.merge([r0, rec("g", rd=1, bf16=2)], False)[0]["ubytes"])

    def test_merge(self):
        ks = merged(rec("a", rd=100, bf16=10), rec("a", rd=50, wr=50, bf16=30), rec("b", rd=1))
        a = [k for k in ks if k["kernel"] == "a"][0]
        self.assertEqual((a["launches"], a["bytes"], a["flops"]["bf16"]), (2, 200, 40))
        self.assertEqual(len(kr.merge([rec("a"), rec("a")], True)), 2)


class Cli(unittest.TestCase):
    def write(self, d, lines):
        p = os.path.join(d, "p.jsonl")
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n")
        return p

    def run_tool(self, *args):
        return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)

    def test_svg(self):
        with tempfile.TemporaryDirectory() as d:
            g3 = rec("g3", arch="sm_100a", rd=2 ** 24, bf16=2 ** 30)
            g3["global_unique_read_bytes"], g3["global_unique_write_bytes"] = 2 ** 20, 0
            p3 = self.write(d, [json.dumps(g3)])
            out3 = os.path.join(d, "r3.svg")
            r3 = self.run_tool(p3, "--svg", out3)
            self.assertEqual(r3.returncode, 0, r3.stderr)
            d3 = xml.dom.minidom.parse(out3)
            self.assertEqual([c.getAttribute("class") for c in d3.getElementsByTagName("circle")], ["noreuse", "point"])
            self.assertIn("no L2 reuse", r3.stdout)
            p = self.write(d, [json.dumps(rec("g1", arch="sm_100a", rd=2 ** 20, bf16=2 ** 32)),
                               json.dumps(rec("g2", arch="sm_100a", rd=2 ** 20, e4m3=2 ** 28)),
                               json.dumps(rec("g1", arch="sm_100a", rd=2 ** 20, bf16=2 ** 32)),
                               json.dumps(rec("copy", arch="sm_100a", rd=4096, wr=4096))])
            out = os.path.join(d, "r.svg")
            r = self.run_tool(p, "--svg", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = xml.dom.minidom.parse(out)
        pts = [c.getAttribute("data-kernel") for c in doc.getElementsByTagName("circle") if c.getAttribute("class") == "point"]
        self.assertEqual(sorted(pts), ["g1", "g2"])
        # no record carries compulsory bytes: no hollow no-reuse points
        self.assertEqual([c for c in doc.getElementsByTagName("circle") if c.getAttribute("class") == "noreuse"], [])
        roofs = [p.getAttribute("data-dtype") for p in doc.getElementsByTagName("polyline")]
        self.assertEqual(roofs, ["bf16", "e4m3"])
        mem = [t.getAttribute("data-kernel") for t in doc.getElementsByTagName("text") if t.getAttribute("class") == "memonly"]
        self.assertEqual(mem, ["copy"])
        self.assertIn("g1  [sm_100a on B200 (HGX), 2 launches]", r.stdout)
        self.assertIn("memory-only", r.stdout)

    def one_line(self, r, needle):
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("kbd-roofline: "), lines[0])
        self.assertIn(needle, lines[0])

    def test_errors(self):
        with tempfile.TemporaryDirectory() as d:
            good = json.dumps(rec("k", rd=1, bf16=2))
            self.one_line(self.run_tool(os.path.join(d, "missing.jsonl")), "cannot read")
            self.one_line(self.run_tool(self.write(d, [good, "{not json"])), "p.jsonl:2: not JSON")
            bad = rec("k")
            del bad["global_read_bytes"]
            self.one_line(self.run_tool(self.write(d, [json.dumps(bad)])), "lacks the field 'global_read_bytes'")
            self.one_line(self.run_tool(self.write(d, [json.dumps(rec("k", fp4=3))])), "unknown MMA dtype 'fp4'")
            self.one_line(self.run_tool(self.write(d, [json.dumps(rec("k", arch="sm_80"))])), "arch 'sm_80'")
            self.one_line(self.run_tool(self.write(d, [good]), "--gpu", "a100"), "unknown GPU 'a100'")
            self.one_line(self.run_tool(self.write(d, [""])), "no launch records")
            self.one_line(self.run_tool(), "no profile file")
            both = [good, json.dumps(rec("k", arch="sm_100a", rd=1, bf16=2))]
            self.one_line(self.run_tool(self.write(d, both), "--svg", os.path.join(d, "x.svg")), "pass --gpu")


if __name__ == "__main__":
    unittest.main()
