"""Template text of the Numba half of every curve's ``pairing.py``: lines, Miller loop, final exponentiation.

Placeholders: TITLE, L, FIELD_PKG, FIELD_PARAMS, CURVE_PKG, CURVE_PARAMS, SEED, LOOP_EXPR,
FROBENIUS_LINES, ELL (the twist's sparse line product) and HARD_PART (the family's hard part
of the final exponentiation). The line steps are the same for M- and D-type twists: both
evaluate to (const, x_P coefficient, y_P coefficient) up to an Fq2 factor, and only where
those land in Fq12 differs (see ``ELL``).
"""

import string

__all__ = ["KERNELS", "ELL", "HARD_PART"]

# where the three line coefficients land in Fq12: M-type (x/w², y/w³, times w³): const at 1,
# x_P at v, y_P at v·w; D-type (x·w², y·w³): y_P at 1, x_P at w, const at v·w
ELL = {
    "M": "    return fq12.mul_by_014(f, c0, fq2.mul_by_fq(c1, p[0]), fq2.mul_by_fq(c4, p[1]))",
    "D": "    return fq12.mul_by_034(f, fq2.mul_by_fq(c4, p[1]), fq2.mul_by_fq(c1, p[0]), c0)",
}

HARD_PART = {
    "bls12": '''\
    # Hard part f^(3(p^4 - p^2 + 1)/r) from 3(p^4 - p^2 + 1)/r = (x-1)^2 (x+p)(x^2+p^2-1) + 3
    # (Hayashida-Hayasaka-Teruya, eprint 2020/875): five exponentiations by x.
    t = fq12.mul(_exp_by_x(f), fq12.conj(f))  # f^(x-1)
    a = fq12.mul(_exp_by_x(t), fq12.conj(t))  # f^((x-1)^2)
    b = fq12.mul(_exp_by_x(a), fq12.frobenius_map(a, I1))  # a^(x+p)
    c = fq12.mul(fq12.mul(_exp_by_x(_exp_by_x(b)), fq12.frobenius_map(b, I2)), fq12.conj(b))
    return fq12.mul(c, fq12.mul(fq12.cyclotomic_sqr(f), f))  # ... * f^3''',
    "bn": '''\
    # Hard part f^((p^4 - p^2 + 1)/r) = f^(l0 + l1 p + l2 p^2 + l3 p^3) with l3 = 1, l2 = 6x^2 + 1,
    # l1 = -36x^3 - 18x^2 - 12x + 1, l0 = -36x^3 - 30x^2 - 18x - 2 (Scott et al., "On the final
    # exponentiation for calculating pairings on ordinary elliptic curves", 2009): three
    # exponentiations by x, then y0 y1^2 y2^6 y3^12 y4^18 y5^30 y6^36 by a short chain.
    fx = _exp_by_x(f)
    fx2 = _exp_by_x(fx)
    fx3 = _exp_by_x(fx2)
    y0 = fq12.mul(fq12.mul(fq12.frobenius_map(f, I1), fq12.frobenius_map(f, I2)), fq12.frobenius_map(f, I3))
    y1 = fq12.conj(f)
    y2 = fq12.frobenius_map(fx2, I2)
    y3 = fq12.conj(fq12.frobenius_map(fx, I1))
    y4 = fq12.conj(fq12.mul(fx, fq12.frobenius_map(fx2, I1)))
    y5 = fq12.conj(fx2)
    y6 = fq12.conj(fq12.mul(fx3, fq12.frobenius_map(fx3, I1)))
    t0 = fq12.mul(fq12.mul(fq12.cyclotomic_sqr(y6), y4), y5)
    t1 = fq12.mul(fq12.mul(y3, y5), t0)
    t0 = fq12.mul(t0, y2)
    t1 = fq12.cyclotomic_sqr(fq12.mul(fq12.cyclotomic_sqr(t1), t0))
    t0 = fq12.mul(t1, y1)
    t1 = fq12.mul(t1, y0)
    return fq12.mul(fq12.cyclotomic_sqr(t0), t1)''',
}

