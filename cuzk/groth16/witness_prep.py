"""The prover's host work on a witness, split over threads: the check a·b = c, the canonical
assignment and the A, B and L query scalars.

On the GPU path this was most of a proof's wall time: at 2^20 on an H200 the H span took 171 ms
of which 4.7 ms ran on the device, the rest one host thread converting z out of Montgomery form
and gathering the query scalars with boolean masks (docs/perf/cuda.md, "GPU timings"). Each step
here runs the field's nogil array kernels (or a row gather) on chunks, on up to ``threads``
threads (:func:`cuzk.kernels.cpu_threads.run_phases`), and gives the same arrays as the one-thread
code (tests/test_witness_prep.py).

    >>> import numpy as np
    >>> from cuzk.field import Fr
    >>> z = Fr.from_ints([1, 5, 0, 7])
    >>> canonical(Fr, z, threads=2).tolist()[:2]
    [[1, 0, 0, 0], [5, 0, 0, 0]]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.kernels.cpu_threads import resolve_threads, run_phases

__all__ = ["canonical", "query_rows", "query_scalars", "unsatisfied_row"]

#: rows per task: big enough that a task's fixed cost (wrapper checks, a view) is noise
CHUNK_ROWS = 1 << 16


def _spans(n: int, threads: int) -> list[tuple[int, int]]:
    """[lo, hi) row ranges: at least CHUNK_ROWS each, about 4 per thread for dynamic balance."""
    if n == 0:
        return []
    step = max(CHUNK_ROWS, -(-n // (4 * threads)))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


@njit(cache=True, nogil=True)
def _gather_rows(src, idx, out, lo, hi):  # pragma: no cover - compiled
    width = src.shape[1]
    for i in range(lo, hi):
        j = idx[i]
        for k in range(width):
            out[i, k] = src[j, k]


def gather(src: np.ndarray, idx: np.ndarray, threads=None) -> np.ndarray:
    """``src[idx]`` for (n, L) uint64 rows and int64 indices (in range: the caller's), threaded."""
    out = np.empty((idx.shape[0], src.shape[1]), np.uint64)
    t = resolve_threads(threads)
    run_phases(t, [[(_gather_rows, (src, idx, out, lo, hi)) for lo, hi in _spans(idx.shape[0], t)]])
    return out


def canonical(fr, z: np.ndarray, threads=None) -> np.ndarray:
    """``fr.from_mont(z)`` computed in chunks on up to ``threads`` threads.

    Raises:
        FieldValueError: a row of z is not reduced (as ``fr.from_mont``).
    """
    z = np.ascontiguousarray(z)
    out = np.empty_like(z)
    t = resolve_threads(threads)

    def task(lo, hi):
        out[lo:hi] = fr.from_mont(z[lo:hi])

    run_phases(t, [[(task, span) for span in _spans(z.shape[0], t)]])
    out.flags.writeable = False  # the query scalars are views and gathers of it (query_scalars)
    return out


def unsatisfied_row(fr, a: np.ndarray, b: np.ndarray, c: np.ndarray, threads=None) -> int | None:
    """The first row where a·b ≠ c (Montgomery rows of ``fr``), or None; chunks on threads."""
    t = resolve_threads(threads)
    spans = _spans(a.shape[0], t)
    bad = [None] * len(spans)

    def task(k, lo, hi):
        ok = fr.eq(fr.mul(a[lo:hi], b[lo:hi]), c[lo:hi])
        if not ok.all():
            bad[k] = lo + int(np.argmin(ok))

    run_phases(t, [[(task, (k, lo, hi)) for k, (lo, hi) in enumerate(spans)]])
    return next((row for row in bad if row is not None), None)


def query_rows(density, n_inputs: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of z that the A and the B queries take, in their points' order (int64)."""
    a_rows = np.concatenate([np.arange(n_inputs, dtype=np.int64), n_inputs + np.flatnonzero(density.a_aux)])
    b_rows = np.concatenate([np.flatnonzero(density.b_input), n_inputs + np.flatnonzero(density.b_aux)])
    return a_rows.astype(np.int64, copy=False), b_rows.astype(np.int64, copy=False)


def query_scalars(pk, z: np.ndarray, threads=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The A, B and L query scalars from the canonical assignment ``z`` (as
    :func:`cuzk.groth16.prove.query_scalars`), gathered on threads; L's is a view of z. The
    gathers are read-only, so with a read-only z (:func:`canonical`'s) all three are frozen
    (``cuzk.field.jit.frozen``): their bit splits hold without the MSMs' check of them."""
    a_rows, b_rows = query_rows(pk.resolved_density(), pk.n_inputs)
    a_sc, b_sc = gather(z, a_rows, threads), gather(z, b_rows, threads)
    a_sc.flags.writeable = b_sc.flags.writeable = False
    return a_sc, b_sc, z[pk.n_inputs:]
