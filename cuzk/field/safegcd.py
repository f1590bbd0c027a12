"""Modular inversion by Bernstein-Yang divsteps ("safegcd"), variable time, for any odd modulus.

Every field's ``inv`` (generated, ``scripts/cuzk_codegen/field.py``) calls :func:`invert`: a
batch-affine addition shares one inversion among 2,048 additions, and Fermat's a^(p-2) cost 490
Fq products (19 µs, ~3 % of each addition) where this costs a few µs. The inputs an MSM inverts
are differences of public key points, and the MSMs' timing already follows their scalars' values
(zeros skipped, buckets filled), so a variable-time inversion exposes nothing new.

The integers live in signed 30-bit limbs (int64 words: the products of the updates fit without
128-bit arithmetic). Each round runs 30 divsteps on the low bits of f and g, giving a 2x2 matrix
with entries of at most 2^30, and applies it to (f, g) exactly and to (d, e) modulo the modulus,
keeping f = d·x and g = e·x (mod M) until g = 0 and f = ±1, so x^-1 = ±d. The method and the
bounds (d, e stay within (-2M, M)) are Bernstein and Yang's; this is the variable-time form,
which stops as soon as g is 0.

    >>> import numpy as np
    >>> m = 2**127 - 1
    >>> mod, minv = modulus_limbs30(m)
    >>> x = np.array([12345, 0], np.uint64)
    >>> invert(x, mod, minv)
    >>> (int(x[0]) | int(x[1]) << 64) * 12345 % m
    1
"""

from __future__ import annotations

import numpy as np

from cuzk.field.jit import jit_kernel

__all__ = ["BITS", "modulus_limbs30", "invert"]

BITS = 30  # bits per limb
_MASK = (1 << BITS) - 1
# int64 constants for kernel arguments: a Python int argument types as a literal, and every
# literal value is a kernel specialization of its own (tests/test_cold_start.py)
_PLUS, _MINUS, _DELTA0, _ZERO = np.int64(1), np.int64(-1), np.int64(1), np.int64(0)


def modulus_limbs30(modulus: int) -> tuple[np.ndarray, np.int64]:
    """(limbs, inv): an odd ``modulus`` in signed 30-bit limbs (int64, with room for the sign and
    the range (-2M, M) of d and e) and modulus^-1 mod 2^30 (an np.int64: a Python int constant
    would type as a literal, one kernel specialization per value)."""
    if modulus < 3 or modulus % 2 == 0:
        raise ValueError(f"safegcd needs an odd modulus >= 3, got {modulus}")
    k = (modulus.bit_length() + 2) // BITS + 1
    return (np.array([(modulus >> (BITS * i)) & _MASK for i in range(k)], np.int64),
            np.int64(pow(modulus, -1, 1 << BITS)))


@jit_kernel(cache=True, nogil=True)
def _divsteps(delta, f, g):
    """30 divsteps on the low 30 bits of f and g: (delta, u, v, q, r), the transition matrix
    times 2^30."""
    u, v, q, r = 1, 0, 0, 1
    for _ in range(BITS):
        if g & 1:
            if delta > 0:
                delta = 1 - delta
                f, g = g, (g - f) >> 1
                u, v, q, r = 2 * q, 2 * r, q - u, r - v
            else:
                delta = 1 + delta
                g = (g + f) >> 1
                u, v, q, r = 2 * u, 2 * v, q + u, r + v
        else:
            delta = 1 + delta
            g = g >> 1
            u, v = 2 * u, 2 * v
    return delta, u, v, q, r


@jit_kernel(cache=True, nogil=True)
def _apply(a, b, u, v, q, r, m, ma, mb):
    """(a, b) <- (u·a + v·b + ma·m, q·a + r·b + mb·m) / 2^30, the sums divisible by 2^30."""
    k = a.shape[0]
    ca = (u * a[0] + v * b[0] + m[0] * ma) >> BITS
    cb = (q * a[0] + r * b[0] + m[0] * mb) >> BITS
    for i in range(1, k):
        ca += u * a[i] + v * b[i] + m[i] * ma
        cb += q * a[i] + r * b[i] + m[i] * mb
        a[i - 1] = ca & _MASK
        b[i - 1] = cb & _MASK
        ca >>= BITS
        cb >>= BITS
    a[k - 1] = ca
    b[k - 1] = cb


