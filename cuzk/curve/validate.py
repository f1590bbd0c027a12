"""Decode and validate big point batches on several threads, reporting the FIRST bad point.

Reading a proving key from an untrusted source checks every point for subgroup membership
(~45 µs per G1 point, ~58 µs per G2 point on one core, against < 1 µs to decode), so a 2^20..2^27
point key costs minutes to hours on one core. Here a batch is cut into blocks; up to ``threads``
Python threads (the caller included) pull blocks from a shared counter (dynamic scheduling, so a
thread sharing its core with another process does not hold up the rest) and run the serial
``nogil`` kernels of ``cuzk.curves.bls12_381.g1`` / ``g2`` on them, truly in parallel.

Errors stay exact: each block stops at its own first bad point, blocks are handed out in index
order, and once a block has failed no LATER block is started, while every earlier one still
runs to the end. So the answer is the lowest bad index, the one a serial scan finds, whichever
thread happens to fail first. The helper threads end with the call.

Formats use this module (they may import ``cuzk.curve`` but not ``cuzk.kernels``, DESIGN §2).

    >>> import numpy as np
    >>> from cuzk.curve import G1
    >>> pts = G1.random(3, np.random.default_rng(0))
    >>> first_outside_subgroup(G1, pts, threads=2) is None
    True
"""

from __future__ import annotations

import numbers
import os
import threading

import numpy as np

from cuzk.errors import InputError

__all__ = ["available_cores", "resolve_threads", "run_workers", "first_failure", "decode_rows", "first_off_curve", "first_outside_subgroup"]

# Items per block. A checked point costs ~45-60 µs, so 256 of them are ~12-15 ms of work: large
# against the ~10 µs of dispatch per block, small enough that the last blocks of a batch finish
# close together. Cheap work (decode without the subgroup check, the on-curve test, ~1 µs each)
# takes 8192 per block. Small batches use smaller blocks so every thread still gets some.
_BLOCK_EXPENSIVE = 256
_BLOCK_CHEAP = 8192
_MIN_BLOCK = 16


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads) -> int:
    """The number of threads to use: ``None`` means every core this process may run on.

    Values above the core count are allowed (a caller may know better, e.g. under a cgroup quota
    that affinity does not show). The CPU kernels (``cuzk.kernels.cpu_threads``) use this too.

    Raises:
        InputError: ``threads`` is neither None nor a positive integer.

    >>> resolve_threads(3)
    3
    """
    if threads is None:
        return available_cores()
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1:
        raise InputError(f"threads must be a positive integer or None, got {threads!r}")
    return int(threads)


def run_workers(work, width: int, name: str, errors: list) -> None:
    """Run ``work()`` on the calling thread and ``width - 1`` helper threads, join them all, then
    re-raise the first exception the workers put in ``errors`` (no thread outlives the call).

    >>> seen = []
    >>> run_workers(lambda: seen.append(1), 3, "doc", [])
    >>> seen
    [1, 1, 1]
    """
    helpers = [threading.Thread(target=work, name=f"{name}-{i}", daemon=True) for i in range(width - 1)]
    for t in helpers:
        t.start()
    work()
    for t in helpers:
        t.join()
    if errors:
        raise errors[0]


