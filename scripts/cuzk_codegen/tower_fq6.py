"""Template text of every curve's ``fq6.py`` (placeholders: TITLE, XI, L, FIELD_PKG, FIELD_PARAMS)."""

import string

__all__ = ["FQ6"]

FQ6 = string.Template('''\
"""${TITLE} Fq6 = Fq2[v]/(v^3 - xi), xi = ${XI}: Numba kernels over triples of Fq2 elements.

An element is ``(c0, c1, c2)`` = c0 + c1*v + c2*v^2 with each ``ci`` an Fq2 element
(``${FIELD_PKG}.fq2``: a pair of Montgomery Fq limb tuples). Arrays hold elements as
``(n, 3, 2, ${L})`` uint64. Every kernel is ``@jit_kernel(cache=True, nogil=True)`` (``@njit`` without the
Python-call wrappers, ``cuzk.field.jit``).

The Frobenius coefficients are derived from the modulus at import (see
:func:`frobenius_coefficient`; ``cuzk.field.fq2_ints.frobenius_powers`` computes the table), not
typed in.

Kernels are meant to be called from other ``@njit`` code (called from Python, the uint64 limbs
come back as Python ints and do not type as uint64 again).

    >>> from numba import njit
    >>> from ${FIELD_PKG} import fq6
    >>> @njit
    ... def v_cubed_is_xi():
    ...     v = fq6.mul_by_nonresidue(fq6.one())          # (0, 1, 0)
    ...     return fq6.eq(fq6.mul(fq6.sqr(v), v), fq6.mul_by_nonresidue(fq6.mul_by_nonresidue(v)))
    >>> v_cubed_is_xi()
    True
"""

from __future__ import annotations

import numpy as np

from cuzk.field import fq2_ints
from cuzk.field.jit import I0, I1, I2, jit_kernel
from ${FIELD_PKG} import fq2
from ${FIELD_PARAMS} import FQ as _F
from ${FIELD_PARAMS} import FQ2_NONRESIDUE, FQ6_NONRESIDUE

__all__ = [
    "zero",
    "one",
    "add",
    "sub",
    "neg",
    "dbl",
    "mul",
    "sqr",
    "inv",
    "mul_by_fq2",
    "mul_by_nonresidue",
    "mul_by_01",
    "mul_by_1",
    "frobenius_map",
    "is_zero",
    "eq",
    "load",
    "store",
    "frobenius_coefficient",
    "fq2_to_limbs",
]

_P = _F.modulus


def frobenius_coefficient(numerator: int, denominator: int) -> tuple[int, int]:
    """xi^(numerator/denominator) as canonical ints (c0, c1), computed by square-and-multiply.

    ``numerator`` must be divisible by ``denominator``; the tower uses
    xi^((p^k - 1)/3), xi^(2(p^k - 1)/3) (Fq6) and xi^((p^k - 1)/6) (Fq12), since
    v^(p^k) = v * xi^((p^k - 1)/3) and w^(p^k) = w * xi^((p^k - 1)/6).

        >>> frobenius_coefficient(0, 3)
        (1, 0)
    """
    e, rem = divmod(numerator, denominator)
    if rem:
        raise ValueError(f"{numerator} is not divisible by {denominator}")
    # xi != 0 lies in Fq2*, of order p^2 - 1: the reduced exponent gives the same power with
    # ~760 squarings instead of up to ~4200 (k = 11), which made importing Fq12 take ~0.25 s
    return fq2_ints.pow_(FQ6_NONRESIDUE, e % (_P * _P - 1), _P, FQ2_NONRESIDUE)


def fq2_to_limbs(c: tuple[int, int]):
    """Canonical (c0, c1) ints -> Fq2 kernel element (Montgomery uint64 limb tuples).

        >>> fq2_to_limbs((0, 0))[1] == (np.uint64(0),) * ${L}
        True
    """
    out = []
    for x in c:
        m = x * _F.r % _P
        out.append(tuple(np.uint64((m >> (64 * k)) & 0xFFFFFFFFFFFFFFFF) for k in range(_F.limbs)))
    return tuple(out)


# FROB_V1[k] = xi^((p^k - 1)/3), FROB_V2[k] = xi^(2(p^k - 1)/3): the factors v and v^2 pick up
# under the p^k-power Frobenius (Fq2 coefficients are conjugated k times). Period 6 in k.
_XI_POW3 = fq2_ints.frobenius_powers(FQ6_NONRESIDUE, 3, 6, _P, FQ2_NONRESIDUE)  # = frobenius_coefficient(p^k - 1, 3)
FROB_V1 = tuple(fq2_to_limbs(c) for c in _XI_POW3)
FROB_V2 = tuple(fq2_to_limbs(fq2_ints.mul(c, c, _P, FQ2_NONRESIDUE)) for c in _XI_POW3)
_SIX = np.int64(6)


@jit_kernel(cache=True, nogil=True)
def zero():
    """The additive identity."""
    z = fq2.zero()
    return (z, z, z)


@jit_kernel(cache=True, nogil=True)
def one():
    """The multiplicative identity."""
    z = fq2.zero()
    return (fq2.one(), z, z)


@jit_kernel(cache=True, nogil=True)
def add(a, b):
    """a + b."""
    return (fq2.add(a[0], b[0]), fq2.add(a[1], b[1]), fq2.add(a[2], b[2]))


@jit_kernel(cache=True, nogil=True)
def sub(a, b):
    """a - b."""
    return (fq2.sub(a[0], b[0]), fq2.sub(a[1], b[1]), fq2.sub(a[2], b[2]))


@jit_kernel(cache=True, nogil=True)
def neg(a):
    """-a."""
    return (fq2.neg(a[0]), fq2.neg(a[1]), fq2.neg(a[2]))


@jit_kernel(cache=True, nogil=True)
def dbl(a):
    """2a."""
    return (fq2.dbl(a[0]), fq2.dbl(a[1]), fq2.dbl(a[2]))


@jit_kernel(cache=True, nogil=True)
def mul(a, b):
    """a * b: Karatsuba over the three coefficients (6 Fq2 multiplications, not 9).

    With v^3 = xi: c0 = a0b0 + xi(a1b2 + a2b1), c1 = a0b1 + a1b0 + xi a2b2,
    c2 = a0b2 + a1b1 + a2b0; each cross sum is (ai + aj)(bi + bj) - aibi - ajbj.
    """
    a0, a1, a2 = a
    b0, b1, b2 = b
    t0 = fq2.mul(a0, b0)
    t1 = fq2.mul(a1, b1)
    t2 = fq2.mul(a2, b2)
    x12 = fq2.sub(fq2.sub(fq2.mul(fq2.add(a1, a2), fq2.add(b1, b2)), t1), t2)
    x01 = fq2.sub(fq2.sub(fq2.mul(fq2.add(a0, a1), fq2.add(b0, b1)), t0), t1)
    x02 = fq2.sub(fq2.sub(fq2.mul(fq2.add(a0, a2), fq2.add(b0, b2)), t0), t2)
    c0 = fq2.add(t0, fq2.mul_by_nonresidue(x12))
    c1 = fq2.add(x01, fq2.mul_by_nonresidue(t2))
    c2 = fq2.add(x02, t1)
    return (c0, c1, c2)


@jit_kernel(cache=True, nogil=True)
def sqr(a):
    """a^2 by Chung-Hasan SQR2 (2 Fq2 squarings, 2 Fq2 multiplications, 1 squaring).

    s0 = a0^2, s1 = 2a0a1, s2 = (a0 - a1 + a2)^2, s3 = 2a1a2, s4 = a2^2 give
    c0 = s0 + xi s3, c1 = s1 + xi s4, c2 = s1 + s2 + s3 - s0 - s4 (= a1^2 + 2a0a2).
    """
    a0, a1, a2 = a
    s0 = fq2.sqr(a0)
    s1 = fq2.dbl(fq2.mul(a0, a1))
    s2 = fq2.sqr(fq2.add(fq2.sub(a0, a1), a2))
    s3 = fq2.dbl(fq2.mul(a1, a2))
    s4 = fq2.sqr(a2)
    c0 = fq2.add(s0, fq2.mul_by_nonresidue(s3))
    c1 = fq2.add(s1, fq2.mul_by_nonresidue(s4))
    c2 = fq2.sub(fq2.sub(fq2.add(fq2.add(s1, s2), s3), s0), s4)
    return (c0, c1, c2)


@jit_kernel(cache=True, nogil=True)
def inv(a):
    """a^-1 via the adjugate: one Fq2 inversion; inv(zero()) == zero().

    t0 = a0^2 - xi a1a2, t1 = xi a2^2 - a0a1, t2 = a1^2 - a0a2 satisfy
    a * (t0 + t1 v + t2 v^2) = a0t0 + xi(a2t1 + a1t2), an Fq2 norm.
    """
    a0, a1, a2 = a
    t0 = fq2.sub(fq2.sqr(a0), fq2.mul_by_nonresidue(fq2.mul(a1, a2)))
    t1 = fq2.sub(fq2.mul_by_nonresidue(fq2.sqr(a2)), fq2.mul(a0, a1))
    t2 = fq2.sub(fq2.sqr(a1), fq2.mul(a0, a2))
    d = fq2.add(fq2.mul(a0, t0), fq2.mul_by_nonresidue(fq2.add(fq2.mul(a2, t1), fq2.mul(a1, t2))))
    di = fq2.inv(d)
    return (fq2.mul(t0, di), fq2.mul(t1, di), fq2.mul(t2, di))


@jit_kernel(cache=True, nogil=True)
def mul_by_fq2(a, s):
    """a * s for s in Fq2."""
    return (fq2.mul(a[0], s), fq2.mul(a[1], s), fq2.mul(a[2], s))


@jit_kernel(cache=True, nogil=True)
def mul_by_nonresidue(a):
    """a * v (the Fq12 non-residue: w^2 = v): (c0, c1, c2) -> (xi c2, c0, c1)."""
    return (fq2.mul_by_nonresidue(a[2]), a[0], a[1])


@jit_kernel(cache=True, nogil=True)
def mul_by_01(a, b0, b1):
    """a * (b0 + b1 v), the sparse factor of a Miller-loop line (5 Fq2 multiplications)."""
    a0, a1, a2 = a
    t0 = fq2.mul(a0, b0)
    t1 = fq2.mul(a1, b1)
    c0 = fq2.add(t0, fq2.mul_by_nonresidue(fq2.mul(a2, b1)))
    c1 = fq2.sub(fq2.sub(fq2.mul(fq2.add(a0, a1), fq2.add(b0, b1)), t0), t1)
    c2 = fq2.add(t1, fq2.mul(a2, b0))
    return (c0, c1, c2)


@jit_kernel(cache=True, nogil=True)
def mul_by_1(a, b1):
    """a * (b1 v) (3 Fq2 multiplications)."""
    return (fq2.mul_by_nonresidue(fq2.mul(a[2], b1)), fq2.mul(a[0], b1), fq2.mul(a[1], b1))


@jit_kernel(cache=True, nogil=True)
def frobenius_map(a, k):
    """a^(p^k) for any integer k >= 0 (the map has order 6)."""
    i = k % _SIX
    c0, c1, c2 = a
    if i & 1:
        c0, c1, c2 = fq2.conj(c0), fq2.conj(c1), fq2.conj(c2)
    return (c0, fq2.mul(c1, FROB_V1[i]), fq2.mul(c2, FROB_V2[i]))


@jit_kernel(cache=True, nogil=True)
def is_zero(a):
    """True for the zero element."""
    return fq2.is_zero(a[0]) and fq2.is_zero(a[1]) and fq2.is_zero(a[2])


@jit_kernel(cache=True, nogil=True)
def eq(a, b):
    """Equality (both operands reduced)."""
    return fq2.eq(a[0], b[0]) and fq2.eq(a[1], b[1]) and fq2.eq(a[2], b[2])


@jit_kernel(cache=True, nogil=True)
def load(arr, i):
    """Row i of an (n, 3, 2, ${L}) uint64 array as an element."""
    row = arr[i]
    return (fq2.load(row, I0), fq2.load(row, I1), fq2.load(row, I2))


@jit_kernel(cache=True, nogil=True)
def store(arr, i, v):
    """Write element v into row i of an (n, 3, 2, ${L}) uint64 array."""
    row = arr[i]
    fq2.store(row, I0, v[0])
    fq2.store(row, I1, v[1])
    fq2.store(row, I2, v[2])
''')
