"""CUDA PTX blocks: ``cuzk/kernels/cu/mont_asm_<curve>.h``, Fr/Fq add, sub, mul, sqr per curve.

field.cuh's carry chains are written with one ``asm volatile`` per instruction, so the host shim
can run the same chain with a modelled carry flag. Volatile statements keep their order, though,
so two independent products (the many of an XYZZ addition) cannot be interleaved by the compiler.
On the device, field.cuh uses these blocks instead: one non-volatile ``asm`` per operation, its
whole carry chain inside (the flag never crosses a block, so the compiler may move blocks freely
and interleave independent ones). Each block is the same algorithm as field.cuh's chain (CIOS
multiplication, the N(N+1)/2-product square), with the modulus and -p^-1 mod 2^32 as commented
immediates; the word count is the curve's (``EncodingFacts.fr_words32`` / ``fq_words32``).
tests/test_cuda_asm.py runs the generated PTX text through a small interpreter of the
instructions used and compares it with Python ints and with the host build of the chains.
"""

from __future__ import annotations

from cuzk.field.params import FieldParams

from .common import Target
from .cuda_params import check_cuda_fits, cuda_define

__all__ = ["render_cuda_asm", "OPS"]

OPS = ("add", "sub", "mul", "sqr")  # generated per field; sqr takes no b


class _Block:
    """PTX lines of one asm block; operands %0.. are r[0..N), a[0..N), b[0..N)."""

    def __init__(self, name: str, f: FieldParams):
        self.n = f.limbs * 2
        self.p = [(f.modulus >> (32 * i)) & 0xFFFFFFFF for i in range(self.n)]
        self.m0 = (-pow(f.modulus, -1, 1 << 32)) % (1 << 32)
        self.lines: list[str] = []
        self.name = name

    def r(self, i: int) -> str:
        return f"%{i}"

    def a(self, i: int) -> str:
        return f"%{self.n + i}"

    def b(self, i: int) -> str:
        return f"%{2 * self.n + i}"

    def pimm(self, i: int) -> str:
        return f"0x{self.p[i]:08x}"

    def emit(self, ins: str, note: str = "") -> None:
        self.lines.append(ins + ";" + (f" // {note}" if note else ""))

    def reduce_round(self, t: list[str]) -> list[str]:
        """One Montgomery round on the N + 2 registers t: add m*p (m = t0 * M0 clears t0), shift
        down a limb by renaming (the cleared t0 becomes the new top, zero)."""
        n = self.n
        self.emit(f"mul.lo.u32 m, {t[0]}, 0x{self.m0:08x}", "m = t0 * (-p^-1 mod 2^32)")
        self.emit(f"mad.lo.cc.u32 {t[0]}, m, {self.pimm(0)}, {t[0]}", "m * p[0]: t0 becomes 0")
        for j in range(1, n):
            self.emit(f"madc.lo.cc.u32 {t[j]}, m, {self.pimm(j)}, {t[j]}", f"p[{j}]")
        self.emit(f"addc.cc.u32 {t[n]}, {t[n]}, 0")
        self.emit(f"addc.u32 {t[n + 1]}, {t[n + 1]}, 0")
        self.emit(f"mad.hi.cc.u32 {t[1]}, m, {self.pimm(0)}, {t[1]}")
        for j in range(1, n):
            self.emit(f"madc.hi.cc.u32 {t[j + 1]}, m, {self.pimm(j)}, {t[j + 1]}")
        self.emit(f"addc.u32 {t[n + 1]}, {t[n + 1]}, 0")
        return t[1:] + t[:1]

    def reduce_once(self, t: list[str]) -> None:
        """r = t - p if that does not borrow, else t (t < 2p)."""
        n = self.n
        self.emit(f"sub.cc.u32 d0, {t[0]}, {self.pimm(0)}", "t - p")
        for i in range(1, n):
            self.emit(f"subc.cc.u32 d{i}, {t[i]}, {self.pimm(i)}")
        self.emit("subc.u32 x, 0, 0", "all ones when t < p")
        self.emit("setp.ne.u32 q, x, 0")
        for i in range(n):
            self.emit(f"selp.b32 {self.r(i)}, {t[i]}, d{i}, q")

    def text(self, regs: int) -> str:
        decl = [f".reg .u32 t<{regs}>;", f".reg .u32 d<{self.n}>;", ".reg .u32 m, x;", ".reg .pred q;"]
        return "\n".join(["{"] + decl + self.lines + ["}"])


