"""What a pairing-friendly family's seed x implies: moduli, trace, cofactors, Miller loop, twist maps.

A BLS12 or BN curve is fixed by its family, its seed x (with sign) and a few choices (field
generators, tower non-residues, the curve coefficient b, the generator points). Everything
else is a polynomial in x or a power of ξ, computed here and checked against the given numbers
when a :class:`cuzk.curves.spec.CurveSpec` is built, so no derived number is typed in.

Family polynomials (Freeman–Scott–Teske, "A taxonomy of pairing-friendly elliptic curves"):

* BLS12: r = x⁴ − x² + 1, p = (x − 1)²·r/3 + x, t = x + 1; G1 cofactor (x − 1)²/3, G2 cofactor
  (x⁸ − 4x⁷ + 5x⁶ − 4x⁴ + 6x³ − 4x² − 4x + 13)/9 (Budroni–Pintore). Optimal ate loop: x.
* BN: p = 36x⁴ + 36x³ + 24x² + 6x + 1, r = 36x⁴ + 36x³ + 18x² + 6x + 1, t = 6x² + 1; G1 cofactor 1,
  G2 cofactor 2p − r. Optimal ate loop: 6x + 2, then two lines through π(Q) and −π²(Q).

    >>> n = numbers("bn", 4965661367192848881)
    >>> hex(n.p)[:10], n.g1_cofactor, n.miller_loop == 6 * 4965661367192848881 + 2
    ('0x30644e72', 1, True)
"""

from __future__ import annotations

import attrs

from cuzk.curve.loop_digits import loop_digits, naf
from cuzk.errors import CurveSpecError
from cuzk.field import fq2_ints

__all__ = ["FamilyNumbers", "FAMILIES", "numbers", "naf", "loop_digits", "twist_b", "psi_constants", "TWISTS"]

FAMILIES = ("bls12", "bn")
# Sextic twist types: D ("divide": E': y² = x³ + b/ξ, untwist (x, y) -> (x·w², y·w³)) and M
# ("multiply": E': y² = x³ + b·ξ, untwist (x, y) -> (x/w², y/w³)); w⁶ = ξ in Fq12.
TWISTS = ("M", "D")


@attrs.frozen
class FamilyNumbers:
    """The numbers a family's polynomials give for one seed.

    Attributes:
        p, r: base-field and scalar-field (group order) primes.
        trace: trace of Frobenius t, #E(Fq) = p + 1 − t.
        g1_cofactor, g2_cofactor: #E(Fq)/r and #E'(Fq2)/r.
        miller_loop: the optimal ate loop parameter, with sign (BLS12: x; BN: 6x + 2).
        frobenius_lines: BN's two extra lines (through π(Q), then −π²(Q)) after the loop.
    """

    p: int
    r: int
    trace: int
    g1_cofactor: int
    g2_cofactor: int
    miller_loop: int
    frobenius_lines: bool


def numbers(family: str, x: int) -> FamilyNumbers:
    """The :class:`FamilyNumbers` of ``family`` ("bls12" | "bn") at seed ``x``.

    Raises:
        CurveSpecError: unknown family, or the polynomials do not give integers at x.
    """
    if family == "bls12":
        r = x**4 - x**2 + 1
        p3 = (x - 1) ** 2 * r
        h2_9 = x**8 - 4 * x**7 + 5 * x**6 - 4 * x**4 + 6 * x**3 - 4 * x**2 - 4 * x + 13
        if p3 % 3 or h2_9 % 9:
            raise CurveSpecError(f"bls12 seed {x}: (x-1)^2 r is not divisible by 3 (x = 1 mod 3 needed)")
        return FamilyNumbers(p3 // 3 + x, r, x + 1, (x - 1) ** 2 // 3, h2_9 // 9, x, False)
    if family == "bn":
        p = 36 * x**4 + 36 * x**3 + 24 * x**2 + 6 * x + 1
        r = 36 * x**4 + 36 * x**3 + 18 * x**2 + 6 * x + 1
        return FamilyNumbers(p, r, 6 * x**2 + 1, 1, 2 * p - r, 6 * x + 2, True)
    raise CurveSpecError(f"unknown curve family {family!r}; known: {', '.join(FAMILIES)}")


def _check_xi(xi: tuple[int, int], p: int, beta: int) -> None:
    # a sextic twist needs ξ to be neither a square nor a cube in Fq2 (so v³ = ξ and w² = v are
    # irreducible and w⁶ = ξ generates Fq12). ξ^((p²−1)/m) = N(ξ)^((p−1)/m) for m | p − 1
    # (N(ξ) = ξ^(p+1)): Euler's criterion in Fq, not a ~760-squaring power in Fq2 per check.
    n = fq2_ints.norm(xi, p, beta)

    def power_is_one(m):
        if (p - 1) % m == 0:
            return pow(n, (p - 1) // m, p) == 1
        return fq2_ints.pow_(xi, (p * p - 1) // m, p, beta) == (1, 0)

    if power_is_one(2):
        raise CurveSpecError(f"xi = {xi} is a square in Fq2: Fq12 = Fq2[w]/(w^6 - xi) is not a field")
    if power_is_one(3):
        raise CurveSpecError(f"xi = {xi} is a cube in Fq2: Fq6 = Fq2[v]/(v^3 - xi) is not a field")


def twist_b(b: int, xi: tuple[int, int], twist: str, p: int, beta: int) -> tuple[int, int]:
    """b' of the sextic twist E': y² = x³ + b' carrying G2 (M: b·ξ, D: b/ξ).

    >>> p = 21888242871839275222246405745257275088696311157297823662689037894645226208583
    >>> twist_b(3, (9, 1), "D", p, p - 1)[1] == p - 3 * pow(82, -1, p) % p   # 3/(9+u) = 3(9-u)/82
    True
    """
    _check_xi(xi, p, beta)
    if twist == "M":
        return fq2_ints.mul((b, 0), xi, p, beta)
    if twist == "D":
        return fq2_ints.mul((b, 0), fq2_ints.inv(xi, p, beta), p, beta)
    raise CurveSpecError(f"twist must be one of {TWISTS}, got {twist!r}")


def psi_constants(xi: tuple[int, int], twist: str, p: int, beta: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(c_x, c_y) of ψ = untwist⁻¹ ∘ Frobenius ∘ untwist on E': ψ(x, y) = (c_x·x^p, c_y·y^p).

    The untwist multiplies x by w^(±2) and y by w^(±3) (D: +, M: −), and w^(p−1) = ξ^((p−1)/6), so
    c_x = ξ^(±(p−1)/3), c_y = ξ^(±(p−1)/2). On G2, ψ is multiplication by p ≡ t − 1 (mod r)
    (BLS12: x, BN: 6x²), which is what the G2 subgroup checks test.
    """
    cx = fq2_ints.pow_(xi, (p - 1) // 3, p, beta)
    cy = fq2_ints.pow_(xi, (p - 1) // 2, p, beta)
    if twist == "M":
        return fq2_ints.inv(cx, p, beta), fq2_ints.inv(cy, p, beta)
    if twist == "D":
        return cx, cy
    raise CurveSpecError(f"twist must be one of {TWISTS}, got {twist!r}")
