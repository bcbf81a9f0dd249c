"""tools/kbd-inspect on real compiles (label ptx: needs nvcc). known.cu's facts are fixed by its source (see
its header comment); the transpose example must have no spills on either arch. With KBD_INSPECT_SASS=1 (CTest
sets it when cuobjdump was found) the SASS instruction mix is checked too: the exact LDS/STS/STG counts of
known.cu and the TMA instructions of transpose."""
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.environ.get("KBD_INSPECT") or os.path.join(HERE, "..", "..", "..", "tools", "kbd-inspect")
SASS = os.environ.get("KBD_INSPECT_SASS") == "1"
_loader = importlib.machinery.SourceFileLoader("kbd_inspect", TOOL)
_spec = importlib.util.spec_from_loader("kbd_inspect", _loader)
ki = importlib.util.module_from_spec(_spec)
_loader.exec_module(ki)


def inspect_json(*args):
    # Without KBD_INSPECT_SASS=1 the mix is switched off, so the test never depends on what happens to be installed.
    extra = [] if SASS else ["--no-sass"]
    r = subprocess.run([sys.executable, TOOL, "--json"] + extra + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("kbd-inspect %s failed: %s" % (" ".join(args), r.stderr))
    return json.loads(r.stdout)


class Known(unittest.TestCase):
    def test_known_kernel(self):
        ks = inspect_json(os.path.join(HERE, "known.cu"), "--dyn-smem", "1024")
        self.assertEqual(sorted(k["arch"] for k in ks), ["sm_100a", "sm_90a"])
        for k in ks:
            self.assertEqual(k["name"], "inspect_known")
            self.assertEqual(k["static_smem"], 4096)
            self.assertEqual((k["threads"], k["threads_from"], k["min_blocks_per_sm"]), (256, "maxntid", 2))
            self.assertEqual((k["spill_stores"], k["spill_loads"], k["stack"]), (0, 0, 0))
            self.assertGreater(k["regs"], 0)
            self.assertEqual(k["barriers"], 1)
            # The report's occupancy is the pure function's on the reported resources: static + dynamic smem.
            want = ki.occupancy(k["arch"][3:], k["regs"], 4096 + 1024, 256)
            for key in ("blocks", "warps", "limiter", "limits"):
                self.assertEqual(k["occupancy"][key], want[key], key)
            if SASS:
                ops = {op: n for c in k["mix"].values() for op, n in c["ops"].items()}
                self.assertEqual(ops.get("STS"), 1, ops)
                self.assertEqual(ops.get("LDS"), 2, ops)
                self.assertEqual(ops.get("STG"), 1, ops)
                self.assertGreaterEqual(ops.get("BAR", 0), 1, ops)
                self.assertEqual(k["mix"]["shared"]["total"], 3)

    def test_regs_override(self):
        # --regs 32 x 256 threads: 8 blocks (hand-derived in test_inspect.py's test_registers_and_warps_tie).
        ks = inspect_json(os.path.join(HERE, "known.cu"), "--arch", "90a", "--regs", "32")
        self.assertEqual(ks[0]["occupancy"]["blocks"], 8)

    def test_transpose_example(self):
        ks = inspect_json("transpose")
        srcs = sorted(f for f in os.listdir(os.path.join(HERE, "..", "..", "..", "examples", "transpose"))
                      if f.endswith(".cu"))
        self.assertIn("transpose.cu", srcs)
        self.assertEqual(len(ks), 2 * len(srcs))  # every .cu of the example (one kernel each), both archs
        self.assertEqual(sorted({os.path.basename(k["source"]) for k in ks}), srcs)
        for k in ks:
            self.assertEqual(k["name"], "tr_transpose")
            self.assertEqual((k["spill_stores"], k["spill_loads"], k["stack"]), (0, 0, 0), k["source"])
            self.assertEqual(k["threads"], 128)
            if SASS:
                self.assertGreaterEqual(k["mix"]["tma"]["ops"].get("UTMALDG", 0), 1)
                self.assertGreaterEqual(k["mix"]["tma"]["ops"].get("UTMASTG", 0), 1)
            else:
                self.assertIsNone(k["mix"])

    def test_ptx_and_sass_views(self):
        r = subprocess.run([sys.executable, TOOL, os.path.join(HERE, "known.cu"), "--arch", "100a", "--ptx",
                            "known"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(".entry inspect_known(", r.stdout)
        self.assertIn("ld.volatile.shared.f32", r.stdout)
        if SASS:
            r = subprocess.run([sys.executable, TOOL, os.path.join(HERE, "known.cu"), "--arch", "90a", "--sass",
                                "inspect_known"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Function : inspect_known", r.stdout)
            self.assertIn("LDS", r.stdout)

    def test_compile_error_is_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.cu")
            with open(bad, "w") as f:
                f.write("__global__ void k(void) { undeclared_thing = 1; }\n")
            r = subprocess.run([sys.executable, TOOL, bad, "--arch", "90a"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("does not compile for sm_90a (nvcc exit", lines[0])
        self.assertIn("undeclared_thing", lines[0])


if __name__ == "__main__":
    unittest.main()