def _add(name, f) -> tuple[str, bool]:
    k = _Block(name, f)
    k.emit(f"add.cc.u32 t0, {k.a(0)}, {k.b(0)}", "a + b (< 2p: no carry out)")
    for i in range(1, k.n):
        k.emit(f"addc.cc.u32 t{i}, {k.a(i)}, {k.b(i)}")
    k.reduce_once([f"t{i}" for i in range(k.n)])
    return k.text(k.n), True


def _sub(name, f) -> tuple[str, bool]:
    k = _Block(name, f)
    k.emit(f"sub.cc.u32 t0, {k.a(0)}, {k.b(0)}", "a - b")
    for i in range(1, k.n):
        k.emit(f"subc.cc.u32 t{i}, {k.a(i)}, {k.b(i)}")
    k.emit("subc.u32 x, 0, 0", "all ones when a < b: add p back")
    for i in range(k.n):
        k.emit(f"and.b32 d{i}, x, {k.pimm(i)}", f"p[{i}] & mask")
    k.emit(f"add.cc.u32 {k.r(0)}, t0, d0")
    for i in range(1, k.n):
        k.emit(f"addc.cc.u32 {k.r(i)}, t{i}, d{i}")
    return k.text(k.n), True


def _mul(name, f) -> tuple[str, bool]:
    """CIOS as field.cuh's mont_t::mul: per limb b_i, a * b_i into t, then a reduction round."""
    k = _Block(name, f)
    n = k.n
    t = [f"t{i}" for i in range(n + 2)]
    for reg in t:
        k.emit(f"mov.u32 {reg}, 0")
    for i in range(n):
        bi = k.b(i)
        k.emit(f"mad.lo.cc.u32 {t[0]}, {k.a(0)}, {bi}, {t[0]}", f"row b[{i}]: low words")
        for j in range(1, n):
            k.emit(f"madc.lo.cc.u32 {t[j]}, {k.a(j)}, {bi}, {t[j]}")
        k.emit(f"addc.cc.u32 {t[n]}, {t[n]}, 0")
        k.emit(f"addc.u32 {t[n + 1]}, 0, 0")
        k.emit(f"mad.hi.cc.u32 {t[1]}, {k.a(0)}, {bi}, {t[1]}", "high words, one limb up")
        for j in range(1, n):
            k.emit(f"madc.hi.cc.u32 {t[j + 1]}, {k.a(j)}, {bi}, {t[j + 1]}")
        k.emit(f"addc.u32 {t[n + 1]}, {t[n + 1]}, 0")
        t = k.reduce_round(t)
    k.reduce_once(t[:n])
    return k.text(n + 2), True


