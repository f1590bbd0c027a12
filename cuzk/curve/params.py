"""A curve's group parameters as data: :class:`CurveParams`.

Everything the point kernels need (curve coefficient b, generator, group order, cofactor,
subgroup-check endomorphism) is listed once, as Python ints, in the curve's entry of
``cuzk/curves/catalog.py``; the generated modules ``cuzk.curves.<name>.g1`` / ``g2`` turn them
into Montgomery limb constants at import. A curve is ``CurveParams(...)`` values and a
regeneration, not edited formulas.

Field elements are written as tuples of coefficients over the base field Fq: one int for a G1
coordinate, ``(c0, c1)`` meaning ``c0 + c1*u`` for a G2 coordinate.

    >>> from cuzk.curves import BLS12_381
    >>> BLS12_381.g1.b, hex(BLS12_381.x)
    ((4,), '-0xd201000000010000')
"""

from __future__ import annotations

import attrs

__all__ = ["CurveParams"]


@attrs.frozen
class CurveParams:
    """A short-Weierstrass curve y² = x³ + b over Fq (degree 1) or Fq2 (degree 2), a = 0.

    Attributes:
        name: "g1" / "g2"; names the generated module ``cuzk.curves.<curve>.<name>``.
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