KERNELS = string.Template('''\
import numpy as np
from numba import njit

from cuzk.curve.loop_digits import loop_digits
from cuzk.field.jit import I0, I1, I2, I3, jit_kernel
from ${CURVE_PKG} import g1, g2
from ${CURVE_PARAMS} import ${SEED} as _SEED
from ${CURVE_PARAMS} import G2_PARAMS
from cuzk.errors import FieldValueError, NotOnCurveError
from ${FIELD_PKG} import fq, fq2, fq6, fq12
from ${FIELD_PARAMS} import FQ

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
X_IS_NEGATIVE = _SEED < 0
# Digits of |x| below the leading one, most significant first (binary or NAF, the cheaper;
# cuzk.curve.loop_digits): the exponentiation by x in the final exponentiation.
X_DIGITS = np.array(loop_digits(_SEED), dtype=np.int8)
# The optimal ate loop parameter (${LOOP_EXPR}) and its digits: one doubling step per digit,
# one addition step (with Q or -Q) per non-zero digit.
LOOP = ${LOOP_EXPR}
LOOP_IS_NEGATIVE = LOOP < 0
LOOP_DIGITS = np.array(loop_digits(LOOP), dtype=np.int8)
# BN curves end the loop with two more lines, through pi(Q) and -pi^2(Q) (pi: the p-power
# Frobenius, acting on the twist as psi = G2_PARAMS' endomorphism)
FROBENIUS_LINES = ${FROBENIUS_LINES}
N_LINES = len(LOOP_DIGITS) + int(np.count_nonzero(LOOP_DIGITS)) + (2 if FROBENIUS_LINES else 0)
# 3b' for the twist E': y^2 = x^3 + b' (the tangent line and doubling use 3b'Z^2)
THREE_B = fq6.fq2_to_limbs(tuple(3 * c % _P for c in G2_PARAMS.b))
_PSI_X = fq6.fq2_to_limbs(G2_PARAMS.endo_x)
_PSI_Y = fq6.fq2_to_limbs(G2_PARAMS.endo_y)

_G1_SHAPE = (2, _L)
_G2_SHAPE = (2, 2, _L)
_LINES_SHAPE = (N_LINES, 3, 2, _L)
_GT_ONE = fq12.from_ints((((1, 0), (0, 0), (0, 0)), ((0, 0), (0, 0), (0, 0))))


# ---------------------------------------------------------------- line functions
# T = (X, Y, Z) homogeneous on E' (x = X/Z, y = Y/Z). Untwisting puts T on E over Fq12; the
# line through T (tangent, or through T and Q) evaluated at P, times an Fq2 factor and a power
# of w (both die in the final exponentiation), is  c0 + (c1 xP) w^a + (c4 yP) w^b  with (a, b)
# = (2, 3) on an M-type twist and the terms placed as in _ell on a D-type one; each step
# stores (c0, c1, c4) and the loop multiplies f by that sparse element.
# (_doubling_step has one caller, _prepare_kernel: inlined into it, no library of its own.)
@jit_kernel(cache=True, nogil=True, inline="always")
def _doubling_step(t):
    # Tangent slope 3X^2/(2YZ); with Y^2 Z = X^3 + b'Z^3 the line is
    # (Y^2 - 3b'Z^2) - 3X^2 xP (.) + 2YZ yP (.). The point formulas are the usual homogeneous
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


@jit_kernel(cache=True, nogil=True)
def _addition_step(t, q):
    # Chord through T and affine Q: theta = Y - yQ Z, lam = X - xQ Z (slope theta/lam); the
    # line times lam is (theta xQ - lam yQ) - theta xP (.) + lam yP (.). T + Q by the
    # homogeneous mixed-addition formulas (T != +-Q: inside the loop T = kQ with 1 < k < |LOOP|
    # < r; for BN's Frobenius lines T = [LOOP]Q and [LOOP + p]Q, never +-pQ, +-p^2 Q mod r).
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


@jit_kernel(cache=True, nogil=True)
def _psi(q):
    # the p-power Frobenius on the twist: (conj(x) psi_x, conj(y) psi_y)
    return (fq2.mul(fq2.conj(q[0]), _PSI_X), fq2.mul(fq2.conj(q[1]), _PSI_Y))


@njit(cache=True, nogil=True)
def _prepare_kernel(qarr, out):
    # qarr: (2, 2, L) affine Q; out: (N_LINES, 3, 2, L), the lines in the order the loop uses them
    q = (fq2.load(qarr, I0), fq2.load(qarr, I1))
    neg_q = (q[0], fq2.neg(q[1]))
    t = (q[0], q[1], fq2.one())
    k = I0  # int64 from the start (a literal 0 compiles a Literal[int](0) copy of the callees)
    for i in range(LOOP_DIGITS.shape[0]):
        t, line = _doubling_step(t)
        fq6.store(out, k, line)
        k += 1
        d = LOOP_DIGITS[i]
        if d != 0:
            t, line = _addition_step(t, q if d > 0 else neg_q)
            fq6.store(out, k, line)
            k += 1
    if FROBENIUS_LINES:
        if LOOP_IS_NEGATIVE:
            t = (t[0], fq2.neg(t[1]), t[2])  # T = [LOOP]Q, not [|LOOP|]Q
        q1 = _psi(q)
        q2 = _psi(q1)
        t, line = _addition_step(t, q1)
        fq6.store(out, k, line)
        t, line = _addition_step(t, (q2[0], fq2.neg(q2[1])))
        fq6.store(out, k + 1, line)


@jit_kernel(cache=True, nogil=True)
def _ell(f, lines, k, p):
    c0, c1, c4 = fq6.load(lines, k)
${ELL}


# One caller: inlined into it (Numba IR), so no library of its own is compiled and optimized (cold start)
@jit_kernel(cache=True, nogil=True, inline="always")
def _miller_loop(ps, lines):
    # ps: (n, 2, L) G1 points, lines: (n, N_LINES, 3, 2, L); one shared accumulator f, so n
    # pairings cost n line multiplications per step but a single squaring.
    n = ps.shape[0]
    f = fq12.one()
    k = I0  # int64 from the start (a literal 0 compiles a Literal[int](0) copy of the callees)
    for i in range(LOOP_DIGITS.shape[0]):
        if i > 0:
            f = fq12.sqr(f)
        for j in range(n):
            f = _ell(f, lines[j], k, g1.load_affine(ps, j))
        k += 1
        if LOOP_DIGITS[i] != 0:
            for j in range(n):
                f = _ell(f, lines[j], k, g1.load_affine(ps, j))
            k += 1
    if LOOP_IS_NEGATIVE:
        f = fq12.conj(f)  # f_{-|n|} = 1/f_{|n|} up to a vertical line; unitary after the easy part
    if FROBENIUS_LINES:
        for _ in range(2):
            for j in range(n):
                f = _ell(f, lines[j], k, g1.load_affine(ps, j))
            k += 1
    return f


@jit_kernel(cache=True, nogil=True)
def _exp_by_x(f):
    # f^x for f in the cyclotomic subgroup (where the inverse is the conjugate)
    r = f
    f_inv = fq12.conj(f)
    for i in range(X_DIGITS.shape[0]):
        r = fq12.cyclotomic_sqr(r)
        if X_DIGITS[i] > 0:
            r = fq12.mul(r, f)
        elif X_DIGITS[i] < 0:
            r = fq12.mul(r, f_inv)
    if X_IS_NEGATIVE:
        r = fq12.conj(r)
    return r


# One caller: inlined into it (Numba IR), so no library of its own is compiled and optimized (cold start)
@jit_kernel(cache=True, nogil=True, inline="always")
def _final_exponentiation(f):
    # Easy part f^((p^6 - 1)(p^2 + 1)): lands in the cyclotomic subgroup.
    f = fq12.mul(fq12.conj(f), fq12.inv(f))
    f = fq12.mul(fq12.frobenius_map(f, I2), f)
${HARD_PART}


@njit(cache=True, nogil=True)
def _miller_kernel(ps, lines):
    return fq12.store_one(_miller_loop(ps, lines))


@njit(cache=True, nogil=True)
def _final_kernel(farr):
    return fq12.store_one(_final_exponentiation(fq12.load_one(farr)))


@njit(cache=True, nogil=True)
def _g1_on_curve(p):
    return g1.aff_is_on_curve((fq.load(p, I0), fq.load(p, I1)))


@njit(cache=True, nogil=True)
def _g2_on_curve(q):
    return g2.aff_is_on_curve((fq2.load(q, I0), fq2.load(q, I1)))
''')
