"""The per-scalar GLV/GLS split as a Numba kernel (constants from ``cuzk.kernels.glv.EndoPlan``).

For each canonical scalar k (4 limbs): c_j = ±floor(k·|g_j| / 2^256) (one 4×4-limb product),
then u_i = δ_{i0}·k − Σ_j c_j·B_ji in a 512-bit two's-complement accumulator, then the sign and
magnitude of each u_i. Same arithmetic as ``cuzk.kernels.glv.split_ints``, which the tests
compare it with.

    >>> import numpy as np
    >>> from cuzk.curves import BLS12_381 as S
    >>> FQ, FR, FQ2_NONRESIDUE, G1_PARAMS, G2_PARAMS = S.fq, S.fr, S.fq2_nonresidue, S.g1, S.g2
    >>> from cuzk.kernels.glv import plan_for
    >>> plan = plan_for(G1_PARAMS, FQ, FR, FQ2_NONRESIDUE)
    >>> mags, neg = split(plan, np.array([[5, 0, 0, 0]], np.uint64))
    >>> mags[:, 0].tolist(), neg.tolist()          # 5 = 5 + 0·μ
    ([5, 0], [False, False])
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.errors import InputError
from cuzk.field.intrinsics import adc, mac, sbb

__all__ = ["split_range", "split"]

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_ALL = np.uint64(2**64 - 1)
_S63 = np.uint64(63)
_WORDS = 8  # cuzk.kernels.glv.WORDS


@njit(cache=True, nogil=True)
def split_range(scalars, lo, hi, gmag, gneg, bmag, bneg, bits, mags, neg):
    """Split scalars[lo:hi] into d parts: mags[j·n + i] (4 limbs) = |u_j|, neg[j·n + i] = u_j < 0.

    Returns -1, or the first index whose part reached 2^bits (cannot happen for a derived plan
    and k < 2^255; the caller raises).
    """
    n = scalars.shape[0]
    d = gmag.shape[0]
    bl = bmag.shape[2]
    t = np.zeros(8, np.uint64)
    c = np.zeros((d, 4), np.uint64)
    u = np.zeros(_WORDS, np.uint64)
    prod = np.zeros(_WORDS, np.uint64)
    top = bits // 64
    top_mask = (_ONE << np.uint64(bits % 64)) - _ONE
    for i in range(lo, hi):
        for j in range(d):
            for a in range(8):
                t[a] = _ZERO
            for a in range(4):
                ka = scalars[i, a]
                carry = _ZERO
                for b in range(4):
                    t[a + b], carry = mac(t[a + b], ka, gmag[j, b], carry)
                t[a + 4] = carry
            for a in range(4):
                c[j, a] = t[4 + a]
        for col in range(d):
            for a in range(_WORDS):
                u[a] = scalars[i, a] if (col == 0 and a < 4) else _ZERO
            for j in range(d):
                for a in range(_WORDS):
                    prod[a] = _ZERO
                for a in range(4):
                    ca = c[j, a]
                    carry = _ZERO
                    for b in range(bl):
                        prod[a + b], carry = mac(prod[a + b], ca, bmag[j, col, b], carry)
                    prod[a + bl] = carry
                if gneg[j] != bneg[j, col]:  # c_j·B_j,col < 0: subtracting it adds its magnitude
                    cy = _ZERO
                    for a in range(_WORDS):
                        u[a], cy = adc(u[a], prod[a], cy)
                else:
                    bw = _ZERO
                    for a in range(_WORDS):
                        u[a], bw = sbb(u[a], prod[a], bw)
            negative = (u[_WORDS - 1] >> _S63) != _ZERO
            if negative:  # two's complement: invert, add one
                cy = _ONE
                for a in range(_WORDS):
                    u[a], cy = adc(u[a] ^ _ALL, _ZERO, cy)
            for a in range(top + 1, _WORDS):
                if u[a] != _ZERO:
                    return i
            if top < _WORDS and (u[top] & ~top_mask) != _ZERO:
                return i
            row = col * n + i
            for a in range(4):
                mags[row, a] = u[a]
            neg[row] = negative
    return -1


def split(plan, scalars, lo: int = 0, hi: int | None = None, mags=None, neg=None):
    """(mags (d·n, 4) uint64, neg (d·n,) bool): the split of canonical ``scalars`` (n, 4) < 2^255
    (rows lo..hi written when the caller passes its own ``mags``/``neg``)."""
    n = scalars.shape[0]
    hi = n if hi is None else hi
    if mags is None:
        mags = np.zeros((plan.dim * n, 4), np.uint64)
        neg = np.zeros(plan.dim * n, np.bool_)
    bad = split_range(scalars, lo, hi, plan.gmag, plan.gneg, plan.bmag, plan.bneg, plan.bits, mags, neg)
    if bad >= 0:
        raise InputError(f"scalars[{bad}] is not below 2^255: it has no {plan.bits}-bit split")
    return mags, neg
