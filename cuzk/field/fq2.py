"""Fq2 = Fq[u] / (u^2 + 1): kernels over pairs ``(c0, c1)`` of Fq elements (value c0 + c1*u).

Elements are tuples of two ``UniTuple(uint64, 6)`` Montgomery Fq elements; arrays of them
have shape ``(n, 2, 6)``. Every function is ``@njit(cache=True, nogil=True)``; see
docs/kernel-contracts.md.

    >>> from numba import njit
    >>> from cuzk.field import fq, fq2
    >>> @njit
    ... def u_squared_is_minus_one():
    ...     u = (fq.zero(), fq.one())
    ...     return fq2.eq(fq2.mul(u, u), fq2.neg(fq2.one()))
    >>> u_squared_is_minus_one()
    True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.field import fq
from cuzk.field.params import FQ

__all__ = [
    "zero", "one", "add", "sub", "neg", "dbl", "mul", "sqr", "inv", "conj", "mul_by_fq",
    "mul_by_nonresidue", "frobenius", "sqrt", "is_zero", "eq", "load", "store", "pow_",
]

# 1/2 = (p + 1) / 2 in Montgomery form, for the square-root formula.
HALF = tuple(np.uint64((FQ.to_mont_int((FQ.modulus + 1) // 2) >> (64 * k)) & 0xFFFFFFFFFFFFFFFF) for k in range(6))


@njit(cache=True, nogil=True)
def zero():
    """The additive identity."""
    return (fq.zero(), fq.zero())


@njit(cache=True, nogil=True)
def one():
    """The multiplicative identity."""
    return (fq.one(), fq.zero())


@njit(cache=True, nogil=True)
def add(a, b):
    """a + b."""
    return (fq.add(a[0], b[0]), fq.add(a[1], b[1]))


@njit(cache=True, nogil=True)
def sub(a, b):
    """a - b."""
    return (fq.sub(a[0], b[0]), fq.sub(a[1], b[1]))


@njit(cache=True, nogil=True)
def neg(a):
    """-a."""
    return (fq.neg(a[0]), fq.neg(a[1]))


@njit(cache=True, nogil=True)
def dbl(a):
    """2a."""
    return (fq.dbl(a[0]), fq.dbl(a[1]))


@njit(cache=True, nogil=True)
def mul(a, b):
    """a * b by Karatsuba: three Fq multiplications."""
    v0 = fq.mul(a[0], b[0])
    v1 = fq.mul(a[1], b[1])
    s = fq.mul(fq.add(a[0], a[1]), fq.add(b[0], b[1]))
    return (fq.sub(v0, v1), fq.sub(fq.sub(s, v0), v1))


@njit(cache=True, nogil=True)
def sqr(a):
    """a^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: two Fq multiplications."""
    c0 = fq.mul(fq.add(a[0], a[1]), fq.sub(a[0], a[1]))
    t = fq.mul(a[0], a[1])
    return (c0, fq.add(t, t))


@njit(cache=True, nogil=True)
def conj(a):
    """c0 - c1 u."""
    return (a[0], fq.neg(a[1]))


@njit(cache=True, nogil=True)
def frobenius(a):
    """a^p; for u^2 = -1 and p = 3 mod 4 this is the conjugate."""
    return conj(a)


@njit(cache=True, nogil=True)
def inv(a):
    """a^-1 = conj(a) / (c0^2 + c1^2); inv(zero()) == zero()."""
    t = fq.inv(fq.add(fq.sqr(a[0]), fq.sqr(a[1])))
    return (fq.mul(a[0], t), fq.neg(fq.mul(a[1], t)))


@njit(cache=True, nogil=True)
def mul_by_fq(a, s):
    """a * s for s in Fq."""
    return (fq.mul(a[0], s), fq.mul(a[1], s))


@njit(cache=True, nogil=True)
def mul_by_nonresidue(a):
    """a * (1 + u), the Fq6 non-residue: (c0 - c1) + (c0 + c1) u."""
    return (fq.sub(a[0], a[1]), fq.add(a[0], a[1]))


@njit(cache=True, nogil=True)
def is_zero(a):
    """True for zero."""
    return fq.is_zero(a[0]) and fq.is_zero(a[1])


@njit(cache=True, nogil=True)
def eq(a, b):
    """Equality."""
    return fq.eq(a[0], b[0]) and fq.eq(a[1], b[1])


@njit(cache=True, nogil=True)
def pow_(a, e):
    """a^e, e a 1-D uint64 array of little-endian limbs."""
    r = one()
    started = False
    top = np.uint64(63)
    for i in range(e.shape[0] - 1, -1, -1):
        w = e[i]
        for _ in range(64):
            if started:
                r = sqr(r)
            if w >> top:
                r = mul(r, a) if started else a
                started = True
            w = w << fq.ONE
    return r


@njit(cache=True, nogil=True)
def sqrt(a):
    """(ok, r) with r^2 == a; ok False (r zero) for non-squares.

    The "complex method" for u^2 = -1: with the norm n = c0^2 + c1^2 and s = sqrt(n) in Fq,
    a root is x0 + x1 u with x0^2 = (c0 ± s) / 2 and x1 = c1 / (2 x0). Costs three Fq
    square roots at most and one inversion.
    """
    a0, a1 = a
    if fq.is_zero(a1):
        ok, s = fq.sqrt(a0)
        if ok:
            return True, (s, fq.zero())
        ok, s = fq.sqrt(fq.neg(a0))  # -a0 is a square when a0 is not (-1 is not a square)
        return True, (fq.zero(), s)
    ok, s = fq.sqrt(fq.add(fq.sqr(a0), fq.sqr(a1)))
    if not ok:
        return False, zero()
    ok, x0 = fq.sqrt(fq.mul(fq.add(a0, s), HALF))
    if not ok:
        ok, x0 = fq.sqrt(fq.mul(fq.sub(a0, s), HALF))
    # x0 != 0 here: x0 = 0 would force c0 = ±s, i.e. c1 = 0, handled above.
    x1 = fq.mul(a1, fq.inv(fq.dbl(x0)))
    r = (x0, x1)
    if not eq(sqr(r), a):
        return False, zero()
    return True, r


@njit(cache=True, nogil=True)
def load(arr, i):
    """Row i of an (n, 2, 6) uint64 array as an element."""
    return (
        (arr[i, 0, 0], arr[i, 0, 1], arr[i, 0, 2], arr[i, 0, 3], arr[i, 0, 4], arr[i, 0, 5]),
        (arr[i, 1, 0], arr[i, 1, 1], arr[i, 1, 2], arr[i, 1, 3], arr[i, 1, 4], arr[i, 1, 5]),
    )


@njit(cache=True, nogil=True)
def store(arr, i, v):
    """Write element v into row i of an (n, 2, 6) uint64 array."""
    for j in range(2):
        c = v[j]
        arr[i, j, 0] = c[0]
        arr[i, j, 1] = c[1]
        arr[i, j, 2] = c[2]
        arr[i, j, 3] = c[3]
        arr[i, j, 4] = c[4]
        arr[i, j, 5] = c[5]
