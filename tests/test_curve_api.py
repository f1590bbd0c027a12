"""The array-level G1/G2 API at its edges: int conversion, shapes, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuzk.curve import G1, G2
from cuzk.errors import FieldValueError
from cuzk.field.params import FQ

P = FQ.modulus
coord = st.integers(0, P - 1)


@given(x=coord, y=coord)
def test_g1_int_round_trip(x, y):
    a = G1.from_ints((x, y))
    assert a.shape == (2, 6) and a.dtype == np.uint64
    assert G1.to_ints(a) == (x, y)
    assert G1.to_ints(G1.from_ints([(x, y), None])) == [(x, y), (0, 0)]


@given(c=st.tuples(coord, coord, coord, coord))
def test_g2_int_round_trip(c):
    pt = ((c[0], c[1]), (c[2], c[3]))
    a = G2.from_ints(pt)
    assert a.shape == (2, 2, 6)
    assert G2.to_ints(a) == pt
    assert G2.to_ints(G2.from_ints([pt, pt])) == [pt, pt]


def test_identity_is_zero_limbs_and_valid():
    for group in (G1, G2):
        z = group.identity()
        assert not z.any() and group.is_on_curve(z) and group.is_in_subgroup(z)
        assert group.identity(3).shape == (3,) + group.point_shape


def test_bad_input_rejected():
    with pytest.raises(FieldValueError, match="shape"):
        G1.add(np.zeros((3, 6), np.uint64), np.zeros((3, 6), np.uint64))
    with pytest.raises(FieldValueError, match="dtype"):
        G1.neg(np.zeros((2, 6), np.int64))
    with pytest.raises(FieldValueError, match="p"):
        G1.from_ints((P, 0))
    with pytest.raises(FieldValueError, match="coefficient"):
        G2.from_ints(((1, 2), (4, 5, 6)))
    with pytest.raises(FieldValueError, match=r"must be \(x, y\)"):
        G2.from_ints(((1, 2, 3), (4, 5)))
    with pytest.raises(FieldValueError, match="shapes differ"):
        G1.add(G1.identity(2), G1.identity(3))
    with pytest.raises(FieldValueError, match="one scalar per point"):
        G1.mul_many(G1.identity(2), [1, 2, 3])
    with pytest.raises(FieldValueError, match="non-negative"):
        G1.mul_many(G1.identity(1), [-1])


def test_random_points_are_distinct_subgroup_points():
    pts = G2.random(4, np.random.default_rng(5))
    assert G2.is_in_subgroup(pts).all() and G2.is_on_curve(pts).all()
    assert len({p.tobytes() for p in pts}) == 4
