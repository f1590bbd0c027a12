"""32-bit words of :class:`~cuzk.circuit.gadgets.bit.Boolean` bits, as bellperson's ``UInt32``:
rotations and shifts are free, xor / ch / maj go bit by bit with constant folding, and
:meth:`UInt32.addmany` allocates the sum's bits and hands the equality to a
:class:`~cuzk.circuit.gadgets.multieq.MultiEq`.

    >>> from cuzk.circuit import ConstraintSystem
    >>> from cuzk.circuit.gadgets.multieq import MultiEq
    >>> cs = ConstraintSystem()
    >>> x = UInt32.alloc(cs, 0xdeadbeef); y = UInt32.constant(7)
    >>> with MultiEq(cs) as eq:
    ...     s = UInt32.addmany(cs, [x, y], eq)     # 33 result bits, one packed row
    >>> cs.n_constraints                           # 32 + 33 boolean rows + 1 multieq row
    66
    >>> UInt32.addmany(cs, [y, y], None).value     # constants fold to a constant
    14
"""

from __future__ import annotations

from cuzk.circuit.gadgets import sha256_bits  # its bare-bit words' addmany is this one's
from cuzk.circuit.gadgets.bit import CONSTANT, Boolean
from cuzk.circuit.lc import LinearCombination
from cuzk.errors import CircuitError

__all__ = ["UInt32"]

_MASK = 0xFFFFFFFF


def _const_value(bits) -> int | None:
    """The integer of little-endian ``bits`` when all are constants, else None."""
    v = 0
    for i, b in enumerate(bits):
        if b.kind is not CONSTANT:
            return None
        v |= int(b.bit) << i
    return v


class UInt32:
    """Thirty-two :class:`Boolean` bits, least significant first.

    Attributes:
        bits: the bits, LSB first.
        value: the integer when every bit is a constant, else None (witness values live in the
            witness program, not here).
    """

    __slots__ = ("bits", "value")

    def __init__(self, bits, value: int | None = None):
        if len(bits) != 32:
            raise CircuitError(f"UInt32 needs 32 bits, got {len(bits)}")
        self.bits = list(bits)
        self.value = value

    @classmethod
    def constant(cls, value: int) -> "UInt32":
        value &= _MASK
        return cls([Boolean.constant((value >> i) & 1) for i in range(32)], value)

    @classmethod
    def alloc(cls, cs, value, name: str = "allocated bit") -> "UInt32":
        """32 new bits (boolean rows, LSB first) of ``value``: a Value, an int or a list of 32
        bit values (LSB first)."""
        if isinstance(value, int):
            vals = [(value >> i) & 1 for i in range(32)]
        elif isinstance(value, (list, tuple)):
            vals = list(value)
        else:
            if isinstance(value, LinearCombination):
                value = value.value
            vals = value.bits(32)
        return cls([Boolean.alloc(cs, v, f"{name} {i}") for i, v in enumerate(vals)])

    # -- bit orders ------------------------------------------------------------------------
    @classmethod
    def from_bits_be(cls, bits) -> "UInt32":
        bits = list(bits)[::-1]
        return cls(bits, _const_value(bits))

    def into_bits_be(self) -> list:
        return self.bits[::-1]

    @classmethod
    def from_bits(cls, bits) -> "UInt32":
        """From little-endian bits (LSB first)."""
        bits = list(bits)
        return cls(bits, _const_value(bits))

    def into_bits(self) -> list:
        """Little-endian bits (LSB first)."""
        return list(self.bits)

    # -- free permutations -----------------------------------------------------------------
    def rotr(self, by: int) -> "UInt32":
        by %= 32
        v = None if self.value is None else ((self.value >> by) | (self.value << (32 - by))) & _MASK
        return UInt32(self.bits[by:] + self.bits[:by], v)

    def shr(self, by: int) -> "UInt32":
        by %= 32
        v = None if self.value is None else self.value >> by
        return UInt32(self.bits[by:] + [Boolean.constant(False)] * by, v)

    # -- bitwise gates ---------------------------------------------------------------------
    def xor(self, cs, other: "UInt32", name: str = "xor of bit") -> "UInt32":
        bits = [Boolean.xor(cs, a, b, f"{name} {i}") for i, (a, b) in enumerate(zip(self.bits, other.bits))]
        return UInt32(bits, _const_value(bits))

    @staticmethod
    def sha256_ch(cs, a: "UInt32", b: "UInt32", c: "UInt32") -> "UInt32":
        """``(a & b) ^ (!a & c)`` bit by bit."""
        bits = [Boolean.sha256_ch(cs, x, y, z, f"ch {i}") for i, (x, y, z) in enumerate(zip(a.bits, b.bits, c.bits))]
        return UInt32(bits, _const_value(bits))

    @staticmethod
    def sha256_maj(cs, a: "UInt32", b: "UInt32", c: "UInt32") -> "UInt32":
        """``(a & b) ^ (a & c) ^ (b & c)`` bit by bit."""
        bits = [Boolean.sha256_maj(cs, x, y, z, f"maj {i}") for i, (x, y, z) in enumerate(zip(a.bits, b.bits, c.bits))]
        return UInt32(bits, _const_value(bits))

    # -- addition --------------------------------------------------------------------------
    @staticmethod
    def addmany(cs, operands, multieq, name: str = "result bit") -> "UInt32":
        """The sum of 2 to 10 words mod 2^32.

        The sum's full width (the bit length of ``len(operands) * (2^32 - 1)``: 33 bits for two
        operands, 35 for five) is allocated bit by bit, and ``sum of operand bits == sum of result
        bits`` goes to ``multieq``; the carries are then dropped. All-constant operands give a
        constant and no row (``multieq`` may then be None).

        Raises:
            CircuitError: fewer than 2 or more than 10 operands.
        """
        n = len(operands)
        if not 2 <= n <= 10:
            raise CircuitError(f"UInt32.addmany takes 2 to 10 operands, got {n}")
        out = sha256_bits.UInt32.addmany(cs, multieq, [sha256_bits.UInt32([b.bare() for b in op.bits])
                                                       for op in operands], name)
        bits = [Boolean.of_bare(b) for b in out.bits]
        return UInt32(bits, _const_value(bits))
