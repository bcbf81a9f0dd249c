# kbd.py - gdb helpers for kernels run by the kbd CPU machine (docs/debugging.md).
#
#   (gdb) source tools/gdb/kbd.py
#   (gdb) kbd-warp                 the running warp: id, block, kernel
#   (gdb) kbd-warps                every warp of the running warp's block: state and where it waits
#   (gdb) kbd-frame                select the kernel body's frame (<kernel>_kbd_body) of the running warp
#   (gdb) p t                      a register tile: "kbd tile f32 16 x 64, scope 128, layout ROW, 8 per lane",
#                                  then each lane's elements, decoded (bf16/f16/fp8 shown as numbers)
#   (gdb) kbd-lane t 5             lane 5's elements of tile t, decoded
#
# The machine's state is plain C: kbd_cpu_cur (the running warp, NULL outside a kernel), its cta (block
# coordinates bx, by, bz, warps[]) and the launch (cta->L->name). A tile's shape is in its type: the pointer
# member kbd_meta_ has type char (*)[rows][cols][scope threads][layout][dtype].
import struct

import gdb

_STATES = {0: "ready", 1: "blocked", 2: "exited", 3: "faulted"}
_DTYPES = {1: "f32", 2: "f16", 3: "bf16", 4: "e4m3", 5: "e5m2", 6: "i32", 7: "s8", 8: "u8"}
_LAYOUTS = {1: "ROW", 2: "WGMMA_ACC", 3: "MMA_A", 4: "MMA_B", 5: "MMA_C", 6: "TMEM_ACC"}


def _cur():
    w = gdb.parse_and_eval("kbd_cpu_cur")
    if int(w) == 0:
        raise gdb.GdbError("kbd: no warp is running on this host thread (kbd_cpu_cur is NULL)")
    return w


def _str(p):
    return p.string() if int(p) else "?"


def _warp_line(w):
    state = int(w["state"])
    text = "warp %d: %s" % (int(w["id"]), _STATES.get(state, str(state)))
    kind = int(w["wait_kind"])
    if state == 1 and kind == 1:
        text += ", in bar.sync %d at %s:%d" % (int(w["wait_bar"]), _str(w["wait_file"]), int(w["wait_line"]))
    elif state == 1 and kind == 3:
        text += ", waiting on an object (mbarrier, cluster barrier, ...) at %s:%d" % (
            _str(w["wait_file"]), int(w["wait_line"]))
    elif kind == 2:
        text += ", polling at %s:%d" % (_str(w["wait_file"]), int(w["wait_line"]))
    return text


