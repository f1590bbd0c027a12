"""Prime-field parameters as data.

Everything a kernel needs (Montgomery constants, 2-adic roots) is derived here from the
modulus and a multiplicative generator, so it is typed exactly once. A curve's fields are
``FieldParams`` values in its entry of ``cuzk/curves/catalog.py``.

    >>> FR = FieldParams(name="fr", modulus=0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001, generator=7)
    >>> FR.limbs, FR.two_adicity
    (4, 32)
"""

from __future__ import annotations

import attrs

from cuzk.errors import FieldValueError

__all__ = ["FieldParams"]

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

        >>> from cuzk.curves import BLS12_381
        >>> FR = BLS12_381.fr
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
