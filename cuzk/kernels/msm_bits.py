"""The bit-aware MSM on the CPU: Σ k_i·P_i as Σ_{k_i = 1} P_i + MSM(the other rows).

A scalar 0 adds nothing and a scalar 1 adds its point once, so over a witness that is mostly
bits (SHA-256 circuits: Filecoin PoRep) the windows of Pippenger are wasted on most rows. Given
the :class:`~cuzk.kernels.bit_split.BitSplit` of the scalars, this sums the "one" points with
batch-affine additions — the generated ``window_into`` kernel of the MSM itself, over one bucket
(digits 1 at the ones, 0 elsewhere): the points are gathered and added pairwise in rounds that
share batch inversions, in slices of at most ``_ONES_SLICE`` ones run on ``threads`` threads —
and sends only the other rows through :func:`cuzk.kernels.msm_cpu.msm`. The parts are added in
XYZZ by the generated ``combine_slices`` (no kernel of its own: nothing more to compile, and
every curve's generated modules serve as they are). The result is the same group element as
the plain MSM's, so the same affine limbs.

    >>> import numpy as np
    >>> from cuzk.curve import G1
    >>> from cuzk.kernels import msm_cpu
    >>> g = G1.generator()
    >>> pts = msm_cpu.batch_mul_g1(g, np.array([[2, 0, 0, 0], [3, 0, 0, 0], [5, 0, 0, 0]], np.uint64))
    >>> k = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [7, 0, 0, 0]], np.uint64)
    >>> bool(G1.eq(msm_bits("g1", pts, k), G1.mul(g, 2 + 35)))
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.errors import InputError
from cuzk.field.jit import readonly
from cuzk.kernels import msm_cpu
from cuzk.kernels.bit_split import BitSplit, check_split, split_bits
from cuzk.kernels.checks import check_field_rows, check_points, modulus_limbs
from cuzk.kernels.cpu_threads import resolve_threads, run_phases

__all__ = ["msm_bits", "ones_sum", "check_split_of", "affine_to_xyzz"]

# Ones per task: a slice's gather holds its points (G2 BLS12-381: 192 B each, 12 MiB here), and
# 2^16 pairs still fill 32 batch inversions of CHUNK = 2048 per round.
_ONES_SLICE = 1 << 16


@njit(cache=True, nogil=True)
def split_mismatch(scalars, zeros, ones, others):
    """-1 if (zeros, ones, others) partition the rows and scalars[zeros] = 0, scalars[ones] = 1;
    else the first offending row (or n: a wrong count, an index out of range)."""
    n = scalars.shape[0]
    if zeros.shape[0] + ones.shape[0] + others.shape[0] != n:
        return n
    seen = np.zeros(n, np.bool_)
    for part in range(3):
        idx = zeros if part == 0 else ones if part == 1 else others
        for j in range(idx.shape[0]):
            i = idx[j]
            if i < 0 or i >= n:
                return n
            if seen[i]:
                return i
            seen[i] = True
            if part < 2 and (scalars[i, 0] != part or scalars[i, 1] | scalars[i, 2] | scalars[i, 3]):
                return i
    return -1


def check_split_of(split, scalars: np.ndarray) -> BitSplit:
    """``split`` if it is the :class:`BitSplit` of ``scalars`` (a partition whose zeros and ones
    hold those values: a split of other scalars would give a wrong sum), else InputError."""
    split = check_split(split, scalars.shape[0])
    bad = split_mismatch(scalars, *(readonly(np.ascontiguousarray(a, np.int64)) for a in
                                    (split.zeros, split.ones, split.others)))
    if bad >= 0:
        raise InputError(f"the split does not match the scalars (row {bad}): make it with split_bits(scalars)")
    return split


def affine_to_xyzz(point: np.ndarray, fq) -> np.ndarray:
    """One affine Montgomery point (2, *coord) as an XYZZ row (4, *coord): ZZ = ZZZ = 1
    (Montgomery), or ZZ = 0 for the identity (all-zero limbs)."""
    out = np.zeros((4,) + point.shape[1:], np.uint64)
    if point.any():
        out[:2] = point
        one = modulus_limbs(fq.r % fq.modulus, fq.limbs)  # Montgomery 1 = R mod p
        out[2].reshape(-1, fq.limbs)[0] = one  # c0 of an Fq2 coordinate; c1 stays 0
        out[3].reshape(-1, fq.limbs)[0] = one
    return out


def ones_sum(g: msm_cpu.MsmGroup, points: np.ndarray, ones: np.ndarray, threads: int) -> np.ndarray:
    """Σ points[ones] as XYZZ rows (slices, 4, *coord), one per slice of at most ``_ONES_SLICE``
    ones; ``points`` checked, read-only."""
    n, m = points.shape[0], len(ones)
    slices = max(1, -(-m // _ONES_SLICE), min(threads, m // 4096))
    sums = np.zeros((slices, 4) + g.coord, np.uint64)
    if m == 0:
        return sums
    if g.vec is not None and m >= msm_cpu._IFMA_MIN_POINTS:
        # AVX-512 IFMA: the ones gathered and converted once, their additions 8 at a time (the
        # "ifma" windows' kernels; 2^17 BLS12-381 G1 ones, one thread: 33 ms CPU against 46 ms)
        pts = readonly(np.ascontiguousarray(points[ones]))
        digits = np.ones((1, m), np.int32)
        chunks = min(4 * threads, max(1, m // 4096))
        cut = [k * m // slices for k in range(slices + 1)]
        run_phases(threads, msm_cpu.ifma_phases(g, pts, digits, 1, 1, cut, sums, chunks))
        return sums
    digits = np.zeros((1, n), np.int32)  # the MSM's digit array type: the same window_into specialization
    digits[0, ones] = 1
    cut = [int(ones[k * m // slices]) for k in range(slices)] + [n]  # equal counts of ones per slice
    tasks = [(g.kernels.window_into, (points, digits, 0, 1, 1, True, cut[s], cut[s + 1], sums, s)) for s in range(slices)]
    run_phases(threads, [tasks])
    return sums


def msm_bits(group, points, scalars, threads=None, *, split: BitSplit | None = None) -> np.ndarray:
    """Σ scalars[i]·points[i] for ``group`` ("g1"/"g2" of BLS12-381, or any curve's
    :class:`~cuzk.kernels.msm_cpu.MsmGroup`), the ones added directly and the zeros skipped.

    Args:
        points: (n, 2, *coord) affine Montgomery points, or a
            :class:`~cuzk.kernels.msm_fixed.FixedBaseTable` of the group (its bases serve the
            ones; the other rows run the precomputed MSM over their rows of the table).
        scalars: (n, 4) uint64 canonical Fr (< r).
        threads: threads to use (None: all cores).
        split: ``split_bits(scalars)`` made earlier (checked against the scalars); None: made here.

    Returns:
        (2, *coord) affine Montgomery, the same limbs as :func:`~cuzk.kernels.msm_cpu.msm`.

    Raises:
        InputError: bad shapes, lengths, threads, or a split that is not of these scalars.
        FieldValueError: a scalar >= r or a coordinate >= p.
    """
    g = msm_cpu._group(group)
    threads = resolve_threads(threads)
    table = None if isinstance(points, np.ndarray) else points
    if table is not None:
        _check_table(g, table)
        points = table.points[: table.n]
    points = readonly(check_points(points, "points", (2,) + g.coord, g.fq.modulus))
    scalars = check_field_rows(scalars, "scalars", (4,), g.fr.modulus)
    n = points.shape[0]
    if scalars.shape[0] != n:
        raise InputError(f"need one scalar per point: {n} points, {scalars.shape[0]} scalars")
    split = split_bits(scalars, threads) if split is None else check_split_of(split, scalars)
    parts = ones_sum(g, points, split.ones, threads)
    rest = scalars[split.others]
    if table is not None:
        other = msm_cpu.msm(g, _sub_table(table, split.others), rest, threads)
    else:
        other = msm_cpu.msm(g, points[split.others], rest, threads)
    rows = np.concatenate([parts, affine_to_xyzz(other, g.fq)[None]])
    return g.kernels.combine_slices(rows, 0, rows.shape[0])  # one window: Σ of the rows


def _check_table(g, table) -> None:
    from cuzk.kernels.msm_fixed import FixedBaseTable  # it imports msm_cpu

    if not isinstance(table, FixedBaseTable):
        raise InputError(f"points must be a uint64 array or a FixedBaseTable, got {type(table).__name__}")
    if table.group != g:
        raise InputError(f"the precomputed table is of {table.group.name.upper()} ({table.group.fq.bits}-bit Fq), "
                         f"the MSM of {g.name.upper()} ({g.fq.bits}-bit Fq)")


def _sub_table(table, rows: np.ndarray):
    """The table of the bases ``rows`` only: their shifted copies, copy j of base i at j·n + i."""
    from cuzk.kernels.msm_fixed import table_from_arrays

    m, n = table.plan.m, table.n
    idx = (np.arange(m, dtype=np.int64)[:, None] * n + rows[None, :]).reshape(-1)
    return table_from_arrays(table.group, table.plan, table.points[idx], table.skip[rows])
