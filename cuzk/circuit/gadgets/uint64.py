"""64-bit words of :class:`~cuzk.circuit.gadgets.bit.Boolean` bits, as storage-proofs-core's
``UInt64`` (a StackedCircuit's node index and challenge): constants, allocation bit by bit, the
two bit orders and packing into public inputs.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> n = UInt64.alloc(cs, 5)                    # 64 boolean rows
    >>> [b.kind for b in n.to_bits_be()[-3:]], cs.n_constraints
    (['is', 'is', 'is'], 64)
    >>> UInt64.constant(6).to_bits_be()[-3:]
    [Boolean.constant(True), Boolean.constant(True), Boolean.constant(False)]
"""

from __future__ import annotations

from cuzk.circuit.gadgets.bit import Boolean
from cuzk.circuit.gadgets.num import pack_into_inputs
from cuzk.circuit.gadgets.uint32 import _const_value
from cuzk.circuit.lc import LinearCombination
from cuzk.errors import CircuitError

__all__ = ["UInt64"]

_MASK = (1 << 64) - 1


class UInt64:
    """Sixty-four :class:`Boolean` bits, least significant first; ``value`` is the integer when
    every bit is a constant, else None."""

    __slots__ = ("bits", "value")

    def __init__(self, bits, value: int | None = None):
        if len(bits) != 64:
            raise CircuitError(f"UInt64 needs 64 bits, got {len(bits)}")
        self.bits = list(bits)
        self.value = value

    @classmethod
    def constant(cls, value: int) -> "UInt64":
        value &= _MASK
        return cls([Boolean.constant((value >> i) & 1) for i in range(64)], value)

    @classmethod
    def alloc(cls, cs, value, name: str = "allocated bit") -> "UInt64":
        """64 new bits (boolean rows, LSB first) of ``value``: a Value (below 2^64), an int, or a
        list of 64 bit values."""
        if isinstance(value, int):
            vals = [(value >> i) & 1 for i in range(64)]
        elif isinstance(value, (list, tuple)):
            vals = list(value)
        else:
            if isinstance(value, LinearCombination):
                value = value.value
            vals = value.bits(64)
        return cls([Boolean.alloc(cs, v, f"{name} {i}") for i, v in enumerate(vals)])

    def to_bits_be(self) -> list:
        return self.bits[::-1]

    def to_bits_le(self) -> list:
        return list(self.bits)

    @classmethod
    def from_bits_be(cls, bits) -> "UInt64":
        bits = list(bits)[::-1]
        return cls(bits, _const_value(bits))

    @classmethod
    def from_bits(cls, bits) -> "UInt64":
        bits = list(bits)
        return cls(bits, _const_value(bits))

    def pack_into_input(self, cs) -> list:
        """The bits as one public input (``multipack::pack_into_inputs``: one row)."""
        return pack_into_inputs(cs, self.bits)
