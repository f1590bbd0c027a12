"""Curve specs: every derived number checked against its definition, py_ecc and the registry's names.

Pure Python (no kernel is compiled here): family polynomials, twist coefficients, ψ constants,
cofactors, the BN hard-part exponent, encoding sizes, and the spec's own consistency checks.
"""

import attrs
import py_ecc.optimized_bls12_381 as bls
import py_ecc.optimized_bn128 as bn
import pytest

from cuzk import curves
from cuzk.curve.loop_digits import loop_digits, naf
from cuzk.curves import BLS12_381, BN254, families
from cuzk.errors import CurveSpecError, UnsupportedCurveError
from cuzk.field import fq2_ints

SPECS = [pytest.param(BLS12_381, id="bls12_381"), pytest.param(BN254, id="bn254")]


def test_bn254_moduli_from_the_seed():
    x = BN254.x
    assert x == 4965661367192848881
    assert BN254.fq.modulus == 36 * x**4 + 36 * x**3 + 24 * x**2 + 6 * x + 1 == bn.field_modulus
    assert BN254.fr.modulus == 36 * x**4 + 36 * x**3 + 18 * x**2 + 6 * x + 1 == bn.curve_order
    assert BN254.fq.limbs == BN254.fr.limbs == 4
    assert BN254.fr.two_adicity == 28 and BN254.fr.generator == 5


def test_bls12_381_moduli_from_the_seed():
    x = BLS12_381.x
    r = x**4 - x**2 + 1
    assert BLS12_381.fr.modulus == r == bls.curve_order
    assert BLS12_381.fq.modulus == (x - 1) ** 2 * r // 3 + x == bls.field_modulus


@pytest.mark.parametrize("spec", SPECS)
def test_no_carry_cios_precondition(spec):
    # the generated Montgomery product (no-carry CIOS, gnark's) needs the top limb < 2^63 - 1
    for f in (spec.fr, spec.fq):
        assert f.modulus >> (64 * (f.limbs - 1)) < 2**63 - 1


