"""The Pippenger MSM launch plan of the CUDA backend (``msm.cu``), on any runtime.

Counting sort of the (bucket, point) pairs (digit count → prefix sum → scatter) → equal slices of
the sorted pairs, one thread each → cut buckets summed from their pieces (a tree for heavy
buckets) → running-sum segments per window → fold levels → the window sums back to the host,
combined there by the Numba kernel (c·(nw − 1) dependent doublings: milliseconds for one GPU
thread, ~0.1 ms on the CPU). Every step is a kernel of the module: no CuPy element-wise kernel
(compiled by CuPy on first use) and no host round trip before the window sums come back.
:mod:`cuzk.kernels.cuda` holds the checked public functions (``msm_g1``, ``msm_g2``).

    >>> msm_window_bits(1 << 20)
    16
    >>> MSM_MAX_POINTS == (1 << 28) - 1
    True
"""

from __future__ import annotations

import numpy as np

from cuzk.errors import InputError
from cuzk.kernels.cuda_runtime import BLOCK
from cuzk.kernels.cuda_runtime import grid_size as _grid
from cuzk.kernels.scalar_digits import SCALAR_BITS, num_windows

__all__ = ["msm_window_bits", "msm_windows", "check_msm_size", "run_msm", "MSM_MAX_POINTS", "MSM_PHASES"]

_BLOCK = BLOCK["BLOCK_ELEMENTWISE"]  # digit and scan kernels; cu/launch.cuh: the kernels' __launch_bounds__
_MSM_BLOCK = BLOCK["BLOCK_CURVE"]  # G2 point kernels use ~255 registers per thread
_SCAN_PER_THREAD = 8  # msm_scan_blocks: consecutive values summed by one thread
_MSM_SLICE = 32  # sorted pairs per accumulation thread (the mean bucket size at 2^20, c = 16)
_MSM_TREE_FOLD = 4  # heavy-bucket tree: slices (then nodes) summed per node
# buckets per running-sum thread, by group: G1 16 (2,048 threads per window at c = 16), the best of
# 4-32 in both H200 window sweeps at 2^20 (21.86 / 22.00 ms against 22.28 / 22.35 with 8,
# docs/perf/cuda.md); G2 keeps 8 (4,096 threads), its sweep not run yet
_MSM_SEGMENT_LEN = {"g1": 16, "g2": 8}
_MSM_FOLD = 4  # window-sum entries combined per thread and fold level
_PAIR_LIMIT = 1 << 32  # uint32 positions into the sorted pairs (msm.cu)

#: Phases of one MSM, in order, as ``run_msm(..., marks=[])`` reports them.
MSM_PHASES = ("sort", "accumulate", "merge", "segments", "fold", "host combine")


def msm_window_bits(n: int) -> int:
    """Pippenger window width c for n points (about log2 n - 3, between 4 and 16)."""
    return max(4, min(16, n.bit_length() - 4))


def msm_windows(c: int, bits: int = SCALAR_BITS) -> int:
    """Signed-digit windows of width c over scalars below 2^bits, room for the last carry
    included: the CPU MSM's count (:func:`cuzk.kernels.scalar_digits.num_windows`), which the
    digit kernels of msm.cu follow (r < 2^255 on every curve the generator takes,
    scripts/cuzk_codegen/cuda_params.py)."""
    return num_windows(c, bits)


#: The most points one CUDA MSM takes at its default window width: nw·n (bucket, point) pairs
#: must stay below 2^32 (c = 16 → 16 windows → n < 2^28).
MSM_MAX_POINTS = (_PAIR_LIMIT - 1) // msm_windows(16)


def check_msm_size(n: int, c: int | None = None, bits: int = SCALAR_BITS) -> None:
    """Refuse an MSM whose (bucket, point) pairs would overflow the kernels' uint32 positions.

    Raises:
        InputError: nw·n ≥ 2^32 (n > ``MSM_MAX_POINTS`` at the default window width).
    """
    c = c or msm_window_bits(n)
    nw = msm_windows(c, bits)
    if nw * n >= _PAIR_LIMIT:
        raise InputError(f"MSM of {n:,} points x {nw} windows (c={c}) exceeds the 2^32 (bucket, point) pairs the "
                         f"CUDA kernels index: at most {(_PAIR_LIMIT - 1) // nw:,} points; split the MSM")


