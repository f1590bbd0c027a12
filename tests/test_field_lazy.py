"""Lazy-reduction kernels of the generated Fq modules (mul_wide, redc_wide, sub_wide,
sub_wide_mod, add_nr) and the Fq2 product built on them, against Python ints, for every curve
whose Fq2 uses them (u^2 = -1: BLS12-381 and BN254). Edge values include 0, 1, p - 1 and
operands that make a0 b0 - a1 b1 negative or a0 b1 + a1 b0 close to its 2p^2 bound."""

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

MASK = 2**64 - 1
CURVES = {"bls12_381": "cuzk.curves.bls12_381", "bn254": "cuzk.curves.bn254"}


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
    R = 2 ** (64 * n)  # redc_wide's contract is T < p R (f.r is R mod p, a smaller bound)
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
