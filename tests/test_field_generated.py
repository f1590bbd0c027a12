"""The derived field constants are right (freshness of every generated file: tests/test_generated.py)."""

import pytest

from cuzk.curves import BN254
from cuzk.field import FQ, FR
from cuzk.field.params import FieldParams


@pytest.mark.parametrize("f", [FR, FQ, BN254.fr, BN254.fq], ids=["fr", "fq", "bn254-fr", "bn254-fq"])
def test_derived_constants(f: FieldParams):
    p = f.modulus
    assert f.limbs == {FR.modulus: 4, FQ.modulus: 6}.get(p, 4)
    assert f.r == 2 ** (64 * f.limbs) % p
    assert f.r2 == f.r * f.r % p and f.r3 == f.r * f.r2 % p
    assert (p * f.inv) % 2**64 == 2**64 - 1  # inv = -p^-1 mod 2^64
    assert (p >> (64 * (f.limbs - 1))) < 2**63 - 1  # no-carry CIOS precondition
    assert f.odd_part % 2 == 1 and f.odd_part << f.two_adicity == p - 1
    w = f.root_of_unity
    assert pow(w, 2**f.two_adicity, p) == 1 and pow(w, 2 ** (f.two_adicity - 1), p) == p - 1
    assert pow(f.generator, (p - 1) // 2, p) == p - 1


def test_fr_root_of_unity_order_is_exactly_2_pow_32():
    assert FR.two_adicity == 32
    w = FR.root_of_unity
    assert pow(w, 2**32, FR.modulus) == 1 and pow(w, 2**31, FR.modulus) != 1
    assert FQ.modulus % 4 == 3  # Fq sqrt is one exponentiation
