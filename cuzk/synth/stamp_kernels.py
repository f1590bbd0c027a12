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

from cuzk.circuit.ops import OP_ADD, OP_BITS, OP_CONST, OP_INPUT, OP_INV, OP_ISZERO, OP_LC, OP_MUL, OP_SUB

__all__ = ["stamp_words", "stamp_cols", "stamp_code", "sort_rows", "mark_roles", "ROLE_LITERAL", "ROLE_SLOT", "ROLE_CONST", "ROLE_INPUT"]

# a witness-program word's role: an opcode or count, a register, a constant id, an input index
ROLE_LITERAL, ROLE_SLOT, ROLE_CONST, ROLE_INPUT = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def mark_roles(code, roles):
    """Write each word's role into ``roles`` (zeros: literal) for the witness program ``code``
    (the layout of cuzk/circuit/ops.py); returns -1, or the word of an unknown opcode. A Python
    loop over a SHA-256 compression's ~10^5 words took 0.1 s a template."""
    pc, n = 0, code.shape[0]
    while pc < n:
        op = code[pc]
        if op == OP_LC:
            size = 3 + 2 * code[pc + 2] if pc + 2 < n else n + 1
        elif op == OP_ADD or op == OP_SUB or op == OP_MUL or op == OP_BITS:
            size = 4
        elif op == OP_INV or op == OP_ISZERO or op == OP_CONST or op == OP_INPUT:
            size = 3
        else:
            return pc
        if size < 3 or pc + size > n:  # a truncated op
            return pc
        roles[pc + 1] = ROLE_SLOT
        if op == OP_LC:
            for j in range(pc + 3, pc + size, 2):
                roles[j] = ROLE_CONST
                roles[j + 1] = ROLE_SLOT
        elif op == OP_CONST:
            roles[pc + 2] = ROLE_CONST
        elif op == OP_INPUT:
            roles[pc + 2] = ROLE_INPUT
        else:
            roles[pc + 2] = ROLE_SLOT
            if op != OP_BITS and size == 4:
                roles[pc + 3] = ROLE_SLOT
        pc += size
    return -1


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


@njit(cache=True, nogil=True)
def stamp_cols(cols, n_par, n_vars, var_pos, bind, i0, out):
    """Instances ``i0 .. i0 + len(bind) - 1`` of a template matrix's variable positions, one after
    another in ``out``: ONE (0) stays 0, parameter ``p`` (1..n_par) is ``bind[i - i0, p - 1]``,
    the template's own position ``t`` is ``var_pos + t - 1 - n_par + i * n_vars``."""
    n = cols.shape[0]
    for ii in range(bind.shape[0]):
        i = i0 + ii
        o = ii * n
        for w in range(n):
            t = cols[w]
            if t > n_par:
                out[o + w] = var_pos + t - 1 - n_par + i * n_vars
            elif t >= 1:
                out[o + w] = bind[ii, t - 1]
            else:
                out[o + w] = 0


@njit(cache=True, nogil=True)
def stamp_code(code, roles, slot_rank, slot_col, n_own, slot_base, bind, i0, out):
    """Instances ``i0 .. i0 + len(bind) - 1`` of a template's witness words, one after another in
    ``out``: its own registers at ``slot_base + rank + i * n_own``, its parameter registers from
    the instance's row of ``bind``, every other word as it is. Read straight from the template:
    per-word base/delta arrays (as :func:`stamp_words` takes) would be written first, and a 2 KiB
    PoRep challenge's 18M words cost 0.4 s to lay out that way (page faults included)."""
    n = code.shape[0]
    for ii in range(bind.shape[0]):
        i = i0 + ii
        o = ii * n
        for w in range(n):
            v = code[w]
            if roles[w] == ROLE_SLOT:
                r = slot_rank[v]
                if r >= 0:
                    v = slot_base + r + i * n_own
                elif slot_col[v] >= 0:
                    v = bind[ii, slot_col[v]]
            out[o + w] = v
