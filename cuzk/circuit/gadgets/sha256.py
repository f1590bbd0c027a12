"""SHA-256 over :class:`~cuzk.circuit.gadgets.bit.Boolean` bits, built as bellperson builds it:
the same message schedule, the same deferred additions (``e := d + temp1`` and
``a := temp1 + temp2`` are summed only where they are next needed, five to seven words in one
``addmany``), one :class:`~cuzk.circuit.gadgets.multieq.MultiEq` per compression and the padding
as constant bits. Rows, their order and the variable numbering therefore match rust-fil-proofs'
circuits: 25,840 rows per compression of allocated bits, 44,874 for ``sha256`` of 512 allocated
bits (two compressions, the second on constant padding).

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

from cuzk.circuit.gadgets.bit import Boolean
from cuzk.circuit.gadgets.multieq import MultiEq
from cuzk.circuit.gadgets.uint32 import UInt32
from cuzk.errors import CircuitError

__all__ = ["sha256", "sha256_block_no_padding", "sha256_compression_function", "sha256_iv", "sha256_padding",
           "ROUND_CONSTANTS", "IV"]

# FIPS 180-4, section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
# first 64 primes (tests/test_sha256_gadget.py recomputes them)
ROUND_CONSTANTS = (
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
)

# FIPS 180-4, section 5.3.3: the first 32 bits of the fractional parts of the square roots of
# the first 8 primes
IV = (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)


def sha256_iv() -> list:
    """The initial hash value as 8 constant :class:`UInt32` words."""
    return [UInt32.constant(v) for v in IV]


def sha256_padding(n_bits: int) -> list:
    """The constant bits appended to an ``n_bits``-bit message: a one, zeros up to 448 mod 512,
    and the length as a 64-bit big-endian number."""
    pad = [Boolean.constant(True)]
    pad += [Boolean.constant(False)] * ((448 - (n_bits + 1)) % 512)
    pad += [Boolean.constant((n_bits >> i) & 1) for i in range(63, -1, -1)]
    return pad


def sha256(cs, bits) -> list:
    """SHA-256 of ``bits`` (a whole number of bytes, big-endian bits), padded with constants;
    256 Booleans, big-endian. Block ``i`` runs in the namespace ``block i``.

    Raises:
        CircuitError: the length is not a multiple of 8.
    """
    bits = list(bits)
    if len(bits) % 8:
        raise CircuitError(f"sha256 takes whole bytes, got {len(bits)} bits")
    padded = bits + sha256_padding(len(bits))
    cur = sha256_iv()
    for i in range(0, len(padded), 512):
        with cs.namespace(f"block {i // 512}"):
            cur = sha256_compression_function(cs, padded[i:i + 512], cur)
    return [b for w in cur for b in w.into_bits_be()]


def sha256_block_no_padding(cs, bits) -> list:
    """One compression of exactly 512 bits from the IV, without padding; 256 Booleans."""
    bits = list(bits)
    if len(bits) != 512:
        raise CircuitError(f"sha256_block_no_padding takes 512 bits, got {len(bits)}")
    return [b for w in sha256_compression_function(cs, bits, sha256_iv()) for b in w.into_bits_be()]


def _sigma(cs, x: UInt32, r1: int, r2: int, third: UInt32, tag: str) -> UInt32:
    s = x.rotr(r1).xor(cs, x.rotr(r2), f"first xor for {tag}")
    return s.xor(cs, third, f"second xor for {tag}")


def sha256_compression_function(cs, input_bits, current_hash) -> list:
    """The compression of one 512-bit block (big-endian words) into ``current_hash`` (8
    :class:`UInt32`); returns the 8 new words.

    Raises:
        CircuitError: not 512 bits or not 8 words.
    """
    input_bits = list(input_bits)
    if len(input_bits) != 512 or len(current_hash) != 8:
        raise CircuitError(f"a compression takes 512 bits and 8 words, got {len(input_bits)} and {len(current_hash)}")
    w = [UInt32.from_bits_be(input_bits[i:i + 32]) for i in range(0, 512, 32)]
    with MultiEq(cs) as eq:
        for i in range(16, 64):
            with cs.namespace(f"w extension {i}"):
                x = w[i - 15]
                s0 = _sigma(cs, x, 7, 18, x.shr(3), "s0")
                x = w[i - 2]
                s1 = _sigma(cs, x, 17, 19, x.shr(10), "s1")
                w.append(UInt32.addmany(cs, [w[i - 16], s0, w[i - 7], s1], eq))

        # a and e are sums not yet computed (lists of words) or words; see the module docstring
        a, b, c, d, e, f, g, h = current_hash
        for i in range(64):
            with cs.namespace(f"compression round {i}"):
                new_e = UInt32.addmany(cs, e, eq) if isinstance(e, list) else e
                s1 = _sigma(cs, new_e, 6, 11, new_e.rotr(25), "s1")
                ch = UInt32.sha256_ch(cs, new_e, f, g)
                temp1 = [h, s1, ch, UInt32.constant(ROUND_CONSTANTS[i]), w[i]]
                new_a = UInt32.addmany(cs, a, eq) if isinstance(a, list) else a
                s0 = _sigma(cs, new_a, 2, 13, new_a.rotr(22), "s0")
                maj = UInt32.sha256_maj(cs, new_a, b, c)
                h, g, f = g, f, new_e
                e = temp1 + [d]
                d, c, b = c, b, new_a
                a = temp1 + [s0, maj]

        def finish(x, iv, tag):
            # a deferred sum takes the old word last, a word is added after it (bellperson's order)
            ops = x + [iv] if isinstance(x, list) else [iv, x]
            with cs.namespace(tag):
                return UInt32.addmany(cs, ops, eq)

        hv = current_hash
        out = [finish(a, hv[0], "deferred h0 computation"), finish(b, hv[1], "new h1"),
               finish(c, hv[2], "new h2"), finish(d, hv[3], "new h3"),
               finish(e, hv[4], "deferred h4 computation"), finish(f, hv[5], "new h5"),
               finish(g, hv[6], "new h6"), finish(h, hv[7], "new h7")]
    return out
