"""Big-endian bytes ↔ canonical Fq limbs inside Numba (the 48-byte coordinates of the zcash format).

For any 6-limb base field: the modulus comes in as limb rows (:func:`modulus_rows`), which a
curve's generated point module holds as constants.

Canonical limbs are a ``UniTuple(uint64, 6)``, little-endian, *not* Montgomery; callers convert
with ``fq.to_mont`` / ``fq.from_mont``. ``first_mask`` clears the three flag bits that the zcash
format keeps in the top byte of the first coordinate.

    >>> import numpy as np
    >>> from cuzk.curve.fq_bytes import read_be, ALL_BITS
    >>> row = np.zeros(48, np.uint8); row[47] = 5
    >>> [int(v) for v in read_be(row, 0, ALL_BITS)]
    [5, 0, 0, 0, 0, 0]
"""

import numpy as np
from numba import njit

__all__ = ["read_be", "write_be", "lt_modulus", "gt_half", "limbs_are_zero", "modulus_rows", "ALL_BITS", "FLAG_BITS_CLEAR", "COORD_BYTES"]

COORD_BYTES = 48  # one Fq element, big-endian
ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)
FLAG_BITS_CLEAR = np.uint64(0x1FFFFFFFFFFFFFFF)  # drops 0x80 | 0x40 | 0x20 of the top byte
_U8 = np.uint64(8)
_BYTE = np.uint64(0xFF)
_ZERO = np.uint64(0)


def _limbs(x):
    return np.array([(x >> (64 * k)) & 0xFFFFFFFFFFFFFFFF for k in range(6)], dtype=np.uint64)


def modulus_rows(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Limbs of p and of (p − 1)/2 (y is the "larger" root iff y > (p − 1)/2), for the checks below.

    >>> [int(r[0]) for r in modulus_rows(7)]
    [7, 3]
    """
    return _limbs(p), _limbs((p - 1) // 2)


@njit(cache=True, nogil=True)
def _word(row, start):
    v = _ZERO
    for k in range(8):
        v = (v << _U8) | np.uint64(row[start + k])
    return v


@njit(cache=True, nogil=True)
def read_be(row, off, first_mask):
    """Canonical limbs of the 48 big-endian bytes ``row[off:off+48]`` (top word ANDed with ``first_mask``)."""
    return (
        _word(row, off + 40),
        _word(row, off + 32),
        _word(row, off + 24),
        _word(row, off + 16),
        _word(row, off + 8),
        _word(row, off) & first_mask,
    )


@njit(cache=True, nogil=True)
def write_be(row, off, v):
    """Write canonical limbs ``v`` as 48 big-endian bytes at ``row[off]`` (overwrites, no flags)."""
    for k in range(6):
        w = v[k]
        base = off + 8 * (5 - k) + 7
        for b in range(8):
            row[base - b] = np.uint8(w & _BYTE)
            w = w >> _U8


@njit(cache=True, nogil=True)
def _cmp(v, ref):
    # -1, 0, 1 as v <, ==, > ref; most significant limb first
    for k in range(5, -1, -1):
        if v[k] != ref[k]:
            return 1 if v[k] > ref[k] else -1
    return 0


@njit(cache=True, nogil=True)
def lt_modulus(v, p_row):
    """True when canonical limbs ``v`` encode an integer < p (``p_row``: :func:`modulus_rows`' first)."""
    return _cmp(v, p_row) < 0


@njit(cache=True, nogil=True)
def gt_half(v, half_row):
    """True when ``v`` > (p-1)/2, i.e. v is the lexicographically larger of {v, p - v}."""
    return _cmp(v, half_row) > 0


@njit(cache=True, nogil=True)
def limbs_are_zero(v):
    """True when every limb of ``v`` is zero."""
    acc = _ZERO
    for k in range(6):
        acc |= v[k]
    return acc == _ZERO
