"""The bit-aware MSM's launch plan on the CUDA backend (``msm_bits.cu``), on any runtime.

Given the host's :class:`~cuzk.kernels.bit_split.BitSplit` of the scalars: the indices of the
ones go to the device and ``*_bits_sum_points`` sums those points of the resident key (per-block
partial sums, a tree in shared memory), ``*_bits_sum_xyzz`` folds the partial sums until at most
``_HOST_ROWS`` remain; the other rows' points are gathered out of the key (``bits_gather_rows``)
and run the general MSM (:func:`cuzk.kernels.cuda_msm.run_msm`) with their scalars; the host adds
the parts with the curve's Numba ``combine`` (at window width 0: a plain sum). The zeros cost
nothing. :class:`~cuzk.kernels.cuda_kernels.CudaKernels` holds the checked public functions
(``msm_bits_g1``, ``msm_bits_g2``).

    >>> sum_launches(1 << 20, 128)
    [1024, 1]
"""

from __future__ import annotations

import numpy as np

from cuzk.kernels.bit_split import BitSplit
from cuzk.kernels.cuda_msm import run_msm
from cuzk.kernels.cuda_runtime import BLOCK
from cuzk.kernels.cuda_runtime import grid_size as _grid
from cuzk.kernels.msm_bits import affine_to_xyzz

__all__ = ["run_msm_bits", "run_ones_sum", "sum_launches", "gather_rows"]

_SUM_BLOCK = BLOCK["BLOCK_CURVE"]  # a power of two: the block tree halves it (msm_bits.cu)
_GATHER_BLOCK = BLOCK["BLOCK_ELEMENTWISE"]
_PER_THREAD = 8  # points (or partial sums) a thread adds before the block's tree
_HOST_ROWS = 64  # partial sums the host adds itself (~1 µs each) rather than launch another level


def sum_launches(m: int, block: int = _SUM_BLOCK) -> list[int]:
    """The blocks of each launch that sums m points: the points' pass, then the tree levels
    until at most ``_HOST_ROWS`` partial sums are left (nothing for m = 0)."""
    out, rows = [], m
    while rows > (_HOST_ROWS if out else 0):
        rows = _grid(rows, block * _PER_THREAD)
        out.append(rows)
    return out


def _check_block(block: int) -> int:
    if block < 1 or block & (block - 1):  # the block tree halves the threads down to one
        raise ValueError(f"the bit sums need a power-of-two block, got {block}")
    return block


def run_ones_sum(rt, group: str, points, idx, m: int) -> np.ndarray:
    """Σ points[idx[j]] for j < m as host XYZZ rows ``(k, 4, *coord)`` uint64 (k ≤ _HOST_ROWS;
    zero rows for m = 0); ``points``, ``idx`` uint32 ``rt`` arrays."""
    curve, xp = rt.curve, rt.xp
    pw = 4 * curve.coord_words(group)
    block = _check_block(getattr(rt, "bits_block", _SUM_BLOCK))  # the tests' runtime may use fewer threads
    smem = (block // 2) * pw * 4
    tail = (4,) + curve.point_tail(group)[1:]
    cur, rows = None, m
    for level, blocks in enumerate(sum_launches(m, block)):
        out = xp.empty((blocks, pw), dtype=np.uint32)
        if level == 0:
            rt.launch(f"{group}_bits_sum_points", blocks, block, (points, idx, m, out), smem)
        else:
            rt.launch(f"{group}_bits_sum_xyzz", blocks, block, (cur, rows, out), smem)
        cur, rows = out, blocks
    if cur is None:
        return np.zeros((0,) + tail, np.uint64)
    return np.ascontiguousarray(rt.asnumpy(cur)).view(np.uint64).reshape((rows,) + tail)


def gather_rows(rt, rows, idx, words: int):
    """``rows[idx]`` on the device: ``rows`` a uint32 ``rt`` array of ``words``-word rows (points
    of either group, Fr values), ``idx`` a uint32 ``rt`` array of row numbers (in range: the
    caller's, as the kernel does not check). Launched on the calling thread's compute stream
    (in ``rt.context()``)."""
    k = len(idx)
    out = rt.xp.empty((k, words), dtype=np.uint32)
    if k:
        rt.launch("bits_gather_rows", _grid(k * words, _GATHER_BLOCK), _GATHER_BLOCK, (rows, idx, k, words, out))
    return out


def run_msm_bits(rt, group: str, points, split: BitSplit, scalars: np.ndarray) -> np.ndarray:
    """Σ scalars[i]·points[i] by the split: ``points`` a uint32 ``rt`` array of the n affine
    points (the resident key's words), ``scalars`` the host (n, 4) canonical rows the split is
    of (only the others' are copied). Returns the affine result as host uint64, as
    :func:`~cuzk.kernels.cuda_msm.run_msm`."""
    curve = rt.curve
    aw = 2 * curve.coord_words(group)  # 32-bit words per affine point
    tail = curve.point_tail(group)
    with rt.context():
        m = len(split.ones)
        ones = rt.asarray(split.ones.astype(np.uint32)) if m else None
        parts = run_ones_sum(rt, group, points, ones, m)
        k = len(split.others)
        other = np.zeros(tail, np.uint64)
        if k:
            gathered = gather_rows(rt, points, rt.asarray(split.others.astype(np.uint32)), aw)
            sc = rt.asarray(np.ascontiguousarray(scalars[split.others]).view(np.uint32))
            other = run_msm(rt, group, gathered, sc, k)
    rows = np.concatenate([parts, affine_to_xyzz(other, curve.fq)[None]])
    return curve.combine(group)(rows, 0)  # window width 0: Σ of the rows
