"""Fixed-base precomputation (cuzk/kernels/msm_fixed.py): the precomputed MSM equals the plain
MSM for every plan shape, on BLS12-381 and BN254, G1 and G2, edge scalars included; the table is
the shifted copies it claims; the planner respects its byte figure; bad input is refused."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk import curves
from cuzk.errors import FieldValueError, InputError
from cuzk.kernels import msm_fixed
from cuzk.kernels.msm_fixed import FixedBasePlan, plan_for_bytes, trade_off
from cuzk.kernels.scalar_digits import num_windows

CASES = [(c, g) for c in ("bls12_381", "bn254") for g in ("g1", "g2")]
_POINTS: dict = {}


def _points(curve, group, n):
    """n random subgroup points (one identity among them), made once per curve and group."""
    key = (curve, group)
    if key not in _POINTS:
        grp = getattr(curves.get(curve), group.upper())
        pts = grp.random(48, np.random.default_rng(5))
        pts[7] = 0
        _POINTS[key] = pts
    return np.ascontiguousarray(_POINTS[key][:n])


def _rows(ks):
    return np.array([[(k >> (64 * i)) & (2**64 - 1) for i in range(4)] for k in ks], np.uint64).reshape(-1, 4)


def _scalars(r, n, seed):
    """Random scalars with the edges 0, 1, r−1 (and 2^k − 1 around window boundaries) mixed in."""
    rnd = random.Random(seed)
    edges = [0, 1, r - 1, r - 2, (1 << 128) - 1, (1 << 13) - 1, 1 << 64, (r - 1) // 2]
    return _rows([rnd.choice(edges) if rnd.random() < 0.4 else rnd.randrange(r) for _ in range(n)])


@st.composite
def _plans(draw):
    c = draw(st.integers(2, 16))
    t = draw(st.integers(1, num_windows(c)))
    return FixedBasePlan(c, t, draw(st.sampled_from(("affine", "xyzz"))))


@pytest.mark.parametrize("curve,group", CASES)
@settings(max_examples=12, deadline=None)
@given(plan=_plans(), n=st.sampled_from([1, 2, 3, 7, 10, 33, 48]), seed=st.integers(0, 2**32))
def test_precomputed_msm_equals_plain_msm(curve, group, plan, n, seed):
    kern = curves.get(curve).kernels
    pts = _points(curve, group, n)
    sc = _scalars(curves.get(curve).Fr.modulus, n, seed)
    table = kern.precompute(group, pts, plan, threads=2)
    assert table.points.shape[0] == plan.m * n
    got = kern.msm_precomputed(table, sc, threads=2)
    assert np.array_equal(got, kern.msm(group, pts, sc, endo=False))
    assert np.array_equal(kern.msm_precomputed(table, sc, threads=1), got)


@pytest.mark.parametrize("curve,group", CASES)
def test_table_blocks_are_the_shifted_bases(curve, group):
    grp = getattr(curves.get(curve), group.upper())
    pts = _points(curve, group, 9)
    plan = FixedBasePlan(9, 7)  # W = 29 windows: m = 5 copies, 63 bits apart
    table = curves.get(curve).kernels.precompute(group, pts, plan)
    assert plan.m == 5 and table.skip.tolist() == [False] * 7 + [True, False]
    for j in range(plan.m):
        assert grp.eq(table.points[j * 9:(j + 1) * 9], grp.mul(pts, 1 << (63 * j))).all()


def test_all_edge_scalars_and_the_identity_sum():
    kern = curves.get("bls12_381").kernels
    r = curves.get("bls12_381").Fr.modulus
    pts = _points("bls12_381", "g1", 3)
    table = kern.precompute("g1", pts, FixedBasePlan(13, 1))
    for ks in ([0, 0, 0], [1, 1, 1], [r - 1, r - 1, r - 1], [r - 1, 1, 0]):
        assert np.array_equal(kern.msm_precomputed(table, _rows(ks)), kern.msm("g1", pts, _rows(ks), endo=False))
    # P + (r−1)·P = identity: all-zero limbs
    same = np.ascontiguousarray(np.stack([pts[0], pts[0]]))
    t2 = kern.precompute("g1", same, FixedBasePlan(13, 4))
    assert not kern.msm_precomputed(t2, _rows([1, r - 1])).any()
    empty = kern.precompute("g1", pts[:0], FixedBasePlan(13, 4))
    assert not kern.msm_precomputed(empty, _rows([])).any()


def test_planner_respects_the_byte_figure_and_the_front_is_monotone():
    kern = curves.get("bls12_381").kernels
    for name, n in (("g1", 1 << 14), ("g2", 1 << 12), ("g1", 100)):
        group = kern.group(name)
        front = trade_off(group, n)
        assert front[0][:2] == (0, 1.0)
        assert all(b1 < b2 and r1 > r2 for (b1, r1, _), (b2, r2, _) in zip(front, front[1:]))
        pb = msm_fixed.point_bytes(group)
        for cap in (0, 1 << 20, 8 << 20, 1 << 40):
            plan = plan_for_bytes(group, n, cap)
            assert plan is None or (plan.m > 1 and plan.table_bytes(n, pb) <= cap)
        assert plan_for_bytes(group, n, 0) is None
    assert msm_fixed.point_bytes(kern.group("g1")) == 96 and msm_fixed.point_bytes(kern.group("g2")) == 192


def test_bad_input_is_refused_with_a_message():
    kern = curves.get("bls12_381").kernels
    pts = _points("bls12_381", "g1", 4)
    with pytest.raises(InputError, match="window c"):
        FixedBasePlan(17, 1)
    with pytest.raises(InputError, match="windows t"):
        FixedBasePlan(13, 21)
    with pytest.raises(InputError, match="windows t"):
        FixedBasePlan(13, 0)
    with pytest.raises(InputError, match="method"):
        FixedBasePlan(13, 2, "fast")
    with pytest.raises(InputError, match="FixedBasePlan"):
        kern.precompute("g1", pts, (13, 2))
    with pytest.raises(InputError, match="group"):
        kern.precompute("g3", pts, FixedBasePlan(13, 2))
    with pytest.raises(InputError, match="max_bytes"):
        plan_for_bytes("g1", 10, -1)
    table = kern.precompute("g1", pts, FixedBasePlan(13, 10))
    with pytest.raises(InputError, match="one scalar per base"):
        kern.msm_precomputed(table, _rows([1, 2, 3]))
    r = curves.get("bls12_381").Fr.modulus
    with pytest.raises(FieldValueError, match="modulus"):
        kern.msm_precomputed(table, _rows([1, 2, 3, r]))
    with pytest.raises(InputError, match="FixedBaseTable"):
        kern.msm_precomputed(pts, _rows([1, 2, 3, 4]))
    import attrs

    with pytest.raises(InputError, match="shape"):
        kern.msm_precomputed(attrs.evolve(table, points=table.points[:4]), _rows([1, 2, 3, 4]))


@pytest.mark.parametrize("curve,group", CASES)
def test_windows_cut_to_bound_their_gather_give_the_same_point(curve, group, monkeypatch):
    """Windows whose gather would pass _GATHER_MAX run as point slices, one task each."""
    kern = curves.get(curve).kernels
    pts = _points(curve, group, 48)
    sc = _scalars(curves.get(curve).Fr.modulus, 48, 11)
    want = kern.msm(group, pts, sc, endo=False)
    monkeypatch.setattr(msm_fixed, "_GATHER_MAX", 7 * pts[:1].nbytes)  # a slice per 7 points
    for plan in (FixedBasePlan(5, 2), FixedBasePlan(9, 1), FixedBasePlan(6, 3, "xyzz")):
        table = kern.precompute(group, pts, plan)
        for threads in (1, 2):
            assert np.array_equal(kern.msm_precomputed(table, sc, threads=threads), want)
    plan = FixedBasePlan(13, 1)  # the model charges each extra slice its bucket reduction
    pb, rows = pts[:1].nbytes, plan.m << 12
    monkeypatch.setattr(msm_fixed, "_GATHER_MAX", 1 << 62)
    unbounded = msm_fixed._plan_cost(1 << 12, plan, 381, pb)
    monkeypatch.setattr(msm_fixed, "_GATHER_MAX", rows * pb // 4)  # 4 slices per window
    assert msm_fixed._plan_cost(1 << 12, plan, 381, pb) == unbounded + 3 * (1 << 12) * msm_fixed._REDUCE
    assert msm_fixed._plan_cost(1 << 12, FixedBasePlan(13, 1, "xyzz"), 381, pb) == \
        msm_fixed._plan_cost(1 << 12, FixedBasePlan(13, 1, "xyzz"), 381, 1)  # XYZZ buckets gather nothing
