"""In-JIT contract of cuzk.field.fr / fq (scalar kernels) and the limb intrinsics."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from cuzk.field import FQ, FR, fq, fr
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
