"""Lazy-reduction kernels of the generated Fq modules (mul_wide, redc_wide, sub_wide,
sub_wide_mod, add_nr) and the Fq2 product built on them, against Python ints, for every curve
whose Fq2 uses them (u^2 = -1: BLS12-381 and BN254). Edge values include 0, 1, p - 1 and
operands that make a0 b0 - a1 b1 negative or a0 b1 + a1 b0 close to its 2p^2 bound. mul_wide
and redc_wide are checked in each form: inline asm (cuzk.field.mont_asm), i128 IR, and the one
fq2.mul dispatches to on this CPU."""

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from cuzk.field import intrinsics

MASK = 2**64 - 1
CURVES = {"bls12_381": "cuzk.field", "bn254": "cuzk.curves.bn254"}


def _mods(curve):
    pkg = importlib.import_module(CURVES[curve])
    fq = importlib.import_module(pkg.__name__ + ".fq")
    fq2 = importlib.import_module(pkg.__name__ + ".fq2")
    return fq, fq2, fq._F


def _limbs(x, n):
    return tuple(np.uint64((x >> (64 * k)) & MASK) for k in range(n))


def _int(t):
    return sum(int(v) << (64 * k) for k, v in enumerate(t))


_JIT = {}


def _kernels(curve):
    """(wide_ops, fq2_mul_all) compiled against the curve's modules (modules cannot be arguments)."""
    if curve not in _JIT:
        fq, fq2, _ = _mods(curve)

        @njit
        def wide_ops(a, b, x, y):
            return fq.mul_wide(a, b), fq.redc_wide(x), fq.sub_wide_mod(x, y), fq.sub_wide(x, y), fq.add_nr(a, b)

        @njit
        def fq2_mul_all(a, b, out):
            for i in range(a.shape[0]):
                fq2.store(out, i, fq2.mul(fq2.load(a, i), fq2.load(b, i)))

        _JIT[curve] = wide_ops, fq2_mul_all
    return _JIT[curve]


def _edges(p):
    return [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, 2**64 - 1, 2**64, p - 2**64]


@pytest.mark.parametrize("curve", sorted(CURVES))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_wide_kernels(curve, data):
    _, _, f = _mods(curve)
    wide_ops = _kernels(curve)[0]
    p, n = f.modulus, f.limbs
    elem = st.one_of(st.integers(0, p - 1), st.sampled_from(_edges(p)))
    a, b = data.draw(elem), data.draw(elem)
    # redc_wide accepts any T < p R; sub_wide_mod any x, y < p^2
    big = st.one_of(st.integers(0, p * p - 1), st.sampled_from([0, 1, p * p - 1, p * p - p, (p - 1) ** 2]))
    x, y = data.draw(big), data.draw(big)
    R = 2 ** (64 * n)  # f.r is R mod p
    t = data.draw(st.one_of(st.integers(0, p * R - 1), st.sampled_from([0, p * R - 1, 2 * (p - 1) ** 2, x])))
    prod, red, dmod, dw, s = wide_ops(_limbs(a, n), _limbs(b, n), _limbs(t, 2 * n), _limbs(y, 2 * n))
    assert _int(prod) == a * b
    rinv = pow(f.r, -1, p)
    assert _int(red) == t * rinv % p  # fully reduced
    _, _, dmod, dw, _ = wide_ops(_limbs(a, n), _limbs(b, n), _limbs(x, 2 * n), _limbs(y, 2 * n))
    assert _int(dmod) == (x - y if x >= y else x - y + p * p)
    assert _int(dw) == (x - y) % (1 << (128 * n))
    assert _int(s) == a + b