@jit_kernel(cache=True, nogil=True)
def _update_de(d, e, u, v, q, r, m, minv):
    """(d, e) <- (u·d + v·e, q·d + r·e) / 2^30 mod m, kept within (-2m, m): a multiple of m
    makes each sum divisible, and d's and e's signs pick the one that keeps the range."""
    k = d.shape[0]
    sd = d[k - 1] >> 63  # -1 when negative
    se = e[k - 1] >> 63
    md = (u & sd) + (v & se)
    me = (q & sd) + (r & se)
    md -= (minv * ((u * d[0] + v * e[0]) & _MASK) + md) & _MASK
    me -= (minv * ((q * d[0] + r * e[0]) & _MASK) + me) & _MASK
    _apply(d, e, u, v, q, r, m, md, me)


@jit_kernel(cache=True, nogil=True)
def _is_zero(a):
    for i in range(a.shape[0]):
        if a[i] != 0:
            return False
    return True


@jit_kernel(cache=True, nogil=True)
def _carry(a):
    """Limbs 0..k-2 into [0, 2^30), the top limb signed: the same value."""
    k = a.shape[0]
    c = 0
    for i in range(k - 1):
        c += a[i]
        a[i] = c & _MASK
        c >>= BITS
    a[k - 1] += c


@jit_kernel(cache=True, nogil=True)
def _add_scaled(a, m, s):
    """a += s·m (s = ±1), carried."""
    for i in range(a.shape[0]):
        a[i] += s * m[i]
    _carry(a)


@jit_kernel(cache=True, nogil=True)
def _at_least(a, m):
    """a >= m for carried non-negative limbs."""
    for i in range(a.shape[0] - 1, -1, -1):
        if a[i] != m[i]:
            return a[i] > m[i]
    return True


@jit_kernel(cache=True, nogil=True)
def invert(x, m, minv):
    """x <- x^-1 mod M in place: ``x`` a uint64 array of little-endian limbs holding an integer
    below M, ``m`` and ``minv`` from :func:`modulus_limbs30` for M; 0 stays 0."""
    nx = x.shape[0]
    k = m.shape[0]
    f = m.copy()
    g = np.zeros(k, np.int64)
    for i in range(k):  # 64-bit limbs -> 30-bit limbs
        bit = BITS * i
        w, off = bit // 64, bit % 64
        if w >= nx:
            break
        val = x[w] >> np.uint64(off)
        if off > 64 - BITS and w + 1 < nx:
            val |= x[w + 1] << np.uint64(64 - off)
        g[i] = np.int64(val & np.uint64(_MASK))
    if _is_zero(g):
        return
    d = np.zeros(k, np.int64)
    e = np.zeros(k, np.int64)
    e[0] = 1
    delta = _DELTA0
    while True:
        delta, u, v, q, r = _divsteps(delta, f[0], g[0])
        _update_de(d, e, u, v, q, r, m, minv)
        _apply(f, g, u, v, q, r, m, _ZERO, _ZERO)  # exact: no multiple of m
        if _is_zero(g):
            break
    _carry(d)
    if f[k - 1] < 0:  # f = -1: the inverse is -d
        for i in range(k):
            d[i] = -d[i]
        _carry(d)
    while d[k - 1] < 0:
        _add_scaled(d, m, _PLUS)
    while _at_least(d, m):
        _add_scaled(d, m, _MINUS)
    for w in range(nx):  # 30-bit limbs -> 64-bit limbs
        x[w] = np.uint64(0)
    for i in range(k):
        bit = BITS * i
        w, off = bit // 64, bit % 64
        val = np.uint64(d[i])
        if w < nx:
            x[w] |= val << np.uint64(off)
        if off > 64 - BITS and w + 1 < nx:
            x[w + 1] |= val >> np.uint64(64 - off)
