"""Numba SHA-256 kernels of the SDR sealer: a layer of labels, a level of tree D.

Both hash fixed-length messages, so each kernel writes its blocks and its padding itself: no
byte buffer is assembled per hash. Words are held in int64 (values < 2^32, masked after each
sum) so that Numba never mixes signed and unsigned integers. Every digest is trimmed to Fr the
Filecoin way, by clearing the two top bits of its last byte (``digest[31] &= 0x3f``).

Why not hashlib: a label's preimage gathers 37 parent labels, and building it in Python costs
~3x the hash itself (~10.7 us a label with hashlib on the dev host, most of it assembling the
preimage). The compression is :func:`~cuzk.circuits.filecoin.porep.sha_ni.sha_ni_compress`
(SHA extensions) where the CPU has them, else :func:`compress_scalar`;
:mod:`~cuzk.circuits.filecoin.porep.labels` documents the preimage, and the tests check both
kernels and both compressions against hashlib.

The round constants and initial state are derived (fractional bits of the cube and square roots
of the first primes, FIPS 180-4 section 4.2.2 and 5.3.3), not typed in.

    >>> import hashlib
    >>> a = np.arange(128, dtype=np.uint8).reshape(4, 32); out = np.empty((2, 32), np.uint8)
    >>> hash_pairs(a, out)
    >>> want = bytearray(hashlib.sha256(a[:2].tobytes()).digest()); want[31] &= 0x3F
    >>> out[0].tobytes() == bytes(want)
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.circuits.filecoin.porep.sha_ni import HAVE_SHA_NI, sha_ni_compress

__all__ = ["hash_pairs", "label_nodes", "compress_scalar", "round_constants", "initial_state", "LABEL_PARENTS",
           "HAVE_SHA_NI"]

LABEL_PARENTS = 37  # parent labels in a label's preimage (rust-fil-proofs' create_label)


def _primes(n: int) -> list[int]:
    out, k = [], 2
    while len(out) < n:
        if all(k % p for p in out):
            out.append(k)
        k += 1
    return out


def _iroot(x: int, k: int) -> int:
    """floor(x ** (1/k)) for a non-negative int, by Newton's method on integers."""
    if x < 2:
        return x
    y = 1 << -(-x.bit_length() // k)
    while True:
        z = ((k - 1) * y + x // y ** (k - 1)) // k
        if z >= y:
            return y
        y = z


def round_constants() -> np.ndarray:
    """K[0..63]: the first 32 fractional bits of the cube roots of the first 64 primes."""
    return np.array([_iroot(p << 96, 3) & 0xFFFFFFFF for p in _primes(64)], dtype=np.int64)


def initial_state() -> np.ndarray:
    """H0[0..7]: the first 32 fractional bits of the square roots of the first 8 primes."""
    return np.array([_iroot(p << 64, 2) & 0xFFFFFFFF for p in _primes(8)], dtype=np.int64)


_K = round_constants()
_H0 = initial_state()
_K.setflags(write=False)
_H0.setflags(write=False)
_M = 0xFFFFFFFF


@njit(cache=True, nogil=True, inline="always")
def _rotr(x, n):
    return ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF


@njit(cache=True, nogil=True)
def compress_scalar(state, w, k):
    """One SHA-256 compression of the block in ``w[0:16]`` into ``state`` (w: 64 int64 scratch)."""
    for t in range(16, 64):
        x = w[t - 15]
        y = w[t - 2]
        s0 = _rotr(x, 7) ^ _rotr(x, 18) ^ (x >> 3)
        s1 = _rotr(y, 17) ^ _rotr(y, 19) ^ (y >> 10)
        w[t] = (w[t - 16] + s0 + w[t - 7] + s1) & 0xFFFFFFFF
    a, b, c, d = state[0], state[1], state[2], state[3]
    e, f, g, h = state[4], state[5], state[6], state[7]
    for t in range(64):
        s1 = _rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25)
        ch = (e & f) ^ (~e & g)
        t1 = (h + s1 + ch + k[t] + w[t]) & 0xFFFFFFFF
        s0 = _rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)
        maj = (a & b) ^ (a & c) ^ (b & c)
        h = g
        g = f
        f = e
        e = (d + t1) & 0xFFFFFFFF
        d = c
        c = b
        b = a
        a = (t1 + s0 + maj) & 0xFFFFFFFF
    state[0] = (state[0] + a) & 0xFFFFFFFF
    state[1] = (state[1] + b) & 0xFFFFFFFF
    state[2] = (state[2] + c) & 0xFFFFFFFF
    state[3] = (state[3] + d) & 0xFFFFFFFF
    state[4] = (state[4] + e) & 0xFFFFFFFF
    state[5] = (state[5] + f) & 0xFFFFFFFF
    state[6] = (state[6] + g) & 0xFFFFFFFF
    state[7] = (state[7] + h) & 0xFFFFFFFF


