"""Bellperson's number helpers on cuzk variables (an ``AllocatedNum`` is a
:class:`~cuzk.circuit.Variable`): allocation, ``inputize``, the bit decomposition ``to_bits_le``
and multipacking of :class:`~cuzk.circuit.gadgets.bit.Boolean` bits, each with the rows in
bellperson's orientation.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> x = alloc_num(cs, 5)                      # no row
    >>> bits = to_bits_le(cs, x)                  # 255 boolean rows + 0 * 0 = sum 2^i b_i - x
    >>> len(bits), cs.n_constraints
    (255, 256)
    >>> n = pack_bits(cs, bits[:8]); cs.n_constraints       # sum 2^i b_i * 1 = n
    257
"""

from __future__ import annotations

from cuzk.circuit.gadgets.bit import AllocatedBit, Boolean
from cuzk.circuit.lc import LinearCombination, Value

__all__ = ["alloc_num", "inputize", "to_bits_le", "field_into_allocated_bits_le", "pack_bits",
           "pack_into_inputs", "bits_lc", "capacity"]


def capacity(cs) -> int:
    """Bits that always fit below the field's modulus: its bit length - 1 (254 for BLS12-381)."""
    return cs.modulus.bit_length() - 1


def _value_of(x):
    return x.value if isinstance(x, LinearCombination) else x


def alloc_num(cs, value, name: str | None = None):
    """A private variable with witness ``value`` (a Value, an int, or a combination's value);
    no row, as ``AllocatedNum::alloc``."""
    return cs.private(_value_of(value), name=name)


def inputize(cs, num, name: str = "enforce input is correct"):
    """A new public input equal to ``num``: the row ``input * 1 = num``. Returns the input."""
    x = cs.public(_value_of(num))
    cs.enforce(x, cs.one, num, name=name)
    return x


def field_into_allocated_bits_le(cs, value) -> list:
    """The field element's bits (r's bit length of them: 255 for BLS12-381), LSB first, each a
    new :class:`AllocatedBit` with its boolean row, LSB allocated first."""
    value = _value_of(value)
    n = cs.modulus.bit_length()
    vals = value.bits(n) if isinstance(value, Value) else [(int(value) >> i) & 1 for i in range(n)]
    return [AllocatedBit.alloc(cs, v, f"bit {i}") for i, v in enumerate(vals)]


def to_bits_le(cs, num, name: str = "unpacking constraint") -> list:
    """``num``'s bits as Booleans, LSB first (``AllocatedNum::to_bits_le``): the bits, then the
    row ``0 * 0 = sum 2^i b_i - num``. Not strict: with 255 bits, ``num + r`` decomposes too."""
    num = cs._lc(num)
    bits = field_into_allocated_bits_le(cs, num.value)
    r = cs.modulus
    terms = {b.var.index: 1 << i for i, b in enumerate(bits)}
    for k, v in num.terms.items():
        nv = (terms.get(k, 0) - v) % r
        if nv:
            terms[k] = nv
        else:
            terms.pop(k, None)
    empty = LinearCombination(cs, {})
    cs.enforce(empty, empty, LinearCombination(cs, terms), name=name)
    return [Boolean.is_(b) for b in bits]


def bits_lc(cs, bits) -> LinearCombination:
    """``sum 2^i bits[i]`` over Booleans (negations and constants included), never materialized."""
    r = cs.modulus
    terms: dict = {}
    for i, b in enumerate(bits):
        for k, v in b.terms(r, 1 << i).items():
            nv = (terms.get(k, 0) + v) % r
            if nv:
                terms[k] = nv
            else:
                terms.pop(k, None)
    return LinearCombination(cs, terms)


def pack_bits(cs, bits, name: str = "packing constraint"):
    """The first :func:`capacity` bits (LSB first) as one new private number: the row
    ``sum 2^i b_i * 1 = num`` (bellperson's ``multipack::pack_bits``). Returns the variable."""
    lc = bits_lc(cs, list(bits)[:capacity(cs)])
    num = cs.private(lc.value)
    cs.enforce(lc, cs.one, num, name=name)
    return num


def pack_into_inputs(cs, bits, name: str = "packing constraint") -> list:
    """Public inputs of :func:`capacity` bits each (LSB first), one row ``sum * 1 = input`` per
    input, allocated input then row, chunk by chunk (``multipack::pack_into_inputs``)."""
    bits = list(bits)
    out = []
    step = capacity(cs)
    for j in range(0, len(bits), step):
        lc = bits_lc(cs, bits[j:j + step])
        x = cs.public(lc.value)
        cs.enforce(lc, cs.one, x, name=f"{name} {j // step}")
        out.append(x)
    return out