def _exclusive_scan(rt, x, n: int, out, cursor) -> None:
    """out[i] = x[0] + ... + x[i-1] for i < n, and cursor = a copy (uint32 device arrays)."""
    xp = rt.xp
    blk = getattr(rt, "scan_block", _BLOCK)  # the tests' runtime uses few threads per block
    chunk = _SCAN_PER_THREAD * blk
    nblk = -(-n // chunk)
    sums = xp.empty(nblk, dtype=np.uint32)
    rt.launch("msm_scan_blocks", nblk, blk, (x, n, out, sums))
    if nblk == 1:
        offs = xp.zeros(1, dtype=np.uint32)
    else:
        offs = xp.empty(nblk, dtype=np.uint32)
        _exclusive_scan(rt, sums, nblk, offs, offs)
    rt.launch("msm_scan_add", nblk, blk, (out, n, offs, cursor))


def _tree_levels(n: int, nslices: int, slice_len: int, fold: int) -> int:
    """Heavy-tree levels worth building: a bucket holds at most n pairs (one per scalar in its
    window), so it cuts across at most n / slice_len + 2 slices."""
    levels, span = 0, fold
    while span <= min(nslices, -(-n // slice_len)):
        levels, span = levels + 1, span * fold
    return levels


def _tree_size(nslices: int, fold: int, levels: int) -> int:
    return sum(nslices // fold**m for m in range(1, levels + 1))


def _run_msm_body(rt, group: str, points, scalars, n: int, c: int | None, segment_len: int | None,
                  marks: list | None, bits: int) -> np.ndarray:
    curve = rt.curve
    fw = curve.coord_words(group)  # 32-bit words per coordinate
    pw = 4 * fw  # XYZZ point
    xp = rt.xp
    c = c or msm_window_bits(n)
    check_msm_size(n, c, bits)
    nw = msm_windows(c, bits)
    B = 1 << (c - 1)
    nb = nw * B

    def mark(phase):
        if marks is not None:
            marks.append((phase, rt.mark()))

    if marks is not None:
        marks.append(("start", rt.mark()))
    # counting sort: bucket sizes, their exclusive prefix sum (starts[nb] = number of pairs), scatter
    counts = xp.zeros(nb + 1, dtype=np.uint32)  # one extra zero: the scan's last entry is the total
    starts = xp.empty(nb + 1, dtype=np.uint32)
    cursor = xp.empty(nb + 1, dtype=np.uint32)
    svals = xp.empty(max(1, nw * n), dtype=np.uint32)  # at most one pair per (window, scalar)
    if n:
        rt.launch("msm_digit_count", _grid(n, _BLOCK), _BLOCK, (scalars, n, c, nw, counts))
    _exclusive_scan(rt, counts, nb + 1, starts, cursor)
    if n:
        rt.launch("msm_digit_scatter", _grid(n, _BLOCK), _BLOCK, (scalars, n, c, nw, cursor, svals))
    mark("sort")
    # equal slices of the sorted pairs (the number of pairs stays on the device: threads past it exit)
    S = getattr(rt, "msm_slice", _MSM_SLICE)  # the tests' runtime makes these small
    tfold = getattr(rt, "msm_tree_fold", _MSM_TREE_FOLD)
    nslices = max(1, -(-(nw * n) // S))
    buckets = xp.empty((nb, pw), dtype=np.uint32)
    head = xp.empty((nslices, pw), dtype=np.uint32)
    tail = xp.empty((nslices, pw), dtype=np.uint32)
    head_key = xp.empty(nslices, dtype=np.uint32)
    args = (points, svals, starts, nb, S, nslices, buckets, head, tail, head_key)
    rt.launch(f"{group}_msm_bucket_acc", _grid(nslices, _MSM_BLOCK), _MSM_BLOCK, args)
    mark("accumulate")
    levels = _tree_levels(n, nslices, S, tfold)
    tree = xp.empty((max(1, _tree_size(nslices, tfold, levels)), pw), dtype=np.uint32)
    for level in range(1, levels + 1):
        nodes = nslices // tfold**level
        args = (head, head_key, nslices, tfold, level, tree)
        rt.launch(f"{group}_msm_heavy_tree", _grid(nodes, _MSM_BLOCK), _MSM_BLOCK, args)
    args = (starts, nb, S, nslices, head, tail, tree, tfold, levels, buckets)
    rt.launch(f"{group}_msm_bucket_fixup", _grid(nb, _MSM_BLOCK), _MSM_BLOCK, args)
    mark("merge")
    # each window's sum_j (j+1)*bucket_j: segments of L buckets, then fold levels
    L = min(segment_len or _MSM_SEGMENT_LEN[group], B)
    per = B // L
    seg = xp.empty((nw * per * 2, pw), dtype=np.uint32)
    rt.launch(f"{group}_msm_window_segments", _grid(nw * per, _MSM_BLOCK), _MSM_BLOCK, (buckets, B, nw, L, seg))
    mark("segments")
    fold = getattr(rt, "msm_fold", _MSM_FOLD)
    while per > 1:
        out_per = per // min(fold, per)
        folded = xp.empty((nw * out_per * 2, pw), dtype=np.uint32)
        rt.launch(f"{group}_msm_window_fold", _grid(nw * out_per, _MSM_BLOCK), _MSM_BLOCK, (seg, per, fold, nw, folded))
        seg, per = folded, out_per
    mark("fold")
    # The Horner combination is c*(nw - 1) dependent doublings: a single GPU thread spends
    # milliseconds on it, the CPU kernel ~0.1 ms. XYZZ words are the same Montgomery limbs.
    sums = rt.asnumpy(seg).reshape(nw, 2, pw)[:, 0]
    sums = np.ascontiguousarray(sums).view(np.uint64).reshape((nw, 4) + curve.point_tail(group)[1:])
    out = curve.combine(group)(sums, c)
    mark("host combine")
    return out


def run_msm(rt, group: str, points, scalars, n: int, c: int | None = None, segment_len: int | None = None,
            marks: list | None = None, scalar_bits: int = SCALAR_BITS) -> np.ndarray:
    """Launch plan of the MSM on ``rt`` (``points``/``scalars`` uint32 ``rt`` arrays of the runtime's
    curve); returns the affine result as host uint64 ``(2, L)`` / ``(2, 2, L)`` (L = the Fq limbs;
    zeros = infinity).

    ``c`` (window width) and ``segment_len`` (buckets per running-sum thread, a power of two)
    override the defaults; the tests and ``benchmarks/gpu_check.py``'s sweep use them. ``marks``,
    a list, receives ``(phase, rt.mark())`` at the start and after each of :data:`MSM_PHASES`
    (``rt.elapsed_ms(a, b)`` turns two marks into milliseconds). ``scalar_bits``: the caller's
    promise that every scalar is below 2^scalar_bits, so the plan runs only the windows those bits
    need (scalars above it sum wrongly: the checked entry points never pass it). It is the shape
    an endomorphism split would give, twice the points at half the bits, which the GPU script
    times (``benchmarks/gpu_check_sections.py``, section "GLV shape") before any split is built.

    Raises:
        InputError: ``segment_len`` not a power of two; ``scalar_bits`` outside 1..255; nw·n ≥
            2^32 (:func:`check_msm_size`).
    """
    if segment_len is not None and (segment_len < 1 or segment_len & (segment_len - 1)):
        raise InputError(f"segment_len must be a power of two, got {segment_len}")
    if isinstance(scalar_bits, bool) or not isinstance(scalar_bits, int) or not 1 <= scalar_bits <= SCALAR_BITS:
        raise InputError(f"scalar_bits must be an int in 1..{SCALAR_BITS}, got {scalar_bits!r}")
    with rt.context():
        return _run_msm_body(rt, group, points, scalars, n, c, segment_len, marks, scalar_bits)
