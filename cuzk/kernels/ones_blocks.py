"""Block sums of a key's query points: a bit-aware MSM's ones summed with fewer additions.

A bit-aware MSM (:mod:`cuzk.kernels.msm_bits`) adds the point of every row whose scalar is 1:
one batch-affine addition each, the floor of that MSM on a PoRep witness (docs/perf/kernels.md,
"The bit-aware MSM on PoRep witnesses"). A key's points are the same in every proof, so the sum
of each block of ``block`` consecutive points can be made once. Then a block whose rows are all
0 or 1 costs min(ones, 1 + zeros) additions: its ones one by one, or its sum with each zero's
point taken off. On the 2 KiB PoRep partition's witness the ones' 1,265,775 additions (A) become
0.788 of that with blocks of 4 (a table of a quarter of the query's points), 0.752 with pairs (a
half) and 0.828 with blocks of 8.

:func:`plan_sources` writes what to add as signed sources (in row order: the points are read as
the key lies), the form the generated ``sum_rows`` and ``gather_sources`` kernels read: a row r of the points, n + b for block b's sum, −1 − r for
the negated point of row r.

    >>> import numpy as np
    >>> from cuzk.curves import get
    >>> cpu = get("bls12_381").kernels
    >>> g = cpu.group("g1")
    >>> pts = cpu.batch_mul_g1(get("bls12_381").G1.generator(), np.arange(1, 9, dtype=np.uint64)[:, None] * np.array([1, 0, 0, 0], np.uint64))
    >>> blocks = ones_blocks(g, pts, block=4)
    >>> k = np.array([[1, 0, 0, 0]] * 3 + [[0, 0, 0, 0]] + [[1, 0, 0, 0]] + [[0, 0, 0, 0]] * 3, np.uint64)
    >>> bool((cpu.msm_bits_g1(pts, k, blocks=blocks) == cpu.msm_g1(pts, k)).all())
    True
"""

from __future__ import annotations

import numbers

import attrs
import numpy as np
from numba import njit

from cuzk.errors import InputError
from cuzk.field.jit import readonly
from cuzk.kernels.cpu_threads import resolve_threads, run_phases
from cuzk.kernels.msm_group import as_msm_group

__all__ = ["OnesBlocks", "ones_blocks", "plan_sources", "planned_sources", "check_blocks", "check_block", "BLOCK_SIZES",
           "DEFAULT_BLOCK"]

#: block sizes a table may have: pairs take half the query's bytes and save the most, blocks of
#: 8 an eighth and save the least (module doc)
BLOCK_SIZES = (2, 4, 8)
#: a quarter of the query's bytes for most of the pairs' saving
DEFAULT_BLOCK = 4
_BUILD_BLOCKS = 1 << 15  # blocks per build task: its gathered copy is 4 × 2^15 points (12 MiB G1)
_SAMPLE = 64  # blocks recomputed when a table is handed to an MSM


@attrs.frozen(eq=False)
class OnesBlocks:
    """The sums of a query's points in blocks of ``block`` consecutive rows.

    Attributes:
        group: the :class:`~cuzk.kernels.msm_cpu.MsmGroup` of the points.
        block: rows per block.
        n: rows of the points the table is of (a last partial block has no sum).
        sums: (n // block, 2, *coord) affine Montgomery, read-only.
    """

    group: object
    block: int
    n: int
    sums: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.sums.nbytes

    def __repr__(self) -> str:
        return f"OnesBlocks({self.group.name}, block={self.block}, n={self.n}, {self.nbytes / 2**20:.1f} MiB)"


def ones_blocks(group, points: np.ndarray, block: int = DEFAULT_BLOCK, threads=None) -> OnesBlocks:
    """The :class:`OnesBlocks` of ``points`` ((n, 2, *coord) affine Montgomery, checked by the
    caller as an MSM's points are): ~(block − 1)/block batch-affine additions per point, once.

    Raises:
        InputError: a block size not in :data:`BLOCK_SIZES`, points of another shape, or bad threads.
    """
    g = as_msm_group(group)
    block = check_block(block)
    threads = resolve_threads(threads)
    if not isinstance(points, np.ndarray) or points.dtype != np.uint64 or points.shape[1:] != (2,) + g.coord:
        got = f"{points.shape} {points.dtype}" if isinstance(points, np.ndarray) else type(points).__name__
        raise InputError(f"points must be an (n, 2, {', '.join(map(str, g.coord))}) uint64 array, got {got}")
    points = readonly(np.ascontiguousarray(points))
    n = points.shape[0]
    nb = n // block
    sums = np.empty((nb, 2) + g.coord, np.uint64)
    tasks = []
    for lo in range(0, nb, _BUILD_BLOCKS):
        hi = min(nb, lo + _BUILD_BLOCKS)
        tasks.append((_sum_blocks, (g, points, block, np.arange(lo, hi), sums[lo:hi])))
    run_phases(threads, [tasks])
    sums.flags.writeable = False
    return OnesBlocks(g, block, n, sums)


def _sum_blocks(g, points, block: int, picks: np.ndarray, out: np.ndarray) -> None:
    """out[j] = the sum of block picks[j] of ``points`` (the generated ``group_sums``)."""
    rows = readonly((picks[:, None] * block + np.arange(block)).reshape(-1).astype(np.int64))
    start = np.arange(0, len(picks) * block, block, dtype=np.int64)  # writable, as msm_bits' groups
    count = np.full(len(picks), block, np.int64)
    g.kernels.group_sums(points, rows, start, count, out)