@pytest.mark.parametrize("curve", sorted(CURVES))
def test_fq2_mul_lazy_bulk(curve):
    """fq2.mul (lazy reduction) = (a0 b0 - a1 b1, a0 b1 + a1 b0) mod p, fully reduced, on every
    pair of edge elements and 2,000 random pairs."""
    _, fq2, f = _mods(curve)
    p, n, r = f.modulus, f.limbs, f.r
    assert fq2.mul.__doc__.startswith("a * b by Karatsuba with lazy reduction")
    edges = [(x, y) for x in _edges(p) for y in (0, 1, p - 1)]
    rng = np.random.default_rng(11)
    rand = [tuple(int.from_bytes(rng.bytes(8 * n), "little") % p for _ in range(2)) for _ in range(2000)]
    pairs = [(u, v) for u in edges for v in edges] + list(zip(rand[::2], rand[1::2]))
    enc = lambda e: [_limbs(c * r % p, n) for c in e]  # noqa: E731
    a = np.array([enc(u) for u, _ in pairs], np.uint64)
    b = np.array([enc(v) for _, v in pairs], np.uint64)
    out = np.empty_like(a)
    _kernels(curve)[1](a, b, out)
    rinv = pow(r, -1, p)
    for (u, v), got in zip(pairs, out):
        want = ((u[0] * v[0] - u[1] * v[1]) % p, (u[0] * v[1] + u[1] * v[0]) % p)
        raw = (_int(got[0]), _int(got[1]))
        assert raw[0] < p and raw[1] < p
        assert (raw[0] * rinv % p, raw[1] * rinv % p) == want, (u, v)


# --- the pieces one by one: inline asm (mulx/adcx/adox), the i128 IR forms, what fq2.mul uses ---

IMPLS = [(c, impl) for c in sorted(CURVES) for impl in ("adx", "i128", "dispatched")]
_PIECES = {}


def _pieces(curve, impl):
    """(mul_wide, redc_wide, one, run_bulk) of one implementation: ``one(a, b, t)`` is
    (mul_wide(a, b), redc_wide(t)) callable from Python, ``run_bulk`` maps arrays in one kernel."""
    fq = _mods(curve)[0]
    if impl == "adx" and not intrinsics.HAVE_ADX:
        pytest.skip("CPU lacks BMI2/ADX")
    if (curve, impl) not in _PIECES:
        mw, rw = {"adx": (fq._mul_wide_adx, fq._redc_wide_adx), "i128": (fq._mul_wide_i128, fq._redc_wide_i128),
                  "dispatched": (fq.mul_wide, fq.redc_wide)}[impl]
        n = fq.L

        @njit
        def one(a, b, t):  # intrinsics are callable from Numba code only
            return mw(a, b), rw(t)

        @njit
        def run_bulk(a, b, t, prod, red):  # t: (n, 2L) limbs of the values to reduce, as (2n, L) rows
            t = t.reshape(2 * t.shape[0], n)
            for i in range(a.shape[0]):
                x = fq.load(a, i)
                v = mw(x, fq.load(b, i))
                s = mw(x, x)  # one SSA value for both operands (the asm copies each to its own slot)
                for k in range(2 * n):
                    prod[i, k] = v[k]
                    prod[i, 2 * n + k] = s[k]
                fq.store(red, i, rw(fq.load(t, 2 * i) + fq.load(t, 2 * i + 1)))

        _PIECES[curve, impl] = mw, rw, one, run_bulk
    return _PIECES[curve, impl]


def _operand_edges(p, n):
    """mul_wide takes any L-limb operands (the Fq2 product passes add_nr sums < 2p)."""
    top = 2 ** (64 * n) - 1
    return _edges(p) + [p, 2 * p - 1, top, top - 2**64 + 1, 2 ** (64 * n - 64), 2 ** (64 * n - 1) - 1]


def _redc_edges(p, n):
    """T < p R (R = 2^(64L)): both ends, Fq2 product sums near 2p^2, a high half of p - 1 with a
    zero or full low half."""
    R = 2 ** (64 * n)
    return [0, 1, p * R - 1, (p - 1) ** 2, 2 * (p - 1) ** 2, p * p - p, (p - 1) * R, (p - 1) * R + R - 1, R - 1, p]


