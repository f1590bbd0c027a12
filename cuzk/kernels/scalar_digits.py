"""Signed window digits of Fr scalars, shared by Pippenger MSM and fixed-base multiplication.

A scalar k < r < 2^255 is written as k = Σ_w d_w·2^(c·w) with digits d_w in
[−2^(c−1), 2^(c−1)], so c-bit windows need only 2^(c−1) buckets (a negative digit adds −P,
which costs a negation). With nwin = ceil(256/c) windows the last carry always fits: the top
window holds at most c−1 bits of k, so its digit is at most 2^(c−1) and never borrows; its
magnitude is at most 2^top_bits(c), which sizes the top window's buckets (NUMBA_NOTES pitfall 3).

    >>> import numpy as np
    >>> d = signed_digits(np.array([[7, 0, 0, 0]], np.uint64), 2, num_windows(2), np.zeros(1, np.bool_))
    >>> d[:3, 0].tolist()            # 7 = -1 + 2·4: windows (-1, 2, 0)
    [-1, 2, 0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["signed_digits", "signed_digits_range", "num_windows", "top_bits", "SCALAR_BITS"]

SCALAR_BITS = 255  # Fr scalars are < r < 2^255
_ONE = np.uint64(1)
_ZERO = np.int64(0)


def num_windows(c: int, bits: int = SCALAR_BITS) -> int:
    """Windows of width c covering bits + 1 bits (one spare bit absorbs the signed-digit carry)
    of scalars below 2^bits (the GLV/GLS parts of ``cuzk.kernels.glv`` are 64-129 bits)."""
    return -(-(bits + 1) // c)


def top_bits(c: int, bits: int = SCALAR_BITS) -> int:
    """Bits of the scalar in the top window: its digit magnitude is at most 2^top_bits(c)."""
    return bits - (num_windows(c, bits) - 1) * c


@njit(cache=True, nogil=True)
def signed_digits(scalars, c, nwin, skip):
    """(nwin, n) int32 signed digits of canonical scalars (n, 4); rows with skip[i] are zero."""
    n = scalars.shape[0]
    out = np.zeros((nwin, n), np.int32)
    signed_digits_range(scalars, c, skip, _ZERO, n, out)  # int64, not a literal: one specialization
    return out


@njit(cache=True, nogil=True)
def signed_digits_range(scalars, c, skip, lo, hi, out):
    """out[:, i] = the signed digits of scalars[i] for i in [lo, hi) (nwin = rows of out; rows
    with skip[i] are left as they are: zeros in a fresh array)."""
    nwin = out.shape[0]
    mask = (_ONE << np.uint64(c)) - _ONE
    half = 1 << (c - 1)
    full = 1 << c
    for i in range(lo, hi):
        if skip[i]:
            continue
        carry = 0
        for w in range(nwin):
            off = w * c
            limb = off // 64
            sh = off % 64
            v = np.uint64(0)
            if limb < 4:
                v = scalars[i, limb] >> np.uint64(sh)
                if sh + c > 64 and limb + 1 < 4:
                    v |= scalars[i, limb + 1] << np.uint64(64 - sh)
            d = np.int64(v & mask) + carry
            if d > half:
                d -= full
                carry = 1
            else:
                carry = 0
            out[w, i] = d
