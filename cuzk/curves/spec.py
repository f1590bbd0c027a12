"""``CurveSpec``: one pairing-friendly curve as pure data (fields, tower, twist, groups, encodings).

A spec holds the defining numbers of a curve and derives the rest when it is built: the family
polynomials give p, r, the trace, both cofactors and the Miller loop (``cuzk.curves.families``),
and every given number that is also derivable is checked against the derivation, so a typo
fails at import, not in a pairing. Nothing here compiles or imports a kernel: the code
generator (``scripts/generate.py``) renders each curve's kernel modules from a spec, and the
registry (``cuzk.curves.get``) loads them.

    >>> from cuzk.curves import BN254
    >>> BN254.fq.limbs, BN254.fr.two_adicity, BN254.twist, BN254.encoding.fq_bytes
    (4, 28, 'D', 32)
"""

from __future__ import annotations

import attrs

from cuzk.curve.params import CurveParams
from cuzk.curves import families
from cuzk.errors import CurveSpecError
from cuzk.field import fq2_ints
from cuzk.field.params import FieldParams

__all__ = ["CurveSpec", "EncodingFacts"]


@attrs.frozen
class EncodingFacts:
    """Byte and word sizes of a curve's elements, derived from its two fields.

    Attributes:
        fq_bytes, fr_bytes: big-endian bytes of one canonical Fq / Fr element (ceil(bits/8)).
        fq_words32, fr_words32: 32-bit words per element on the GPU: twice the 64-bit limbs,
            so the CUDA kernels use the same Montgomery R (2^(64L)) and arrays are shared bit for bit.
        spare_bits: unused top bits of an ``fq_bytes`` coordinate, the room for flag bits
            (zcash's compressed/infinity/sign flags need 3).
        g1_compressed, g1_uncompressed, g2_compressed, g2_uncompressed: point sizes in bytes
            (x only, or x ‖ y; a G2 coordinate is two Fq elements).
    """

    fq_bytes: int
    fr_bytes: int
    fq_words32: int
    fr_words32: int
    spare_bits: int
    g1_compressed: int
    g1_uncompressed: int
    g2_compressed: int
    g2_uncompressed: int

    @classmethod
    def of(cls, fq: FieldParams, fr: FieldParams) -> EncodingFacts:
        """The facts for a curve over ``fq`` with scalars in ``fr``."""
        qb, rb = -(-fq.bits // 8), -(-fr.bits // 8)
        return cls(qb, rb, 2 * fq.limbs, 2 * fr.limbs, 8 * qb - fq.bits, qb, 2 * qb, 2 * qb, 4 * qb)

    @property
    def zcash_flags_fit(self) -> bool:
        """True when the three zcash flag bits fit above a coordinate (BLS12-381: yes; BN254: no)."""
        return self.spare_bits >= 3


def _fq2_str(c: tuple[int, int]) -> str:
    return f"{c[0]} + u" if c[1] == 1 else f"{c[0]} + {c[1]}u"


@attrs.frozen
class CurveSpec:
    """A pairing-friendly curve E: y² = x³ + b over Fq with its sextic twist E' over Fq2.

    Attributes:
        name: registry key and package name of the generated modules ("bn254").
        title: the name in messages and generated docstrings ("BN254").
        family: "bls12" or "bn" (fixes the polynomials, the Miller loop and the final exponentiation).
        x: the family seed, with its sign.
        fr, fq: the scalar and base fields (their generators fix the NTT roots / sqrt constants).
        fq2_nonresidue: β with Fq2 = Fq[u]/(u² − β), as an int mod p (−1 is p − 1).
        fq6_nonresidue: ξ = (c0, c1) = c0 + c1·u with Fq6 = Fq2[v]/(v³ − ξ), Fq12 = Fq6[w]/(w² − v).
        twist: "M" (E': y² = x³ + bξ) or "D" (E': y² = x³ + b/ξ).
        g1, g2: group parameters (:class:`cuzk.curve.params.CurveParams`) on E and E'.
        aliases: other names ``cuzk.curves.get`` accepts ("bn128").
        point_encoding: the byte format the point kernels implement ("zcash"), or None while
            the curve has none in cuzk (BN254's EIP-196/snarkjs formats come with the formats step).
        snarkjs_name: the name snarkjs writes in its JSON ("bn128"); None: the canonical name.
        numbers: the family numbers at x (derived; see ``cuzk.curves.families``).
        encoding: byte/word sizes (derived; :class:`EncodingFacts`).

    Raises:
        CurveSpecError: a given number disagrees with its derivation, or a generator is off its curve.
    """

    name: str
    title: str
    family: str
    x: int
    fr: FieldParams
    fq: FieldParams
    fq2_nonresidue: int
    fq6_nonresidue: tuple[int, int]
    twist: str
    g1: CurveParams
    g2: CurveParams
    aliases: tuple[str, ...] = ()
    point_encoding: str | None = None
    snarkjs_name: str | None = None
    numbers: families.FamilyNumbers = attrs.field(init=False)
    encoding: EncodingFacts = attrs.field(init=False)

    def __attrs_post_init__(self):
        n = families.numbers(self.family, self.x)
        object.__setattr__(self, "numbers", n)  # frozen: derived fields are filled once, here
        object.__setattr__(self, "encoding", EncodingFacts.of(self.fq, self.fr))
        self._check(n)

    def _check(self, n: families.FamilyNumbers) -> None:
        p, beta = self.fq.modulus, self.fq2_nonresidue
        want = {
            "fq.modulus": (self.fq.modulus, n.p),
            "fr.modulus": (self.fr.modulus, n.r),
            "g1.order": (self.g1.order, n.r),
            "g2.order": (self.g2.order, n.r),
            "g1.cofactor": (self.g1.cofactor, n.g1_cofactor),
            "g2.cofactor": (self.g2.cofactor, n.g2_cofactor),
            "g2.b": (tuple(self.g2.b), families.twist_b(self.g1.b[0], self.fq6_nonresidue, self.twist, p, beta)),
            "fr.name": (self.fr.name, "fr"),
            "fq.name": (self.fq.name, "fq"),
        }
        for what, (given, derived) in want.items():
            if given != derived:
                raise CurveSpecError(f"{self.name}: {what} is {given!r}, the {self.family} seed implies {derived!r}")
        if pow(beta, (p - 1) // 2, p) != p - 1:
            raise CurveSpecError(f"{self.name}: beta = {beta} is a square mod p: Fq[u]/(u^2 - beta) is not a field")
        for g in (self.g1, self.g2):
            if not self.on_curve(g, g.generator):
                raise CurveSpecError(f"{self.name}: the {g.name} generator is not on {self.equation(g)}")

    # ------------------------------------------------------------ small helpers on Python ints
    def on_curve(self, group: CurveParams, point) -> bool:
        """y² == x³ + b for an affine point given as degree-tuples of ints (slow; for checks).

        >>> from cuzk.curves import BN254
        >>> BN254.on_curve(BN254.g1, ((1,), (2,)))
        True
        """
        p, beta = self.fq.modulus, self.fq2_nonresidue
        x, y = (tuple(c) + (0,) * (2 - len(c)) for c in point)
        b = tuple(group.b) + (0,) * (2 - len(group.b))
        x3 = fq2_ints.mul(fq2_ints.mul(x, x, p, beta), x, p, beta)
        rhs = ((x3[0] + b[0]) % p, (x3[1] + b[1]) % p)
        return fq2_ints.mul(y, y, p, beta) == rhs

    def equation(self, group: CurveParams) -> str:
        """The curve equation in words, for messages ("y^2 = x^3 + 3/(9 + u)").

        >>> from cuzk.curves import BLS12_381
        >>> BLS12_381.equation(BLS12_381.g2)
        'y^2 = x^3 + 4(1 + u)'
        """
        b = self.g1.b[0]
        if group.degree == 1:
            return f"y^2 = x^3 + {b}"
        xi = _fq2_str(self.fq6_nonresidue)
        return f"y^2 = x^3 + {b}({xi})" if self.twist == "M" else f"y^2 = x^3 + {b}/({xi})"
