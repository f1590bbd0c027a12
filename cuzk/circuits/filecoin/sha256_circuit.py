"""Filecoin's SHA-256 helpers (its ``Sha256Hasher`` and the StackedCircuit's label hash):
the digest trimmed to 254 bits so it is an Fr, natively and in the circuit.

Filecoin reads a 32-byte digest as a little-endian field element after clearing the top two
bits of its last byte. In the circuit the digest comes out of
:func:`cuzk.circuit.gadgets.sha256` big-endian within each byte, so :func:`reverse_bit_numbering`
turns each byte's bits around (giving the little-endian bit order of the whole number) and the
first 254 of them are packed into one number (``pack_bits``). Field elements going in are
decomposed with ``to_bits_le`` (255 bits, padded with a constant zero to 32 bytes) and reversed
per byte the same way, which is their 32-byte little-endian encoding in SHA-256's bit order.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> bits = [Boolean.alloc(cs, (0x01 >> i) & 1) for i in range(8)]   # byte 0x01, LSB first
    >>> [b.kind for b in reverse_bit_numbering(bits)][-1], cs.n_constraints
    ('is', 8)
    >>> sha256_trimmed(b"").hex()[-2:]            # e3b0...b855 with the top two bits cleared
    '15'

``hash_leaf_bits`` of 512 allocated bits costs 45,387 rows in all, as storage-proofs-core counts
it (tests/test_sha256_gadget.py).
"""

from __future__ import annotations

import hashlib

from cuzk.circuit.gadgets.bit import Boolean
from cuzk.circuit.gadgets.num import capacity, pack_bits, to_bits_le
from cuzk.circuit.gadgets.sha256 import sha256
from cuzk.errors import InputError

__all__ = ["reverse_bit_numbering", "hash_circuit", "hash_leaf_bits", "hash2", "hash_multi_leaf",
           "sha256_trimmed", "sha256_trimmed_fr", "bytes_to_fr"]


def reverse_bit_numbering(bits) -> list:
    """Pad to whole bytes with constant zeros, then reverse the bit order within each byte."""
    bits = list(bits)
    bits += [Boolean.constant(False)] * (-len(bits) % 8)
    return [b for i in range(0, len(bits), 8) for b in bits[i:i + 8][::-1]]


def hash_circuit(cs, bits):
    """The trimmed SHA-256 of ``bits`` (big-endian within bytes) as one new private number:
    the digest (namespace ``hash``), per-byte reversed, its first 254 bits packed (``pack_le``)."""
    with cs.namespace("hash"):
        be = sha256(cs, bits)
    with cs.namespace("pack_le"):
        return pack_bits(cs, reverse_bit_numbering(be)[:capacity(cs)])


def hash_leaf_bits(cs, left, right=()):
    """``Sha256Function::hash_leaf_bits_circuit``: ``left`` and ``right`` are little-endian bit
    strings (LSB of each byte first), each padded to whole bytes and reversed per byte, then
    hashed; the trimmed digest as a number."""
    return hash_circuit(cs, reverse_bit_numbering(left) + reverse_bit_numbering(right))


def hash2(cs, a_num, b_num):
    """``Sha256Function::hash2_circuit`` of two allocated numbers: each one's ``to_bits_le``
    (namespaces ``a_bits`` / ``b_bits``), reversed per byte, hashed as 64 bytes."""
    with cs.namespace("a_bits"):
        a = to_bits_le(cs, a_num)
    with cs.namespace("b_bits"):
        b = to_bits_le(cs, b_num)
    return hash_circuit(cs, reverse_bit_numbering(a) + reverse_bit_numbering(b))


def hash_multi_leaf(cs, leaves):
    """``Sha256Function::hash_multi_leaf_circuit``: every leaf's ``to_bits_le`` (namespace
    ``{i}_num_into_bits``) reversed per byte, all hashed together."""
    bits = []
    for i, leaf in enumerate(leaves):
        with cs.namespace(f"{i}_num_into_bits"):
            bits += reverse_bit_numbering(to_bits_le(cs, leaf))
    return hash_circuit(cs, bits)


def sha256_trimmed(data: bytes) -> bytes:
    """SHA-256 of ``data`` with the top two bits of the last byte cleared (a 254-bit
    little-endian field element's 32 bytes), as Filecoin's ``Sha256Function::hash``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError(f"sha256_trimmed takes bytes, got {type(data).__name__}")
    d = bytearray(hashlib.sha256(data).digest())
    d[31] &= 0x3F
    return bytes(d)


def bytes_to_fr(b: bytes) -> int:
    """32 bytes as a little-endian integer (Filecoin's ``Fr::from_repr`` of a trimmed digest)."""
    return int.from_bytes(b, "little")


def sha256_trimmed_fr(data: bytes) -> int:
    """:func:`sha256_trimmed` as the field element it encodes (an int below 2^254)."""
    return bytes_to_fr(sha256_trimmed(data))
