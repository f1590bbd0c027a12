"""The NTT launch plan of the CUDA backend (``ntt.cu``) and the runtime's cached device constants.

Passes (:func:`ntt_plan`): the stages split evenly over ceil(log n / stages-per-pass) shared-memory
passes, with 8 consecutive columns per block whenever a pass has strided rows. Twiddle tables and
small Fr constants are made on the device once per stream and kept in the runtime's bounded
cache (:func:`_cached`). :mod:`cuzk.kernels.cuda` holds the checked public ``ntt``.

    >>> ntt_plan(24)
    [(0, 6, 8), (6, 6, 8), (12, 6, 8), (18, 6, 8)]
"""

from __future__ import annotations

import numpy as np

from cuzk.field.params import FieldParams
from cuzk.kernels.cuda_runtime import BLOCK, grid_size

__all__ = ["ntt_plan", "run_ntt", "scaled_by_powers", "fr_const", "MAX_LOG_N"]

_BLOCK = BLOCK["BLOCK_ELEMENTWISE"]  # cu/launch.cuh: the kernels' __launch_bounds__
_NTT_MAX_STAGES = BLOCK["NTT_MAX_STAGES"]  # stages of a pass with one column per block (2^(k-1) threads)
_NTT_BLOCK = BLOCK["BLOCK_NTT"]  # threads per ntt_stages block at most: columns x 2^(k-1)
_NTT_COLUMNS = 8  # consecutive columns per block in passes with strided rows: 8 x 32 B = 256 B per warp load
_NTT_WIDE_STAGES = 7  # stages per pass with 8 columns: 8 x 2^7 x 32 B = 32 KiB of shared memory
# Default plans give a strided pass at most this many threads per block (fewer columns for a
# 7-stage pass): the H200 sweep (docs/perf/cuda.md) found 7+7+6 stages at 2^20 best with 4
# columns (256 threads; kernels 0.386 / 0.388 ms against 0.409 / 0.413 with 8 columns, two runs)
# and 6+6+6+6 at 2^24 best with 8 (256 threads; 8+8+8 with 4 columns, 512 threads, was slowest).
# The rule's own mix at 2^20 (4, 4, then 8 columns for the 6-stage pass) is inferred from those
# two; gpu_check's sweep times it as "(default)" beside the uniform plans.
_NTT_PREFERRED_THREADS = 256
_POWERS_PER_THREAD = 16  # consecutive powers per thread: one pow_u32 then 15 multiplications
_TWIDDLE_TABLES = 6  # cached (n, w) twiddle tables per runtime: forward + inverse for 3 sizes
MAX_LOG_N = 28  # uint32 indices and twiddle exponents inside the kernels


def _fr_mont32(fr: FieldParams, x: int) -> np.ndarray:
    m = fr.to_mont_int(x % fr.modulus)
    return np.array([(m >> (32 * i)) & 0xFFFFFFFF for i in range(2 * fr.limbs)], dtype=np.uint32)


# ---------------------------------------------------------------- NTT plan
_CONSTANTS = 64  # cached single-element Fr constants per runtime (shifts, 1/n, z^-1, R^-1)


def _cached(rt, key: tuple, bound: int, make):
    """``rt.cache[key]``, made by ``make()`` on first use by the calling thread's stream.

    Entries are per stream (the runtime's ``stream_key``): GPU workers share the runtime, each
    with its own stream, and CuPy returns a freed block to the pool of the stream that allocated
    it, where that stream reuses it at once. A table shared across streams and evicted (or
    dropped by a thread still holding it) could be overwritten by its maker's next allocation
    while another stream's queued kernels still read it; a table only its own stream reads is
    reused only in that stream's order. Entries of one kind (``key[0]``) are bounded across all
    streams: the oldest go first. The lock is reentrant: making a twiddle table uploads constants.
    """
    key = (key[0], getattr(rt, "stream_key", lambda: 0)(), *key[1:])
    with rt.cache_lock:
        d = rt.cache.get(key)
        if d is None:
            same = [k for k in rt.cache if k[0] == key[0]]
            for k in same[: max(0, len(same) - bound + 1)]:
                rt.cache.pop(k)
            d = rt.cache[key] = make()
    return d


def fr_const(rt, x: int):
    """``x`` as a one-element device array, uploaded once per runtime: a proof's H reuses the
    same few constants, and a fresh tiny upload per launch is a host-to-device copy that can
    stall the host until the stream drains. ``x`` is an element of the runtime's curve's Fr."""
    fr = rt.curve.fr
    return _cached(rt, ("fr_const", x % fr.modulus), _CONSTANTS, lambda: rt.asarray(_fr_mont32(fr, x)))


