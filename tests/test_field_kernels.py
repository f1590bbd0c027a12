"""In-JIT contract of cuzk.field.fr / fq (scalar kernels) and the limb intrinsics."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from cuzk.field import FQ, FR, fq, fr
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


FR_EDGES = [0, 1, 2, FR.modulus - 1, FR.modulus - 2, (FR.modulus - 1) // 2, FR.r, 2**64 - 1, 2**192, 2**254]
FR_ELEM = st.one_of(st.integers(0, FR.modulus - 1), st.sampled_from(FR_EDGES))
FR_MULS = {"i128": fr._mul_i128, "adx": fr._mul_adx}


def _limbs(x):
    return tuple(np.uint64((x >> (64 * k)) & MASK) for k in range(4))


@pytest.mark.parametrize("impl", sorted(FR_MULS))
@given(a=FR_ELEM, b=FR_ELEM)
def test_fr_mul_implementations(impl, a, b):
    """Both 4-limb products (inline asm and the i128 fallback) give a*b/R mod p, fully reduced."""
    if impl == "adx" and not intrinsics.HAVE_ADX:
        pytest.skip("CPU lacks BMI2/ADX")
    r = canon(FR_MULS[impl](_limbs(a), _limbs(b)))
    assert r == a * b * pow(FR.r, -1, FR.modulus) % FR.modulus


@pytest.mark.parametrize("impl", sorted(FR_MULS))
def test_fr_mul_implementations_bulk(impl):
    """Thousands of products inside one kernel, incl. results that need the final subtraction."""
    if impl == "adx" and not intrinsics.HAVE_ADX:
        pytest.skip("CPU lacks BMI2/ADX")
    from cuzk.field import Fr

    rng = np.random.default_rng(7)
    a, b = Fr.random(3000, rng), Fr.random(3000, rng)
    a[:len(FR_EDGES)] = [_limbs(x) for x in FR_EDGES]
    b[-len(FR_EDGES):] = [_limbs(x) for x in FR_EDGES]
    out, sq = _vmul_with(FR_MULS[impl], a, b)
    p, rinv = FR.modulus, pow(FR.r, -1, FR.modulus)
    for x, y, z, s in zip(a, b, out, sq):
        assert canon(z) == canon(x) * canon(y) * rinv % p
        assert canon(s) == canon(x) ** 2 * rinv % p


def _vmul_with(mul, a, b):
    # mul(x, x) gets one SSA value for both operands: an earlier asm version that took b0 in
    # a fixed register let LLVM put a0 there too and squared wrongly, while a*b was right.
    @njit
    def run(a, b):
        out, sq = np.empty_like(a), np.empty_like(a)
        for i in range(a.shape[0]):
            x = fr.load(a, i)
            fr.store(out, i, mul(x, fr.load(b, i)))
            fr.store(sq, i, mul(x, x))
        return out, sq

    return run(a, b)


def test_fr_mul_dispatch_follows_cpu_features():
    assert fr.mul is (fr._mul_adx if intrinsics.HAVE_ADX else fr._mul_i128)
    assert intrinsics.adx_in("+sse2,+adx,+bmi2,-avx512f", "x86_64")
    assert not intrinsics.adx_in("+bmi2,-adx", "x86_64") and not intrinsics.adx_in("+adx", "x86_64")
    assert not intrinsics.adx_in("+adx,+bmi2", "aarch64")
