"""Numba kernels of the stamped compile (cuzk/synth/placement.py): one pass per output word.

A template's words (variable positions or witness-op words) are placed for instance ``i`` as
``base[w] + i * delta[w]`` (``delta`` is the per-instance stride of the words the template owns,
0 for ONE, register 0, opcodes and constant ids), and the parameter words are then read from
the instance's row of the binding array. numpy's fancy indexing did the same at ~10x the cost.

    >>> import numpy as np
    >>> out = np.empty(6, dtype=np.int64)
    >>> stamp_words(np.array([0, 5, 9]), np.array([0, 2, 0]), np.array([2]), np.array([0]),
    ...             np.array([[7], [8]]), 1, out)
    >>> out.tolist()
    [0, 7, 7, 0, 9, 8]
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["stamp_words", "sort_rows"]


@njit(cache=True, nogil=True)
def stamp_words(base, delta, pw, pcol, bind, i0, out):
    """Instances ``i0 .. i0 + len(bind) - 1`` of a template's words, one after another in
    ``out``: ``base + i * delta``, then word ``pw[q]`` of instance ``i`` = ``bind[i - i0, pcol[q]]``."""
    n = base.shape[0]
    for ii in range(bind.shape[0]):
        i = i0 + ii
        o = ii * n
        for w in range(n):
            out[o + w] = base[w] + i * delta[w]
        for q in range(pw.shape[0]):
            out[o + pw[q]] = bind[ii, pcol[q]]


@njit(cache=True, nogil=True)
def sort_rows(indptr, cols, coef):
    """Sort each CSR row by column, carrying the coefficient ids (rows are short: insertion
    sort; long ones through argsort)."""
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        if hi - lo > 32:
            order = np.argsort(cols[lo:hi])
            # permuted through copies, element by element: a slice assignment would compile
            # Numba's shape-mismatch error (string formatting: seconds of every cold start)
            c, v = cols[lo:hi].copy(), coef[lo:hi].copy()
            for k in range(hi - lo):
                cols[lo + k] = c[order[k]]
                coef[lo + k] = v[order[k]]
            continue
        for i in range(lo + 1, hi):
            c, v, j = cols[i], coef[i], i - 1
            while j >= lo and cols[j] > c:
                cols[j + 1] = cols[j]
                coef[j + 1] = coef[j]
                j -= 1
            cols[j + 1] = c
            coef[j + 1] = v
