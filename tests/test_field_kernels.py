"""In-JIT contract of cuzk.curves.bls12_381.fr / fq (scalar kernels) and the limb intrinsics."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from cuzk.field import FQ, FR
from cuzk.curves.bls12_381 import fq, fr
from cuzk.field import intrinsics
from cuzk.field.intrinsics import adc, mac, sbb

MASK = 2**64 - 1
U64 = st.one_of(st.integers(0, MASK), st.sampled_from([0, 1, 2**63 - 1, 2**63, MASK - 1, MASK]))


@njit
def _mac(t, a, b, c):
    return mac(t, a, b, c)


@njit
def _adc(a, b, c):
    return adc(a, b, c)


@njit
def _sbb(a, b, c):
    return sbb(a, b, c)


@given(t=U64, a=U64, b=U64, c=U64)
def test_mac(t, a, b, c):
    lo, hi = _mac(np.uint64(t), np.uint64(a), np.uint64(b), np.uint64(c))
    assert int(lo) + (int(hi) << 64) == t + a * b + c


@given(a=U64, b=U64, c=st.integers(0, 1))
def test_adc_sbb(a, b, c):
    s, co = _adc(np.uint64(a), np.uint64(b), np.uint64(c))
    assert int(s) + (int(co) << 64) == a + b + c
    d, bo = _sbb(np.uint64(a), np.uint64(b), np.uint64(c))
    assert int(d) - (int(bo) << 64) == a - b - c


KERNELS = {"fr": (fr, FR), "fq": (fq, FQ)}


def enc(x, f):
    x = x * f.r % f.modulus
    return tuple(np.uint64((x >> (64 * k)) & MASK) for k in range(f.limbs))


def u(t):
    """Kernel results come back as Python ints; re-type them as uint64 before passing them in."""
    return tuple(np.uint64(v) for v in t)


def canon(t):
    return sum(int(v) << (64 * k) for k, v in enumerate(t))


def dec(t, f):
    return canon(t) * pow(f.r, -1, f.modulus) % f.modulus


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_constructors_and_predicates(name):
    k, f = KERNELS[name]
    p = f.modulus
    assert canon(k.zero()) == 0 and canon(k.one()) == f.r
    assert k.is_zero(u(k.zero())) and not k.is_zero(u(k.one()))
    for x in (0, 1, 7, 2**64 - 1):
        assert dec(k.from_u64(np.uint64(x)), f) == x
    a = enc(p - 1, f)
    assert dec(k.dbl(a), f) == p - 2
    assert k.eq(a, a) and not k.eq(a, u(k.one()))
    assert dec(k.neg(u(k.zero())), f) == 0
    canon_limbs = tuple(np.uint64(v) for v in enc(12345, f))
    assert dec(k.from_mont(canon_limbs), f) == dec(canon_limbs, f) * pow(f.r, -1, p) % p
    raw = tuple(np.uint64(((p - 5) >> (64 * i)) & MASK) for i in range(f.limbs))
    assert canon(k.from_mont(u(k.to_mont(raw)))) == p - 5 and canon(k.to_mont(raw)) == (p - 5) * f.r % p


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_inv_pow_sqrt_kernels(name):
    k, f = KERNELS[name]
    p = f.modulus
    assert canon(k.inv(u(k.zero()))) == 0
    a = enc(3, f)
    assert dec(k.inv(a), f) == pow(3, -1, p)
    e = np.array([5, 1], dtype=np.uint64)  # 2^64 + 5
    assert dec(k.pow_(a, e), f) == pow(3, 2**64 + 5, p)
    assert dec(k.pow_(a, np.zeros(1, dtype=np.uint64)), f) == 1
    ok, r = k.sqrt(enc(f.generator, f))  # the generator is a non-residue
    assert not ok and canon(r) == 0
    ok, r = k.sqrt(enc(9, f))
    assert ok and dec(r, f) in (3, p - 3)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_load_store(name):
    k, f = KERNELS[name]
    arr = np.zeros((2, f.limbs), dtype=np.uint64)
    k.store(arr, 1, enc(f.modulus - 1, f))
    assert dec(k.load(arr, 1), f) == f.modulus - 1 and not arr[0].any()


def _edges(f):
    p, n = f.modulus, f.limbs
    top = p >> (64 * (n - 1))
    ones = [2 ** (64 * k) - 1 for k in range(1, n)]  # all-ones low limbs, zero above
    below_p = (top - 1) * 2 ** (64 * (n - 1)) + ones[-1]  # all-ones limbs under p's top limb
    return [0, 1, 2, p - 1, p - 2, (p - 1) // 2, f.r, f.r2, below_p, 2 ** (64 * n - 65)] + ones


def _needs_final_subtraction(f, a, b):
    """True when the Montgomery sum (ab + m p) / R lands in [p, 2p): the conditional subtraction runs."""
    p, R = f.modulus, 2 ** (64 * f.limbs)
    m = a * b * (R - pow(p, -1, R)) % R
    return (a * b + m * p) // R >= p


def _subtraction_cases(f, count=200):
    """Deterministic operand pairs (x, y) whose product hits the final subtraction (~1 in 10 for Fq)."""
    rng, out = np.random.default_rng(11), []
    while len(out) < count:
        x, y = (int.from_bytes(rng.bytes(8 * f.limbs), "little") % f.modulus for _ in range(2))
        if _needs_final_subtraction(f, x, y):
            out.append((x, y))
    return out


from cuzk.curves.bn254 import fq as fq_bn254  # noqa: E402
from cuzk.curves.bn254.params import FQ as FQ_BN254  # noqa: E402

# BN254's Fq: the 4-limb asm product that reads a through a pointer (FQ_A_IN_REGS)
FIELDS = {"fr": (fr, FR), "fq": (fq, FQ), "fq_bn254": (fq_bn254, FQ_BN254)}
# (field, impl) -> (mul, sqr): inline asm (skipped only on CPUs without BMI2/ADX), the i128
# product and the dedicated i128 square (21 limb products for Fq, not 36), and what mul / sqr
# dispatch to on this CPU
IMPLS = {(k, impl) for k in FIELDS for impl in ("adx", "i128", "dispatched")}


def _impl(name, impl):
    k, _ = FIELDS[name]
    if impl == "adx" and not intrinsics.HAVE_ADX:
        pytest.skip("CPU lacks BMI2/ADX")
    return {"adx": (k._mul_adx, k._sqr_adx), "i128": (k._mul_i128, k._sqr_i128), "dispatched": (k.mul, k.sqr)}[impl]


def _elem(f):
    return st.one_of(st.integers(0, f.modulus - 1), st.sampled_from(_edges(f)))


@pytest.mark.parametrize("name,impl", sorted(IMPLS))
@given(data=st.data())
def test_mul_sqr_implementations(name, impl, data):
    """Every product and square (inline asm and i128 fallback) gives a*b/R mod p, fully reduced."""
    mul, sqr = _impl(name, impl)
    f = FIELDS[name][1]
    a, b = data.draw(_elem(f)), data.draw(_elem(f))
    rinv = pow(f.r, -1, f.modulus)
    assert canon(mul(_limbs(a, f), _limbs(b, f))) == a * b * rinv % f.modulus
    assert canon(sqr(_limbs(a, f))) == a * a * rinv % f.modulus


@pytest.mark.parametrize("name,impl", sorted(IMPLS))
def test_mul_sqr_implementations_bulk(name, impl):
    """Thousands of products and squares inside one kernel: random values, every pair of edge
    values, and pairs chosen so that the final conditional subtraction runs."""
    mul, sqr = _impl(name, impl)
    k, f = FIELDS[name]
    edges = _edges(f)
    sub = _subtraction_cases(f)
    pairs = [(x, y) for x in edges for y in edges] + sub
    rng = np.random.default_rng(7)
    pairs += [tuple(int.from_bytes(rng.bytes(8 * f.limbs), "little") % f.modulus for _ in range(2)) for _ in range(2000)]
    a = np.array([_limbs(x, f) for x, _ in pairs], dtype=np.uint64)
    b = np.array([_limbs(y, f) for _, y in pairs], dtype=np.uint64)
    out, sq = _run_with(k, mul, sqr, a, b)
    p, rinv = f.modulus, pow(f.r, -1, f.modulus)
    squares_subtracted = 0
    for (x, y), z, s in zip(pairs, out, sq):
        assert canon(z) == x * y * rinv % p, (x, y)
        assert canon(s) == x * x * rinv % p, x
        squares_subtracted += _needs_final_subtraction(f, x, x)
    assert squares_subtracted > 10  # the square's own subtraction branch ran too


def _limbs(x, f=FR):
    return tuple(np.uint64((x >> (64 * k)) & MASK) for k in range(f.limbs))


def _run_with(k, mul, sqr, a, b):
    # mul(x, x) gets one SSA value for both operands: an earlier asm version that took b0 in
    # a fixed register let LLVM put a0 there too and squared wrongly, while a*b was right.
    @njit
    def run(a, b):
        out, sq, sq2 = np.empty_like(a), np.empty_like(a), np.empty_like(a)
        for i in range(a.shape[0]):
            x = k.load(a, i)
            k.store(out, i, mul(x, k.load(b, i)))
            k.store(sq, i, sqr(x))
            k.store(sq2, i, mul(x, x))
        return out, sq, sq2

    out, sq, sq2 = run(a, b)
    assert (sq == sq2).all()
    return out, sq


def test_dispatch_follows_cpu_features_and_generator_choice():
    gen = _load_generator()
    for name, (k, params) in FIELDS.items():
        key = (params.name, params.limbs)  # the generator's choice per field and limb count
        asm = getattr(intrinsics, gen.ASM_MUL[key])  # HAVE_ADX or ASM_BASE_FIELD
        assert k.mul is (k._mul_adx if asm else k._mul_i128), name
        with_adx, without = gen.SQR[key]
        want_sqr = {"asm": k._sqr_adx, "i128": k._sqr_i128, "mul": getattr(k, "_sqr_mul", None)}
        assert k.sqr is want_sqr[with_adx if asm else without], name
    assert not intrinsics.ASM_BASE_FIELD or intrinsics.HAVE_ADX
    assert intrinsics.ASM_BASE_FIELD == intrinsics.asm_wins_for_base_field(intrinsics.CPU_NAME, intrinsics.HAVE_ADX)
    assert intrinsics.adx_in("+sse2,+adx,+bmi2,-avx512f", "x86_64")
    assert not intrinsics.adx_in("+bmi2,-adx", "x86_64") and not intrinsics.adx_in("+adx", "x86_64")
    assert not intrinsics.adx_in("+adx,+bmi2", "aarch64")


def test_asm_paths_run_where_the_cpu_has_them():
    """On a BMI2+ADX CPU the asm kernels are not skipped: they run here and agree with the fallback."""
    if not intrinsics.HAVE_ADX:
        pytest.skip("CPU lacks BMI2/ADX: only the i128 paths exist here")
    for k, f in FIELDS.values():
        x, y = _limbs(f.modulus - 1, f), _limbs(f.r2, f)
        assert k._mul_adx(x, y) == k._mul_i128(x, y) and k._sqr_adx(x) == k._sqr_i128(x)


def _load_generator():
    """The generator's per-field choices (scripts/cuzk_codegen/field.py: ASM_MUL, SQR)."""
    import importlib
    import sys
    from pathlib import Path

    scripts = str(Path(__file__).resolve().parent.parent / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    return importlib.import_module("cuzk_codegen.field")


def _run_asm_text(text, regs, mem):
    """Execute the generated AT&T text in Python (the instructions mont_asm emits), with CF/OF.

    ``regs`` maps operand numbers to ints (pointer operands to a base name in ``mem``); ``mem``
    maps base names to lists of 64-bit words. Raises if an add into a limb would need a carry
    flag that is never consumed at the end of the block (a lost carry)."""
    regs, st = dict(regs), {"rdx": 0, "CF": 0, "OF": 0}

    def addr(op):
        off, base = op.split("(")
        return regs[int(base.rstrip(")")[1:])], (int(off) if off else 0) // 8

    def get(op):
        if op == "%rdx":
            return st["rdx"]
        if op.startswith("$$"):
            return int(op[2:])
        if "(" in op:
            base, k = addr(op)
            return mem[base][k]
        return regs[int(op[1:])]

    def put(op, v):
        if op == "%rdx":
            st["rdx"] = v
        elif "(" in op:
            base, k = addr(op)
            mem[base][k] = v
        else:
            regs[int(op[1:])] = v

    for line in text.splitlines():
        ins, args = line.split(" ", 1)
        ops = [o.strip() for o in args.split(",")]
        if ins == "mulxq":
            prod = get(ops[0]) * st["rdx"]
            put(ops[1], prod & MASK)
            put(ops[2], prod >> 64)
        elif ins == "movq":
            put(ops[1], get(ops[0]))
        elif ins == "xorq":
            put(ops[1], 0)
            st["CF"] = st["OF"] = 0
        elif ins == "imulq":
            put(ops[1], get(ops[0]) * get(ops[1]) & MASK)
        else:
            flag = {"addq": "CF", "adcq": "CF", "adcxq": "CF", "adoxq": "OF"}[ins]
            v = get(ops[0]) + get(ops[1]) + (0 if ins == "addq" else st[flag])
            put(ops[1], v & MASK)
            st[flag] = v >> 64
            if ins in ("addq", "adcq"):
                st["OF"] = None  # add/adc leave OF meaningless for an unsigned chain
    assert st["CF"] == 0 and st["OF"] in (0, None), "carry out of the top limb"
    return regs


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_asm_text_in_python(name):
    """The generated asm, executed instruction by instruction in Python, gives (ab + Mp)/R < 2p
    exactly (no lost carry) on edge values, all-ones limbs and subtraction cases; this checks
    the carry handling on any machine, ADX or not."""
    from cuzk.field import mont_asm

    _, f = FIELDS[name]
    n, p, R = f.limbs, f.modulus, 2 ** (64 * f.limbs)
    consts = [(p >> (64 * k)) & MASK for k in range(n)] + [f.inv]
    in_regs = mont_asm.a_fits_in_registers(n)
    mul_text, mul_order = mont_asm.mont_asm_text(n, in_regs)
    sqr_text, sqr_order = mont_asm.mont_sqr_asm_text(n)
    edges = _edges(f)
    cases = [(x, y) for x in edges for y in edges] + _subtraction_cases(f, 40)
    for x, y in cases:
        xs, ys = ([(v >> (64 * k)) & MASK for k in range(n)] for v in (x, y))
        mont = (x * y + (x * y * (R - pow(p, -1, R)) % R) * p) // R
        if in_regs:
            regs = {n + 3 + k: xs[k] for k in range(n)} | {2 * n + 3: "b", 2 * n + 4: "k"}
        else:
            regs = {n + 3: "a", n + 4: "b", n + 5: "k"}
        out = _run_asm_text(mul_text, regs, {"a": list(xs), "b": list(ys), "k": list(consts)})
        assert sum(out[o] << (64 * k) for k, o in enumerate(mul_order)) == mont < 2 * p
        sq = (x * x + (x * x * (R - pow(p, -1, R)) % R) * p) // R
        out = _run_asm_text(sqr_text, {n + 3: "a", n + 4: "k"}, {"a": xs + [0] * (2 * n), "k": list(consts)})
        assert sum(out[o] << (64 * k) for k, o in enumerate(sqr_order)) == sq < 2 * p


def test_asm_blocks_clobber_the_flags():
    """Every asm block tells LLVM it clobbers EFLAGS as "~{flags}" (what clang emits): LLVM
    ignores GCC's "~{cc}", and then kept a borrow in CF across an asm block (a wrong Fq2
    product on BN254 when its lazy pieces were asm blocks: commit 3b6d785, since removed)."""
    if not intrinsics.HAVE_ADX:
        pytest.skip("CPU lacks BMI2/ADX")
    mul = fq_bn254._mul_adx

    @njit
    def f(a, b):
        return mul(a, b)

    x = _limbs(3, FQ_BN254)
    f(x, x)
    llvm_ir = f.inspect_llvm(f.signatures[0])
    assert "~{flags}" in llvm_ir and "~{cc}" not in llvm_ir