def _launch_powers(rt, out, src, base: int, scale: int, n: int) -> None:
    """out[i] = scale * base^i (src None) or src[i] * scale * base^i (src may be out)."""
    threads = -(-n // _POWERS_PER_THREAD)
    args = (out, out if src is None else src, fr_const(rt, base), fr_const(rt, scale), n, _POWERS_PER_THREAD,
            int(src is not None))
    rt.launch("fr_powers", grid_size(threads, _BLOCK), _BLOCK, args)


def _powers(rt, base: int, scale: int, n: int):
    """A new device array of scale * base^i, i < n."""
    out = rt.xp.empty((n, rt.curve.fr_words), dtype=np.uint32)
    _launch_powers(rt, out, None, base, scale, n)
    return out


def _scaled_by_powers(rt, x, base: int, scale: int, n: int, out=None):
    """x[i] * scale * base^i into ``out`` (a new array if None; ``x`` itself scales in place)."""
    out = rt.xp.empty_like(x) if out is None else out
    _launch_powers(rt, out, x, base, scale, n)
    return out


def ntt_plan(log_n: int, max_stages: int | None = None, columns: int | None = None) -> list[tuple[int, int, int]]:
    """The passes of a 2^log_n NTT: ``(s0, k, C)`` = stages s0 .. s0+k-1 over blocks of C columns.

    The stages are split evenly over ceil(log_n / max_stages) passes (larger passes first), so no
    pass is left with a handful of stages in tiny blocks. One pass does up to 10 stages with one
    column per block; more passes do up to 7 stages each with up to 8 columns per block (a block's
    threads (C x 2^(k-1) <= 512) and tile (C x 2^k x 32 B <= 32 KiB) bound C x 2^k by 1024), and
    without an explicit ``columns`` at most 256 threads per block (4 columns for 7 stages).

        >>> ntt_plan(20)
        [(0, 7, 4), (7, 7, 4), (14, 6, 8)]
        >>> ntt_plan(21, 10, 1)
        [(0, 7, 1), (7, 7, 1), (14, 7, 1)]
        >>> ntt_plan(10)
        [(0, 10, 1)]
    """
    if log_n == 0:
        return []
    if max_stages is None:
        max_stages = _NTT_MAX_STAGES if log_n <= _NTT_MAX_STAGES else _NTT_WIDE_STAGES
    threads = _NTT_BLOCK if columns is not None else _NTT_PREFERRED_THREADS  # an explicit width is kept
    columns = _NTT_COLUMNS if columns is None else columns
    passes = -(-log_n // max_stages)
    base, extra = divmod(log_n, passes)
    plan, s0 = [], 0
    for p in range(passes):
        k = base + (p < extra)
        c = min(columns, max(1, threads >> (k - 1)), _NTT_BLOCK >> (k - 1), 1 << (log_n - k),
                1 << s0 if s0 else 1 << 31)
        plan.append((s0, k, 1 << (c.bit_length() - 1)))  # a power of two
        s0 += k
    return plan


def _run_ntt_body(rt, x, log_n: int, omega: int, shift: int | None, inverse: bool, marks: list | None = None):
    n = 1 << log_n
    r = rt.curve.fr.modulus
    w = pow(omega, -1, r) if inverse else omega
    # bounded: a 2^24 table is 256 MiB
    tw = _cached(rt, ("twiddles", n, w), _TWIDDLE_TABLES, lambda: _powers(rt, w, 1, max(1, n // 2)))
    if marks is not None:
        marks.append(("start", rt.mark()))
    if not inverse and shift not in (None, 1):  # into a new array: the caller's stays as it was
        x = _scaled_by_powers(rt, x, shift, 1, n)
        if marks is not None:
            marks.append(("coset scale", rt.mark()))
    out = rt.xp.empty_like(x)
    if log_n == 0:
        _launch_powers(rt, out, x, 1, 1, 1)  # a copy (x * 1), without a CuPy kernel
    plan = ntt_plan(log_n, getattr(rt, "ntt_max_stages", None), getattr(rt, "ntt_columns", None))
    src, elem_bytes = x, 4 * rt.curve.fr_words  # shared memory holds a block's tile of Fr elements
    for s0, k, cols in plan:  # the first pass reads x in bit-reversed order, later passes work in place
        blocks = n // (cols << k)
        args = (src, out, tw, log_n, s0, k, cols.bit_length() - 1)
        rt.launch("ntt_stages", blocks, cols << (k - 1), args, smem=(cols << k) * elem_bytes)
        src = out
        if marks is not None:
            marks.append((f"pass s0={s0} k={k} C={cols}", rt.mark()))
    if inverse:
        sh_inv = pow(shift, -1, r) if shift not in (None, 1) else 1
        _scaled_by_powers(rt, out, sh_inv, pow(n, -1, r), n, out=out)
        if marks is not None:
            marks.append(("1/n scale", rt.mark()))
    return out


def run_ntt(rt, x, log_n: int, omega: int, shift: int | None, inverse: bool, marks: list | None = None):
    """Launch plan of :func:`ntt` on runtime ``rt``: ``x`` is an ``rt`` uint32 ``(n, W)`` array of
    Montgomery Fr of the runtime's curve (W = ``rt.curve.fr_words``), ``omega`` a 2^log_n-th root of unity.

    Forward: scale by shift^i, bit-reverse, DIT stages with w (passes: :func:`ntt_plan`, or the
    runtime's ``ntt_max_stages`` / ``ntt_columns``). Inverse: the same transform with w^-1, then
    scale by n^-1 * shift^-i. Returns a new ``rt`` array. ``marks``, a list, receives
    ``(step, rt.mark())`` at the start and after each scaling and pass.
    """
    with rt.context():
        return _run_ntt_body(rt, x, log_n, omega, shift, inverse, marks)


def scaled_by_powers(rt, x, base: int, scale: int, n: int, out=None):
    """x[i] * scale * base^i into ``out`` (a new array if None; ``x`` itself scales in place)."""
    return _scaled_by_powers(rt, x, base, scale, n, out)
