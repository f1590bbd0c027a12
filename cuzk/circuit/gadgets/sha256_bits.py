"""bellperson's SHA-256 gadget over bare bits, row for row: cuzk's one SHA-256 circuit.

The gadget is bellpepper's: message words as ``UInt32`` of 32 bits (least significant first),
``Boolean`` constant folding (a constant operand costs nothing; ``xor`` with ``true`` is a
negation), ``sha256_ch`` / ``sha256_maj`` with their special cases, and ``UInt32::addmany``
whose sum equalities are batched by a ``MultiEq`` into one row per capacity bits (254 on
BLS12-381), the pending row written when the next one would overflow and at the end of the
compression. Rows and variables come in bellpepper's order and A/B/C orientation.

A bit is a Python ``bool`` (constant), an allocated :class:`~cuzk.circuit.Variable` (``Is``) or
a :class:`Not` of one: no wrapper objects, and rows written through the constraint system's
lean paths, because a PoRep partition traces millions of them. The public
:class:`~cuzk.circuit.gadgets.bit.Boolean` gadget (:mod:`cuzk.circuit.gadgets.sha256`)
converts at its edges and runs this compression. :func:`sha256` pads the message and runs the
compressions; with a :class:`~cuzk.circuit.template_cache.TemplateCache` each one is stamped
from a template keyed by the constant/variable pattern of its 768 input bits, so the 19
identical compressions of a PoRep label, or the two of every tree-D level, are traced once.

    >>> import hashlib
    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> out = sha256(cs, [b == "1" for b in format(int.from_bytes(b"abc", "big"), "024b")])
    >>> cs.n_constraints, [type(b).__name__ for b in out[:1]]   # constant message: all folded
    (0, ['bool'])
"""

from __future__ import annotations

from cuzk.circuit.lc import LinearCombination, Variable
from cuzk.circuit.gadgets.bit import Not, add_bare_bit, bare_ch, bare_maj, bare_xor
from cuzk.circuit.gadgets.multieq import MultiEq
from cuzk.circuit.template_cache import TemplateCache
from cuzk.errors import CircuitError

__all__ = ["Not", "UInt32", "sha256", "compress", "compress_cached", "padding", "ROUND_CONSTANTS", "IV"]

# FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes
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
# FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes
IV = (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)


# The bit operations (bellpepper's constant folding and rows) are cuzk.circuit.gadgets.bit's bare
# ones, which the Boolean gadget also calls.

def _alloc_bit(cs, slot: int, name=None):
    """An allocated bit's row ``(1 - b) * b = 0`` for a bit whose witness is register ``slot``."""
    b = cs._private_at(slot)
    k = b.index
    cs._enforce_terms({0: 1, k: cs.modulus - 1}, {k: 1}, {}, name)
    return b


# -- UInt32 (its sums batched by cuzk.circuit.gadgets.multieq.MultiEq) ----------------------------

class UInt32:
    """32 bits, least significant first (bellpepper's ``UInt32``)."""

    __slots__ = ("bits",)

    def __init__(self, bits):
        self.bits = list(bits)

    @classmethod
    def constant(cls, v: int) -> "UInt32":
        return cls([bool(v >> i & 1) for i in range(32)])

    @classmethod
    def from_bits_be(cls, bits) -> "UInt32":
        return cls(reversed(bits))

    def bits_be(self) -> list:
        return self.bits[::-1]

    def rotr(self, by: int) -> "UInt32":
        by %= 32
        return UInt32(self.bits[by:] + self.bits[:by])

    def shr(self, by: int) -> "UInt32":
        return UInt32(self.bits[by:] + [False] * by)

    def xor(self, cs, other: "UInt32") -> "UInt32":
        return UInt32([bare_xor(cs, a, b) for a, b in zip(self.bits, other.bits)])

    @staticmethod
    def ch(cs, a, b, c) -> "UInt32":
        return UInt32([bare_ch(cs, x, y, z) for x, y, z in zip(a.bits, b.bits, c.bits)])

    @staticmethod
    def maj(cs, a, b, c) -> "UInt32":
        return UInt32([bare_maj(cs, x, y, z) for x, y, z in zip(a.bits, b.bits, c.bits)])

    @staticmethod
    def addmany(cs, meq: MultiEq, operands, name: str = "result bit") -> "UInt32":
        """The sum mod 2^32: result bits allocated (carries included, rows ``name i``), then one
        MultiEq equality; all-constant operands give a constant and no row."""
        r = cs.modulus
        terms, all_const = {}, True
        for op in operands:
            for i, b in enumerate(op.bits):
                add_bare_bit(terms, b, 1 << i, r)
                all_const = all_const and isinstance(b, bool)
        if all_const:
            return UInt32.constant(terms.get(0, 0) % (1 << 32))
        terms = {k: v for k, v in terms.items() if v}
        total = LinearCombination(cs, terms).value
        n = (len(operands) * 0xFFFFFFFF).bit_length()
        out = [_alloc_bit(cs, v.slot, f"{name} {i}") for i, v in enumerate(total.bits(n))]
        meq.enforce_equal(n, terms, {b.index: 1 << i for i, b in enumerate(out)})
        return UInt32(out[:32])


