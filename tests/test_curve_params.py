"""Curve parameters: cross-checked against py_ecc and the BLS12 family polynomials."""

import math

import py_ecc.optimized_bls12_381 as ref

from cuzk.curve import BLS_X, G1_PARAMS, G2_PARAMS
from cuzk.field import FQ, FR

P = FQ.modulus


def fq2_mul_int(a, b):
    # (a0 + a1 u)(b0 + b1 u) with u² = −1, on ints: an oracle independent of the catalog's derivation
    return ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)


def fq2_pow_int(a, e):
    result = (1, 0)
    while e:
        if e & 1:
            result = fq2_mul_int(result, a)
        a, e = fq2_mul_int(a, a), e >> 1
    return result


def test_generators_match_py_ecc():
    g1 = ref.normalize(ref.G1)
    g2 = ref.normalize(ref.G2)
    assert G1_PARAMS.generator == ((g1[0].n,), (g1[1].n,))
    assert G2_PARAMS.generator == (tuple(g2[0].coeffs), tuple(g2[1].coeffs))


def test_curve_coefficients_match_py_ecc():
    assert G1_PARAMS.b == (ref.b.n,)
    assert G2_PARAMS.b == tuple(ref.b2.coeffs)


def test_family_polynomials():
    x = BLS_X
    assert FR.modulus == x**4 - x**2 + 1 == G1_PARAMS.order == G2_PARAMS.order
    assert P == (x - 1) ** 2 * (x**4 - x**2 + 1) // 3 + x
    # #E(Fq) = p + 1 - t with trace t = x + 1
    assert G1_PARAMS.cofactor * FR.modulus == P + 1 - (x + 1)
    # the two sextic twists over Fq2 have orders p² + 1 - (±3f + t2)/2; G2 lives on one of them
    t2 = (x + 1) ** 2 - 2 * P  # trace of Frobenius over Fq2
    f2_sq = (4 * P**2 - t2**2) // 3  # t2² - 4p² = -3 f², f the CM "y"
    f2 = math.isqrt(f2_sq)
    assert f2 * f2 == f2_sq
    twist_orders = {P**2 + 1 - (3 * f2 + t2) // 2, P**2 + 1 - (-3 * f2 + t2) // 2}
    assert G2_PARAMS.cofactor * FR.modulus in twist_orders


def test_endomorphism_constants():
    beta = G1_PARAMS.endo_x[0]
    assert beta != 1 and pow(beta, 3, P) == 1
    # ψ constants: (1+u)^((p-1)/3) · psi_x = 1 and (1+u)^((p-1)/2) · psi_y = 1
    assert fq2_mul_int(fq2_pow_int((1, 1), (P - 1) // 3), G2_PARAMS.endo_x) == (1, 0)
    assert fq2_mul_int(fq2_pow_int((1, 1), (P - 1) // 2), G2_PARAMS.endo_y) == (1, 0)
    assert G1_PARAMS.endo_scalar == G2_PARAMS.endo_scalar == -BLS_X


def test_endomorphism_eigenvalues_on_generators_with_py_ecc():
    # φ(G1) = -x²·G1 and ψ(G2) = x·G2: fixes which cube root β and which ψ constants are right
    g1 = ref.normalize(ref.G1)
    phi = (g1[0] * G1_PARAMS.endo_x[0], g1[1], ref.FQ.one())
    assert ref.eq(phi, ref.neg(ref.multiply(ref.G1, BLS_X * BLS_X)))
    g2 = ref.normalize(ref.G2)
    cx, cy = (ref.FQ2(list(c)) for c in (G2_PARAMS.endo_x, G2_PARAMS.endo_y))
    conj = lambda a: ref.FQ2([a.coeffs[0], -a.coeffs[1]])  # noqa: E731
    psi = (cx * conj(g2[0]), cy * conj(g2[1]), ref.FQ2.one())
    assert ref.eq(psi, ref.neg(ref.multiply(ref.G2, -BLS_X)))
