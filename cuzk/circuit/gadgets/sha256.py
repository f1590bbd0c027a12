"""SHA-256 over :class:`~cuzk.circuit.gadgets.bit.Boolean` bits, built as bellperson builds it:
the same message schedule, the same deferred additions (``e := d + temp1`` and
``a := temp1 + temp2`` are summed only where they are next needed, five to seven words in one
``addmany``), one ``MultiEq`` per compression and the padding as constant bits. Rows, their
order and the variable numbering therefore match rust-fil-proofs' circuits: 25,840 rows per
compression of allocated bits, 44,874 for ``sha256`` of 512 allocated bits (two compressions,
the second on constant padding).

The compression is :mod:`cuzk.circuit.gadgets.sha256_bits`' (the one SHA-256 circuit, on bare
bits, which the PoRep circuits call directly); these functions convert Booleans and
:class:`~cuzk.circuit.gadgets.uint32.UInt32` words at their edges.

Bits are big-endian within each byte and bytes in message order, as in the SHA-256 standard;
the digest comes back the same way (256 Booleans).

    >>> import hashlib
    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> out = sha256(cs, [Boolean.constant(b == "1") for b in format(ord("a"), "08b")])
    >>> cs.n_constraints                 # an all-constant message folds completely
    0
    >>> bytes(int("".join("1" if b.bit else "0" for b in out[i:i + 8]), 2) for i in range(0, 256, 8)) \\
    ...     == hashlib.sha256(b"a").digest()
    True
"""

from __future__ import annotations

from cuzk.circuit.gadgets import sha256_bits as _bits
from cuzk.circuit.gadgets.bit import Boolean
from cuzk.circuit.gadgets.sha256_bits import IV, ROUND_CONSTANTS
from cuzk.circuit.gadgets.uint32 import UInt32
from cuzk.errors import CircuitError

__all__ = ["sha256", "sha256_block_no_padding", "sha256_compression_function", "sha256_iv", "sha256_padding",
           "ROUND_CONSTANTS", "IV", "to_bare", "from_bare", "words_to_bare", "words_from_bare"]


def to_bare(bits) -> list:
    """Booleans as :mod:`~cuzk.circuit.gadgets.sha256_bits`' bits (:meth:`Boolean.bare`)."""
    return [b.bare() for b in bits]


def from_bare(bits) -> list:
    """The inverse of :func:`to_bare`."""
    return [Boolean.of_bare(b) for b in bits]


def words_from_bare(words) -> list:
    """Bare-bit words (:class:`cuzk.circuit.gadgets.sha256_bits.UInt32`) as Boolean :class:`UInt32`."""
    return [UInt32.from_bits(from_bare(w.bits)) for w in words]


def words_to_bare(words) -> list:
    """The inverse of :func:`words_from_bare`."""
    return [_bits.UInt32(to_bare(w.bits)) for w in words]


def sha256_iv() -> list:
    """The initial hash value as 8 constant :class:`UInt32` words."""
    return [UInt32.constant(v) for v in IV]


def sha256_padding(n_bits: int) -> list:
    """The constant bits appended to an ``n_bits``-bit message: a one, zeros up to 448 mod 512,
    and the length as a 64-bit big-endian number."""
    return [Boolean.constant(b) for b in _bits.padding(n_bits)]


def sha256(cs, bits) -> list:
    """SHA-256 of ``bits`` (a whole number of bytes, big-endian bits), padded with constants;
    256 Booleans, big-endian. Block ``i`` runs in the namespace ``block i``.

    Raises:
        CircuitError: the length is not a multiple of 8.
    """
    return from_bare(_bits.sha256(cs, to_bare(bits)))


def sha256_block_no_padding(cs, bits) -> list:
    """One compression of exactly 512 bits from the IV, without padding; 256 Booleans."""
    bits = list(bits)
    if len(bits) != 512:
        raise CircuitError(f"sha256_block_no_padding takes 512 bits, got {len(bits)}")
    out = _bits.compress(cs, to_bare(bits), [_bits.UInt32.constant(v) for v in IV])
    return from_bare([b for w in out for b in w.bits_be()])


def sha256_compression_function(cs, input_bits, current_hash) -> list:
    """The compression of one 512-bit block (big-endian words) into ``current_hash`` (8
    :class:`UInt32`); returns the 8 new words.

    Raises:
        CircuitError: not 512 bits or not 8 words.
    """
    input_bits = list(input_bits)
    if len(input_bits) != 512 or len(current_hash) != 8:
        raise CircuitError(f"a compression takes 512 bits and 8 words, got {len(input_bits)} and {len(current_hash)}")
    return words_from_bare(_bits.compress(cs, to_bare(input_bits), words_to_bare(current_hash)))
