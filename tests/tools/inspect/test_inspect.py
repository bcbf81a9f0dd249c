"""Unit tests of tools/kbd-inspect's pure parts (label cpu): the occupancy rules, the ptxas/PTX/SASS parsers and
the one-line errors. Every expected number is derived by hand in the comments from the rules quoted in
tools/kbd-inspect (CUDA occupancy calculator, cuda_occupancy.h, compute capability 9.0/10.0 limits)."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import unittest

TOOL = os.environ.get("KBD_INSPECT") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools",
                                                      "kbd-inspect")
_loader = importlib.machinery.SourceFileLoader("kbd_inspect", TOOL)
_spec = importlib.util.spec_from_loader("kbd_inspect", _loader)
ki = importlib.util.module_from_spec(_spec)
_loader.exec_module(ki)


class Occupancy(unittest.TestCase):
    def test_registers_and_warps_tie(self):
        # 32 regs: 32*32 = 1024 per warp (a multiple of 256); 16384 per sub-partition / 1024 = 16 warps, x4 = 64
        # warps = 8 blocks of 8 warps. Warps: 64/8 = 8. Shared: 4096 + 1024 reserved = 5120; 233472/5120 = 45.
        for arch in ("90a", "100a"):
            r = ki.occupancy(arch, 32, 4096, 256)
            self.assertEqual(r["blocks"], 8)
            self.assertEqual(r["warps"], 64)
            self.assertEqual(r["limits"], {"warps": 8, "blocks": 32, "registers": 8, "shared memory": 45})
            self.assertEqual(r["limiter"], "registers and warps")

    def test_register_rounding(self):
        # 43 regs: 1376 per warp -> 1536 (6 units of 256); 16384/1536 = 10 warps per sub-partition -> 40 warps
        # per SM; 128 threads = 4 warps -> 10 blocks (the transpose example on sm_100a).
        r = ki.occupancy("100a", 43, 0, 128)
        self.assertEqual(r["limits"]["registers"], 10)
        self.assertEqual((r["blocks"], r["warps"], r["limiter"]), (10, 40, "registers"))

    def test_gemm_shape(self):
        # 168 regs x 384 threads: 5376 per warp; 16384/5376 = 3 per sub-partition -> 12 warps -> 1 block.
        # 200000 B dynamic: 201024 -> 201088 (128-byte units); 233472/201088 = 1.
        r = ki.occupancy("90a", 168, 200000, 384)
        self.assertEqual(r["limits"]["registers"], 1)
        self.assertEqual(r["limits"]["shared memory"], 1)
        self.assertEqual(r["smem_allocated"], 201088)
        self.assertEqual(r["limiter"], "registers and shared memory")

    def test_shared_memory_limit(self):
        # 48 KiB + 1 KiB reserved = 50176 B; 233472/50176 = 4 blocks; registers (16 regs: 512/warp, 32 warps
        # per sub-partition -> 128 per SM / 4 warps = 32) do not bind.
        r = ki.occupancy("90a", 16, 48 * 1024, 128)
        self.assertEqual((r["blocks"], r["limiter"]), (4, "shared memory"))

    def test_too_much(self):
        r = ki.occupancy("100a", 32, 227 * 1024 + 1, 128)
        self.assertEqual(r["blocks"], 0)
        self.assertIn("exceed", r["why"])
        # 255 regs x 1024 threads: 8160 -> 8192 per warp x 32 warps = 262144 > 65536 registers of a block.
        r = ki.occupancy("90a", 255, 0, 1024)
        self.assertEqual(r["blocks"], 0)
        self.assertIn("registers", r["why"])

    def test_tensor_memory(self):
        # 256 columns per block: 512/256 = 2 blocks per SM.
        r = ki.occupancy("100a", 32, 0, 128, tmem_cols=256)
        self.assertEqual((r["blocks"], r["limiter"]), (2, "tensor memory"))
        with self.assertRaises(ki.InspectError):
            ki.occupancy("90a", 32, 0, 128, tmem_cols=256)
        with self.assertRaises(ki.InspectError):
            ki.occupancy("100a", 32, 0, 128, tmem_cols=96)


PTXAS_LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z5k_kbd_dev1p' for 'sm_90a'
ptxas info    : Function properties for _Z5k_kbd_dev1p
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 72 registers, used 2 barriers, 4096 bytes smem, 400 bytes cmem[0]
ptxas info    : Compiling entry function 'plain' for 'sm_90a'
ptxas info    : Function properties for plain
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, 368 bytes cmem[0], 8 bytes cmem[2]
"""