def _sqr(name, f) -> tuple[str, bool]:
    """As field.cuh's mont_t::sqr: cross products once, doubled, diagonal squares, N rounds on
    the low half, the high half added, one conditional subtraction."""
    k = _Block(name, f)
    n = k.n
    t = [f"t{i}" for i in range(2 * n + 2)]
    a = k.a
    for reg in t:
        k.emit(f"mov.u32 {reg}, 0")
    for i in range(n - 1):
        k.emit(f"mad.lo.cc.u32 {t[2 * i + 1]}, {a(i)}, {a(i + 1)}, {t[2 * i + 1]}", f"cross row {i}: low words")
        for j in range(i + 2, n):
            k.emit(f"madc.lo.cc.u32 {t[i + j]}, {a(i)}, {a(j)}, {t[i + j]}")
        k.emit(f"addc.u32 {t[i + n]}, {t[i + n]}, 0")
        k.emit(f"mad.hi.cc.u32 {t[2 * i + 2]}, {a(i)}, {a(i + 1)}, {t[2 * i + 2]}", "high words")
        for j in range(i + 2, n):
            k.emit(f"madc.hi.cc.u32 {t[i + j + 1]}, {a(i)}, {a(j)}, {t[i + j + 1]}")
        k.emit(f"addc.u32 {t[i + n + 1]}, {t[i + n + 1]}, 0")
    for j in range(2 * n - 1, 0, -1):  # double the cross products: a funnel shift per limb, top down
        k.emit(f"shf.l.clamp.b32 {t[j]}, {t[j - 1]}, {t[j]}, 1")
    k.emit(f"mad.lo.cc.u32 {t[0]}, {a(0)}, {a(0)}, 0", "diagonal squares")
    k.emit(f"madc.hi.cc.u32 {t[1]}, {a(0)}, {a(0)}, {t[1]}")
    for i in range(1, n):
        k.emit(f"madc.lo.cc.u32 {t[2 * i]}, {a(i)}, {a(i)}, {t[2 * i]}")
        k.emit(f"madc.hi.cc.u32 {t[2 * i + 1]}, {a(i)}, {a(i)}, {t[2 * i + 1]}")
    u = t[:n] + t[2 * n : 2 * n + 2]  # the low half and two zero registers
    for _ in range(n):
        u = k.reduce_round(u)
    hi = t[n : 2 * n]
    k.emit(f"add.cc.u32 {u[0]}, {u[0]}, {hi[0]}", "+ the high half")
    for i in range(1, n):
        k.emit(f"addc.cc.u32 {u[i]}, {u[i]}, {hi[i]}")
    k.reduce_once(u[:n])
    return k.text(2 * n + 2), False


def _c_function(prefix: str, op: str, text: str, has_b: bool, f: FieldParams) -> str:
    n = f.limbs * 2
    lits = "\n".join(f'        "{line}\\n\\t"' for line in text.split("\n"))
    outs = ", ".join(f'"=r"(r[{i}])' for i in range(n))
    ins = [f'"r"(a[{i}])' for i in range(n)] + ([f'"r"(b[{i}])' for i in range(n)] if has_b else [])
    params = f"uint32_t (&r)[{n}], const uint32_t (&a)[{n}]" + (f", const uint32_t (&b)[{n}]" if has_b else "")
    what = {"add": "a + b", "sub": "a - b", "mul": "a * b / R", "sqr": "a * a / R"}[op]
    return (f"// {prefix} {op}: r = {what} mod p (Montgomery form), the whole carry chain in one block\n"
            f"__device__ __forceinline__ void {prefix}_{op}_asm({params}) {{\n"
            f"    asm(\n{lits}\n        : {outs}\n        : {', '.join(ins)});\n}}\n")


def render_cuda_asm(t: Target) -> str:
    """``mont_asm_<curve>.h``: a pure function of the curve's spec."""
    spec = t.spec
    check_cuda_fits(spec)
    gens = {"add": _add, "sub": _sub, "mul": _mul, "sqr": _sqr}
    parts = [
        "// generated by scripts/generate.py from cuzk.curves.catalog: do not edit by hand.\n",
        f"// {spec.title} (-D{cuda_define(spec)}): Fr and Fq add/sub/mul/sqr, each one non-volatile PTX\n",
        "// block (device code only; the host shim runs field.cuh's chain of named carry functions\n",
        "// instead, tests/test_cuda_asm.py checks both against Python ints). Immediates are the\n",
        "// modulus limbs and -p^-1 mod 2^32, named in the comment after each instruction.\n",
        "#pragma once\n\n#if defined(__CUDA_ARCH__)\n",
    ]
    for prefix, f in (("fr", spec.fr), ("fq", spec.fq)):
        m0 = (-pow(f.modulus, -1, 1 << 32)) % (1 << 32)
        parts.append(f"\n// ---- {prefix}: p = 0x{f.modulus:x}, M0 = -p^-1 mod 2^32 = 0x{m0:08x}\n")
        for op in OPS:
            text, has_b = gens[op](f"{prefix}_{op}", f)
            parts.append(_c_function(prefix, op, text, has_b, f))
    parts.append("\n#endif  // __CUDA_ARCH__\n")
    return "".join(parts)
