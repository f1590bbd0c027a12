"""The bit-aware MSM on the CPU: Σ k_i·P_i as Σ_{k_i = 1} P_i + MSM(the other rows).

A scalar 0 adds nothing and a scalar 1 adds its point once, so over a witness that is mostly
bits (SHA-256 circuits: Filecoin PoRep) the windows of Pippenger are wasted on most rows. Given
the :class:`~cuzk.kernels.bit_split.BitSplit` of the scalars, this

- sums the "one" points with the generated ``sum_rows`` kernel: 2,048 affine accumulators take
  the next points in turn, so each step's additions share one batch inversion while the
  accumulators stay in cache (a window's in-place rounds would stream the whole list through
  memory once per round), in tasks of at least ``_ONES_PER_TASK`` ones on ``threads`` threads
  (on AVX-512 IFMA the ones are gathered and summed 8 additions at a time instead); given the
  key's block sums (:mod:`cuzk.kernels.ones_blocks`), a block of ones and zeros may be added as
  its sum less its zeros' points, fewer additions;
- groups the other rows by scalar value (:func:`group_others`) and adds the points of each group
  (the generated ``group_sums``: batch-affine rounds, as a window's buckets), in the same phase
  as the ones' tasks: a PoRep witness repeats its non-bit values (the 2 KiB C2's A query: 33,208
  other rows, 9,800 values), so the MSM that follows has one row per value;
- runs that MSM (:func:`cuzk.kernels.msm_cpu.msm`, its window sized for the values' count) and
  adds the parts in XYZZ with the generated ``combine_slices``.

The result is the same group element as the plain MSM's, so the same affine limbs.

    >>> import numpy as np
    >>> from cuzk.curves import get
    >>> G1, cpu = get("bls12_381").G1, get("bls12_381").kernels
    >>> g = G1.generator()
    >>> pts = cpu.batch_mul_g1(g, np.array([[2, 0, 0, 0], [3, 0, 0, 0], [5, 0, 0, 0]], np.uint64))
    >>> k = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [7, 0, 0, 0]], np.uint64)
    >>> bool(G1.eq(msm_bits(cpu.group("g1"), pts, k), G1.mul(g, 2 + 35)))
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.errors import InputError
from cuzk.field.jit import readonly
from cuzk.kernels import msm_cpu
from cuzk.kernels.bit_split import BitSplit, check_split, classify, split_bits
from cuzk.kernels.checks import check_field_rows, check_points, modulus_limbs
from cuzk.kernels.cpu_threads import resolve_threads, run_phases
from cuzk.kernels.msm_cost import IFMA_MIN_POINTS
from cuzk.kernels.msm_fixed import FixedBaseTable, table_from_arrays
from cuzk.kernels.msm_group import as_msm_group
from cuzk.kernels.ones_blocks import check_blocks, plan_sources, planned_sources

__all__ = ["msm_bits", "ones_sum", "group_others", "check_split_of", "affine_to_xyzz"]

# IFMA path, ones per task: a slice's gather holds its points (G2 BLS12-381: 192 B each, 12 MiB
# here), and 2^16 pairs still fill 32 batch inversions of CHUNK = 2048 per round.
_ONES_SLICE = 1 << 16
# sum_rows tasks hold at least this many ones: each ends by adding up its CHUNK = 2048
# accumulators (~2,047 additions and 11 inversions), ~3 % of 2^16 additions.
_ONES_PER_TASK = 1 << 16
# With a FixedBaseTable the ungrouped others run the table's cheaper MSM (docs/perf/kernels.md:
# 0.8-0.95 of the plain one), so grouped bases must cut the rows below this share to pay.
_TABLE_GROUPED = 0.8


# Split rows checked per task: below this a helper thread costs more than the rows it reads.
_CHECK_CHUNK = 1 << 16


@njit(cache=True, nogil=True)
def part_mismatch(cls, idx, lo, hi, part, zeros, ones, bad, k):
    """bad[k] = the first row of idx[lo:hi) that does not belong in part ``part`` (0: the zeros,
    1: the ones, 2: the others) of a split whose rows have the classes ``cls``
    (:func:`~cuzk.kernels.bit_split.classify`), or -1: every index in range and above the
    one before it (idx[lo - 1] too), a zero or one row of that class, an other row of class
    ZERO or ONE found in neither ``zeros`` nor ``ones``. Out-of-range indices give n.

    Parts whose indices increase and whose classes differ are disjoint, so with their lengths
    summing to n they partition the rows: no array of n flags is written, and the classes (one
    byte a row, a sequential scan of the scalars) stay in cache while the indices stream."""
    n = cls.shape[0]
    prev = idx[lo - 1] if lo > 0 else -1
    bad[k] = -1
    for j in range(lo, hi):
        i = idx[j]
        if i < 0 or i >= n:
            bad[k] = n
            return
        if i <= prev:  # a repeated (or unsorted) index
            bad[k] = i
            return
        prev = i
        c = cls[i]
        if part < 2:
            if c != part:
                bad[k] = i
                return
        elif c < 2:  # a bit left with the others: fine unless it is also a zero or a one
            near = zeros if c == 0 else ones
            t = np.searchsorted(near, i)
            if t < near.shape[0] and near[t] == i:
                bad[k] = i
                return


def check_split_of(split, scalars: np.ndarray, threads=None) -> BitSplit:
    """``split`` if it is the :class:`BitSplit` of ``scalars`` (a partition whose zeros and ones
    hold those values, each part's indices increasing as :func:`split_bits` makes them: a split
    of other scalars would give a wrong sum), else InputError. The scalars' scan and the parts'
    checks run on ``threads`` threads (None: all cores); a split that ``split_bits`` made from
    these very frozen scalars (``BitSplit.is_of``) holds without them."""
    split = check_split(split, scalars.shape[0])
    if split.is_of(scalars):
        return split
    n = scalars.shape[0]
    parts = [readonly(np.ascontiguousarray(a, np.int64)) for a in (split.zeros, split.ones, split.others)]
    bad_row = n if sum(len(a) for a in parts) != n else -1
    if bad_row < 0:
        threads = resolve_threads(threads)
        cls = readonly(classify(scalars, threads)[0])
        spans = [(part, lo, min(lo + _CHECK_CHUNK, len(idx))) for part, idx in enumerate(parts)
                 for lo in range(0, len(idx), _CHECK_CHUNK)]
        bad = np.full(max(len(spans), 1), -1, np.int64)
        run_phases(threads, [[(part_mismatch, (cls, parts[part], lo, hi, part, parts[0], parts[1], bad, k))
                              for k, (part, lo, hi) in enumerate(spans)]])
        bad_row = next((int(b) for b in bad if b >= 0), -1)
    if bad_row >= 0:
        raise InputError(f"the split does not match the scalars (row {bad_row}): make it with split_bits(scalars)")
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


def ones_sum(g: msm_cpu.MsmGroup, points: np.ndarray, ones: np.ndarray, threads: int, blocks=None,
             split=None) -> np.ndarray:
    """Σ points[ones] as XYZZ rows (parts, 4, *coord) whose sum it is; ``points`` checked,
    read-only. With ``blocks`` (of these points: ``check_blocks``) and the ``split`` the ones are
    of, blocks of ones and zeros may be added as their sums less their zeros' points."""
    parts, tasks = _ones(g, points, ones, threads, blocks, split)
    run_phases(threads, [tasks])
    return parts


