"""Fq6 / Fq12 kernels against a schoolbook Python-int tower written here (the oracle).

The oracle multiplies coefficient lists naively and reduces with v^3 = xi, w^2 = v; the kernels
use Karatsuba, Chung-Hasan squaring, sparse products and Granger-Scott cyclotomic squaring, so
agreement checks the algorithms, not a copy of them.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numba import njit

from cuzk.errors import FieldValueError
from cuzk.curves.bls12_381 import fq6, fq12
from cuzk.field import FQ

P = FQ.modulus


# ---------------------------------------------------------------- oracle: Python ints
def f2mul(a, b):
    return ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)


def f2add(a, b):
    return ((a[0] + b[0]) % P, (a[1] + b[1]) % P)


def f2inv(a):
    n = pow(a[0] * a[0] + a[1] * a[1], -1, P)
    return (a[0] * n % P, -a[1] * n % P)


XI = (1, 1)
Z2, O2 = (0, 0), (1, 0)


def f6mul(a, b):
    c = [Z2] * 5
    for i in range(3):
        for j in range(3):
            c[i + j] = f2add(c[i + j], f2mul(a[i], b[j]))
    return (f2add(c[0], f2mul(XI, c[3])), f2add(c[1], f2mul(XI, c[4])), c[2])


def f6add(a, b):
    return tuple(f2add(x, y) for x, y in zip(a, b))


def f6neg(a):
    return tuple(((-x[0]) % P, (-x[1]) % P) for x in a)


def f6v(a):  # a * v
    return (f2mul(XI, a[2]), a[0], a[1])


def f12mul(a, b):
    return (f6add(f6mul(a[0], b[0]), f6v(f6mul(a[1], b[1]))), f6add(f6mul(a[0], b[1]), f6mul(a[1], b[0])))


O6, Z6 = (O2, Z2, Z2), (Z2, Z2, Z2)
O12 = (O6, Z6)


def pow_ref(a, e, mul, one):
    r = one
    for bit in bin(e)[2:]:
        r = mul(r, r)
        if bit == "1":
            r = mul(r, a)
    return r


def f12inv_ref(a):
    return pow_ref(a, P**12 - 2, f12mul, O12)  # Fermat in the field of order p^12: slow, use once


def f12_conj(a):
    return (a[0], f6neg(a[1]))


# ---------------------------------------------------------------- kernel wrappers (array in/out)
@njit(cache=True)
def _k12(op, a, b, k):
    x, y = fq12.load_one(a), fq12.load_one(b)
    if op == 0:
        r = fq12.mul(x, y)
    elif op == 1:
        r = fq12.sqr(x)
    elif op == 2:
        r = fq12.inv(x)
    elif op == 3:
        r = fq12.add(x, y)
    elif op == 4:
        r = fq12.sub(x, y)
    elif op == 5:
        r = fq12.neg(x)
    elif op == 6:
        r = fq12.frobenius_map(x, k)
    elif op == 7:
        r = fq12.conj(x)
    elif op == 8:
        r = fq12.cyclotomic_sqr(x)
    else:
        r = fq12.mul_by_014(x, y[0][0], y[0][1], y[1][1])
    return fq12.store_one(r)


@njit(cache=True)
def _k6(op, a, b, k):
    x, y = fq6.load(a, 0), fq6.load(b, 0)
    if op == 0:
        r = fq6.mul(x, y)
    elif op == 1:
        r = fq6.sqr(x)
    elif op == 2:
        r = fq6.inv(x)
    elif op == 3:
        r = fq6.frobenius_map(x, k)
    elif op == 4:
        r = fq6.mul_by_01(x, y[0], y[1])
    elif op == 5:
        r = fq6.mul_by_1(x, y[1])
    else:
        r = fq6.mul_by_nonresidue(x)
    out = np.empty((1, 3, 2, 6), dtype=np.uint64)
    fq6.store(out, 0, r)
    return out


@njit(cache=True)
def _kpow(a, e, cyclotomic):
    x = fq12.load_one(a)
    return fq12.store_one(fq12.cyclotomic_exp(x, e) if cyclotomic else fq12.pow_(x, e))


@njit(cache=True)
def _kpred(a, b):
    x, y = fq12.load_one(a), fq12.load_one(b)
    return fq12.is_zero(x), fq12.is_one(x), fq12.eq(x, y)


@njit(cache=True)
def _kconst():
    return fq12.store_one(fq12.one()), fq12.store_one(fq12.zero())


def k12(op, a, b=None, k=0):
    A = fq12.from_ints(a)
    B = fq12.from_ints(b if b is not None else a)
    return fq12.to_ints(_k12(op, A, B, k))


def _six_arr(a):
    return fq12.from_ints((a, Z6))[0:1]


def k6(op, a, b=None, k=0):
    r = _k6(op, _six_arr(a), _six_arr(b if b is not None else a), k)
    return fq12.to_ints(np.concatenate([r, np.zeros_like(r)]))[0]


def limbs(e):
    return np.array([(e >> (64 * i)) & (2**64 - 1) for i in range(max(1, -(-e.bit_length() // 64)))], np.uint64)


fq_el = st.integers(0, P - 1)
fq2_el = st.tuples(fq_el, fq_el)
fq6_el = st.tuples(fq2_el, fq2_el, fq2_el)
fq12_el = st.tuples(fq6_el, fq6_el)


def cyclotomic(a):
    # a^((p^6 - 1)(p^2 + 1)) via the oracle (conj = p^6 power; Frobenius^2 checked separately)
    b = f12mul(f12_conj(a), k12(2, a))
    return f12mul(k12(6, b, k=2), b)


# ---------------------------------------------------------------- Fq6
@given(fq6_el, fq6_el)
def test_fq6_mul_sqr_match_schoolbook(a, b):
    assert k6(0, a, b) == f6mul(a, b)
    assert k6(1, a) == f6mul(a, a)
    assert k6(6, a) == f6v(a)


@given(fq6_el, fq2_el, fq2_el)
def test_fq6_sparse_products(a, b0, b1):
    assert k6(4, a, (b0, b1, Z2)) == f6mul(a, (b0, b1, Z2))
    assert k6(5, a, (Z2, b1, Z2)) == f6mul(a, (Z2, b1, Z2))


@given(fq6_el)
def test_fq6_inverse(a):
    inv = k6(2, a)
    if a == Z6:
        assert inv == Z6
    else:
        assert f6mul(a, inv) == O6


@settings(max_examples=5)
@given(fq6_el)
def test_fq6_frobenius_is_p_power(a):
    ap = pow_ref(a, P, f6mul, O6)
    assert k6(3, a, k=1) == ap
    assert k6(3, a, k=2) == pow_ref(ap, P, f6mul, O6)
    assert k6(3, a, k=6) == a


# ---------------------------------------------------------------- Fq12
@given(fq12_el, fq12_el)
def test_fq12_ring_ops_match_schoolbook(a, b):
    assert k12(0, a, b) == f12mul(a, b)
    assert k12(1, a) == f12mul(a, a)
    s = k12(3, a, b)
    assert k12(4, s, b) == a
    assert k12(3, a, k12(5, a)) == (Z6, Z6)


@given(fq12_el, fq12_el, fq12_el)
def test_fq12_laws(a, b, c):
    assert k12(0, a, b) == k12(0, b, a)
    assert k12(0, k12(0, a, b), c) == k12(0, a, k12(0, b, c))
    assert k12(0, a, k12(3, b, c)) == k12(3, k12(0, a, b), k12(0, a, c))


@given(fq12_el)
def test_fq12_inverse(a):
    assume(a != (Z6, Z6))  # zero is covered by test_fq12_inverse_matches_fermat_and_zero
    inv = k12(2, a)
    assert k12(0, a, inv) == O12
    assert k12(2, inv) == a


def test_fq12_inverse_matches_fermat_and_zero():
    a = ((( 3, 1), (4, 1), (5, 9)), ((2, 6), (5, 3), (5, 8)))
    assert k12(2, a) == f12inv_ref(a)
    assert k12(2, (Z6, Z6)) == (Z6, Z6)


@given(fq12_el, fq2_el, fq2_el, fq2_el)
def test_fq12_mul_by_014_is_sparse_mul(a, c0, c1, c4):
    line = ((c0, c1, Z2), (Z2, c4, Z2))
    assert k12(9, a, line) == f12mul(a, line)


@settings(max_examples=3)
@given(fq12_el)
def test_fq12_frobenius_is_p_power(a):
    ap = pow_ref(a, P, f12mul, O12)
    assert k12(6, a, k=1) == ap
    assert k12(6, a, k=2) == pow_ref(ap, P, f12mul, O12)
    # every k against repeated p-th powers (the map has order 12; k=6 is conjugation)
    x = a
    for k in range(13):
        assert k12(6, a, k=k) == x, k
        x = k12(6, x, k=1)
    assert k12(6, a, k=6) == k12(7, a) == f12_conj(a)


@given(fq12_el)
def test_cyclotomic_square_and_exp(a):
    assume(a != (Z6, Z6))
    c = cyclotomic(a)
    assert k12(8, c) == f12mul(c, c)
    # in the cyclotomic subgroup the conjugate is the inverse
    assert f12mul(c, k12(7, c)) == O12
    e = 0xD201000000010000 * 0x1234567
    want = pow_ref(c, e, f12mul, O12)
    assert fq12.to_ints(_kpow(fq12.from_ints(c), limbs(e), True)) == want
    assert fq12.to_ints(_kpow(fq12.from_ints(c), limbs(e), False)) == want


def test_pow_edge_exponents():
    a = fq12.from_ints(((( 3, 1), (4, 1), (5, 9)), ((2, 6), (5, 3), (5, 8))))
    assert fq12.to_ints(_kpow(a, limbs(0), False)) == O12
    assert np.array_equal(_kpow(a, limbs(1), False), a)
    assert fq12.to_ints(_kpow(a, np.array([2, 0], np.uint64), False)) == f12mul(fq12.to_ints(a), fq12.to_ints(a))


def test_predicates_and_constants():
    one, zero = fq12.from_ints(O12), fq12.from_ints((Z6, Z6))
    assert _kpred(zero, one) == (True, False, False)
    assert _kpred(one, one) == (False, True, True)
    kone, kzero = _kconst()
    assert np.array_equal(kone, one) and np.array_equal(kzero, zero)


def test_frobenius_coefficients_are_derived():
    # w^(p^k) = w * xi^((p^k - 1)/6), checked on the oracle for k = 1
    w = (Z6, O6)
    assert pow_ref(w, P, f12mul, O12) == (Z6, (fq6.frobenius_coefficient(P - 1, 6), Z2, Z2))
    with pytest.raises(ValueError):
        fq6.frobenius_coefficient(P, 6)


@pytest.mark.parametrize("curve", ["bls12_381", "bn254", "bls12_377"])
def test_frobenius_tables_are_the_powers_of_xi(curve):
    """FROB_V1/V2 (Fq6) and FROB_W (Fq12), built by fq2_ints.frobenius_powers from one power of
    xi, equal xi^((p^k - 1)/3), xi^(2(p^k - 1)/3) and xi^((p^k - 1)/6) computed one by one."""
    from cuzk import curves

    bundle = curves.get(curve)
    m6, m12 = bundle.module("fq6"), bundle.module("fq12")
    p = m6._P
    for k in range(6):
        assert m6.FROB_V1[k] == m6.fq2_to_limbs(m6.frobenius_coefficient(p**k - 1, 3)), k
        assert m6.FROB_V2[k] == m6.fq2_to_limbs(m6.frobenius_coefficient(2 * (p**k - 1), 3)), k
    for k in range(12):
        assert m12.FROB_W[k] == m6.fq2_to_limbs(m6.frobenius_coefficient(p**k - 1, 6)), k


def test_int_conversion_edges():
    a = ((( 1, 2), (3, 4), (5, 6)), ((7, 8), (9, 10), (11, P - 1)))
    arr = fq12.from_ints(a)
    assert arr.shape == (2, 3, 2, 6) and arr.dtype == np.uint64
    assert fq12.to_ints(arr) == a
    with pytest.raises(FieldValueError):
        fq12.from_ints(((( 1, 2), (3, 4), (5, 6)), ((7, 8), (9, 10), (11, P))))
    with pytest.raises(FieldValueError):
        fq12.from_ints(((1, 2), (3, 4)))
    with pytest.raises(FieldValueError):
        fq12.to_ints(np.zeros((2, 3, 2, 6), np.int64))
    with pytest.raises(FieldValueError):
        fq12.to_ints(np.zeros((3, 2, 6), np.uint64))
