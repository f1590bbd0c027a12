"""Template text of every curve's ``fq12.py`` (placeholders: TITLE, XI, L, FIELD_PKG, FIELD_PARAMS, CURVE_PKG)."""

import string

__all__ = ["FQ12"]

FQ12 = string.Template('''\
"""${TITLE} Fq12 = Fq6[w]/(w^2 - v): Numba kernels over pairs of Fq6 elements (the pairing target field).

An element is ``(c0, c1)`` = c0 + c1*w with ``c0, c1`` Fq6 elements (``${FIELD_PKG}.fq6``), so
as a flat list of Fq2 coefficients it is sum_j c0[j] w^(2j) + c1[j] w^(2j+1) (w^6 = xi = ${XI}).
Arrays hold elements as ``(n, 2, 3, 2, ${L})`` uint64 Montgomery; a single element, as returned by
:func:`${CURVE_PKG}.pairing.pairing`, is ``(2, 3, 2, ${L})``. Kernels are
``@jit_kernel(cache=True, nogil=True)``; :func:`to_ints` / :func:`from_ints` convert at the edge.

Kernels are called from other ``@njit`` code; ``load_one`` / ``store_one`` move between arrays
and tuples.

    >>> from numba import njit
    >>> from ${FIELD_PKG} import fq12
    >>> @njit
    ... def inv_times(arr):
    ...     x = fq12.load_one(arr)
    ...     return fq12.store_one(fq12.mul(fq12.inv(x), x))
    >>> a = fq12.from_ints((((1, 2), (3, 4), (5, 6)), ((7, 8), (9, 10), (11, 12))))
    >>> fq12.to_ints(inv_times(a))[0]
    ((1, 0), (0, 0), (0, 0))
"""

from __future__ import annotations

import numpy as np

from cuzk.errors import FieldValueError
from cuzk.field import fq2_ints
from cuzk.field.jit import I0, I1, jit_kernel
from ${FIELD_PKG} import fq2, fq6
from ${FIELD_PARAMS} import FQ as _F
from ${FIELD_PARAMS} import FQ2_NONRESIDUE, FQ6_NONRESIDUE

__all__ = [
    "zero",
    "one",
    "add",
    "sub",
    "neg",
    "mul",
    "sqr",
    "inv",
    "conj",
    "mul_by_014",
    "mul_by_034",
    "frobenius_map",
    "cyclotomic_sqr",
    "cyclotomic_exp",
    "pow_",
    "is_zero",
    "is_one",
    "eq",
    "load",
    "store",
    "load_one",
    "store_one",
    "to_ints",
    "from_ints",
]

_P = _F.modulus
SHAPE = (2, 3, 2, _F.limbs)

# FROB_W[k] = xi^((p^k - 1)/6): w^(p^k) = w * FROB_W[k] (w^6 = xi). Period 12 in k.
FROB_W = tuple(fq6.fq2_to_limbs(c) for c in fq2_ints.frobenius_powers(FQ6_NONRESIDUE, 6, 12, _P, FQ2_NONRESIDUE))
_TWELVE = np.int64(12)
_U63 = np.uint64(63)
_U1 = np.uint64(1)


@jit_kernel(cache=True, nogil=True)
def zero():
    """The additive identity."""
    return (fq6.zero(), fq6.zero())


@jit_kernel(cache=True, nogil=True)
def one():
    """The multiplicative identity."""
    return (fq6.one(), fq6.zero())


@jit_kernel(cache=True, nogil=True)
def add(a, b):
    """a + b."""
    return (fq6.add(a[0], b[0]), fq6.add(a[1], b[1]))


@jit_kernel(cache=True, nogil=True)
def sub(a, b):
    """a - b."""
    return (fq6.sub(a[0], b[0]), fq6.sub(a[1], b[1]))


@jit_kernel(cache=True, nogil=True)
def neg(a):
    """-a."""
    return (fq6.neg(a[0]), fq6.neg(a[1]))


@jit_kernel(cache=True, nogil=True)
def mul(a, b):
    """a * b: Karatsuba over Fq6 (3 Fq6 multiplications); w^2 = v folds a1b1 into c0."""
    t0 = fq6.mul(a[0], b[0])
    t1 = fq6.mul(a[1], b[1])
    s = fq6.mul(fq6.add(a[0], a[1]), fq6.add(b[0], b[1]))
    return (fq6.add(t0, fq6.mul_by_nonresidue(t1)), fq6.sub(fq6.sub(s, t0), t1))


@jit_kernel(cache=True, nogil=True)
def sqr(a):
    """a^2 by complex squaring (2 Fq6 multiplications).

    With t = a0a1: (a0 + a1)(a0 + v a1) - t - v t = a0^2 + v a1^2, and c1 = 2t.
    """
    a0, a1 = a
    t = fq6.mul(a0, a1)
    s = fq6.mul(fq6.add(a0, a1), fq6.add(a0, fq6.mul_by_nonresidue(a1)))
    return (fq6.sub(fq6.sub(s, t), fq6.mul_by_nonresidue(t)), fq6.dbl(t))


@jit_kernel(cache=True, nogil=True)
def inv(a):
    """a^-1 = (a0 - a1 w) / (a0^2 - v a1^2); inv(zero()) == zero()."""
    a0, a1 = a
    d = fq6.inv(fq6.sub(fq6.sqr(a0), fq6.mul_by_nonresidue(fq6.sqr(a1))))
    return (fq6.mul(a0, d), fq6.neg(fq6.mul(a1, d)))


@jit_kernel(cache=True, nogil=True)
def conj(a):
    """a^(p^6): w -> -w. Equals a^-1 for elements of the cyclotomic subgroup (pairing values)."""
    return (a[0], fq6.neg(a[1]))


@jit_kernel(cache=True, nogil=True)
def mul_by_014(a, c0, c1, c4):
    """a * (c0 + c1 v + c4 v w): a Miller-loop line on an M-type twist (13 Fq2 multiplications, not 18).

    The index names the flat Fq2 coefficient (0..2: c0 v^j, 3..5: v^j w), as in other libraries.
    """
    a0, a1 = a
    t0 = fq6.mul_by_01(a0, c0, c1)
    t1 = fq6.mul_by_1(a1, c4)
    s = fq6.mul_by_01(fq6.add(a0, a1), c0, fq2.add(c1, c4))
    return (fq6.add(t0, fq6.mul_by_nonresidue(t1)), fq6.sub(fq6.sub(s, t0), t1))


@jit_kernel(cache=True, nogil=True)
def mul_by_034(a, c0, c3, c4):
    """a * (c0 + c3 w + c4 v w): a Miller-loop line on a D-type twist (13 Fq2 multiplications).

    The untwist (x, y) -> (x w^2, y w^3) puts the line's y_P term at w^0, its x_P term at w and
    the constant at w^3 = v w (M-type twists give :func:`mul_by_014` instead).
    """
    a0, a1 = a
    t0 = fq6.mul_by_fq2(a0, c0)
    t1 = fq6.mul_by_01(a1, c3, c4)
    s = fq6.mul_by_01(fq6.add(a0, a1), fq2.add(c0, c3), c4)
    return (fq6.add(t0, fq6.mul_by_nonresidue(t1)), fq6.sub(fq6.sub(s, t0), t1))


@jit_kernel(cache=True, nogil=True)
def frobenius_map(a, k):
    """a^(p^k) for any integer k >= 0 (the map has order 12)."""
    i = k % _TWELVE
    return (fq6.frobenius_map(a[0], i), fq6.mul_by_fq2(fq6.frobenius_map(a[1], i), FROB_W[i]))


@jit_kernel(cache=True, nogil=True)
def _fq4_sqr(a, b):
    # (a + b s)^2 in Fq4 = Fq2[s]/(s^2 - xi): (a^2 + xi b^2, 2ab), 2ab = (a + b)^2 - a^2 - b^2.
    a2 = fq2.sqr(a)
    b2 = fq2.sqr(b)
    return (fq2.add(a2, fq2.mul_by_nonresidue(b2)), fq2.sub(fq2.sub(fq2.sqr(fq2.add(a, b)), a2), b2))


@jit_kernel(cache=True, nogil=True)
def cyclotomic_sqr(a):
    """a^2 for a in the cyclotomic subgroup (order dividing p^4 - p^2 + 1); 9 Fq2 squarings.

    Granger-Scott (eprint 2009/565): view Fq12 as Fq4[t]/(t^3 - s) with t = w, s = w^3, so
    a = A + B t + C t^2 with A = g0 + g3 s, B = g1 + g4 s, C = g2 + g5 s (g_i the coefficient
    of w^i). For unitary a: a^2 = (3A^2 - 2conj(A)) + (3sC^2 + 2conj(B)) t + (3B^2 - 2conj(C)) t^2,
    conj being s -> -s. Wrong (but harmless) for elements outside the subgroup.
    """
    (g0, g2, g4), (g1, g3, g5) = a
    a0, a1 = _fq4_sqr(g0, g3)
    b0, b1 = _fq4_sqr(g1, g4)
    c0, c1 = _fq4_sqr(g2, g5)
    # 3x - 2y as 2(x - y) + x, 3x + 2y as 2(x + y) + x: additions only
    h0 = fq2.add(fq2.dbl(fq2.sub(a0, g0)), a0)
    h3 = fq2.add(fq2.dbl(fq2.add(a1, g3)), a1)
    h2 = fq2.add(fq2.dbl(fq2.sub(b0, g2)), b0)
    h5 = fq2.add(fq2.dbl(fq2.add(b1, g5)), b1)
    xc1 = fq2.mul_by_nonresidue(c1)  # s * C^2 = xi c1 + c0 s
    h1 = fq2.add(fq2.dbl(fq2.add(xc1, g1)), xc1)
    h4 = fq2.add(fq2.dbl(fq2.sub(c0, g4)), c0)
    return ((h0, h2, h4), (h1, h3, h5))


@jit_kernel(cache=True, nogil=True)
def _square_and_multiply(a, e, cyclotomic):
    # one loop for both powers: the squaring is the only difference (Granger–Scott needs a in
    # the cyclotomic subgroup); the branch is negligible next to an Fq12 squaring
    r = one()
    started = False
    for i in range(e.shape[0] - 1, -1, -1):
        word = e[i]
        for _ in range(64):
            if started:
                r = cyclotomic_sqr(r) if cyclotomic else sqr(r)
            if word >> _U63:
                r = mul(r, a) if started else a
                started = True
            word = word << _U1
    return r


@jit_kernel(cache=True, nogil=True)
def cyclotomic_exp(a, e):
    """a^e for a in the cyclotomic subgroup; e a uint64 array of little-endian limbs (e >= 0)."""
    return _square_and_multiply(a, e, True)


@jit_kernel(cache=True, nogil=True)
def pow_(a, e):
    """a^e for any a; e a uint64 array of little-endian limbs (e >= 0); pow_(a, [0]) == one()."""
    return _square_and_multiply(a, e, False)


@jit_kernel(cache=True, nogil=True)
def is_zero(a):
    """True for the zero element."""
    return fq6.is_zero(a[0]) and fq6.is_zero(a[1])


@jit_kernel(cache=True, nogil=True)
def is_one(a):
    """True for the multiplicative identity (the neutral element of GT)."""
    return fq6.eq(a[0], fq6.one()) and fq6.is_zero(a[1])


@jit_kernel(cache=True, nogil=True)
def eq(a, b):
    """Equality (both operands reduced)."""
    return fq6.eq(a[0], b[0]) and fq6.eq(a[1], b[1])


@jit_kernel(cache=True, nogil=True)
def load(arr, i):
    """Row i of an (n, 2, 3, 2, ${L}) uint64 array as an element."""
    row = arr[i]
    return (fq6.load(row, I0), fq6.load(row, I1))


@jit_kernel(cache=True, nogil=True)
def store(arr, i, v):
    """Write element v into row i of an (n, 2, 3, 2, ${L}) uint64 array."""
    row = arr[i]
    fq6.store(row, I0, v[0])
    fq6.store(row, I1, v[1])


@jit_kernel(cache=True, nogil=True)
def load_one(arr):
    """A single (2, 3, 2, ${L}) uint64 array as an element."""
    return (fq6.load(arr, I0), fq6.load(arr, I1))


@jit_kernel(cache=True, nogil=True)
def store_one(v):
    """An element as a new (2, 3, 2, ${L}) uint64 array."""
    out = np.empty(SHAPE, dtype=np.uint64)
    fq6.store(out, I0, v[0])
    fq6.store(out, I1, v[1])
    return out


def _check_array(arr) -> np.ndarray:
    if not isinstance(arr, np.ndarray) or arr.dtype != np.uint64 or arr.shape != SHAPE:
        raise FieldValueError(
            f"Fq12 element must be a uint64 array of shape {SHAPE}, got "
            f"{getattr(arr, 'dtype', type(arr).__name__)} {getattr(arr, 'shape', '')}"
        )
    for row in arr.reshape(-1, _F.limbs):  # 12 rows: an unreduced one was silently reduced (to_ints) or used
        if int.from_bytes(row.astype("<u8").tobytes(), "little") >= _P:
            raise FieldValueError("Fq12 element has a coefficient >= p (not a reduced Fq element)")
    return arr


def to_ints(arr: np.ndarray) -> tuple:
    """A (2, 3, 2, ${L}) Montgomery array -> nested canonical ints ((c0.c0, c0.c1, c0.c2), (c1.c0, ...)),
    each Fq2 coefficient a pair (re, im).

        >>> to_ints(from_ints(((( 1, 2), (0, 0), (0, 0)), ((0, 0), (0, 0), (0, 5)))))[1][2]
        (0, 5)
    """
    arr = _check_array(arr)
    rinv = pow(_F.r, -1, _P)
    limbs = arr.reshape(12, _F.limbs)
    vals = [int.from_bytes(row.astype("<u8").tobytes(), "little") * rinv % _P for row in limbs]
    c = [(vals[2 * k], vals[2 * k + 1]) for k in range(6)]
    return (tuple(c[0:3]), tuple(c[3:6]))


def from_ints(value) -> np.ndarray:
    """Nested canonical ints (the shape :func:`to_ints` returns) -> (2, 3, 2, ${L}) Montgomery array.

    Raises:
        FieldValueError: wrong nesting, or a coefficient outside 0 <= x < p.
    """
    try:
        flat = [x for half in value for pair in half for x in pair]
        nested_ok = len(value) == 2 and all(len(h) == 3 and all(len(c) == 2 for c in h) for h in value)
    except TypeError as exc:
        raise FieldValueError(f"Fq12 value must nest as 2 x 3 x (re, im) ints: {exc}") from None
    if not nested_ok:
        raise FieldValueError("Fq12 value must nest as 2 x 3 x (re, im) ints")
    out = np.empty((12, _F.limbs), dtype=np.uint64)
    for k, x in enumerate(flat):
        m = _F.check_canonical(x) * _F.r % _P
        out[k] = [(m >> (64 * j)) & 0xFFFFFFFFFFFFFFFF for j in range(_F.limbs)]
    return out.reshape(SHAPE)
''')