# -- the compression function and the padded hash ----------------------------------------------

def compress(cs, block, state):
    """One SHA-256 compression of 512 message bits (big-endian words) into 8 UInt32 state words."""
    if len(block) != 512 or len(state) != 8:
        raise CircuitError("a SHA-256 compression takes 512 message bits and 8 state words")
    w = [UInt32.from_bits_be(block[i:i + 32]) for i in range(0, 512, 32)]
    meq = MultiEq(cs)
    for i in range(16, 64):
        s0 = w[i - 15].rotr(7).xor(cs, w[i - 15].rotr(18)).xor(cs, w[i - 15].shr(3))
        s1 = w[i - 2].rotr(17).xor(cs, w[i - 2].rotr(19)).xor(cs, w[i - 2].shr(10))
        w.append(UInt32.addmany(cs, meq, [w[i - 16], s0, w[i - 7], s1]))
    # a and e are deferred sums ("Maybe::Deferred"): added up only when next read
    a, b, c, d = [state[0]], state[1], state[2], state[3]
    e, f, g, h = [state[4]], state[5], state[6], state[7]

    def compute(x, others=()):
        if len(x) == 1 and not others:
            return x[0]
        return UInt32.addmany(cs, meq, x + list(others))

    for i in range(64):
        new_e = compute(e)
        s1 = new_e.rotr(6).xor(cs, new_e.rotr(11)).xor(cs, new_e.rotr(25))
        ch = UInt32.ch(cs, new_e, f, g)
        temp1 = [h, s1, ch, UInt32.constant(ROUND_CONSTANTS[i]), w[i]]
        new_a = compute(a)
        s0 = new_a.rotr(2).xor(cs, new_a.rotr(13)).xor(cs, new_a.rotr(22))
        maj = UInt32.maj(cs, new_a, b, c)
        h, g, f = g, f, new_e
        e = temp1 + [d]
        d, c, b = c, b, new_a
        a = temp1 + [s0, maj]
    out = [compute(a, [state[0]])]
    out += [UInt32.addmany(cs, meq, [state[1 + j], x]) for j, x in enumerate((b, c, d))]
    out.append(compute(e, [state[4]]))
    out += [UInt32.addmany(cs, meq, [state[5 + j], x]) for j, x in enumerate((f, g, h))]
    meq.close()  # MultiEq's drop at the end of the compression
    return out


def _code(b):
    if isinstance(b, bool):
        return b
    return "n" if isinstance(b, Not) else "v"


def _stamped_compress(cs, pattern, variables):
    """The template side of :func:`compress_cached`: rebuild the bits, compress, flatten."""
    it = iter(variables)
    bits = [p if isinstance(p, bool) else (Not(next(it)) if p == "n" else next(it)) for p in pattern]
    state = [UInt32(bits[512 + 32 * j:512 + 32 * (j + 1)]) for j in range(8)]
    out = compress(cs, bits[:512], state)
    flat = [b for word in out for b in word.bits]
    if not all(type(b) is Variable for b in flat):
        raise CircuitError("a stamped compression must end in allocated state bits")
    return flat


def compress_cached(cs, cache: TemplateCache, block, state):
    """:func:`compress`, stamped from ``cache``'s template of this input pattern (traced on the
    first call of a pattern): the same rows, variables and witness. An all-constant input folds
    to constant words with no row, so it is compressed in place (nothing to stamp)."""
    bits = list(block) + [b for word in state for b in word.bits]
    variables = [b.var if isinstance(b, Not) else b for b in bits if not isinstance(b, bool)]
    if not variables:
        return compress(cs, block, state)
    pattern = tuple(_code(b) for b in bits)
    flat = cache.call(cs, _stamped_compress, pattern, variables)
    return [UInt32(flat[32 * j:32 * (j + 1)]) for j in range(8)]


def padding(n_bits: int) -> list:
    """The constant bits after an ``n_bits``-bit message: a one, zeros up to 448 mod 512, and
    the length as a 64-bit big-endian number."""
    pad = [True] + [False] * ((448 - (n_bits + 1)) % 512)
    return pad + [bool(n_bits >> i & 1) for i in range(63, -1, -1)]


def sha256(cs, bits, cache: TemplateCache | None = None, name: str | None = None) -> list:
    """bellpepper's ``sha256``: pad ``bits`` (a whole number of bytes), compress block by block
    from the IV; returns the 256 digest bits, big-endian. Block ``k`` runs in the namespace
    ``block k`` (under ``name`` when given). With ``cache`` each compression with an allocated
    input is stamped from a cached template (same rows, variables and witness)."""
    if len(bits) % 8:
        raise CircuitError(f"sha256 takes whole bytes, got {len(bits)} bits")
    padded = list(bits) + padding(len(bits))
    cur = [UInt32.constant(v) for v in IV]
    for k in range(0, len(padded), 512):
        block = padded[k:k + 512]
        with cs.namespace(f"block {k // 512}" if name is None else f"{name}/block {k // 512}"):
            cur = compress(cs, block, cur) if cache is None else compress_cached(cs, cache, block, cur)
    return [b for word in cur for b in word.bits_be()]