@pytest.mark.parametrize("spec", SPECS)
def test_group_orders_and_cofactors(spec):
    n = spec.numbers
    p, r = n.p, n.r
    assert spec.g1.cofactor * r == p + 1 - n.trace  # #E(Fq)
    # the right sextic twist over Fq2 has order p^2 + 1 - (3f + t2)/2 for one sign of f
    t2 = n.trace**2 - 2 * p
    f2 = (4 * p * p - t2 * t2) // 3
    f = __import__("math").isqrt(f2)
    assert f * f == f2
    assert spec.g2.cofactor * r in {p * p + 1 - (3 * f + t2) // 2, p * p + 1 - (-3 * f + t2) // 2}


def test_bn254_g2_cofactor_is_2p_minus_r():
    assert BN254.g2.cofactor == 2 * BN254.fq.modulus - BN254.fr.modulus


@pytest.mark.parametrize("spec, ref", [(BLS12_381, bls), (BN254, bn)], ids=["bls12_381", "bn254"])
def test_curves_match_py_ecc(spec, ref):
    g1, g2 = ref.normalize(ref.G1), ref.normalize(ref.G2)
    assert spec.g1.b == (ref.b.n,) and spec.g2.b == tuple(ref.b2.coeffs)
    assert spec.g1.generator == ((g1[0].n,), (g1[1].n,))
    assert spec.g2.generator == (tuple(g2[0].coeffs), tuple(g2[1].coeffs))


@pytest.mark.parametrize("spec", SPECS)
def test_twist_b_and_psi_constants_from_xi(spec):
    p, beta, xi = spec.fq.modulus, spec.fq2_nonresidue, spec.fq6_nonresidue
    assert spec.g2.b == families.twist_b(spec.g1.b[0], xi, spec.twist, p, beta)
    assert (spec.g2.endo_x, spec.g2.endo_y) == families.psi_constants(xi, spec.twist, p, beta)


def _twist_mul(spec, pt, k):
    # double-and-add on E'(Fq2) with Python ints (affine), for eigenvalue checks
    p, beta = spec.fq.modulus, spec.fq2_nonresidue

    def add(a, b):
        if a is None:
            return b
        if b is None:
            return a
        (x1, y1), (x2, y2) = a, b
        if x1 == x2:
            if (y1[0] + y2[0]) % p == 0 and (y1[1] + y2[1]) % p == 0:
                return None
            num = fq2_ints.mul((3, 0), fq2_ints.mul(x1, x1, p, beta), p, beta)
            den = ((2 * y1[0]) % p, (2 * y1[1]) % p)
        else:
            num = ((y2[0] - y1[0]) % p, (y2[1] - y1[1]) % p)
            den = ((x2[0] - x1[0]) % p, (x2[1] - x1[1]) % p)
        lam = fq2_ints.mul(num, fq2_ints.inv(den, p, beta), p, beta)
        l2 = fq2_ints.mul(lam, lam, p, beta)
        x3 = ((l2[0] - x1[0] - x2[0]) % p, (l2[1] - x1[1] - x2[1]) % p)
        d = ((x1[0] - x3[0]) % p, (x1[1] - x3[1]) % p)
        ld = fq2_ints.mul(lam, d, p, beta)
        return x3, ((ld[0] - y1[0]) % p, (ld[1] - y1[1]) % p)

    acc = None
    for bit in bin(k)[2:]:
        acc = add(acc, acc)
        if bit == "1":
            acc = add(acc, pt)
    return acc


@pytest.mark.parametrize("spec", SPECS)
def test_psi_is_multiplication_by_p_on_g2(spec):
    # the subgroup check's criterion on the generator: ψ(G2) = (t − 1)·G2 = p·G2 (mod r)
    p, beta = spec.fq.modulus, spec.fq2_nonresidue
    (x, y) = spec.g2.generator
    conj = lambda c: (c[0], -c[1] % p)  # noqa: E731
    psi = (fq2_ints.mul(conj(x), spec.g2.endo_x, p, beta), fq2_ints.mul(conj(y), spec.g2.endo_y, p, beta))
    assert psi == _twist_mul(spec, (x, y), p % spec.fr.modulus)
    k = spec.g2.endo_scalar**spec.g2.endo_scalar_power * (-1 if spec.g2.endo_negate else 1)
    assert k % spec.fr.modulus == p % spec.fr.modulus


def test_bn_hard_part_exponent_is_exact():
    # Scott et al.'s chain (the generated BN final exponentiation) computes exactly (p^4 - p^2 + 1)/r
    x, p, r = BN254.x, BN254.fq.modulus, BN254.fr.modulus
    l3, l2 = 1, 6 * x * x + 1
    l1 = -36 * x**3 - 18 * x * x - 12 * x + 1
    l0 = -36 * x**3 - 30 * x * x - 18 * x - 2
    assert (p**4 - p * p + 1) % r == 0
    assert l0 + l1 * p + l2 * p * p + l3 * p**3 == (p**4 - p * p + 1) // r
    # and the optimal ate relation behind the loop 6x + 2 plus the two Frobenius lines
    assert (6 * x + 2 + p - p * p + p**3) % r == 0


def test_miller_loop_parameters():
    assert BLS12_381.numbers.miller_loop == BLS12_381.x and not BLS12_381.numbers.frobenius_lines
    assert BN254.numbers.miller_loop == 6 * BN254.x + 2 and BN254.numbers.frobenius_lines
    d = loop_digits(BLS12_381.x)
    assert len(d) + sum(map(abs, d)) == 68  # binary |x|: 63 doublings + 5 additions
    d = loop_digits(6 * BN254.x + 2)
    assert set(d) <= {-1, 0, 1} and -1 in d
    assert sum(v << i for i, v in enumerate(reversed([1] + d))) == 6 * BN254.x + 2


@pytest.mark.parametrize("n", [1, 2, 3, 7, 255, 0xD201000000010000, 29793968203157093288])
def test_naf_is_a_signed_representation(n):
    digits = naf(n)
    assert sum(v << i for i, v in enumerate(digits)) == n
    assert all(digits[i] == 0 or digits[i + 1] == 0 for i in range(len(digits) - 1))


def test_encoding_facts():
    bl, bn_ = BLS12_381.encoding, BN254.encoding
    assert (bl.fq_bytes, bl.fq_words32, bl.spare_bits, bl.g2_uncompressed) == (48, 12, 3, 192)
    assert (bn_.fq_bytes, bn_.fq_words32, bn_.spare_bits, bn_.g1_uncompressed, bn_.g2_compressed) == (32, 8, 2, 64, 64)
    assert bl.zcash_flags_fit and not bn_.zcash_flags_fit
    assert bl.fr_words32 == bn_.fr_words32 == 8


def test_equations():
    assert BN254.equation(BN254.g1) == "y^2 = x^3 + 3"
    assert BN254.equation(BN254.g2) == "y^2 = x^3 + 3/(9 + u)"
    assert BLS12_381.equation(BLS12_381.g2) == "y^2 = x^3 + 4(1 + u)"


def test_inconsistent_specs_are_rejected():
    with pytest.raises(CurveSpecError, match="fq.modulus"):
        attrs.evolve(BN254, x=BN254.x + 1)
    with pytest.raises(CurveSpecError, match="g2.b"):
        attrs.evolve(BN254, twist="M")
    with pytest.raises(CurveSpecError, match="generator"):
        attrs.evolve(BN254, g1=attrs.evolve(BN254.g1, generator=((1,), (3,))))
    with pytest.raises(CurveSpecError, match="square"):
        attrs.evolve(BN254, fq6_nonresidue=(0, 1))  # u is a square in Fq2... ξ must not be
    p, beta = BN254.fq.modulus, BN254.fq2_nonresidue
    cube = fq2_ints.pow_(BN254.fq6_nonresidue, 3, p, beta)  # a non-square's cube: no square, a cube
    with pytest.raises(CurveSpecError, match="cube"):
        attrs.evolve(BN254, fq6_nonresidue=cube)
    with pytest.raises(CurveSpecError, match="family"):
        families.numbers("mnt4", 5)


def test_registry_names_and_aliases():
    assert curves.names() == ("bls12_381", "bn254", "bls12_377")
    for name in ("bn254", "bn128", "BN254", "alt_bn128"):
        assert curves.get(name) is curves.get("bn254") and curves.resolve(name) is BN254
    for name in ("bls12_381", "bls12381", "BLS12-381"):
        assert curves.get(name).spec is BLS12_381
    with pytest.raises(UnsupportedCurveError, match="unknown curve"):
        curves.get("secp256k1")
    with pytest.raises(UnsupportedCurveError):
        curves.get(None)


def test_bls12_381_bundle_is_todays_objects():
    import cuzk.curve
    import cuzk.field
    from cuzk.curves import get as _get_curve
    cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

    b = curves.get("bls12_381")
    assert b.Fr is cuzk.field.Fr and b.Fq is cuzk.field.Fq
    assert b.G1 is cuzk.curve.G1 and b.G2 is cuzk.curve.G2
    assert b.pairing is cuzk.curves.bls12_381.pairing and b.kernels is cpu