PTX = """.visible .entry _Z5k_kbd_dev1p(
.param .align 8 .b8 p[8]
)
.maxntid 384
.minnctapersm 1
.reqnctapercluster 2, 1, 1
{
\tsetmaxnreg.dec.sync.aligned.u32 40;
\tsetmaxnreg.inc.sync.aligned.u32 232;
\tsetmaxnreg.inc.sync.aligned.u32 232;
}
.visible .entry plain(
)
.reqntid 32, 4, 1
{
}
"""

SASS = """
\tcode for sm_90a
\t\tFunction : plain
        /*0000*/                   LDS R0, [R1] ;
        /*0010*/              @!P0 LDS.64 R2, [R1+0x8] ;
        /*0020*/                   NOP ;
        /*0030*/               @P1 HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24 ;
        /*0040*/                   UTMALDG.2D [UR8], [UR4] ;
        /*0050*/                   SYNCS.ARRIVE.TRANS64 RZ, [UR4], RZ ;
        /*0060*/                   FFMA R1, R2, R3, R4 ;
\t\tFunction : other
        /*0000*/                   STG.E [R2.64], R0 ;
"""


class Parsers(unittest.TestCase):
    def test_ptxas(self):
        f = ki.parse_ptxas(PTXAS_LOG)
        self.assertEqual(f["_Z5k_kbd_dev1p"], dict(regs=72, stack=16, spill_stores=8, spill_loads=4, smem=4096,
                                                   cmem={"0": 400}, barriers=2))
        self.assertEqual(f["plain"]["regs"], 10)
        self.assertEqual(f["plain"]["cmem"], {"0": 368, "2": 8})
        self.assertEqual(f["plain"]["smem"], 0)

    def test_ptx(self):
        e = ki.parse_ptx(PTX)
        k = e["_Z5k_kbd_dev1p"]
        self.assertEqual((k["maxntid"], k["minnctapersm"], k["cluster"]), (384, 1, 2))
        self.assertEqual(k["setmaxnreg"], [("dec", 40), ("inc", 232)])
        self.assertEqual(e["plain"]["reqntid"], 128)
        self.assertIsNone(e["plain"]["maxntid"])

    def test_sass(self):
        f = ki.parse_sass(SASS)
        self.assertEqual(f["plain"], {"LDS": 2, "HGMMA": 1, "UTMALDG": 1, "SYNCS": 1, "FFMA": 1})
        self.assertEqual(f["other"], {"STG": 1})
        m = ki.mix(f["plain"])
        self.assertEqual(m["shared"]["total"], 2)
        self.assertEqual(m["tensor core"]["ops"], {"HGMMA": 1})
        self.assertEqual(m["tma"]["total"], 1)
        self.assertEqual(m["barrier/fence"]["total"], 1)
        self.assertEqual(m["other"]["ops"], {"FFMA": 1})
        for op, cat in (("UTCHMMA", "tensor core"), ("UTCQMMA", "tensor core"), ("LDTM", "tensor memory"),
                        ("STSM", "shared"), ("LDSM", "shared"), ("UTMASTG", "tma"), ("LDG", "global"),
                        ("BAR", "barrier/fence"), ("IMAD", "other")):
            self.assertEqual(ki.sass_category(op), cat, op)

    def test_short_name(self):
        self.assertEqual(ki.short_name("tr_transpose_kbd_dev(tr_params, const char (*) [128][1])"), "tr_transpose")
        self.assertEqual(ki.short_name("plain"), "plain")


class BadInput(unittest.TestCase):
    def run_tool(self, *args):
        return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)

    def check_one_line(self, r, needle):
        self.assertNotEqual(r.returncode, 0)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("kbd-inspect: "), lines[0])
        self.assertIn(needle, lines[0])

    def test_errors(self):
        self.check_one_line(self.run_tool("no_such_example"), "neither a .cu file nor an example")
        self.check_one_line(self.run_tool("/no/such/file.cu"), "no such file")
        self.check_one_line(self.run_tool("gemm", "--arch", "80"), "unknown arch '80'")
        self.check_one_line(self.run_tool("--occupancy", "1,2"), "REGS,SMEM_BYTES,THREADS")
        self.check_one_line(self.run_tool("--occupancy", "32,0,2048"), "1..1024 threads")
        self.check_one_line(self.run_tool("--occupancy", "32,0,128", "--arch", "100a", "--tmem-cols", "100"),
                            "power of two")
        self.check_one_line(self.run_tool(), "no kernel source")

    def test_occupancy_mode(self):
        r = self.run_tool("--occupancy", "32,4096,256", "--arch", "90a")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("8 block(s) = 64 of 64 warps per SM, limited by registers and warps", r.stdout)


if __name__ == "__main__":
    unittest.main()
