"""bellperson's number and bit gadgets as the PoRep circuit uses them, row for row.

A *bit* here is either an allocated :class:`~cuzk.circuit.Variable` constrained to {0, 1} or a
Python ``bool`` (bellperson's ``Boolean::Constant``); the circuit never needs a negated bit.
Each gadget allocates and constrains in bellperson's order and with its A/B/C orientation:

* :func:`alloc_bit` — one variable, row ``(1 - b) * b = 0`` (``AllocatedBit::alloc``);
* :func:`inputize` — a public copy ``x'`` of ``x``, row ``x' * 1 = x``;
* :func:`to_bits_le` — 255 bits, then ``0 * 0 = sum 2^i b_i - x`` (the non-strict unpacking);
* :func:`pack_bits` — ``sum 2^i b_i * 1 = v`` for a new private ``v`` (``multipack::pack_bits``);
* :func:`pack_into_inputs` — the same against a new public input per 254 bits;
* :func:`add` — ``(a + b) * 1 = s`` (rust-fil-proofs' ``constraint::add``, the encoding).

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> x = cs.private(5)
    >>> bits = to_bits_le(cs, x)
    >>> len(bits), cs.n_constraints                    # 255 booleanity rows + the unpacking row
    (255, 256)
    >>> cs.a[-1], cs.b[-1], len(cs.c[-1])
    ({}, {}, 256)
    >>> y = pack_bits(cs, reverse_bit_numbering(bits)[:8]); cs.n_constraints
    257
"""

from __future__ import annotations

from cuzk.circuit.lc import LinearCombination, lincomb
from cuzk.errors import CircuitError

__all__ = [
    "NUM_BITS", "CAPACITY", "alloc_bit", "alloc_bits", "inputize", "to_bits_le", "bits_lc",
    "pack_bits", "pack_into_inputs", "reverse_bit_numbering", "enforce_equal", "add",
]

NUM_BITS = 255  # BLS12-381 Fr's bit length: bits of a field element's unpacking
CAPACITY = 254  # bits that always fit below r: bits per packed input


def alloc_bit(cs, value, name: str | None = None):
    """An allocated bit with witness ``value`` and bellperson's booleanity row ``(1 - b) * b = 0``."""
    b = cs.private(value, name=name)
    cs.enforce(lincomb(((1, cs.one), (-1, b)), materialize=False), b, 0, name=name)
    return b


def alloc_bits(cs, value, n: int, name: str = "bit") -> list:
    """The ``n`` low bits of the witness ``value`` (least significant first) as allocated bits."""
    return [alloc_bit(cs, v, name=f"{name} {i}") for i, v in enumerate(value.bits(n))]


def inputize(cs, x, name: str | None = None):
    """A public input equal to the variable ``x`` (``AllocatedNum::inputize``: ``input * 1 = x``)."""
    inp = cs.public(x.value, name=name)
    cs.enforce(inp, cs.one, x, name=name)
    return inp


def bits_lc(cs, bits) -> LinearCombination:
    """``sum 2^i bits[i]`` (constant bits go to the ONE term); never materialized."""
    pairs, const = [], 0
    for i, b in enumerate(bits):
        if isinstance(b, bool):
            const += b << i
        elif isinstance(b, LinearCombination):
            pairs.append((1 << i, b))
        else:
            raise CircuitError(f"bit {i} is a {type(b).__name__}: expected an allocated bit or a bool")
    if const:
        pairs.append((const, cs.one))
    if not pairs:
        return cs.constant(0)
    return lincomb(pairs, materialize=False)


def to_bits_le(cs, x, name: str = "bits") -> list:
    """``x``'s 255 bits, least significant first (``AllocatedNum::to_bits_le``: allocated bits,
    then ``0 * 0 = sum 2^i b_i - x``; like bellperson's, it does not rule out ``x + r``)."""
    bits = alloc_bits(cs, x.value, NUM_BITS, name=f"{name}/bit")
    lc = lincomb(((1, bits_lc(cs, bits)), (-1, x)), materialize=False)
    cs.enforce(0, 0, lc, name=f"{name}/unpacking constraint")
    return bits


def pack_bits(cs, bits, name: str = "pack"):
    """A new private variable equal to ``sum 2^i bits[i]`` over at most 254 bits."""
    if len(bits) > CAPACITY:
        raise CircuitError(f"pack_bits takes at most {CAPACITY} bits, got {len(bits)}")
    return cs.private(bits_lc(cs, bits), name=f"{name}/packing constraint")


def pack_into_inputs(cs, bits, name: str = "path") -> list:
    """One public input per 254 bits, each ``sum 2^i bits[i] * 1 = input`` (``multipack``)."""
    return [cs.public(bits_lc(cs, bits[k:k + CAPACITY]), name=f"{name}/packing constraint {k // CAPACITY}")
            for k in range(0, len(bits), CAPACITY)]


def reverse_bit_numbering(bits) -> list:
    """Pad ``bits`` with False to whole bytes and reverse the bit order inside each byte."""
    bits = list(bits) + [False] * (-len(bits) % 8)
    return [b for k in range(0, len(bits), 8) for b in reversed(bits[k:k + 8])]


def enforce_equal(cs, a, b, name: str | None = None) -> None:
    """``a * 1 = b`` (rust-fil-proofs' ``constraint::equal``)."""
    cs.enforce(a, cs.one, b, name=name)


def add(cs, a, b, name: str = "add"):
    """A new variable ``s = a + b`` and the row ``(a + b) * 1 = s`` (``constraint::add``)."""
    s = cs.private(a.value + b.value, name=name)
    cs.enforce(lincomb(((1, a), (1, b)), materialize=False), cs.one, s, name=f"{name}/sum constraint")
    return s
