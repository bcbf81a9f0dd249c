"""tools/kbd-inspect --loops on hand-made SASS listings (label cpu; no CUDA toolkit needed).

loops_sm90a.sass (cuobjdump -sass format, function test_loops) holds, at the addresses below:
  0x0030..0x01c0  the outer loop (back edge @P2 BRA 0x30 at 0x01c0). It waits on an mbarrier (0x0030) whose retry
                  path is out of line (0x01e0..0x0200), divides (I2F.U32.RP + MUFU.RCP at 0x0060/0x0070), dispatches
                  through a jump table (BRX at 0x00a0) to case 0 (0x00b0, 2 instructions) or case 1 (0x00d0, 3: FMUL,
                  F2F.BF16.F32, PRMT), runs the inner loop, fences at GPU scope (MEMBAR.ALL.GPU at 0x0190), arrives.
  0x0100..0x0180  the inner loop: HGMMA.64x128x16.F32.BF16, MUFU.EX2, FADD2, a NOP (not counted), LDS,
                  HFMA2.MMA -RZ, RZ (ptxas's constant move idiom: a move), UIADD3, ISETP, @P1 BRA 0x100.
  0x01e0..0x01f0  the retry loop of the out-of-line wait; 0x0200 BRA 0x50 jumps back into the outer loop, but 0x50
                  does not dominate it: a backward jump, not a loop. 0x0210 BRA 0x210 is ptxas's end-of-function idiom.
Hand-derived expectations (docs/inspect.md, "Loops", has the rules):
  outer span 0x30..0x1c0: 25 instructions = SYNCS BRA | IADD3 I2F MUFU IMAD LDC BRX | FFMA BRA | FMUL F2F PRMT |
    the inner 8 | MEMBAR SYNCS ISETP BRA: mma 1, mufu 2, fp32 2, fp32x2 1, convert 2, int 4, uniform 1, move 2,
    sync 3, memory 2, control 5; out of line: 3 (SYNCS, BRA, BRA).
  outer longest iteration: header block 2 + dispatch 6 + case 1 (3) + inner 8 + tail 4 = 23 (1 MMA, 22 other);
    shortest: case 0 (2) instead: 22 (21 other). Tensor-core period: one m64n128k16 bf16 = 131072 FMA at 2048
    FMA/clk/SM (sm_90a) = 64 cycles; issue share 22/64; MUFU 2 x 8 = 16 cycles.
  inner: 8 instructions, 1 MMA, 7 other, 64 cycles, issue 7/64, MUFU 8 cycles = 8/64.
  forbidden in the outer loop: jump_table 0x00a0, gpu_fence 0x0190, unpacked_f2f 0x00e0, int_divide 0x0060.
tcgen05_sm100a.sass (function test_tcgen05): one loop 0x30..0xb0 with UTCHMMA x2 (idesc UMOV'd 0x8200490: M=128,
  N=128, K=16, bf16: 262144 FMA / 4096 = 64 cycles each), UTCHMMA.2CTA (idesc 0x10200490: M=256 over the pair, so
  131072 x 2 = 262144 FMA per SM = 64 cycles), UTCQMMA whose idesc register comes from R2UR (unknown: the period is
  unknown unless --mma-shape gives it; 128x128x32 e4m3 = 524288 FMA / 8192 = 64 cycles), then UTCBAR, FFMA2,
  UIADD3, UISETP, BRA.U UP0 (conditional through its operand): 4 MMA + 5 other, 256 cycles with the option.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.environ.get("KBD_INSPECT") or os.path.join(HERE, "..", "..", "..", "tools", "kbd-inspect")
SM90 = os.path.join(HERE, "loops_sm90a.sass")
SM100 = os.path.join(HERE, "tcgen05_sm100a.sass")


def run(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)


def loops_json(*args):
    r = run("--loops", "--json", *args)
    if r.returncode != 0:
        raise AssertionError("kbd-inspect failed (%d): %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout)


class NestedLoops(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        recs = loops_json("--sass-file", SM90)
        assert len(recs) == 1
        cls.k = recs[0]

    def test_kernel(self):
        k = self.k
        self.assertEqual((k["name"], k["arch"], k["instructions"]), ("test_loops", "sm_90a", 33))  # 34 slots - NOP
        self.assertEqual((k["main_loop"], k["mma_loops"], k["mufu_loop"]), (1, [1], 1))
        self.assertEqual(k["backward_jumps"], [{"at": "0x0200", "to": "0x0050"}])
        self.assertEqual(len(k["loops"]), 3)

    def test_structure(self):
        outer, inner, retry = self.k["loops"]
        self.assertEqual((outer["start"], outer["end"], outer["depth"], outer["parent"], outer["children"]),
                         ("0x0030", "0x01c0", 1, None, [1, 2]))
        self.assertEqual((inner["start"], inner["end"], inner["depth"], inner["parent"], inner["children"]),
                         ("0x0100", "0x0180", 2, 0, []))
        self.assertEqual((retry["start"], retry["end"], retry["depth"], retry["parent"]), ("0x01e0", "0x01f0", 2, 0))
        self.assertEqual(outer["back_edges"], ["0x01c0"])
        self.assertEqual(inner["back_edges"], ["0x0180"])

    def test_outer_span(self):
        outer = self.k["loops"][0]
        self.assertEqual(outer["span"]["instructions"], 25)
        self.assertEqual(outer["span"]["classes"],
                         {"mma": 1, "mufu": 2, "fp32": 2, "fp32x2": 1, "convert": 2, "int": 4, "uniform": 1,
                          "move": 2, "sync": 3, "memory": 2, "control": 5})
        self.assertEqual(outer["outlined"], 3)
        self.assertEqual(outer["span"]["opcodes"]["BRA"], 4)
        self.assertEqual(outer["span"]["opcodes"]["HFMA2.MOV"], 1)
        self.assertNotIn("NOP", outer["span"]["opcodes"])

    def test_outer_iteration(self):
        it = self.k["loops"][0]["iteration"]
        lg, sh = it["longest"], it["shortest"]
        self.assertEqual((lg["instructions"], lg["mma"], lg["non_mma"]), (23, 1, 22))
        self.assertEqual(lg["classes"], {"mma": 1, "mufu": 2, "fp32": 1, "fp32x2": 1, "convert": 2, "int": 4,
                                         "uniform": 1, "move": 2, "sync": 3, "memory": 2, "control": 4})
        self.assertEqual(lg["opcodes"].get("F2F"), 1)       # case 1 taken
        self.assertNotIn("FFMA", lg["opcodes"])
        self.assertEqual((sh["instructions"], sh["mma"], sh["non_mma"]), (22, 1, 21))
        self.assertEqual(sh["opcodes"].get("FFMA"), 1)      # case 0 taken
        self.assertFalse(lg["outlined_taken"])
        self.assertEqual(lg["tensor_cycles"], 64)
        self.assertAlmostEqual(lg["issue_share"], 22 / 64.0, places=3)
        self.assertEqual(lg["mufu_cycles"], 16)

    def test_inner(self):
        inner = self.k["loops"][1]
        self.assertEqual(inner["span"]["instructions"], 8)
        lg = inner["iteration"]["longest"]
        self.assertEqual((lg["instructions"], lg["mma"], lg["non_mma"]), (8, 1, 7))
        self.assertEqual(lg["classes"], {"mma": 1, "mufu": 1, "fp32x2": 1, "int": 1, "uniform": 1, "move": 1,
                                         "memory": 1, "control": 1})
        self.assertEqual(lg["mma_shapes"], [{"insn": "HGMMA.64x128x16.F32.BF16", "count": 1, "m": 64, "n": 128,
                                             "k": 16, "dtype": "bf16", "pair": False, "shape_from": "sass",
                                             "fma_per_sm": 131072, "fma_per_clk": 2048}])
        self.assertEqual(lg["tensor_cycles"], 64)
        self.assertAlmostEqual(lg["issue_share"], 7 / 64.0, places=3)
        self.assertEqual(lg["mufu_cycles"], 8)
        self.assertAlmostEqual(lg["mufu_share"], 8 / 64.0, places=3)

    def test_forbidden(self):
        outer, inner, retry = self.k["loops"]
        self.assertEqual(outer["forbidden"], {"jump_table": ["0x00a0"], "gpu_fence": ["0x0190"],
                                              "unpacked_f2f": ["0x00e0"], "int_divide": ["0x0060"]})
        for L in (inner, retry):
            self.assertEqual(L["forbidden"], {"jump_table": [], "gpu_fence": [], "unpacked_f2f": [],
                                              "int_divide": []})

    def test_text_report(self):
        r = run("--loops", "--sass-file", SM90)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("main loop #1", r.stdout)
        self.assertIn("jump_table x1, gpu_fence x1, unpacked_f2f x1, int_divide x1", r.stdout)
        self.assertIn("tensor-core period 64 cycles; 7 non-MMA instructions", r.stdout)


class Tcgen05(unittest.TestCase):
    def test_idesc_and_option(self):
        k = loops_json("--sass-file", SM100)[0]
        self.assertEqual((k["arch"], k["main_loop"], k["mufu_loop"]), ("sm_100a", 0, None))
        lg = k["loops"][0]["iteration"]["longest"]
        self.assertEqual((lg["instructions"], lg["mma"], lg["non_mma"]), (9, 4, 5))
        shapes = dict((e["insn"], e) for e in lg["mma_shapes"])
        self.assertEqual(sorted(shapes), ["UTCHMMA 128x128x16.bf16", "UTCHMMA.2CTA 256x128x16.bf16", "UTCQMMA"])
        self.assertEqual((shapes["UTCHMMA 128x128x16.bf16"]["count"], shapes["UTCHMMA 128x128x16.bf16"]["shape_from"]),
                         (2, "idesc 0x8200490"))
        self.assertEqual(shapes["UTCHMMA.2CTA 256x128x16.bf16"]["fma_per_sm"], 262144)
        self.assertEqual(lg["tensor_cycles"], None)          # the UTCQMMA's descriptor is not in the listing
        self.assertEqual(lg["tensor_unknown"], ["UTCQMMA"])
        lg = loops_json("--sass-file", SM100, "--mma-shape", "128x128x32")[0]["loops"][0]["iteration"]["longest"]
        self.assertEqual(lg["tensor_cycles"], 256)
        self.assertAlmostEqual(lg["issue_share"], 5 / 256.0, places=4)

    def test_kernel_filter(self):
        self.assertEqual(len(loops_json("--sass-file", SM100, "--kernel", "tcgen05")), 1)
        r = run("--loops", "--sass-file", SM100, "--kernel", "nosuch")
        self.assertEqual(r.returncode, 1)


def _load_module():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("kbd_inspect_loops", TOOL)
    spec = importlib.util.spec_from_loader("kbd_inspect_loops", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class Pieces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ki = _load_module()

    def test_idesc(self):
        # PTX ISA tcgen05 instruction descriptor: A type bits 7-9, N>>3 bits 17-22, M>>4 bits 24-28
        self.assertEqual(self.ki.decode_idesc("UTCHMMA", 0x8200490), (128, 128, 16, "bf16"))
        self.assertEqual(self.ki.decode_idesc("UTCHMMA", 0x10400010), (256, 256, 16, "f16"))
        self.assertEqual(self.ki.decode_idesc("UTCQMMA", 0x8200010), (128, 128, 32, "e4m3"))
        self.assertIsNone(self.ki.decode_idesc("HGMMA", 0x8200490))

    def test_classes(self):
        def cls(line):
            f = self.ki.parse_sass_listing("Function : f\n        /*0000*/  %s ;\n" % line)
            return self.ki.loop_class(f[0]["insns"][0])
        self.assertEqual(cls("IMAD.MOV.U32 R1, RZ, RZ, R2"), ("move", "IMAD.MOV"))
        self.assertEqual(cls("IMAD.WIDE.U32 R2, R3, 0x4, R4"), ("int", "IMAD"))
        self.assertEqual(cls("UTMALDG.2D [UR8], [UR4]"), ("memory", "UTMALDG"))
        self.assertEqual(cls("ULDC UR4, c[0x0][0x28]"), ("uniform", "ULDC"))
        self.assertEqual(cls("F2FP.BF16.F32.PACK_AB R0, R1, R2"), ("convert", "F2FP"))
        self.assertEqual(cls("WARPGROUP.ARRIVE"), ("sync", "WARPGROUP"))
        self.assertEqual(cls("FMUL2 R0, R2, R4"), ("fp32x2", "FMUL2"))
        self.assertEqual(cls("QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24"), ("mma", "QGMMA"))

    def test_forbidden_kinds(self):
        text = "Function : f\n" + "".join("        /*%04x*/  %s ;\n" % (16 * i, l) for i, l in enumerate([
            "MEMBAR.SC.GPU", "MEMBAR.ALL.CTA", "F2F.F16.F32 R0, R1", "F2F.F32.BF16 R0, R1", "I2F.RP R0, R1",
            "IADD3 R0, R0, 0x1, RZ", "MUFU.RCP R0, R0", "I2F.U32 R2, R3", "MUFU.RCP R2, R2"]))
        insns = self.ki.parse_sass_listing(text)[0]["insns"]
        kinds = [self.ki.forbidden_kind(insns, i) for i in range(len(insns))]
        self.assertEqual(kinds, ["gpu_fence", None, "unpacked_f2f", None, "int_divide", None, None, None, None])


class BadInput(unittest.TestCase):
    def write(self, text):
        fd, path = tempfile.mkstemp(suffix=".sass")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def one_line_error(self, r, needle):
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)      # one line, no traceback
        self.assertTrue(lines[0].startswith("kbd-inspect: "), lines[0])
        self.assertIn(needle, lines[0])

    def test_unreadable_line(self):
        p = self.write("\tcode for sm_90a\n\t\tFunction : f\n        /*0000*/   IADD3 R0, R0, 1 ;\n"
                       "        /*0010*/   ??? garbage\n")
        self.one_line_error(run("--loops", "--sass-file", p), ":4: cannot read this SASS line")

    def test_branch_to_nowhere(self):
        p = self.write("\tcode for sm_90a\n\t\tFunction : f\n        /*0000*/   BRA 0x40 ;\n"
                       "        /*0010*/   EXIT ;\n")
        self.one_line_error(run("--loops", "--sass-file", p), "BRA to 0x40, which is no instruction of f")

    def test_addresses_out_of_order(self):
        p = self.write("\tcode for sm_90a\n\t\tFunction : f\n        /*0010*/   EXIT ;\n"
                       "        /*0000*/   EXIT ;\n")
        self.one_line_error(run("--loops", "--sass-file", p), "address 0x0 does not follow 0x10")

    def test_no_function(self):
        p = self.write("this is not a listing\n")
        self.one_line_error(run("--loops", "--sass-file", p), "no 'Function :'")

    def test_missing_file(self):
        self.one_line_error(run("--loops", "--sass-file", "/nonexistent/x.sass"), "--sass-file /nonexistent/x.sass")

    def test_no_arch(self):
        p = self.write("\t\tFunction : f\n        /*0000*/   EXIT ;\n")
        self.one_line_error(run("--loops", "--sass-file", p), "names no arch")
        self.assertEqual(run("--loops", "--sass-file", p, "--arch", "90a").returncode, 0)

    def test_wrong_arch(self):
        self.one_line_error(run("--loops", "--sass-file", SM90, "--arch", "100a"), "SASS for sm_90a, not sm_100a")

    def test_bad_options(self):
        self.one_line_error(run("--loops", "--sass-file", SM100, "--mma-shape", "128x0x16"), "--mma-shape takes MxNxK")
        self.one_line_error(run("--sass-file", SM90), "go with --loops")
        self.one_line_error(run("--loops", "--sass-file", SM90, "--no-sass"), "does not go with")


if __name__ == "__main__":
    unittest.main(verbosity=2)
