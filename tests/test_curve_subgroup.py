"""Subgroup checks: the endomorphism tests (G1 φ = −x², G2 ψ = x) agree with r·P = 0, and both
reject points of E(Fq) / E'(Fq2) that lie outside the order-r subgroup."""

import numpy as np
import py_ecc.optimized_bls12_381 as ref
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_ecc.bls.point_compression import modular_squareroot_in_FQ2

from cuzk.curve import G1, G2
from cuzk.curve import G1_PARAMS, G2_PARAMS
from cuzk.field import FQ, FR

P = FQ.modulus


def g1_point_from_x(x):
    """A point of E(Fq) with this x (cofactor not cleared), or None."""
    x %= P
    rhs = (x**3 + 4) % P
    y = pow(rhs, (P + 1) // 4, P)
    return (x, y) if y * y % P == rhs else None


def g2_point_from_x(x0, x1):
    x0, x1 = x0 % P, x1 % P
    x = ref.FQ2([x0, x1])
    y = modular_squareroot_in_FQ2(x**3 + ref.b2)
    return ((x0, x1), tuple(y.coeffs)) if y is not None else None


def _first_points(make, start, count):
    pts, x = [], start
    while len(pts) < count:
        p = make(x)
        if p is not None:
            pts.append(p)
        x += 1
    return pts


@settings(max_examples=15)
@given(x=st.integers(0, P - 1))
def test_g1_hashed_points_outside_subgroup(x):
    (pt,) = _first_points(g1_point_from_x, x, 1)
    a = G1.from_ints(pt)
    assert G1.is_on_curve(a)
    # E(Fq) has order h1·r with gcd(h1, r) = 1: a random point is in G1 with probability 1/h1
    assert not G1.is_in_subgroup(a) and not G1.is_in_subgroup(a, method="order")
    cleared = G1.mul(a, G1_PARAMS.cofactor)
    assert G1.is_in_subgroup(cleared) and G1.is_in_subgroup(cleared, method="order")


@settings(max_examples=6)
@given(x0=st.integers(0, P - 1), x1=st.integers(0, P - 1))
def test_g2_hashed_points_outside_subgroup(x0, x1):
    pt = next(p for p in (g2_point_from_x(x0 + i, x1) for i in range(64)) if p is not None)
    a = G2.from_ints(pt)
    assert G2.is_on_curve(a)
    assert not G2.is_in_subgroup(a) and not G2.is_in_subgroup(a, method="order")
    cleared = G2.mul(a, G2_PARAMS.cofactor)
    assert G2.is_in_subgroup(cleared) and G2.is_in_subgroup(cleared, method="order")


def test_py_ecc_agrees_points_are_outside_subgroup():
    x, y = _first_points(g1_point_from_x, 5, 1)[0]
    q = (ref.FQ(x), ref.FQ(y), ref.FQ.one())
    assert ref.is_on_curve(q, ref.b) and not ref.is_inf(ref.multiply(q, FR.modulus))
    (x2, y2) = next(p for p in (g2_point_from_x(i, 1) for i in range(64)) if p is not None)
    q2 = (ref.FQ2(list(x2)), ref.FQ2(list(y2)), ref.FQ2.one())
    assert ref.is_on_curve(q2, ref.b2) and not ref.is_inf(ref.multiply(q2, FR.modulus))
    assert not G2.is_in_subgroup(G2.from_ints((x2, y2)))


@pytest.mark.parametrize("group,make", [(G1, lambda i: g1_point_from_x(i)), (G2, lambda i: g2_point_from_x(i, 7))])
def test_methods_agree_on_mixed_batch(group, make):
    """Subgroup points, raw curve points, and subgroup points shifted by small-order torsion."""
    raw = group.from_ints(_first_points(make, 11, 4))
    torsion = group.mul_many(raw, [FR.modulus] * 4)  # r·Q: order divides the cofactor, non-zero
    assert not np.any(group.eq(torsion, group.identity(4)))
    sub = group.random(4, np.random.default_rng(3))
    batch = np.concatenate([sub, raw, group.add(sub, torsion), torsion, group.identity(1)])
    fast = group.is_in_subgroup(batch)
    slow = group.is_in_subgroup(batch, method="order")
    assert fast.tolist() == slow.tolist() == [True] * 4 + [False] * 12 + [True]


def test_bad_method_rejected():
    with pytest.raises(ValueError, match="method"):
        G1.is_in_subgroup(G1.generator(), method="fast")