def check_block(block) -> int:
    if isinstance(block, bool) or not isinstance(block, numbers.Integral) or int(block) not in BLOCK_SIZES:
        raise InputError(f"block must be one of {BLOCK_SIZES}, got {block!r}")
    return int(block)


def check_blocks(blocks, g, points: np.ndarray) -> OnesBlocks:
    """``blocks`` if it is a table of these points: the group and row count, and the sums of
    :data:`_SAMPLE` blocks spread over the table recomputed (as a fixed-base table handed in
    is sampled: docs/kernel-contracts.md).

    Raises:
        InputError: not an OnesBlocks, of another group or length, or a sampled sum that differs.
    """
    if not isinstance(blocks, OnesBlocks):
        raise InputError(f"blocks must be a cuzk.kernels.ones_blocks.OnesBlocks (ones_blocks(group, points)), "
                         f"got {type(blocks).__name__}")
    if blocks.group != g:
        raise InputError(f"the block sums are of {blocks.group.name.upper()}, the MSM of {g.name.upper()}")
    if blocks.n != points.shape[0]:
        raise InputError(f"the block sums are of {blocks.n} points, the MSM has {points.shape[0]}")
    nb = blocks.sums.shape[0]
    if nb != blocks.n // blocks.block or blocks.sums.shape[1:] != (2,) + g.coord:
        raise InputError(f"the block sums have shape {blocks.sums.shape}, not ({blocks.n // blocks.block}, 2, "
                         f"{', '.join(map(str, g.coord))})")
    if nb:
        picks = np.unique(np.linspace(0, nb - 1, min(nb, _SAMPLE)).astype(np.int64))
        got = np.empty((len(picks), 2) + g.coord, np.uint64)
        _sum_blocks(g, points, blocks.block, picks, got)
        bad = np.flatnonzero(np.any((got != blocks.sums[picks]).reshape(len(picks), -1), axis=1))
        if len(bad):
            raise InputError(f"the block sums are not of these points (block {int(picks[bad[0]])} differs): "
                             f"make them with ones_blocks(group, points)")
    return blocks


@njit(cache=True, nogil=True)
def _plan(n, block, b0, b1, ones, io, zeros, iz, out, ends, k):
    """Signed sources for the ones of blocks [b0, b1) (module doc), written into ``out`` from
    ``io`` (room for the range's ones; the last range's also takes the ones past the last whole
    block); ends[k] = where they end. ``ones`` and ``zeros`` increasing (a BitSplit's), ``io`` and
    ``iz`` their first entries in the range. In row order, so the points are read as the key
    lies (grouping the sources by kind measured slower: the points' cache lines are shared)."""
    m = io
    no = ones.shape[0]
    nz = zeros.shape[0]
    for b in range(b0, b1):
        hi = (b + 1) * block
        o0 = io
        while io < no and ones[io] < hi:
            io += 1
        z0 = iz
        while iz < nz and zeros[iz] < hi:
            iz += 1
        k1 = io - o0
        k0 = iz - z0
        if k1 + k0 == block and 1 + k0 < k1:  # no other rows, and fewer additions from the sum
            out[m] = n + b
            m += 1
            for t in range(z0, iz):
                out[m] = -1 - zeros[t]
                m += 1
        else:
            for t in range(o0, io):
                out[m] = ones[t]
                m += 1
    if b1 == n // block:
        while io < no:
            out[m] = ones[io]
            m += 1
            io += 1
    ends[k] = m


def plan_sources(blocks: OnesBlocks, split, parts: int) -> tuple[np.ndarray, list]:
    """(sources, plans): room for the signed sources whose points sum to Σ points[split.ones]
    (the block sums used where a block's zeros are fewer than its ones less one), and ``parts``
    plans over ranges of blocks, each ``(fn, args, lo, ends, k)``: ``fn(*args)`` writes its
    range's sources into ``sources`` from ``lo`` to ``ends[k]`` (room is left after them). Run
    in the summing tasks themselves (each plans its range, then sums it), so planning takes no
    phase of its own; :func:`planned_sources` runs them all."""
    ones = readonly(np.ascontiguousarray(split.ones, np.int64))
    zeros = readonly(np.ascontiguousarray(split.zeros, np.int64))
    n, b = blocks.n, blocks.block
    nb = n // b
    bcut = np.array([k * nb // parts for k in range(parts + 1)], np.int64)
    ocut = np.searchsorted(ones, bcut * b)
    zcut = np.searchsorted(zeros, bcut * b)
    out = np.empty(len(ones), np.int64)
    ends = np.zeros(parts, np.int64)
    plans = [(_plan, (np.int64(n), np.int64(b), bcut[k], bcut[k + 1], ones, np.int64(ocut[k]), zeros,
                      np.int64(zcut[k]), out, ends, np.int64(k)), int(ocut[k]), ends, k) for k in range(parts)]
    return out, plans


def planned_sources(blocks: OnesBlocks, split, threads=None) -> np.ndarray:
    """The signed sources (read-only int64, in row order) whose points sum to Σ points[split.ones]."""
    threads = resolve_threads(threads)
    out, plans = plan_sources(blocks, split, max(1, min(4 * threads, len(split.ones) >> 16)))
    run_phases(threads, [[(fn, args) for fn, args, *_ in plans]])
    return readonly(np.concatenate([out[lo:ends[k]] for _, _, lo, ends, k in plans]))
