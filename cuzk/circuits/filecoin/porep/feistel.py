"""The expander graph's Feistel permutation: 3 rounds whose round function is BLAKE2b-512.

rust-fil-proofs shuffles the ``nodes * 8`` expander edge slots with a Feistel network over the
smallest even bit width ``2h`` that holds them (``4^h >= n``); a value that lands outside
``[0, n)`` is encrypted again (cycle walking), so the map is a permutation of ``[0, n)``. Round
``i`` maps ``(L, R)`` to ``(R, L ^ F(R, key_i))`` where ``F(R, k)`` is the first 8 bytes, read
big-endian, of ``BLAKE2b-512(R as u64 big-endian || k as u64 big-endian)``, masked to ``h`` bits.
The BLAKE2b here is specialised to that one 16-byte block and checked against :mod:`hashlib`.

Every round's input ``R`` is masked to ``h`` bits, so each round function is a table of ``2^h``
values (at most 2^17 for a 64 GiB sector): :func:`round_tables` hashes them once and
:func:`table_permute` walks the network with lookups, instead of ~6 BLAKE2b calls per edge.

    >>> import hashlib
    >>> d = hashlib.blake2b((5).to_bytes(8, "big") + (7).to_bytes(8, "big")).digest()
    >>> round_function(5, 7, 0xFFFF) == int.from_bytes(d[:8], "big") & 0xFFFF
    True
    >>> sorted(permute_all(64, (1, 2, 3))) == list(range(64))
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "FEISTEL_ROUNDS", "precompute", "round_function", "permute_all", "feistel_permute", "blake2b_16",
    "round_tables", "table_permute", "swapped_keys",
]

FEISTEL_ROUNDS = 3  # rust-fil-proofs' choice: 3 rounds make a pseudo-random permutation

_U = np.uint64
#: BLAKE2b's initial chaining value (the SHA-512 IV)
_IV = np.array([
    0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
    0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
], dtype=np.uint64)
#: BLAKE2b's message schedule (rounds 10 and 11 reuse rows 0 and 1)
_SIGMA = np.array([
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
], dtype=np.int64)
_H0 = _U(int(_IV[0]) ^ 0x01010040)  # IV[0] ^ parameter block: digest 64 bytes, no key, fanout/depth 1
_T0 = _U(int(_IV[4]) ^ 16)  # IV[4] ^ the byte count of the one block
_F0 = _U(int(_IV[6]) ^ 0xFFFFFFFFFFFFFFFF)  # IV[6] ^ the last-block flag


@njit(cache=True, nogil=True)
def _g(v, a, b, c, d, x, y):
    v[a] = v[a] + v[b] + x
    t = v[d] ^ v[a]
    v[d] = (t >> _U(32)) | (t << _U(32))
    v[c] = v[c] + v[d]
    t = v[b] ^ v[c]
    v[b] = (t >> _U(24)) | (t << _U(40))
    v[a] = v[a] + v[b] + y
    t = v[d] ^ v[a]
    v[d] = (t >> _U(16)) | (t << _U(48))
    v[c] = v[c] + v[d]
    t = v[b] ^ v[c]
    v[b] = (t >> _U(63)) | (t << _U(1))


@njit(cache=True, nogil=True)
def _bswap(x):
    r = _U(0)
    for _ in range(8):
        r = (r << _U(8)) | (x & _U(0xFF))
        x >>= _U(8)
    return r


@njit(cache=True, nogil=True)
def blake2b_16(m0, m1):
    """The first 8 bytes (as a little-endian u64) of BLAKE2b-512 of the 16 bytes ``m0 || m1``
    (each a little-endian u64). A plain loop: it only fills the round tables (at most 3 * 2^17
    calls), so it is kept quick to compile rather than fast."""
    v = np.empty(16, dtype=np.uint64)
    v[:8] = _IV
    v[0] = _H0
    v[8:] = _IV
    v[12] = _T0
    v[14] = _F0
    m = np.zeros(16, dtype=np.uint64)
    m[0] = m0
    m[1] = m1
    for r in range(12):
        s = _SIGMA[r % 10]
        _g(v, 0, 4, 8, 12, m[s[0]], m[s[1]])
        _g(v, 1, 5, 9, 13, m[s[2]], m[s[3]])
        _g(v, 2, 6, 10, 14, m[s[4]], m[s[5]])
        _g(v, 3, 7, 11, 15, m[s[6]], m[s[7]])
        _g(v, 0, 5, 10, 15, m[s[8]], m[s[9]])
        _g(v, 1, 6, 11, 12, m[s[10]], m[s[11]])
        _g(v, 2, 7, 8, 13, m[s[12]], m[s[13]])
        _g(v, 3, 4, 9, 14, m[s[14]], m[s[15]])
    return _H0 ^ v[0] ^ v[8]


@njit(cache=True, nogil=True)
def feistel_round(right, key_le, right_mask):
    """``F(right, key)``; ``key_le`` is the key already byte-swapped (the block's second word)."""
    return _bswap(blake2b_16(_bswap(right), key_le)) & right_mask


@njit(cache=True, nogil=True)
def _encode(index, keys_le, left_mask, right_mask, half_bits):
    left = (index & left_mask) >> half_bits
    right = index & right_mask
    for i in range(keys_le.shape[0]):
        left, right = right, left ^ feistel_round(right, keys_le[i], right_mask)
    return (left << half_bits) | right


@njit(cache=True, nogil=True)
def feistel_permute(n, index, keys_le, left_mask, right_mask, half_bits):
    """The permutation of ``[0, n)`` at ``index`` (cycle walking until the value is below n)."""
    u = _encode(index, keys_le, left_mask, right_mask, half_bits)
    while u >= n:
        u = _encode(u, keys_le, left_mask, right_mask, half_bits)
    return u


@njit(cache=True, nogil=True)
def _fill_tables(keys_le, right_mask, out):
    for r in range(out.shape[0]):
        for x in range(out.shape[1]):
            out[r, x] = feistel_round(_U(x), keys_le[r], right_mask)


def round_tables(keys_le: np.ndarray, half_bits: int) -> np.ndarray:
    """``(rounds, 2^half_bits)`` uint64: row ``r`` is ``F(x, key_r)`` for every ``x``."""
    out = np.empty((keys_le.shape[0], 1 << half_bits), dtype=np.uint64)
    _fill_tables(keys_le, _U((1 << half_bits) - 1), out)
    return out


@njit(cache=True, nogil=True, inline="always")
def _encode_table(index, tables, left_mask, right_mask, half_bits):
    left = (index & left_mask) >> half_bits
    right = index & right_mask
    for r in range(tables.shape[0]):
        left, right = right, left ^ tables[r, right]
    return (left << half_bits) | right


@njit(cache=True, nogil=True)
def table_permute(n, index, tables, left_mask, right_mask, half_bits):
    """:func:`feistel_permute` with the round functions looked up in :func:`round_tables`."""
    u = _encode_table(index, tables, left_mask, right_mask, half_bits)
    while u >= n:
        u = _encode_table(u, tables, left_mask, right_mask, half_bits)
    return u


def precompute(n: int) -> tuple:
    """``(left_mask, right_mask, half_bits)`` for a permutation of ``[0, n)``: ``half_bits`` is
    the least ``h >= 1`` with ``4^h >= n``."""
    h = 1
    while 4 ** h < n:
        h += 1
    return ((1 << h) - 1) << h, (1 << h) - 1, h


def swapped_keys(keys) -> np.ndarray:
    """The first :data:`FEISTEL_ROUNDS` keys, each as the little-endian word of its big-endian bytes."""
    return np.array([int.from_bytes(int(k).to_bytes(8, "big"), "little") for k in keys[:FEISTEL_ROUNDS]], dtype=np.uint64)


def round_function(right: int, key: int, right_mask: int) -> int:
    """``F(right, key)`` masked to ``right_mask`` (see the module docstring)."""
    return int(feistel_round(_U(right), swapped_keys([key])[0], _U(right_mask)))


@njit(cache=True, nogil=True)
def _permute_all(n, keys_le, lm, rm, hb, out):
    for i in range(n):
        out[i] = feistel_permute(_U(n), _U(i), keys_le, lm, rm, hb)


@njit(cache=True, nogil=True)
def _permute_all_table(n, tables, lm, rm, hb, out):
    for i in range(n):
        out[i] = table_permute(_U(n), _U(i), tables, lm, rm, hb)


def permute_all(n: int, keys, *, tables: bool = True) -> list:
    """The permutation of ``[0, n)`` under ``keys`` (their first 3), as a list: through the
    round tables, or hashing every round (``tables=False``)."""
    lm, rm, hb = precompute(n)
    out = np.empty(n, dtype=np.uint64)
    k = swapped_keys(keys)
    if tables:
        _permute_all_table(np.int64(n), round_tables(k, hb), _U(lm), _U(rm), _U(hb), out)
    else:
        _permute_all(np.int64(n), k, _U(lm), _U(rm), _U(hb), out)
    return [int(x) for x in out]
