"""Poseidon's partial rounds in sparse form (the Poseidon paper's appendix B), for fast kernels.

Two rewrites leave the permutation unchanged:

1. *Constants.* In a partial round only lane 0 meets the S-box, so the constants of lanes
   1..t-1 pass through it linearly: ``M·S0(x + (c0, r)) = M·S0(x + (c0, 0)) + M·(0, r)``; the
   second term joins the next round's constants. Afterwards every partial round adds one scalar.
2. *Matrices.* Write a round's matrix ``A = [[a, v], [w, Â]]`` as ``S · P`` with
   ``S = [[a, v·Â⁻¹], [w, I]]`` and ``P = diag(1, Â)``. P acts on lanes 1..t-1 only, so it
   commutes with S0 and with lane-0 constants and moves into the previous round, whose matrix
   becomes ``P · M``; repeating from the last partial round back leaves sparse ``S_k`` (2t - 1
   multiplications instead of t²) and one dense ``P_0 · M`` for the last full round before them.

    >>> from cuzk.circuit.gadgets.poseidon_spec import poseidon_spec
    >>> spec = poseidon_spec("neptune", 5)
    >>> sparse_permute(sparse_form(spec), [1, 2, 3, 4, 5]) == spec.permute([1, 2, 3, 4, 5])
    True
"""

from __future__ import annotations

import functools

import attrs
import numpy as np

__all__ = ["SparseForm", "sparse_form", "sparse_permute"]


@attrs.frozen
class SparseForm:
    """A spec's permutation rewritten for speed (Python ints)."""

    t: int
    r_f: int
    r_p: int
    modulus: int
    full_constants: tuple  # r_f rows of t: the full rounds' constants (the first final one absorbs the carry)
    partial_constants: tuple  # r_p scalars, added to lane 0
    mds: tuple  # t×t: every full round's matrix but the last initial one
    pre_sparse: tuple  # t×t: P_0 · M, the last initial full round's matrix
    sparse: tuple  # r_p triples (a, v (t-1), w (t-1)): lane0 = a·x0 + v·x_rest, lane_j = w_j·x0 + x_j


def _inverse(m, r):
    n = len(m)
    a = [list(row) + [int(i == j) for j in range(n)] for i, row in enumerate(m)]
    for c in range(n):
        p = next(i for i in range(c, n) if a[i][c] % r)
        a[c], a[p] = a[p], a[c]
        inv = pow(a[c][c], -1, r)
        a[c] = [x * inv % r for x in a[c]]
        for i in range(n):
            if i != c and a[i][c]:
                f = a[i][c]
                a[i] = [(x - f * y) % r for x, y in zip(a[i], a[c])]
    return tuple(tuple(row[n:]) for row in a)


@functools.cache
def sparse_form(spec) -> SparseForm:
    """The sparse form of ``spec`` (computed once per spec)."""
    t, r, m, half = spec.t, spec.modulus, spec.mds, spec.r_f // 2
    rows = [list(spec.round_constants[i * t:(i + 1) * t]) for i in range(spec.r_f + spec.r_p)]
    c0 = []
    for k in range(spec.r_p):  # rewrite 1, forwards
        row = rows[half + k]
        c0.append(row[0])
        carry = [sum(m[i][j] * row[j] for j in range(1, t)) % r for i in range(t)]
        rows[half + k + 1] = [(x + y) % r for x, y in zip(rows[half + k + 1], carry)]
    # acc = [[m00, mv], [w, hat]] for the round being split; acc for the round before is
    # P · M = [[m00, mv], [hat · mw, hat · M̂]], so hat and its inverse update by one product each
    mm = np.array(m, dtype=object)
    m_hat, mv, mw = mm[1:, 1:], mm[0, 1:], mm[1:, 0]
    m_hat_inv = np.array(_inverse(m_hat.tolist(), r), dtype=object)
    hat, hat_inv, w = m_hat, m_hat_inv, mw
    sparse = [None] * spec.r_p
    for k in reversed(range(spec.r_p)):  # rewrite 2, backwards
        sparse[k] = (m[0][0], tuple(int(x) for x in mv.dot(hat_inv) % r), tuple(int(x) for x in w))
        w, hat, hat_inv = hat.dot(mw) % r, hat.dot(m_hat) % r, m_hat_inv.dot(hat_inv) % r
    pre = (tuple(m[0]),) + tuple((int(w[i]),) + tuple(int(x) for x in hat[i]) for i in range(t - 1))
    full = tuple(tuple(rows[i]) for i in range(half)) + tuple(tuple(rows[i]) for i in range(half + spec.r_p, spec.r_f + spec.r_p))
    return SparseForm(t, spec.r_f, spec.r_p, r, full, tuple(c0), m, pre, tuple(sparse))


def sparse_permute(f: SparseForm, state) -> list[int]:
    """The permutation computed from the sparse form (the reference for the kernels)."""
    r, t, half = f.modulus, f.t, f.r_f // 2
    s = [x % r for x in state]

    def full(rc, mat):
        x = [pow((a + c) % r, 5, r) for a, c in zip(s, rc)]
        return [sum(mi * xi for mi, xi in zip(row, x)) % r for row in mat]

    for i in range(half):
        s = full(f.full_constants[i], f.pre_sparse if i == half - 1 else f.mds)
    for c, (a, v, w) in zip(f.partial_constants, f.sparse):
        x0 = pow((s[0] + c) % r, 5, r)
        s = [(a * x0 + sum(vi * xi for vi, xi in zip(v, s[1:]))) % r] + [(wi * x0 + xi) % r for wi, xi in zip(w, s[1:])]
    for i in range(half, f.r_f):
        s = full(f.full_constants[i], f.mds)
    return s
