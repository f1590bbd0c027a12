"""The array-level G1/G2 API at its edges: int conversion, shapes, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuzk.curve import G1, G2
from cuzk.errors import FieldValueError, InputError
from cuzk.field import FQ

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


def test_misuse_is_a_field_value_error():
    g = G1.generator()
    bad_ints = [5, 2.5, (1.0, 2), (True, 2), [(1, 2), 3], "ab"]
    for point in bad_ints:
        with pytest.raises(FieldValueError):  # TypeError/IndexError, or a bool taken as 1
            G1.from_ints(point)
    for point in [(1, 2), ((1.5, 2), (3, 4)), ((1, 2), 3)]:
        with pytest.raises(FieldValueError):
            G2.from_ints(point)
    assert G1.from_ints([]).shape == (0, 2, 6)
    unreduced = np.full((2, 6), 2**64 - 1, np.uint64)  # to_ints reduced it mod p: another point
    for op in (G1.to_ints, G1.neg, G1.is_on_curve, lambda a: G1.add(a, g), lambda a: G1.mul(a, 2)):
        with pytest.raises(FieldValueError, match=">= p"):
            op(unreduced)
    with pytest.raises(FieldValueError, match="shapes differ"):  # compared only the first point
        G1.eq(g, np.stack([g, G1.identity()]))
    for k in (2.7, "3", True, None):  # int() truncated 2.7 and parsed '3'
        with pytest.raises(FieldValueError, match="int"):
            G1.mul(g, k)
        with pytest.raises(FieldValueError, match="int"):
            G1.mul_many(g[None], [k])
    with pytest.raises(FieldValueError, match="int"):
        G1.mul_many(g[None], None)
    for n in (-1, 1.5, True):
        with pytest.raises(FieldValueError, match="number of points"):
            G1.identity(n)
        with pytest.raises(FieldValueError, match="number of points"):
            G1.random(n, np.random.default_rng(0))
    with pytest.raises(FieldValueError, match="Generator"):
        G1.random(2, None)
    with pytest.raises(InputError, match="method"):
        G1.is_in_subgroup(g, method="x")


def test_random_points_are_distinct_subgroup_points():
    pts = G2.random(4, np.random.default_rng(5))
    assert G2.is_in_subgroup(pts).all() and G2.is_on_curve(pts).all()
    assert len({p.tobytes() for p in pts}) == 4
