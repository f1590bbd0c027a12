"""Prime-field parameters as data.

Everything a kernel needs (Montgomery constants, 2-adic roots) is derived here from the
modulus and a multiplicative generator, so it is typed exactly once. Adding a field (e.g.
BN254) means adding one ``FieldParams(...)`` line.

    >>> from cuzk.field.params import FR
    >>> FR.limbs, FR.two_adicity
    (4, 32)
"""

from __future__ import annotations

import attrs

from cuzk.errors import FieldValueError

__all__ = ["FieldParams", "FR", "FQ", "FQ2_NONRESIDUE", "FQ6_NONRESIDUE", "fq2_mul_int", "fq2_pow_int"]

_LIMB_BITS = 64


def _two_adicity(n: int) -> int:
    s = 0
    while n % 2 == 0:
        n //= 2
        s += 1
    return s


@attrs.frozen
class FieldParams:
    """A prime field Z/pZ in Montgomery form over 64-bit limbs.

    Attributes:
        name: short name used in generated code and messages ("fr", "fq").
        modulus: the prime p.
        generator: a multiplicative generator (a quadratic non-residue); roots of unity
            are powers of it, so it fixes the NTT convention (bellperson 7, snarkjs 5 for Fr).
    """

    name: str
    modulus: int
    generator: int
    limbs: int = attrs.field(init=False)
    bits: int = attrs.field(init=False)
    r: int = attrs.field(init=False)  # Montgomery R = 2^(64*limbs) mod p
    r2: int = attrs.field(init=False)  # R^2 mod p (to_mont multiplies by it)
    r3: int = attrs.field(init=False)  # R^3 mod p (Montgomery inversion fix-up)
    inv: int = attrs.field(init=False)  # -p^-1 mod 2^64
    two_adicity: int = attrs.field(init=False)  # largest s with 2^s | p-1
    odd_part: int = attrs.field(init=False)  # (p-1) / 2^s
    root_of_unity: int = attrs.field(init=False)  # generator^odd_part: a primitive 2^s-th root

    def __attrs_post_init__(self):
        p = self.modulus
        limbs = -(-p.bit_length() // _LIMB_BITS)
        s = _two_adicity(p - 1)
        set_ = object.__setattr__  # frozen: derived fields are filled once, here
        set_(self, "limbs", limbs)
        set_(self, "bits", p.bit_length())
        R = pow(2, _LIMB_BITS * limbs, p)
        set_(self, "r", R)
        set_(self, "r2", R * R % p)
        set_(self, "r3", R * R * R % p)
        set_(self, "inv", (-pow(p, -1, 1 << _LIMB_BITS)) % (1 << _LIMB_BITS))
        set_(self, "two_adicity", s)
        set_(self, "odd_part", (p - 1) >> s)
        set_(self, "root_of_unity", pow(self.generator, (p - 1) >> s, p))
        if pow(self.generator, (p - 1) // 2, p) != p - 1:
            raise ValueError(f"{self.name}: generator {self.generator} is a quadratic residue")

    def root_of_unity_for(self, log_n: int, generator: int | None = None) -> int:
        """A primitive 2^log_n-th root of unity, derived from ``generator`` (default: ours).

        >>> w = FR.root_of_unity_for(3); pow(w, 8, FR.modulus), pow(w, 4, FR.modulus) != 1
        (1, True)
        """
        if not 0 <= log_n <= self.two_adicity:
            raise FieldValueError(f"{self.name} has 2-adicity {self.two_adicity}; no root of order 2^{log_n}")
        g = self.generator if generator is None else generator
        w = pow(g, self.odd_part, self.modulus)
        return pow(w, 1 << (self.two_adicity - log_n), self.modulus)

    def check_canonical(self, x: int) -> int:
        """Return ``x`` if 0 <= x < p, else raise :class:`cuzk.errors.FieldValueError`."""
        if not isinstance(x, int) or not 0 <= x < self.modulus:
            raise FieldValueError(
                f"{self.name.capitalize()} element must satisfy 0 <= x < {'r' if self.name == 'fr' else 'p'}, got {x!r}"
            )
        return x

    def to_mont_int(self, x: int) -> int:
        return x * self.r % self.modulus

    def from_mont_int(self, x: int) -> int:
        return x * pow(self.r, -1, self.modulus) % self.modulus


# BLS12-381 scalar field. Generator 7 matches the bls12_381/bellperson crates (snarkjs uses 5).
FR = FieldParams(
    name="fr",
    modulus=0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
    generator=7,
)

# BLS12-381 base field (381 bits). p ≡ 3 mod 4, so sqrt is a single exponentiation.
FQ = FieldParams(
    name="fq",
    modulus=0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
    generator=2,
)

# Fq2 = Fq[u]/(u^2 - FQ2_NONRESIDUE); BLS12-381 uses u^2 = -1.
FQ2_NONRESIDUE = FQ.modulus - 1

# Fq6 = Fq2[v]/(v^3 - FQ6_NONRESIDUE), Fq12 = Fq6[w]/(w^2 - v): BLS12-381's xi = 1 + u, as (c0, c1).
FQ6_NONRESIDUE = (1, 1)


def fq2_mul_int(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """(a0 + a1 u)(b0 + b1 u) mod p with u² = -1, on Python ints (used to derive constants).

    >>> fq2_mul_int((0, 1), (0, 1)) == (FQ.modulus - 1, 0)
    True
    """
    p = FQ.modulus
    return ((a[0] * b[0] - a[1] * b[1]) % p, (a[0] * b[1] + a[1] * b[0]) % p)


def fq2_pow_int(a: tuple[int, int], e: int) -> tuple[int, int]:
    """a^e in Fq2 by square-and-multiply on Python ints (e >= 0).

    >>> fq2_pow_int((1, 1), 2)
    (0, 2)
    """
    result, base = (1, 0), a
    while e:
        if e & 1:
            result = fq2_mul_int(result, base)
        base = fq2_mul_int(base, base)
        e >>= 1
    return result
