"""cuzk.curve.validate: threaded decode/on-curve/subgroup scans report exactly the lowest bad
index a serial scan finds, for any thread count, and agree with the one-thread kernels."""

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.curve import G1, G2
from cuzk.curve import validate as V
from cuzk.curve.encoding import points_from_bytes, points_to_bytes
from cuzk.curve import G1_PARAMS
from cuzk.errors import InputError, NotInSubgroupError, NotOnCurveError
from cuzk.field import FQ
from test_curve_subgroup import _first_points, g1_point_from_x, g2_point_from_x


def _g1_outside_subgroup():
    x = 1
    while True:
        rhs = (x**3 + 4) % FQ.modulus
        y = pow(rhs, (FQ.modulus + 1) // 4, FQ.modulus)
        if y * y % FQ.modulus == rhs:
            return G1.from_ints((x, y))
        x += 1


def test_later_block_failing_first_does_not_win():
    """Block 0 fails slowly, block 3 fails at once on another thread: block 0's index is returned."""
    seen = []

    def fn(lo, hi):
        seen.append(lo)
        if lo == 0:
            time.sleep(0.2)
            return 2, 11
        return (lo + 1, 33) if lo == 30 else (-1, 0)

    assert V.first_failure(fn, 100, 10, 4) == (2, 11)
    assert 0 in seen and 30 in seen  # both ran: the late failure did not stop the early block


def test_blocks_after_a_failure_are_skipped_and_errors_propagate():
    ran = []
    lock = threading.Lock()

    def fn(lo, hi):
        with lock:
            ran.append(lo)
        return (lo, 1) if lo == 0 else (-1, 0)

    assert V.first_failure(fn, 10_000, 1, 2) == (0, 1)
    assert len(ran) < 100  # the scan stopped soon after block 0 failed

    def boom(lo, hi):
        if lo == 5:
            raise ValueError("kernel blew up")
        return -1, 0

    with pytest.raises(ValueError, match="blew up"):
        V.first_failure(boom, 10, 1, 3)
    assert not [t for t in threading.enumerate() if t.name.startswith("cuzk-decode")]


@pytest.mark.parametrize("bad", [0, 1.0, -2, False, "2"])
def test_resolve_threads_rejects(bad):
    with pytest.raises(InputError, match="threads"):
        V.resolve_threads(bad)


@pytest.fixture(scope="module")
def g1_batch():
    """300 valid G1 points (random, with identities) and one outside the subgroup."""
    rng = np.random.default_rng(7)
    pts = np.tile(G1.random(10, rng), (30, 1, 1))
    pts[[5, 123]] = 0  # the identity is valid
    return pts, _g1_outside_subgroup()


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_decode_rows_matches_serial_decode(g1_batch, data):
    pts, outside = g1_batch
    n = pts.shape[0]
    compressed = data.draw(st.booleans())
    threads = data.draw(st.integers(1, 6))
    checked = data.draw(st.booleans())
    rows = np.frombuffer(points_to_bytes(G1, pts, compressed=compressed), dtype=np.uint8).reshape(n, -1).copy()
    bad_sub = data.draw(st.lists(st.integers(0, n - 1), max_size=3))
    bad_curve = data.draw(st.lists(st.integers(0, n - 1), max_size=2))
    sub_row = np.frombuffer(points_to_bytes(G1, outside, compressed=compressed), dtype=np.uint8)
    for i in bad_sub:
        rows[i] = sub_row
    for i in bad_curve:  # x = 1 and (uncompressed) y = 1: off the curve; compressed: 1 + 4 = 5 is a non-residue
        rows[i] = 0
        rows[i, rows.shape[1] // (1 if compressed else 2) - 1] = 1
        if not compressed:
            rows[i, -1] = 1
        else:
            rows[i, 0] |= 0x80
    out = np.empty_like(pts)
    got = V.decode_rows(G1, rows, out, compressed=compressed, checked=checked, threads=threads)
    try:
        want_pts = points_from_bytes(G1, rows, compressed=compressed, checked=checked)
        assert got is None and np.array_equal(out, want_pts)
    except (NotOnCurveError, NotInSubgroupError) as e:
        expect = min(bad_curve + (bad_sub if checked else []))
        assert got is not None and got[0] == expect and f"point {expect}:" in str(e)
        code = G1.kernels.NOT_ON_CURVE if isinstance(e, NotOnCurveError) else G1.kernels.NOT_IN_SUBGROUP
        assert got[1] == code
        assert np.array_equal(out[:expect], pts[:expect])


@pytest.mark.parametrize("group,make", [(G1, lambda i: g1_point_from_x(i)), (G2, lambda i: g2_point_from_x(i, 7))])
@pytest.mark.parametrize("threads", [1, 4])
def test_scans_agree_with_order_check(group, make, threads):
    rng = np.random.default_rng(11)
    good = group.random(6, rng)
    raw = group.from_ints(_first_points(make, 3, 2))  # curve points, not cleared
    torsion = group.mul_many(raw, [G1_PARAMS.order] * 2)  # order divides the cofactor, non-zero
    shifted = group.add(good[:2], torsion)  # on the curve, outside the subgroup
    batch = np.concatenate([good, group.identity(40), good])  # 52 points
    assert V.first_outside_subgroup(group, batch, threads=threads) is None
    assert V.first_off_curve(group, batch, threads=threads) is None
    for pos in (0, 17, 50):
        b = batch.copy()
        b[pos] = shifted[0]
        b[51] = raw[1]
        want = int(np.flatnonzero(~group.is_in_subgroup(b, method="order"))[0])
        assert V.first_outside_subgroup(group, b, threads=threads) == want == pos
    off = batch.copy()
    off[3, 1] = off[3, 0]  # y := x: off the curve
    off[50, 1] = off[50, 0]
    assert V.first_off_curve(group, off, threads=threads) == 3
