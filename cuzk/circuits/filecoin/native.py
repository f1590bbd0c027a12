"""Numba kernels for neptune's Poseidon on BLS12-381 Fr: one hash, or a batch of rows at once.

Arrays are ``(n, 4)`` uint64 Montgomery limbs (DESIGN §3). The kernels run the permutation in
the sparse form of :mod:`cuzk.circuit.gadgets.poseidon_sparse` (partial rounds: one constant
and 2t - 1 multiplications instead of t constants and t²); ``tests/test_poseidon_variants.py``
checks them against the textbook :meth:`~cuzk.circuit.gadgets.poseidon_spec.PoseidonSpec.permute`.

    >>> from cuzk.field import Fr
    >>> from cuzk.circuit.gadgets.poseidon_spec import poseidon_spec
    >>> k = kernel_constants(poseidon_spec("neptune", 3))
    >>> rows = Fr.from_ints([0, 1])
    >>> hex(Fr.to_ints(hash_rows(rows.reshape(1, 2, 4), *k))[0])[:12]
    '0x396508d75e'
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from cuzk.circuit.gadgets.poseidon_sparse import sparse_form
from cuzk.field import Fr

__all__ = ["kernel_constants", "hash_rows", "permute_rows"]

fr = Fr.kernels  # BLS12-381's in-JIT Fr kernels (cuzk/curves/bls12_381/fr.py), read by the kernels below


@functools.cache
def kernel_constants(spec) -> tuple:
    """The kernel arguments of a BLS12-381 spec: ``(tag, consts, output)`` where ``consts`` is
    the tuple of Montgomery arrays of its sparse form (see ``_permute``)."""
    if spec.curve != "bls12_381":
        raise ValueError(f"the native Poseidon kernels work over BLS12-381 Fr, not {spec.curve}")
    f = sparse_form(spec)
    arrays = (
        Fr.from_ints([c for row in f.full_constants for c in row]),
        Fr.from_ints(list(f.partial_constants)),
        Fr.from_ints([x for row in f.mds for x in row]),
        Fr.from_ints([x for row in f.pre_sparse for x in row]),
        Fr.from_ints([a for a, _, _ in f.sparse]),
        Fr.from_ints([x for _, v, _ in f.sparse for x in v]),
        Fr.from_ints([x for _, _, w in f.sparse for x in w]),
        Fr.from_ints([spec.tag]),
    )
    for a in arrays:
        a.setflags(write=False)
    return arrays + (np.int64(spec.t), np.int64(spec.r_f), np.int64(spec.output))


@njit(cache=True, nogil=True)
def _sbox(x):
    x2 = fr.sqr(x)
    return fr.mul(fr.sqr(x2), x)


@njit(cache=True, nogil=True)
def _full(s, tmp, rc, k, mat, t):
    for i in range(t):
        fr.store(s, i, _sbox(fr.add(fr.load(s, i), fr.load(rc, k + i))))
    for i in range(t):
        acc = fr.mul(fr.load(mat, i * t), fr.load(s, 0))
        for j in range(1, t):
            acc = fr.add(acc, fr.mul(fr.load(mat, i * t + j), fr.load(s, j)))
        fr.store(tmp, i, acc)
    for i in range(t):
        fr.store(s, i, fr.load(tmp, i))


@njit(cache=True, nogil=True)
def _permute(s, tmp, full_rc, part_rc, mds, pre, sp_a, sp_v, sp_w, t, r_f):
    """Permute the (t, 4) state ``s`` in place; ``tmp`` is (t, 4) scratch."""
    half = r_f // 2
    for rnd in range(half):
        _full(s, tmp, full_rc, rnd * t, pre if rnd == half - 1 else mds, t)
    for k in range(part_rc.shape[0]):
        x0 = _sbox(fr.add(fr.load(s, 0), fr.load(part_rc, k)))
        acc = fr.mul(fr.load(sp_a, k), x0)
        for j in range(1, t):
            xj = fr.load(s, j)
            acc = fr.add(acc, fr.mul(fr.load(sp_v, k * (t - 1) + j - 1), xj))
            fr.store(s, j, fr.add(xj, fr.mul(fr.load(sp_w, k * (t - 1) + j - 1), x0)))
        fr.store(s, 0, acc)
    for rnd in range(half, r_f):
        _full(s, tmp, full_rc, rnd * t, mds, t)


@njit(cache=True, nogil=True)
def hash_rows(children, full_rc, part_rc, mds, pre, sp_a, sp_v, sp_w, tag, t, r_f, output):
    """Hash each row of ``children`` (n, arity, 4): element ``output`` of the permutation of
    ``[tag, row..., 0...]`` (a row shorter than t - 1 is zero-padded). Returns (n, 4)."""
    n, a = children.shape[0], children.shape[1]
    s = np.zeros((t, 4), dtype=np.uint64)
    tmp = np.zeros((t, 4), dtype=np.uint64)
    out = np.empty((n, 4), dtype=np.uint64)
    for r in range(n):
        fr.store(s, 0, fr.load(tag, 0))
        for i in range(t - 1):
            if i < a:
                fr.store(s, i + 1, (children[r, i, 0], children[r, i, 1], children[r, i, 2], children[r, i, 3]))
            else:
                fr.store(s, i + 1, fr.zero())
        _permute(s, tmp, full_rc, part_rc, mds, pre, sp_a, sp_v, sp_w, t, r_f)
        fr.store(out, r, fr.load(s, output))
    return out


@njit(cache=True, nogil=True)
def permute_rows(states, full_rc, part_rc, mds, pre, sp_a, sp_v, sp_w, tag, t, r_f, output):
    """The permutation of each (t, 4) state of ``states`` (n, t, 4); returns a new array
    (``tag`` and ``output`` are ignored: same arguments as :func:`hash_rows`)."""
    out = states.copy()
    tmp = np.zeros((t, 4), dtype=np.uint64)
    for r in range(states.shape[0]):
        _permute(out[r], tmp, full_rc, part_rc, mds, pre, sp_a, sp_v, sp_w, t, r_f)
    return out
