"""Numba kernels for neptune's Poseidon on BLS12-381 Fr: one hash, or a batch of rows at once.

Arrays are ``(n, 4)`` uint64 Montgomery limbs (DESIGN §3). The permutation is the textbook one
(round constants, x^5, dense MDS product every round), one obvious loop that
``tests/test_filecoin_poseidon.py`` checks against the pure-Python
:meth:`~cuzk.circuit.gadgets.poseidon_spec.PoseidonSpec.permute`.

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

from cuzk.field import Fr, fr

__all__ = ["kernel_constants", "hash_rows", "permute_rows"]


@functools.cache
def kernel_constants(spec) -> tuple:
    """``(tag, round_constants, mds, r_f, r_p, output)`` of a BLS12-381 spec as kernel arguments
    (Montgomery arrays; mds flattened row-major)."""
    if spec.curve != "bls12_381":
        raise ValueError(f"the native Poseidon kernels work over BLS12-381 Fr, not {spec.curve}")
    tag = Fr.from_ints([spec.tag])
    rc = Fr.from_ints(spec.round_constants)
    mds = Fr.from_ints([m for row in spec.mds for m in row])
    for a in (tag, rc, mds):
        a.setflags(write=False)
    return tag, rc, mds, np.int64(spec.r_f), np.int64(spec.r_p), np.int64(spec.output)


@njit(cache=True, nogil=True)
def _sbox(x):
    x2 = fr.sqr(x)
    return fr.mul(fr.sqr(x2), x)


@njit(cache=True, nogil=True)
def _permute(s, tmp, rc, mds, r_f, r_p):
    """Permute the (t, 4) state ``s`` in place; ``tmp`` is (t, 4) scratch."""
    t = s.shape[0]
    half = r_f // 2
    k = 0
    for rnd in range(r_f + r_p):
        full = rnd < half or rnd >= half + r_p
        for i in range(t):
            x = fr.add(fr.load(s, i), fr.load(rc, k + i))
            if full or i == 0:
                x = _sbox(x)
            fr.store(s, i, x)
        k += t
        for i in range(t):
            acc = fr.mul(fr.load(mds, i * t), fr.load(s, 0))
            for j in range(1, t):
                acc = fr.add(acc, fr.mul(fr.load(mds, i * t + j), fr.load(s, j)))
            fr.store(tmp, i, acc)
        for i in range(t):
            fr.store(s, i, fr.load(tmp, i))


@njit(cache=True, nogil=True)
def hash_rows(children, tag, rc, mds, r_f, r_p, output):
    """Hash each row of ``children`` (n, arity, 4): element ``output`` of the permutation of
    ``[tag, row..., 0...]`` (a row shorter than t - 1 is zero-padded). Returns (n, 4)."""
    n, a = children.shape[0], children.shape[1]
    w = 1  # the width t: mds holds t * t rows
    while w * w < mds.shape[0]:
        w += 1
    s = np.zeros((w, 4), dtype=np.uint64)
    tmp = np.zeros((w, 4), dtype=np.uint64)
    out = np.empty((n, 4), dtype=np.uint64)
    for r in range(n):
        fr.store(s, 0, fr.load(tag, 0))
        for i in range(w - 1):
            if i < a:
                fr.store(s, i + 1, (children[r, i, 0], children[r, i, 1], children[r, i, 2], children[r, i, 3]))
            else:
                fr.store(s, i + 1, fr.zero())
        _permute(s, tmp, rc, mds, r_f, r_p)
        fr.store(out, r, fr.load(s, output))
    return out


@njit(cache=True, nogil=True)
def permute_rows(states, rc, mds, r_f, r_p):
    """The permutation of each (t, 4) state of ``states`` (n, t, 4); returns a new array."""
    out = states.copy()
    t = states.shape[1]
    tmp = np.zeros((t, 4), dtype=np.uint64)
    for r in range(states.shape[0]):
        _permute(out[r], tmp, rc, mds, r_f, r_p)
    return out