# The SHA extensions where the CPU has them (~5x fewer instructions a block), else plain rounds.
_compress = sha_ni_compress if HAVE_SHA_NI else compress_scalar


@njit(cache=True, nogil=True, inline="always")
def _load_node(w, at, src, row):
    """Words ``w[at:at+8]``: node ``row`` of ``src`` ((n, 32) uint8) read big-endian, as SHA-256 does."""
    for i in range(8):
        w[at + i] = ((np.int64(src[row, 4 * i]) << 24) | (np.int64(src[row, 4 * i + 1]) << 16)
                     | (np.int64(src[row, 4 * i + 2]) << 8) | np.int64(src[row, 4 * i + 3]))


@njit(cache=True, nogil=True, inline="always")
def _store_digest(dst, row, state):
    """Digest words -> ``dst[row]`` (big-endian bytes), trimmed to Fr (top two bits of byte 31)."""
    for i in range(8):
        v = state[i]
        dst[row, 4 * i] = (v >> 24) & 0xFF
        dst[row, 4 * i + 1] = (v >> 16) & 0xFF
        dst[row, 4 * i + 2] = (v >> 8) & 0xFF
        dst[row, 4 * i + 3] = v & 0xFF
    dst[row, 31] &= 0x3F


@njit(cache=True, nogil=True)
def _hash_pairs(src, dst, k, h0):
    w = np.zeros(64, dtype=np.int64)
    state = np.empty(8, dtype=np.int64)
    for r in range(dst.shape[0]):
        state[:] = h0
        _load_node(w, 0, src, 2 * r)
        _load_node(w, 8, src, 2 * r + 1)
        _compress(state, w, k)
        w[0] = 0x80000000  # padding block of a 64-byte message: the 1 bit, zeros, length 512
        for i in range(1, 15):
            w[i] = 0
        w[15] = 512
        _compress(state, w, k)
        _store_digest(dst, r, state)


def hash_pairs(src: np.ndarray, dst: np.ndarray) -> None:
    """``dst[i] = trim(SHA-256(src[2i] || src[2i+1]))``: one level of tree D.

    ``src`` is (2m, 32) uint8, ``dst`` (m, 32) uint8 (any C-contiguous arrays, memmaps too).
    """
    _hash_pairs(src, dst, _K, _H0)


@njit(cache=True, nogil=True)
def _label_nodes(replica_id, layer, parents, cur, prev, start, stop, expander, k, h0):
    w = np.zeros(64, dtype=np.int64)
    state = np.empty(8, dtype=np.int64)
    rid = np.zeros(8, dtype=np.int64)
    for i in range(8):
        rid[i] = ((np.int64(replica_id[4 * i]) << 24) | (np.int64(replica_id[4 * i + 1]) << 16)
                  | (np.int64(replica_id[4 * i + 2]) << 8) | np.int64(replica_id[4 * i + 3]))
    # degree of the parent cycle: layer 1 hashes its 6 DRG parents, later layers all 14
    cycle = 14 if expander else 6
    for node in range(start, stop):
        state[:] = h0
        # block 0: replica_id || layer (u32 BE) || node (u64 BE) || 20 zero bytes
        for i in range(8):
            w[i] = rid[i]
        w[8] = layer
        w[9] = node >> 32
        w[10] = node & 0xFFFFFFFF
        for i in range(11, 16):
            w[i] = 0
        _compress(state, w, k)
        if node == 0:
            w[0] = 0x80000000  # node 0 has no parents: the 64-byte header alone
            for i in range(1, 15):
                w[i] = 0
            w[15] = 512
            _compress(state, w, k)
        else:
            row = node - start
            # 37 parents, two per block (the 37th shares the last block with the padding);
            # parent j is column j % cycle: DRG columns (< 6) from this layer, expander from the last
            for j in range(37):
                col = j % cycle
                p = parents[row, col]
                at = 8 * (j & 1)
                if col < 6:
                    _load_node(w, at, cur, p)
                else:
                    _load_node(w, at, prev, p)
                if j & 1:
                    _compress(state, w, k)
            w[8] = 0x80000000
            for i in range(9, 15):
                w[i] = 0
            w[15] = (64 + 37 * 32) * 8  # message length in bits
            _compress(state, w, k)
        _store_digest(cur, node, state)


def label_nodes(replica_id: np.ndarray, layer: int, parents: np.ndarray, cur: np.ndarray, prev: np.ndarray,
                start: int, stop: int) -> None:
    """Labels of nodes ``start..stop`` of layer ``layer`` (1-based) into ``cur`` ((n, 32) uint8).

    ``parents[i]`` holds the 14 parents of node ``start + i`` (6 DRG, then 8 expander);
    ``prev`` is the previous layer's labels (ignored for layer 1: pass ``cur``). Nodes must be
    labelled in order: a node's DRG parents are earlier nodes of ``cur``.
    """
    _label_nodes(replica_id, np.int64(layer), parents, cur, prev, np.int64(start), np.int64(stop),
                 layer > 1, _K, _H0)