class KbdWarp(gdb.Command):
    """kbd-warp: the warp the host thread is running, its block and kernel."""

    def __init__(self):
        super().__init__("kbd-warp", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        w = _cur()
        cta = w["cta"]
        gdb.write("warp %d of block (%d,%d,%d) of kernel %s, %d warps per block\n" % (
            int(w["id"]), int(cta["bx"]), int(cta["by"]), int(cta["bz"]), _str(cta["L"]["name"]),
            int(cta["nwarps"])))


class KbdWarps(gdb.Command):
    """kbd-warps: every warp of the running warp's block, its state and what it waits for."""

    def __init__(self):
        super().__init__("kbd-warps", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        cur = _cur()
        cta = cur["cta"]
        gdb.write("block (%d,%d,%d) of kernel %s:\n" % (int(cta["bx"]), int(cta["by"]), int(cta["bz"]),
                                                       _str(cta["L"]["name"])))
        for i in range(int(cta["nwarps"])):
            w = cta["warps"][i]
            mark = "*" if i == int(cur["id"]) else " "
            line = _warp_line(w)
            if i == int(cur["id"]):
                line = "warp %d: running" % i
            gdb.write("%s %s\n" % (mark, line))


class KbdFrame(gdb.Command):
    """kbd-frame: select the innermost frame of a kernel body (<kernel>_kbd_body)."""

    def __init__(self):
        super().__init__("kbd-frame", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        f = gdb.newest_frame()
        n = 0
        while f is not None:
            name = f.name() or ""
            if name.endswith("_kbd_body"):
                gdb.execute("frame %d" % n, from_tty)
                return
            f = f.older()
            n += 1
        raise gdb.GdbError("kbd: no <kernel>_kbd_body frame on this stack")


def _tile_shape(val):
    """(rows, cols, scope, layout, dtype) of a register tile value, or None for anything else."""
    t = val.type.strip_typedefs()
    if t.code != gdb.TYPE_CODE_STRUCT:
        return None
    names = [f.name for f in t.fields()]
    if "v" not in names or "kbd_meta_" not in names or "kbd_kind_" not in names:
        return None
    dims = []
    a = t["kbd_meta_"].type.strip_typedefs().target()
    while a.code == gdb.TYPE_CODE_ARRAY:
        lo, hi = a.range()
        dims.append(hi - lo + 1)
        a = a.target()
    if len(dims) != 5:
        return None
    return tuple(dims)


def _decode(x, dtype):
    if dtype == 1:
        return float(x)
    if dtype in (6, 7, 8):  # i32, s8, u8: C integer types
        return int(x)
    bits = int(x["bits"])
    if dtype == 3:  # bf16: the high half of an f32
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if dtype == 2:
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    # fp8: exponent bias 7 (e4m3, no infinities, S.1111.111 is NaN) or 15 (e5m2, IEEE-like)
    ebits, mbits, bias = (4, 3, 7) if dtype == 4 else (5, 2, 15)
    s = -1.0 if bits & 0x80 else 1.0
    e = (bits >> mbits) & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    if dtype == 4 and e == 15 and m == 7:
        return float("nan")
    if dtype == 5 and e == 31:
        return float("nan") if m else s * float("inf")
    if e == 0:
        return s * m / (1 << mbits) * 2.0 ** (1 - bias)
    return s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def _lane(val, lane, dtype):
    row = val["v"][lane]
    lo, hi = row.type.strip_typedefs().range()
    return [_decode(row[i], dtype) for i in range(lo, hi + 1)]


class KbdTilePrinter:
    def __init__(self, val, shape):
        self.val = val
        self.shape = shape

    def to_string(self):
        r, c, s, layout, dt = self.shape
        lanes = self.val["v"].type.strip_typedefs().range()[1] + 1
        npt = self.val["v"][0].type.strip_typedefs().range()[1] + 1
        return "kbd tile %s %d x %d, scope %d, layout %s, %d per lane (%d lanes held)" % (
            _DTYPES.get(dt, "dtype %d" % dt), r, c, s, _LAYOUTS.get(layout, str(layout)), npt, lanes)

    def children(self):
        lanes = self.val["v"].type.strip_typedefs().range()[1] + 1
        for lane in range(lanes):
            yield ("lane %d" % lane, str(_lane(self.val, lane, self.shape[4])))


def _lookup(val):
    shape = _tile_shape(val)
    return KbdTilePrinter(val, shape) if shape else None


class KbdLane(gdb.Command):
    """kbd-lane TILE LANE: the elements lane LANE holds of register tile TILE, decoded."""

    def __init__(self):
        super().__init__("kbd-lane", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        parts = gdb.string_to_argv(arg)
        if len(parts) != 2:
            raise gdb.GdbError("usage: kbd-lane TILE LANE")
        val = gdb.parse_and_eval(parts[0])
        shape = _tile_shape(val)
        if not shape:
            raise gdb.GdbError("kbd: %s is not a kbd register tile" % parts[0])
        gdb.write("lane %s: %s\n" % (parts[1], _lane(val, int(parts[1]), shape[4])))


KbdWarp()
KbdWarps()
KbdFrame()
KbdLane()
gdb.pretty_printers.append(_lookup)
