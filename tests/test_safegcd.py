"""Modular inversion by divsteps (``cuzk.field.safegcd``) against Python's ``pow(x, -1, m)``, on
every curve's two fields (as their generated ``inv`` uses it) and on odd moduli of any size."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from cuzk.curves import BLS12_377, BLS12_381, BN254
from cuzk.curves.bls12_381 import fq
from cuzk.field import safegcd

FIELDS = {f"{c.name}.{f}": getattr(c, f).modulus for c in (BLS12_381, BN254, BLS12_377) for f in ("fq", "fr")}


def _limbs(v: int, n: int) -> np.ndarray:
    return np.array([(v >> (64 * i)) & (2**64 - 1) for i in range(n)], np.uint64)


def _inverse(v: int, m: int) -> int:
    n = (m.bit_length() + 63) // 64
    x = _limbs(v, n)
    safegcd.invert(x, *safegcd.modulus_limbs30(m))
    return sum(int(w) << (64 * i) for i, w in enumerate(x))


@pytest.mark.parametrize("name", sorted(FIELDS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_inverse_of_every_field_element(name, data):
    m = FIELDS[name]
    v = data.draw(st.one_of(st.integers(1, m - 1), st.sampled_from([1, 2, m - 1, m - 2, (m + 1) // 2])))
    assert _inverse(v, m) == pow(v, -1, m)


@settings(max_examples=80, deadline=None)
@given(st.integers(3, 2**500).map(lambda m: m | 1), st.integers(1, 2**500))
def test_any_odd_modulus(m, v):
    v %= m
    if v and math.gcd(v, m) == 1:  # an inverse exists
        assert _inverse(v, m) == pow(v, -1, m)


def test_zero_stays_zero_and_even_moduli_are_refused():
    assert _inverse(0, FIELDS["bls12_381.fq"]) == 0
    with pytest.raises(ValueError, match="odd modulus"):
        safegcd.modulus_limbs30(2**255)


@njit
def _times_inverse_is_one(a):
    x = fq.load(a, 0)
    return fq.eq(fq.mul(x, fq.inv(x)), fq.one()), fq.is_zero(fq.inv(fq.zero()))


def test_the_generated_inv_in_montgomery_form():
    rng = np.random.default_rng(3)
    for _ in range(20):
        v = int(rng.integers(1, 2**63)) << 200 | int(rng.integers(1, 2**63))
        a = _limbs(v * (2**384) % FIELDS["bls12_381.fq"], 6)[None]
        assert _times_inverse_is_one(a) == (True, True)