def _needs_final_subtraction(p, n, t):
    """True when the reduction's sum (T_low + M p) / R + T_high lands in [p, 2p)."""
    R = 2 ** (64 * n)
    lo, hi = t % R, t // R
    m = lo * (R - pow(p, -1, R)) % R
    return (lo + m * p) // R + hi >= p


@pytest.mark.parametrize("curve,impl", IMPLS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_wide_pieces(curve, impl, data):
    """mul_wide = a * b exactly for any L-limb a, b; redc_wide = T / R mod p, fully reduced, for T < p R."""
    _, _, f = _mods(curve)
    p, n = f.modulus, f.limbs
    one = _pieces(curve, impl)[2]
    wide = st.one_of(st.integers(0, 2 ** (64 * n) - 1), st.sampled_from(_operand_edges(p, n)))
    a, b = data.draw(wide), data.draw(wide)
    t = data.draw(st.one_of(st.integers(0, p * 2 ** (64 * n) - 1), st.sampled_from(_redc_edges(p, n))))
    prod, red = one(_limbs(a, n), _limbs(b, n), _limbs(t, 2 * n))
    assert _int(prod) == a * b
    assert _int(red) == t * pow(f.r, -1, p) % p


@pytest.mark.parametrize("curve,impl", IMPLS)
def test_wide_pieces_bulk(curve, impl):
    """Inside one kernel: every pair of operand edges, 2,000 random pairs, squares, and
    reductions of edge values, random T < p R and T whose reduction ends with the subtraction."""
    _, _, f = _mods(curve)
    p, n, r = f.modulus, f.limbs, f.r
    run_bulk = _pieces(curve, impl)[3]
    rng = np.random.default_rng(23)
    rand = lambda bound: int.from_bytes(rng.bytes(16 * n), "little") % bound  # noqa: E731
    edges = _operand_edges(p, n)
    pairs = [(x, y) for x in edges for y in edges] + [(rand(2 * p), rand(2 * p)) for _ in range(2000)]
    ts = _redc_edges(p, n) + [rand(p * 2 ** (64 * n)) for _ in range(len(pairs) - len(_redc_edges(p, n)))]
    a = np.array([_limbs(x, n) for x, _ in pairs], np.uint64)
    b = np.array([_limbs(y, n) for _, y in pairs], np.uint64)
    t = np.array([_limbs(v, 2 * n) for v in ts], np.uint64)
    prod, red = np.empty((len(pairs), 4 * n), np.uint64), np.empty_like(a)
    run_bulk(a, b, t, prod, red)
    rinv = pow(r, -1, p)
    for (x, y), v, z, u in zip(pairs, prod, red, ts):
        assert _int(v[: 2 * n]) == x * y and _int(v[2 * n:]) == x * x, (x, y)
        assert _int(z) == u * rinv % p, u
    assert sum(_needs_final_subtraction(p, n, u) for u in ts) > len(ts) // 4  # the subtraction branch ran


@pytest.mark.parametrize("curve", sorted(CURVES))
def test_fq2_formula_on_asm_pieces(curve):
    """The Fq2 product's formula on the asm pieces, wherever the CPU has BMI2/ADX (fq2.mul itself
    takes them on Zen only). Regression: with the GCC flags clobber "~{cc}", which LLVM ignores,
    sub_wide_mod's borrow was kept in CF across the next asm block and half the products were
    wrong on BN254 (mont_asm.call_asm now clobbers "~{flags}")."""
    if not intrinsics.HAVE_ADX:
        pytest.skip("CPU lacks BMI2/ADX")
    fq, fq2, f = _mods(curve)
    p, n, r = f.modulus, f.limbs, f.r
    mw, rw = fq._mul_wide_adx, fq._redc_wide_adx

    @njit
    def mul_all(a, b, out):
        for i in range(a.shape[0]):
            x, y = fq2.load(a, i), fq2.load(b, i)
            v0, v1 = mw(x[0], y[0]), mw(x[1], y[1])
            s = mw(fq.add_nr(x[0], x[1]), fq.add_nr(y[0], y[1]))
            fq2.store(out, i, (rw(fq.sub_wide_mod(v0, v1)), rw(fq.sub_wide(fq.sub_wide(s, v0), v1))))

    rng = np.random.default_rng(29)
    vals = [tuple(int.from_bytes(rng.bytes(8 * n), "little") % p for _ in range(2)) for _ in range(1000)]
    vals += [(x, y) for x in _edges(p) for y in (0, 1, p - 1)]
    pairs = list(zip(vals[::2], vals[1::2]))
    a = np.array([[_limbs(c, n) for c in u] for u, _ in pairs], np.uint64)
    b = np.array([[_limbs(c, n) for c in v] for _, v in pairs], np.uint64)
    out = np.empty_like(a)
    mul_all(a, b, out)
    rinv = pow(r, -1, p)
    for (u, v), got in zip(pairs, out):
        want = ((u[0] * v[0] - u[1] * v[1]) * rinv % p, (u[0] * v[1] + u[1] * v[0]) * rinv % p)
        assert (_int(got[0]), _int(got[1])) == want, (u, v)


def test_wide_dispatch_follows_cpu_and_generator():
    """mul_wide / redc_wide are the asm blocks exactly where the generator's WIDE flag holds."""
    from test_field_kernels import _load_generator

    gen = _load_generator()
    for curve in CURVES:
        fq, _, f = _mods(curve)
        flags = gen.WIDE[f.name, f.limbs]
        for piece in ("mul_wide", "redc_wide"):
            asm = flags[piece] is not None and getattr(intrinsics, flags[piece])
            assert getattr(fq, piece) is getattr(fq, f"_{piece}_adx" if asm else f"_{piece}_i128"), (curve, piece)


@pytest.mark.parametrize("curve", sorted(CURVES))
def test_wide_asm_text_in_python(curve):
    """The generated asm texts, executed instruction by instruction in Python (with CF/OF and a
    check that no carry leaves the top limb): the product is a*b exactly, in b's slot and the
    output registers; the reduction's sum is (T_low + M p)/R + T_high < 2p. Any machine."""
    from test_field_kernels import _run_asm_text

    from cuzk.field import mont_asm

    _, _, f = _mods(curve)
    p, n, R = f.modulus, f.limbs, 2 ** (64 * f.limbs)
    consts = [(p >> (64 * k)) & MASK for k in range(n)] + [f.inv]
    words = lambda v, k: [(v >> (64 * j)) & MASK for j in range(k)]  # noqa: E731
    mul_text, mul_order = mont_asm.mul_wide_asm_text(n)
    edges = _operand_edges(p, n)
    for x, y in [(x, y) for x in edges for y in edges]:
        mem = {"a": words(x, n), "b": words(y, n)}
        out = _run_asm_text(mul_text, {n + 3: "a", n + 4: "b"}, mem)
        low = sum(w << (64 * k) for k, w in enumerate(mem["b"]))
        assert low + (sum(out[o] << (64 * k) for k, o in enumerate(mul_order)) << (64 * n)) == x * y
    redc_text, redc_order = mont_asm.redc_asm_text(n)
    rng = np.random.default_rng(31)
    for t in _redc_edges(p, n) + [int.from_bytes(rng.bytes(16 * n), "little") % (p * R) for _ in range(200)]:
        out = _run_asm_text(redc_text, {n + 3: "t", n + 4: "k"}, {"t": words(t, 2 * n), "k": list(consts)})
        lo, hi = t % R, t // R
        want = (lo + (lo * (R - pow(p, -1, R)) % R) * p) // R + hi
        assert sum(out[o] << (64 * k) for k, o in enumerate(redc_order)) == want < 2 * p
