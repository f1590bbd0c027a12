"""The split of MSM scalars into zeros, ones and others (``split_bits``), and the check a
bit-aware MSM runs on a split it is given (``msm_bits.check_split_of``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.errors import InputError
from cuzk.kernels import msm_bits
from cuzk.kernels.bit_split import BitSplit, split_bits


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2, 1 << 64, 1 << 192, (1 << 64) + 1, 3]), max_size=64))
def test_split_partitions_the_rows_by_value(values):
    limbs = np.array([[(v >> (64 * k)) & (2**64 - 1) for k in range(4)] for v in values], np.uint64).reshape(-1, 4)
    s = split_bits(limbs, threads=1)
    assert s.n == len(values)
    assert s.zeros.tolist() == [i for i, v in enumerate(values) if v == 0]
    assert s.ones.tolist() == [i for i, v in enumerate(values) if v == 1]
    assert s.others.tolist() == [i for i, v in enumerate(values) if v not in (0, 1)]
    assert s.bit_fraction == (1.0 if not values else sum(v in (0, 1) for v in values) / len(values))


def test_split_over_several_chunks_and_threads_equals_one_thread():
    rng = np.random.default_rng(7)
    n = 3 * (1 << 16) + 5  # three scan chunks on two threads
    sc = np.zeros((n, 4), np.uint64)
    sc[:, 0] = rng.integers(0, 3, n)
    sc[rng.random(n) < 0.01, 2] = 9  # a high limb set: "other" even where the low limb is 0 or 1
    one, two = split_bits(sc, threads=1), split_bits(sc, threads=2)
    for part in ("zeros", "ones", "others"):
        np.testing.assert_array_equal(getattr(one, part), getattr(two, part))
    low = sc[:, 1:].any(axis=1)
    np.testing.assert_array_equal(one.ones, np.flatnonzero((sc[:, 0] == 1) & ~low))


@pytest.mark.parametrize("bad", [np.zeros((3, 4), np.uint32), np.zeros((3, 6), np.uint64), np.zeros(4, np.uint64),
                                 [[0, 0, 0, 0]]])
def test_split_refuses_what_is_not_scalar_rows(bad):
    with pytest.raises(InputError, match=r"\(n, 4\) uint64"):
        split_bits(bad)


def test_split_refuses_bad_threads():
    with pytest.raises(InputError):
        split_bits(np.zeros((2, 4), np.uint64), threads=0)


def _bit_rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sc = np.zeros((n, 4), np.uint64)
    sc[:, 0] = rng.integers(0, 3, n)  # 0, 1 and 2 (an "other" value)
    return sc


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2), st.integers(0, 10**6), st.sampled_from(["swap", "move", "repeat", "range"]))
def test_the_split_check_refuses_every_broken_partition_across_task_boundaries(part, where, how):
    # parts cut into tasks of 7 indices on two threads: a break at any place, a task's first
    # index included, is found, and the row named is the first bad one in part order
    sc = _bit_rows(100, seed=where)
    s = split_bits(sc)
    old = msm_bits._CHECK_CHUNK
    msm_bits._CHECK_CHUNK = 7
    try:
        assert msm_bits.check_split_of(s, sc, threads=2) is s
        parts = [s.zeros.copy(), s.ones.copy(), s.others.copy()]
        idx = parts[part]
        if len(idx) < 2:
            return
        j = 1 + where % (len(idx) - 1)
        if how == "swap":  # unsorted: the partition is intact but not as split_bits makes it
            idx[j - 1], idx[j] = idx[j], idx[j - 1]
        elif how == "move":  # a row in a part that is not its value's (a bit among the others is fine)
            dst = 1 if part == 0 else 0
            parts[dst] = np.sort(np.append(parts[dst], idx[j]))
            parts[part] = np.delete(idx, j)
        elif how == "repeat":  # a row twice, another missing: lengths still sum to n
            idx[j] = idx[j - 1]
        else:
            idx[j] = 100
        with pytest.raises(InputError, match="does not match the scalars"):
            msm_bits.check_split_of(BitSplit(100, *parts), sc, threads=2)
    finally:
        msm_bits._CHECK_CHUNK = old


def test_a_bit_left_with_the_others_passes_unless_it_is_also_a_zero_or_a_one():
    sc = _bit_rows(50, seed=3)
    s = split_bits(sc)
    one = int(s.ones[0])
    ones = s.ones[1:]  # the row moves to the others: still a partition, still the right sum
    others = np.sort(np.append(s.others, one))
    assert msm_bits.check_split_of(BitSplit(50, s.zeros, ones, others), sc) is not None
    zeros = s.zeros[1:]  # ... but a one also among the others (a zero dropped to keep the length)
    with pytest.raises(InputError, match=f"row {one}"):
        msm_bits.check_split_of(BitSplit(50, zeros, s.ones, others), sc)


def test_a_split_of_frozen_scalars_holds_without_its_check_while_they_cannot_change(monkeypatch):
    sc = _bit_rows(60, seed=5)
    assert not split_bits(sc).is_of(sc)  # writable scalars: a split of them is always checked
    sc.flags.writeable = False
    s = split_bits(sc)
    assert s.is_of(sc) and not s.is_of(sc.copy())
    with pytest.raises(ValueError):
        s.zeros[0] = 1  # its parts are frozen with it
    monkeypatch.setattr(msm_bits, "classify", lambda *a: pytest.fail("a split of these very scalars was re-checked"))
    assert msm_bits.check_split_of(s, sc) is s
    monkeypatch.undo()
    sc.flags.writeable = True  # writable again: checked again, and the change found
    sc[s.zeros[0], 0] = 1
    assert not s.is_of(sc)
    with pytest.raises(InputError, match=f"row {int(s.zeros[0])}"):
        msm_bits.check_split_of(s, sc)
