"""The Pippenger MSM launch plan of the CUDA backend (``msm.cu``), on any runtime.

Counting sort of (bucket, point) pairs → tasks of at most 64 points → bucket accumulation →
tree merge of each bucket's task partials → running-sum segments per window → tree fold →
the window sums back to the host, combined there by the Numba kernel (c·(nw − 1) dependent
doublings: milliseconds for one GPU thread, ~0.1 ms on the CPU). :mod:`cuzk.kernels.cuda`
holds the checked public functions (``msm_g1``, ``msm_g2``).

    >>> msm_window_bits(1 << 20)
    16
"""

from __future__ import annotations

import numpy as np

from cuzk.errors import InputError
from cuzk.kernels.cuda_runtime import BLOCK
from cuzk.kernels.cuda_runtime import grid_size as _grid
from cuzk.kernels import msm_kernels_g1, msm_kernels_g2

__all__ = ["msm_window_bits", "run_msm"]

_BLOCK = BLOCK["BLOCK_ELEMENTWISE"]  # digit kernels; cu/launch.cuh: the kernels' __launch_bounds__
_MSM_TASK_LEN = 64  # a bucket with more points is split into several tasks (duplicates, skew)
_MSM_SEGMENT_LEN = 32  # buckets per running-sum segment: ~B/32 threads per window stay busy
_MSM_FOLD = 16  # partials summed per thread at each tree level (heavy buckets, window segments)
_MSM_BLOCK = BLOCK["BLOCK_CURVE"]  # G2 point kernels use ~255 registers per thread



def msm_window_bits(n: int) -> int:
    """Pippenger window width c for n points (about log2 n - 3, between 4 and 16)."""
    return max(4, min(16, n.bit_length() - 4))


def _split_runs(xp, counts, size: int):
    """Cut each bucket's run of ``counts[b]`` consecutive items into pieces of at most ``size``.

    Returns ``(off, m, bucket, within)``: ``off[b]..off[b+1]`` are bucket b's pieces, m pieces in
    all, piece p belongs to ``bucket[p]`` and starts ``within[p]`` items into its bucket's run.
    """
    chunks = -(-counts // size)
    off = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(chunks)])
    m = int(off[-1])
    if not m:
        return off, 0, None, None
    idx = xp.arange(m, dtype=np.int64)
    bucket = xp.searchsorted(off, idx, side="right") - 1  # cupy.repeat cannot take device counts
    return off, m, bucket, (idx - off[bucket]) * size


def _run_msm_body(rt, group: str, points, scalars, n: int, c: int | None, segment_len: int | None) -> np.ndarray:
    fw = 12 if group == "g1" else 24  # 32-bit words per coordinate
    pw = 4 * fw  # XYZZ point
    xp = rt.xp
    c = c or msm_window_bits(n)
    nw = 255 // c + 1  # room for the signed-digit carry out of bit 254
    B = 1 << (c - 1)
    nb = nw * B
    if nw * n >= 1 << 32:
        raise InputError(f"{n} points x {nw} windows exceed the 2^32 (bucket, point) pairs the kernels index")
    counts = xp.zeros(nb, dtype=np.uint32)
    svals = xp.empty(max(1, nw * n), dtype=np.uint32)  # at most one pair per (window, scalar)
    if n:
        rt.launch("msm_digit_count", _grid(n, _BLOCK), _BLOCK, (scalars, n, c, nw, counts))
    counts = counts.astype(np.int64)
    starts = xp.cumsum(counts) - counts
    if n:
        cursor = starts.astype(np.uint32)
        rt.launch("msm_digit_scatter", _grid(n, _BLOCK), _BLOCK, (scalars, n, c, nw, cursor, svals))
    task_len = getattr(rt, "msm_task_len", _MSM_TASK_LEN)  # the tests' runtime makes these small
    fold = getattr(rt, "msm_fold", _MSM_FOLD)
    task_off, ntasks, tb, within = _split_runs(xp, counts, task_len)
    partial = xp.empty((max(ntasks, 1), pw), dtype=np.uint32)
    if ntasks:
        t_start = (starts[tb] + within).astype(np.uint32)
        t_len = xp.minimum(counts[tb] - within, task_len).astype(np.uint32)
        args = (points, svals, t_start, t_len, partial, ntasks)
        rt.launch(f"{group}_msm_bucket_acc", _grid(ntasks, _MSM_BLOCK), _MSM_BLOCK, args)
    # Real witnesses put most points in a few buckets (every scalar 1 lands in bucket 0 of
    # window 0), so a bucket can own thousands of task partials: sum them in a tree, at most
    # `fold` per thread and level, never in one long serial loop.
    per = task_off[1:] - task_off[:-1]
    while ntasks and int(per.max()) > fold:
        new_off, m, gb, within = _split_runs(xp, per, fold)
        bounds = xp.concatenate([task_off[gb] + within, task_off[-1:]]).astype(np.uint32)
        folded = xp.empty((m, pw), dtype=np.uint32)
        rt.launch(f"{group}_msm_bucket_merge", _grid(m, _MSM_BLOCK), _MSM_BLOCK, (partial, bounds, folded, m))
        partial, task_off, per, ntasks = folded, new_off, new_off[1:] - new_off[:-1], m
    buckets = xp.empty((nb, pw), dtype=np.uint32)
    args = (partial, task_off.astype(np.uint32), buckets, nb)
    rt.launch(f"{group}_msm_bucket_merge", _grid(nb, _MSM_BLOCK), _MSM_BLOCK, args)
    nseg = max(1, B // (segment_len or _MSM_SEGMENT_LEN))
    seg = xp.empty((nw * nseg, pw), dtype=np.uint32)
    args = (buckets, B, nw, nseg, seg)
    rt.launch(f"{group}_msm_window_segments", _grid(nw * nseg, _MSM_BLOCK), _MSM_BLOCK, args)
    while nseg > 1:  # fold segments into window sums, a tree level at a time (nseg is 2^k)
        g = min(fold, nseg)
        m = seg.shape[0] // g
        folded = xp.empty((m, pw), dtype=np.uint32)
        off = xp.arange(0, m * g + 1, g, dtype=np.uint32)
        rt.launch(f"{group}_msm_bucket_merge", _grid(m, _MSM_BLOCK), _MSM_BLOCK, (seg, off, folded, m))
        seg, nseg = folded, nseg // g
    # The Horner combination is c*(nw - 1) dependent doublings: a single GPU thread spends
    # milliseconds on it, the CPU kernel ~0.1 ms. XYZZ words are the same Montgomery limbs.
    sums = rt.asnumpy(seg).view(np.uint64).reshape((nw, 4) + ((6,) if group == "g1" else (2, 6)))
    return (msm_kernels_g1 if group == "g1" else msm_kernels_g2).combine(np.ascontiguousarray(sums), c)


def run_msm(rt, group: str, points, scalars, n: int, c: int | None = None,
            segment_len: int | None = None) -> np.ndarray:
    """Launch plan of the MSM on ``rt`` (``points``/``scalars`` uint32 ``rt`` arrays); returns the
    affine result as host uint64 ``(2, 6)`` / ``(2, 2, 6)`` (zeros = infinity).

    ``c`` (window width) and ``segment_len`` (buckets per running-sum thread, a power of two)
    override the defaults; the tests and ``benchmarks/gpu_check.py --sweep`` use them.
    """
    if segment_len is not None and (segment_len < 1 or segment_len & (segment_len - 1)):
        raise InputError(f"segment_len must be a power of two, got {segment_len}")
    with rt.context():
        return _run_msm_body(rt, group, points, scalars, n, c, segment_len)


