"""BLS12-381 curve parameters as data.

Everything the point kernels need (curve coefficient b, generator, group order, cofactor,
subgroup-check endomorphism) is listed here once, as Python ints; the generated kernel modules
``cuzk.curve.g1`` / ``g2`` turn them into Montgomery limb constants at import. Adding a curve
(e.g. BN254) means adding ``CurveParams(...)`` values and regenerating, not editing formulas.

Field elements are written as tuples of coefficients over the base field Fq: one int for a G1
coordinate, ``(c0, c1)`` meaning ``c0 + c1*u`` (u² = −1) for a G2 coordinate.

    >>> from cuzk.curve.params import G1_PARAMS, BLS_X
    >>> G1_PARAMS.b, hex(BLS_X)
    ((4,), '-0xd201000000010000')
"""

from __future__ import annotations

import attrs

from cuzk.field.params import FQ, FR, fq2_mul_int, fq2_pow_int

__all__ = ["CurveParams", "BLS_X", "G1_PARAMS", "G2_PARAMS", "fq2_mul_int", "fq2_pow_int"]

_P = FQ.modulus

# The BLS parameter x (negative for BLS12-381): p = (x-1)²(x⁴-x²+1)/3 + x, r = x⁴ - x² + 1.
BLS_X = -0xD201000000010000


def _fq2_inv_int(a: tuple[int, int]) -> tuple[int, int]:
    norm_inv = pow(a[0] * a[0] + a[1] * a[1], -1, _P)
    return (a[0] * norm_inv % _P, -a[1] * norm_inv % _P)


@attrs.frozen
class CurveParams:
    """A short-Weierstrass curve y² = x³ + b over Fq (degree 1) or Fq2 (degree 2), a = 0.

    Attributes:
        name: "g1" / "g2"; names the generated module ``cuzk.curve.<name>``.
        degree: coordinates are elements of Fq^degree (1: Fq, 2: Fq2).
        b: the curve coefficient, a ``degree``-tuple of ints.
        generator: affine (x, y) of the subgroup generator, each a ``degree``-tuple.
        order: prime order r of the subgroup the generator spans.
        cofactor: #E / r.
        endo_x, endo_y: constants of the subgroup-check endomorphism
            ``endo(x, y) = (endo_x · frob(x), endo_y · frob(y))``, where frob is the identity on
            Fq and conjugation on Fq2 (G1: φ(x, y) = (βx, y); G2: Scott's ψ).
        endo_scalar, endo_scalar_power, endo_negate: a point P on the curve lies in the order-r
            subgroup iff ``endo(P) == (−1)^negate · endo_scalar^power · P`` (G1: φ(P) = −x²·P, Bowe/Scott; G2:
            ψ(P) = x·P = −|x|·P, Scott 2021). Both criteria are proven for BLS12-381.
            All five stay None for a group of cofactor 1 (e.g. BN254's G1), where every point on
            the curve lies in the subgroup and the generated check is "on the curve".
    """

    name: str
    degree: int
    b: tuple
    generator: tuple
    order: int
    cofactor: int
    endo_x: tuple | None = None
    endo_y: tuple | None = None
    endo_scalar: int | None = None
    endo_scalar_power: int | None = None
    endo_negate: bool | None = None


# φ's β: the cube root of unity 2^((p-1)/3) (the other root, β², pairs with λ = x² - 1 instead).
_BETA = pow(2, (_P - 1) // 3, _P)

# ψ = untwist ∘ Frobenius ∘ twist on E'(Fq2): constants 1/(1+u)^((p-1)/3) and 1/(1+u)^((p-1)/2).
_PSI_X = _fq2_inv_int(fq2_pow_int((1, 1), (_P - 1) // 3))
_PSI_Y = _fq2_inv_int(fq2_pow_int((1, 1), (_P - 1) // 2))

G1_PARAMS = CurveParams(
    name="g1",
    degree=1,
    b=(4,),
    generator=(
        (0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,),
        (0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1,),
    ),
    order=FR.modulus,
    cofactor=(BLS_X - 1) ** 2 // 3,
    endo_x=(_BETA,),
    endo_y=(1,),
    endo_scalar=-BLS_X,
    endo_scalar_power=2,
    endo_negate=True,
)

# E'(Fq2): y² = x³ + 4(1 + u), the M-type sextic twist carrying G2.
G2_PARAMS = CurveParams(
    name="g2",
    degree=2,
    b=(4, 4),
    generator=(
        (
            0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
            0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
        ),
        (
            0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
            0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
        ),
    ),
    order=FR.modulus,
    # h2 = (x⁸ − 4x⁷ + 5x⁶ − 4x⁴ + 6x³ − 4x² − 4x + 13) / 9 (Budroni–Pintore); #E'(Fq2) = h2·r.
    cofactor=(
        BLS_X**8 - 4 * BLS_X**7 + 5 * BLS_X**6 - 4 * BLS_X**4 + 6 * BLS_X**3 - 4 * BLS_X**2 - 4 * BLS_X + 13
    )
    // 9,
    endo_x=_PSI_X,
    endo_y=_PSI_Y,
    endo_scalar=-BLS_X,
    endo_scalar_power=1,
    endo_negate=True,
)
