"""Fq2 kernels against a tiny pure-Python Fq2 (u^2 = -1) on Python ints."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuzk.field import FQ
from cuzk.curves.bls12_381 import fq2

P = FQ.modulus
R = FQ.r
R_INV = pow(R, -1, P)
MASK = 2**64 - 1


# -- reference Fq2 on Python ints: pairs (c0, c1) ----------------------------------------
def rmul(a, b):
    return ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)


def rinv(a):
    n = (a[0] * a[0] + a[1] * a[1]) % P
    t = pow(n, -1, P) if n else 0
    return (a[0] * t % P, -a[1] * t % P)


def rpow(a, e):
    r = (1, 0)
    for bit in bin(e)[2:]:
        r = rmul(r, r)
        if bit == "1":
            r = rmul(r, a)
    return r


def ris_square(a):
    # a is a square in Fq2 iff its norm is a square in Fq (p = 3 mod 4).
    n = (a[0] * a[0] + a[1] * a[1]) % P
    return n == 0 or pow(n, (P - 1) // 2, P) == 1


# -- kernel <-> int conversions ------------------------------------------------------------
def enc1(x):
    x = x * R % P
    return tuple(np.uint64((x >> (64 * k)) & MASK) for k in range(6))


def dec1(t):
    return sum(int(v) << (64 * k) for k, v in enumerate(t)) * R_INV % P


def enc(a):
    return (enc1(a[0]), enc1(a[1]))


def dec(a):
    return (dec1(a[0]), dec1(a[1]))


EDGES = [0, 1, 2, P - 1, P - 2, 2**64 - 1, 2**64, 2**128 + 1, 2**320 - 1]
fq_el = st.one_of(st.integers(0, P - 1), st.sampled_from(EDGES))
fq2_el = st.tuples(fq_el, fq_el)


@given(a=fq2_el, b=fq2_el)
def test_ring_ops(a, b):
    A, B = enc(a), enc(b)
    assert dec(fq2.add(A, B)) == ((a[0] + b[0]) % P, (a[1] + b[1]) % P)
    assert dec(fq2.sub(A, B)) == ((a[0] - b[0]) % P, (a[1] - b[1]) % P)
    assert dec(fq2.neg(A)) == (-a[0] % P, -a[1] % P)
    assert dec(fq2.dbl(A)) == (2 * a[0] % P, 2 * a[1] % P)
    assert dec(fq2.mul(A, B)) == rmul(a, b)
    assert dec(fq2.sqr(A)) == rmul(a, a)
    assert dec(fq2.mul_by_fq(A, B[0])) == (a[0] * b[0] % P, a[1] * b[0] % P)
    assert dec(fq2.mul_by_nonresidue(A)) == rmul(a, (1, 1))
    assert fq2.eq(A, B) == (a == b)
    assert fq2.is_zero(A) == (a == (0, 0))


@given(a=fq2_el)
def test_inv_conj_frobenius(a):
    A = enc(a)
    assert dec(fq2.inv(A)) == rinv(a)
    if a != (0, 0):
        assert rmul(dec(fq2.inv(A)), a) == (1, 0)
    assert dec(fq2.conj(A)) == (a[0], -a[1] % P)
    assert dec(fq2.frobenius(A)) == rpow(a, P)


@given(a=fq2_el, e=st.integers(0, 2**130))
def test_pow(a, e):
    assert dec(fq2.pow_(enc(a), np.array([(e >> (64 * k)) & MASK for k in range(3)], dtype=np.uint64))) == rpow(a, e)


@given(a=fq2_el)
def test_sqrt(a):
    ok, r = fq2.sqrt(enc(a))
    assert ok == ris_square(a)
    if ok:
        assert rmul(dec(r), dec(r)) == a
    else:
        assert dec(r) == (0, 0)
    sq = rmul(a, a)
    ok, r = fq2.sqrt(enc(sq))
    assert ok and rmul(dec(r), dec(r)) == sq


@pytest.mark.parametrize("a", [(0, 0), (1, 0), (P - 1, 0), (0, 1), (0, P - 1), (2, 0), (5, 0), (0, 5), (3, 4)])
def test_sqrt_edges(a):
    # c1 = 0 takes the Fq-only path: a non-square c0 has the root sqrt(-c0)*u.
    ok, r = fq2.sqrt(enc(a))
    assert ok == ris_square(a) and ok  # every Fq element is a square in Fq2
    assert rmul(dec(r), dec(r)) == a


def test_identities_and_load_store():
    assert dec(fq2.zero()) == (0, 0) and dec(fq2.one()) == (1, 0)
    arr = np.zeros((3, 2, 6), dtype=np.uint64)
    vals = [(5, 7), (P - 1, 2**64), (0, 1)]
    for i, v in enumerate(vals):
        fq2.store(arr, i, enc(v))
    assert [dec(fq2.load(arr, i)) for i in range(3)] == vals
    # (n, 2, 6) layout: [i, 0] is c0 and [i, 1] is c1, each Montgomery little-endian limbs
    assert sum(int(v) << (64 * k) for k, v in enumerate(arr[1, 1])) == 2**64 * R % P