def _block_size(n: int, threads: int, base: int) -> int:
    # at least four blocks per thread when the batch allows it (load balance), never above base
    return max(_MIN_BLOCK, min(base, -(-n // (4 * threads))))


def first_failure(fn, n: int, block: int, threads: int):
    """Run ``fn(lo, hi) -> (index, code)`` (index -1 when ``[lo, hi)`` passed) over blocks of
    ``block`` items on up to ``threads`` threads; return the lowest failing ``(index, code)`` or
    None. The first exception raised by ``fn`` is re-raised after every thread has stopped.

    >>> first_failure(lambda lo, hi: next(((i, 7) for i in range(lo, hi) if i % 5 == 4), (-1, 0)), 20, 3, 2)
    (4, 7)
    """
    nblocks = -(-n // block)
    width = min(threads, nblocks)
    if width <= 1:
        for b in range(nblocks):
            idx, code = fn(b * block, min(n, (b + 1) * block))
            if idx >= 0:
                return int(idx), int(code)
        return None
    lock = threading.Lock()
    state = {"next": 0, "failed": nblocks, "hit": None}  # failed: lowest failing block so far
    errors: list[BaseException] = []

    def work():
        try:
            while True:
                with lock:
                    b = state["next"]
                    # blocks go out in order, so every block below the lowest failure was handed out
                    if errors or b >= state["failed"]:
                        return
                    state["next"] = b + 1
                idx, code = fn(b * block, min(n, (b + 1) * block))
                if idx >= 0:
                    with lock:
                        if b < state["failed"]:
                            state["failed"], state["hit"] = b, (int(idx), int(code))
        except BaseException as e:  # handed to the caller below, never swallowed
            with lock:
                errors.append(e)

    run_workers(work, width, "cuzk-decode", errors)
    return state["hit"]


def decode_rows(group, rows: np.ndarray, out: np.ndarray, *, compressed: bool, checked: bool, threads=None):
    """Decode zcash rows ``rows`` (n, size) uint8 into the affine array ``out`` (n, *point_shape).

    On-curve is always checked, the subgroup when ``checked``. Returns None when every row is
    valid, else ``(index, status)`` of the FIRST rejected row (status: a ``group.kernels``
    code such as ``NOT_IN_SUBGROUP``); ``out`` is then only partly written.

    >>> from cuzk.curve import G2
    >>> from cuzk.curve.encoding import points_to_bytes
    >>> pts = G2.random(2, np.random.default_rng(1))
    >>> rows = np.frombuffer(points_to_bytes(G2, pts), dtype=np.uint8).reshape(2, 96)
    >>> out = np.empty_like(pts)
    >>> decode_rows(G2, rows, out, compressed=True, checked=True, threads=2), bool(np.all(out == pts))
    (None, True)
    """
    threads = resolve_threads(threads)
    n = rows.shape[0]
    if out.shape != (n,) + group.point_shape or out.dtype != np.uint64 or not out.flags.c_contiguous:
        raise InputError(f"{group.name}: out must be a C-contiguous uint64 array of shape {(n,) + group.point_shape}")
    rows = np.ascontiguousarray(rows)
    k = group.kernels

    def run(lo, hi):
        return k.decode_range(rows, lo, hi, compressed, checked, out)

    return first_failure(run, n, _block_size(n, threads, _BLOCK_EXPENSIVE if checked else _BLOCK_CHEAP), threads)


def _first_index(kernel, points, threads, base):
    threads = resolve_threads(threads)
    pts = np.ascontiguousarray(points, dtype=np.uint64)
    n = pts.shape[0]
    hit = first_failure(lambda lo, hi: (kernel(pts, lo, hi), 0), n, _block_size(n, threads, base), threads)
    return None if hit is None else hit[0]


def first_off_curve(group, points: np.ndarray, *, threads=None):
    """Index of the first point of the affine batch ``points`` off the curve (the all-zero
    identity counts as on it), or None.

    >>> from cuzk.curve import G1
    >>> first_off_curve(G1, np.ones((4, 2, 6), dtype=np.uint64))
    0
    """
    return _first_index(group.kernels.first_off_curve, points, threads, _BLOCK_CHEAP)


def first_outside_subgroup(group, points: np.ndarray, *, threads=None):
    """Index of the first point of the affine batch ``points`` (on the curve: check that first
    with :func:`first_off_curve`) outside the order-r subgroup, or None. The identity is in it.

    >>> from cuzk.curve import G2
    >>> first_outside_subgroup(G2, G2.identity(3)) is None
    True
    """
    return _first_index(group.kernels.first_outside_subgroup, points, threads, _BLOCK_EXPENSIVE)