def _ones(g: msm_cpu.MsmGroup, points: np.ndarray, ones: np.ndarray, threads: int, blocks=None,
          split=None) -> tuple[np.ndarray, list]:
    """(parts, tasks): the XYZZ rows whose sum is Σ points[ones] and the ``sum_rows`` tasks that
    write them, over equal runs of the ones (or of the block sums' planned sources): a few per
    thread (a thread slowed by another process hands work to the others), none under
    ``_ONES_PER_TASK`` ones. On AVX-512 IFMA the points are summed here, with no task left."""
    m = len(ones)
    parts = max(1, min(4 * threads, m // _ONES_PER_TASK))
    if g.vec is not None and m >= IFMA_MIN_POINTS:
        # the sources' points gathered once, their additions 8 at a time (the "ifma" windows'
        # kernels; 2^17 BLS12-381 G1 ones, one thread: 33 ms CPU against 46 ms)
        extra, src = (_NO_BLOCKS(g), _rows(ones)) if blocks is None else (blocks.sums, planned_sources(blocks, split, threads))
        m = len(src)
        slices = max(1, -(-m // _ONES_SLICE), min(threads, m // 4096))
        sums = np.zeros((slices, 4) + g.coord, np.uint64)
        pts = np.empty((m, 2) + g.coord, np.uint64)
        cut = [k * m // slices for k in range(slices + 1)]
        gather = g.kernels.gather_sources
        run_phases(threads, [[(gather, (points, extra, src, cut[k], cut[k + 1], pts[cut[k]:cut[k + 1]]))
                              for k in range(slices)]])
        digits = np.ones((1, m), np.int32)
        chunks = min(4 * threads, max(1, m // 4096))
        run_phases(threads, msm_cpu.ifma_phases(g, readonly(pts), digits, 1, 1, cut, sums, chunks))
        return sums, []
    sums = np.zeros((parts, 4) + g.coord, np.uint64)
    if blocks is None:
        src = _rows(ones)
        return sums, [(g.kernels.sum_rows, (points, _NO_BLOCKS(g), src, k * m // parts, (k + 1) * m // parts, sums, k))
                      for k in range(parts)]
    src, plans = plan_sources(blocks, split, parts)
    return sums, [(_plan_and_sum, (g, points, blocks.sums, src, plan, sums)) for plan in plans]


def _NO_BLOCKS(g) -> np.ndarray:
    """``sum_rows``' "no block sums": read-only and of the table's shape, so the kernel has one
    specialization for both."""
    return readonly(np.empty((0, 2) + g.coord, np.uint64))


def _plan_and_sum(g, points, extra, src, plan, sums) -> None:
    """One ones' task with block sums: plan its range of blocks, then sum what it planned."""
    fn, args, lo, ends, k = plan
    fn(*args)
    g.kernels.sum_rows(points, extra, readonly(src), lo, ends[k], sums, k)


def _rows(idx: np.ndarray) -> np.ndarray:
    return readonly(np.ascontiguousarray(idx, np.int64))  # one array type: one kernel specialization


def group_others(scalars: np.ndarray, others: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The other rows grouped by scalar value: (rows, start, values), ``rows`` the indices of
    ``others`` reordered so that each group's rows are consecutive from ``start[b]``, ``values[b]``
    their scalar. Sorted by the low limb only (enough for equal rows to meet: a run of equal low
    limbs whose higher limbs differ just makes more groups, never a wrong one).

    A PoRep witness repeats its non-bit values (the 2 KiB C2's A query: 33,208 other rows, 9,800
    distinct values), and one MSM row per value instead of per row cuts the others' MSM ~3x for
    one batch-affine addition per repeated row (docs/kernel-contracts.md).
    """
    rest = scalars[others]
    order = np.argsort(rest[:, 0])
    rest = rest[order]
    new = np.ones(len(rest), np.bool_)
    np.any(rest[1:] != rest[:-1], axis=1, out=new[1:])
    start = np.flatnonzero(new)
    return others[order], start, rest[start]


def msm_bits(group, points, scalars, threads=None, *, split: BitSplit | None = None, blocks=None) -> np.ndarray:
    """Σ scalars[i]·points[i] for ``group`` (a curve's :class:`~cuzk.kernels.msm_cpu.MsmGroup`),
    the ones added directly and the zeros skipped.

    Args:
        points: (n, 2, *coord) affine Montgomery points, or a
            :class:`~cuzk.kernels.msm_fixed.FixedBaseTable` of the group (its bases serve the
            ones; the other rows run the precomputed MSM over their rows of the table, unless
            their values repeat enough for grouped bases to be the cheaper MSM).
        scalars: (n, 4) uint64 canonical Fr (< r).
        threads: threads to use (None: all cores).
        split: ``split_bits(scalars)`` made earlier (checked against the scalars); None: made here.
        blocks: the points' :class:`~cuzk.kernels.ones_blocks.OnesBlocks` (a sample of its sums
            checked): the ones' blocks of 0s and 1s added as sums less their zeros where that
            is fewer additions; None: every one added.

    Returns:
        (2, *coord) affine Montgomery, the same limbs as :func:`~cuzk.kernels.msm_cpu.msm`.

    Raises:
        InputError: bad shapes, lengths, threads, a split that is not of these scalars, or block
            sums that are not of these points.
        FieldValueError: a scalar >= r or a coordinate >= p.
    """
    g = as_msm_group(group)
    threads = resolve_threads(threads)
    table = None if isinstance(points, np.ndarray) else points
    if table is not None:
        _check_table(g, table)
        points = table.points[: table.n]
    points = readonly(check_points(points, "points", (2,) + g.coord, g.fq.modulus, threads))
    scalars = check_field_rows(scalars, "scalars", (4,), g.fr.modulus, threads)
    n = points.shape[0]
    if scalars.shape[0] != n:
        raise InputError(f"need one scalar per point: {n} points, {scalars.shape[0]} scalars")
    split = split_bits(scalars, threads) if split is None else check_split_of(split, scalars, threads)
    if blocks is not None:
        blocks = check_blocks(blocks, g, points)
    others = split.others
    rows, start, values = group_others(scalars, others)
    grouped = len(values) < len(others) and (table is None or len(values) <= _TABLE_GROUPED * len(others))
    parts, tasks = _ones(g, points, split.ones, threads, blocks, split)
    if grouped:
        bases = np.empty((len(values), 2) + g.coord, np.uint64)
        count = np.diff(start, append=len(rows))
        # first: the others' MSM waits for it, the ones' tasks fill the threads around it
        tasks.insert(0, (g.kernels.group_sums, (points, _rows(rows), start, count, bases)))
    run_phases(threads, [tasks])
    if not len(others):
        other = np.zeros((2,) + g.coord, np.uint64)
    elif grouped:
        other = msm_cpu.msm(g, readonly(bases), values, threads)
    elif table is not None:
        other = msm_cpu.msm(g, _sub_table(table, others), scalars[others], threads)
    else:
        other = msm_cpu.msm(g, points[others], scalars[others], threads)
    xyzz = np.concatenate([parts, affine_to_xyzz(other, g.fq)[None]])
    return g.kernels.combine_slices(xyzz, 0, xyzz.shape[0])  # one window: Σ of the rows


def _check_table(g, table) -> None:
    if not isinstance(table, FixedBaseTable):
        raise InputError(f"points must be a uint64 array or a FixedBaseTable, got {type(table).__name__}")
    if table.group != g:
        raise InputError(f"the precomputed table is of {table.group.name.upper()} ({table.group.fq.bits}-bit Fq), "
                         f"the MSM of {g.name.upper()} ({g.fq.bits}-bit Fq)")


def _sub_table(table, rows: np.ndarray):
    """The table of the bases ``rows`` only: their shifted copies, copy j of base i at j·n + i."""
    m, n = table.plan.m, table.n
    idx = (np.arange(m, dtype=np.int64)[:, None] * n + rows[None, :]).reshape(-1)
    return table_from_arrays(table.group, table.plan, table.points[idx], table.skip[rows])
