"""Optimal ate pairing on BLS12-381: Miller loop with precomputable G2 lines, final exponentiation.

``e(P, Q) = f_{x,Q}(P)^((p^12 - 1)/r * 3)`` with x = ``cuzk.curve.params.BLS_X`` (negative,
so the loop runs over |x| and conjugates). The factor 3 comes from the hard-part addition
chain (3(p^4 - p^2 + 1)/r has a cheap x-chain, (p^4 - p^2 + 1)/r does not); it is coprime to r,
so e stays bilinear and non-degenerate, and the values equal those of the zkcrypto
``bls12_381`` crate (``Gt::generator()``). Against ``py_ecc.optimized_bls12_381.pairing(Q, P)``
(exponent (p^12 - 1)/r, loop over |x| without conjugation) the relation is
``e(P, Q) == py_ecc(Q, P)^-3``; tests/test_pairing.py checks both.

Inputs are affine Montgomery arrays (DESIGN §3): P ``(2, 6)`` uint64 over Fq, Q ``(2, 2, 6)``
uint64 over Fq2, all-zero limbs = infinity, which contributes a factor 1. Results are Fq12
elements as ``(2, 3, 2, 6)`` uint64 Montgomery arrays (layout: ``cuzk.field.fq12``). Points
are checked to be on their curves; subgroup membership is not checked here (decoding in
``cuzk.curve`` does it), and points outside the subgroups give meaningless values.

    >>> from cuzk.curve import pairing as pr
    >>> from cuzk.curve.coords import mont_array
    >>> from cuzk.curve.params import G1_PARAMS, G2_PARAMS
    >>> P, Q = mont_array(G1_PARAMS.generator, 1), mont_array(G2_PARAMS.generator, 2)
    >>> P.shape, Q.shape, pr.pairing(P, Q).shape
    ((2, 6), (2, 2, 6), (2, 3, 2, 6))
    >>> pr.pairing_check([(P, Q), (P, pr.prepare_g2(Q))])   # e(P, Q)^2 != 1
    False
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import numpy as np
from numba import njit

from cuzk.curve import g1, g2
from cuzk.curve.params import BLS_X, G2_PARAMS
from cuzk.errors import FieldValueError, NotOnCurveError
from cuzk.field import fq, fq2, fq6, fq12
from cuzk.field.params import FQ

__all__ = [
    "G2Prepared",
    "prepare_g2",
    "multi_miller_loop",
    "final_exponentiation",
    "pairing",
    "pairing_check",
    "N_LINES",
]

_P = FQ.modulus
_L = FQ.limbs
_X_ABS = abs(BLS_X)
X_IS_NEGATIVE = BLS_X < 0
# Bits of |x| below the leading one, most significant first: one doubling per bit, plus one
# addition per set bit.
X_BITS = np.array([int(c) for c in bin(_X_ABS)[3:]], dtype=np.uint8)
N_LINES = len(X_BITS) + bin(_X_ABS).count("1") - 1
# 3b' for the twist E': y^2 = x^3 + b' (the tangent line and doubling use 3b'Z^2)
THREE_B = fq6.fq2_to_limbs(tuple(3 * c % _P for c in G2_PARAMS.b))

_G1_SHAPE = (2, _L)
_G2_SHAPE = (2, 2, _L)
_LINES_SHAPE = (N_LINES, 3, 2, _L)
_GT_ONE = fq12.from_ints((((1, 0), (0, 0), (0, 0)), ((0, 0), (0, 0), (0, 0))))


# ---------------------------------------------------------------- line functions
# T = (X, Y, Z) homogeneous on E' (x = X/Z, y = Y/Z). Untwisting (x, y) -> (x w^-2, y w^-3)
# puts T on E over Fq12; the line through T (tangent, or through T and Q) evaluated at P,
# times w^3 and an Fq2 factor (both die in the final exponentiation), is
#     c0 + (c1 xP) v + (c4 yP) v w
# so each step stores (c0, c1, c4) and the loop multiplies f by that sparse element.
@njit(cache=True, nogil=True)
def _doubling_step(t):
    # Tangent slope 3X^2/(2YZ); with Y^2 Z = X^3 + b'Z^3 the line is
    # (Y^2 - 3b'Z^2) - 3X^2 xP v + 2YZ yP vw. The point formulas are the usual homogeneous
    # a = 0 doubling scaled by 4, which avoids halvings:
    # 2T = (2XY(Y^2 - 9b'Z^2), (Y^2 + 9b'Z^2)^2 - 12(3b'Z^2)^2, 8Y^3 Z).
    x, y, z = t
    xx = fq2.sqr(x)
    yy = fq2.sqr(y)
    zz = fq2.sqr(z)
    e = fq2.mul(zz, THREE_B)
    f = fq2.add(fq2.dbl(e), e)
    xy2 = fq2.sub(fq2.sub(fq2.sqr(fq2.add(x, y)), xx), yy)
    yz2 = fq2.sub(fq2.sub(fq2.sqr(fq2.add(y, z)), yy), zz)
    ee = fq2.sqr(e)
    ee3 = fq2.add(fq2.dbl(ee), ee)
    x3 = fq2.mul(xy2, fq2.sub(yy, f))
    y3 = fq2.sub(fq2.sqr(fq2.add(yy, f)), fq2.dbl(fq2.dbl(ee3)))
    z3 = fq2.dbl(fq2.dbl(fq2.mul(yy, yz2)))
    line = (fq2.sub(yy, e), fq2.neg(fq2.add(fq2.dbl(xx), xx)), yz2)
    return (x3, y3, z3), line


@njit(cache=True, nogil=True)
def _addition_step(t, q):
    # Chord through T and affine Q: theta = Y - yQ Z, lam = X - xQ Z (slope theta/lam); the
    # line times lam is (theta xQ - lam yQ) - theta xP v + lam yP vw. T + Q by the
    # homogeneous mixed-addition formulas (T != +-Q inside the loop: T is a multiple k Q with
    # 1 < k < 2^64 < r).
    x, y, z = t
    qx, qy = q
    theta = fq2.sub(y, fq2.mul(qy, z))
    lam = fq2.sub(x, fq2.mul(qx, z))
    c = fq2.sqr(theta)
    d = fq2.sqr(lam)
    e = fq2.mul(lam, d)
    f = fq2.mul(z, c)
    g = fq2.mul(x, d)
    h = fq2.sub(fq2.add(e, f), fq2.dbl(g))
    x3 = fq2.mul(lam, h)
    y3 = fq2.sub(fq2.mul(theta, fq2.sub(g, h)), fq2.mul(e, y))
    z3 = fq2.mul(z, e)
    line = (fq2.sub(fq2.mul(theta, qx), fq2.mul(lam, qy)), fq2.neg(theta), lam)
    return (x3, y3, z3), line


@njit(cache=True, nogil=True)
def _prepare_kernel(qarr, out):
    # qarr: (2, 2, 6) affine Q; out: (N_LINES, 3, 2, 6), the lines in the order the loop uses them
    q = (fq2.load(qarr, 0), fq2.load(qarr, 1))
    t = (q[0], q[1], fq2.one())
    k = 0
    for i in range(X_BITS.shape[0]):
        t, line = _doubling_step(t)
        fq6.store(out, k, line)
        k += 1
        if X_BITS[i]:
            t, line = _addition_step(t, q)
            fq6.store(out, k, line)
            k += 1


@njit(cache=True, nogil=True)
def _ell(f, lines, k, p):
    c0, c1, c4 = fq6.load(lines, k)
    return fq12.mul_by_014(f, c0, fq2.mul_by_fq(c1, p[0]), fq2.mul_by_fq(c4, p[1]))


@njit(cache=True, nogil=True)
def _miller_loop(ps, lines):
    # ps: (n, 2, 6) G1 points, lines: (n, N_LINES, 3, 2, 6); one shared accumulator f, so n
    # pairings cost n line multiplications per step but a single squaring.
    n = ps.shape[0]
    f = fq12.one()
    k = 0
    for i in range(X_BITS.shape[0]):
        if i > 0:
            f = fq12.sqr(f)
        for j in range(n):
            f = _ell(f, lines[j], k, g1.load_affine(ps, j))
        k += 1
        if X_BITS[i]:
            for j in range(n):
                f = _ell(f, lines[j], k, g1.load_affine(ps, j))
            k += 1
    if X_IS_NEGATIVE:
        f = fq12.conj(f)  # f_{-|x|} = 1/f_{|x|} up to a vertical line; unitary after the easy part
    return f


@njit(cache=True, nogil=True)
def _exp_by_x(f):
    # f^x for f in the cyclotomic subgroup (where the inverse is the conjugate)
    r = f
    for i in range(X_BITS.shape[0]):
        r = fq12.cyclotomic_sqr(r)
        if X_BITS[i]:
            r = fq12.mul(r, f)
    if X_IS_NEGATIVE:
        r = fq12.conj(r)
    return r


@njit(cache=True, nogil=True)
def _final_exponentiation(f):
    # Easy part f^((p^6 - 1)(p^2 + 1)): lands in the cyclotomic subgroup.
    f = fq12.mul(fq12.conj(f), fq12.inv(f))
    f = fq12.mul(fq12.frobenius_map(f, 2), f)
    # Hard part f^(3(p^4 - p^2 + 1)/r) from 3(p^4 - p^2 + 1)/r = (x-1)^2 (x+p)(x^2+p^2-1) + 3
    # (Hayashida-Hayasaka-Teruya, eprint 2020/875): five exponentiations by x.
    t = fq12.mul(_exp_by_x(f), fq12.conj(f))  # f^(x-1)
    a = fq12.mul(_exp_by_x(t), fq12.conj(t))  # f^((x-1)^2)
    b = fq12.mul(_exp_by_x(a), fq12.frobenius_map(a, 1))  # a^(x+p)
    c = fq12.mul(fq12.mul(_exp_by_x(_exp_by_x(b)), fq12.frobenius_map(b, 2)), fq12.conj(b))
    return fq12.mul(c, fq12.mul(fq12.cyclotomic_sqr(f), f))  # ... * f^3


@njit(cache=True, nogil=True)
def _miller_kernel(ps, lines):
    return fq12.store_one(_miller_loop(ps, lines))


@njit(cache=True, nogil=True)
def _final_kernel(farr):
    return fq12.store_one(_final_exponentiation(fq12.load_one(farr)))


@njit(cache=True, nogil=True)
def _g1_on_curve(p):
    return g1.aff_is_on_curve((fq.load(p, 0), fq.load(p, 1)))


@njit(cache=True, nogil=True)
def _g2_on_curve(q):
    return g2.aff_is_on_curve((fq2.load(q, 0), fq2.load(q, 1)))


# ---------------------------------------------------------------- Python API
def _check_point(arr, shape, name) -> np.ndarray:
    if not isinstance(arr, np.ndarray) or arr.dtype != np.uint64 or arr.shape != shape:
        raise FieldValueError(
            f"{name} point must be a uint64 array of shape {shape} (affine Montgomery), got "
            f"{getattr(arr, 'dtype', type(arr).__name__)} {getattr(arr, 'shape', '')}"
        )
    arr = np.array(arr, dtype=np.uint64, order="C")  # a writable C copy: one compiled specialization
    for row in arr.reshape(-1, _L):
        if int.from_bytes(row.astype("<u8").tobytes(), "little") >= _P:
            raise FieldValueError(f"{name} point has a coordinate limb row >= p (not a reduced Fq element)")
    return arr


def _is_infinity(arr: np.ndarray) -> bool:
    return not arr.any()


@attrs.frozen(eq=False)
class G2Prepared:
    """The Miller-loop line coefficients of one G2 point (what a verifying key keeps for γ, δ, β).

    Attributes:
        lines: ``(N_LINES, 3, 2, 6)`` uint64 Montgomery, read-only: per loop step the
            (c0, c1, c4) Fq2 coefficients of the line, before evaluation at a G1 point.
        is_infinity: Q was the point at infinity (it then contributes 1 to every product).
    """

    lines: np.ndarray
    is_infinity: bool


def prepare_g2(q: np.ndarray) -> G2Prepared:
    """Precompute the lines of the Miller loop for Q (reusable across pairings).

    Args:
        q: affine G2 point, ``(2, 2, 6)`` uint64 Montgomery; all zeros = infinity.

    Returns:
        A :class:`G2Prepared` to pass wherever a G2 point is accepted.

    Raises:
        FieldValueError: wrong shape/dtype or an unreduced coordinate.
        NotOnCurveError: Q is not on y^2 = x^3 + 4(1 + u).

    Example:
        >>> from cuzk.curve.coords import mont_array
        >>> from cuzk.curve.params import G2_PARAMS
        >>> prepare_g2(mont_array(G2_PARAMS.generator, 2)).lines.shape
        (68, 3, 2, 6)
    """
    q = _check_point(q, _G2_SHAPE, "G2")
    lines = np.zeros(_LINES_SHAPE, dtype=np.uint64)
    inf = _is_infinity(q)
    if not inf:
        if not _g2_on_curve(q):
            raise NotOnCurveError("G2 point is not on the curve y^2 = x^3 + 4(1 + u)")
        _prepare_kernel(q, lines)
    lines.flags.writeable = False
    return G2Prepared(lines=lines, is_infinity=inf)


def _gather(pairs) -> tuple[np.ndarray, np.ndarray]:
    ps, lines = [], []
    if isinstance(pairs, (np.ndarray, G2Prepared)) or not isinstance(pairs, Iterable):  # an array iterated its rows
        raise FieldValueError(f"pairs must be an iterable of (G1 point, G2 point) tuples, got {type(pairs).__name__}")
    for item in pairs:
        try:
            p, q = item
        except (TypeError, ValueError):
            raise FieldValueError(f"pairs must hold (G1 point, G2 point) tuples, got {type(item).__name__}") from None
        p = _check_point(p, _G1_SHAPE, "G1")
        p_inf = _is_infinity(p)
        if not p_inf and not _g1_on_curve(p):
            raise NotOnCurveError("G1 point is not on the curve y^2 = x^3 + 4")
        if not isinstance(q, G2Prepared):
            q = prepare_g2(q)
        if p_inf or q.is_infinity:
            continue  # e(O, Q) = e(P, O) = 1
        ps.append(p)
        lines.append(q.lines)
    if not ps:
        return np.zeros((0,) + _G1_SHAPE, np.uint64), np.zeros((0,) + _LINES_SHAPE, np.uint64)
    return np.stack(ps), np.stack(lines)


def multi_miller_loop(pairs: Iterable) -> np.ndarray:
    """prod_i f_{x,Q_i}(P_i) (conjugated for x < 0), before the final exponentiation.

    Args:
        pairs: iterable of ``(P, Q)``: P a ``(2, 6)`` G1 array, Q a ``(2, 2, 6)`` G2 array or
            a :class:`G2Prepared`.

    Returns:
        ``(2, 3, 2, 6)`` uint64 Fq12; only meaningful after :func:`final_exponentiation`.

    Raises:
        FieldValueError, NotOnCurveError: as :func:`prepare_g2`, for either point.

    Example:
        >>> fq12.to_ints(multi_miller_loop([]))[0][0]     # empty product
        (1, 0)
    """
    ps, lines = _gather(pairs)
    return _miller_kernel(ps, lines)


def final_exponentiation(f: np.ndarray) -> np.ndarray:
    """f^(3(p^12 - 1)/r) for a ``(2, 3, 2, 6)`` Fq12 array (see the module note on the 3).

    Example:
        >>> fq12.to_ints(final_exponentiation(multi_miller_loop([])))[0][0]
        (1, 0)
    """
    fq12.to_ints(f)  # validates shape, dtype and reduction
    return _final_kernel(np.array(f, dtype=np.uint64, order="C"))


def pairing(p: np.ndarray, q) -> np.ndarray:
    """e(P, Q) as a ``(2, 3, 2, 6)`` uint64 Montgomery Fq12 array (equal arrays = equal values).

    Args:
        p: affine G1 point ``(2, 6)``; q: affine G2 point ``(2, 2, 6)`` or :class:`G2Prepared`.

    Raises:
        FieldValueError, NotOnCurveError: as :func:`prepare_g2`.

    Example:
        >>> from cuzk.curve.coords import mont_array
        >>> from cuzk.curve.params import G1_PARAMS, G2_PARAMS
        >>> e = pairing(mont_array(G1_PARAMS.generator, 1), mont_array(G2_PARAMS.generator, 2))
        >>> hex(fq12.to_ints(e)[0][0][0])[:12]                # = zkcrypto Gt::generator()
        '0x1250ebd871'
    """
    return _final_kernel(multi_miller_loop([(p, q)]))


def pairing_check(pairs: Iterable) -> bool:
    """True iff prod_i e(P_i, Q_i) == 1, with one shared Miller loop and final exponentiation.

    This is the Groth16 verification equation, e.g. ``[(A, B), (-alpha, beta), (-acc, gamma),
    (-C, delta)]`` with β, γ, δ as :class:`G2Prepared`.

    Args:
        pairs: iterable of ``(P, Q)`` as in :func:`multi_miller_loop`; empty means True.

    Example:
        >>> from cuzk.curve.coords import mont_array
        >>> from cuzk.curve.params import G1_PARAMS, G2_PARAMS
        >>> P = mont_array(G1_PARAMS.generator, 1); Q = mont_array(G2_PARAMS.generator, 2)
        >>> x, y = G2_PARAMS.generator
        >>> negQ = mont_array([x, tuple(-c % FQ.modulus for c in y)], 2)
        >>> pairing_check([(P, Q), (P, negQ)]), pairing_check([(P, Q)])
        (True, False)
    """
    return bool(np.array_equal(_final_kernel(multi_miller_loop(pairs)), _GT_ONE))
