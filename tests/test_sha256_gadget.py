"""SHA-256 in bellperson's construction (cuzk/circuit/gadgets/{bit,uint32,multieq,sha256,num}.py)
and Filecoin's trimmed helpers (cuzk/circuits/filecoin/sha256_circuit.py): bellperson's and
storage-proofs-core's row counts, digests against hashlib and the NIST vectors, the folding of
constants, the rows' exact terms and unsatisfiable witnesses."""

import functools
import hashlib
import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.circuit import Circuit, ConstraintSystem
from cuzk.circuit.gadgets import sha256
from cuzk.circuit.gadgets.bit import CONSTANT, AllocatedBit, Boolean
from cuzk.circuit.gadgets.multieq import MultiEq
from cuzk.circuit.gadgets.num import alloc_num, inputize, pack_bits, pack_into_inputs, to_bits_le
from cuzk.circuit.gadgets.sha256 import IV, ROUND_CONSTANTS, sha256_block_no_padding, sha256_compression_function, sha256_iv
from cuzk.circuit.gadgets.uint32 import UInt32
from cuzk.circuits.filecoin.sha256_circuit import hash2, hash_leaf_bits, reverse_bit_numbering, sha256_trimmed, sha256_trimmed_fr
from cuzk.errors import CircuitError, UnsatisfiedConstraint
from cuzk.synth import Synthesizer

R = ConstraintSystem().modulus


def be_bits(data: bytes) -> list:
    return [(x >> (7 - i)) & 1 for x in data for i in range(8)]


def le_bits(data: bytes) -> list:
    return [(x >> i) & 1 for x in data for i in range(8)]


def bits_to_bytes_be(bits) -> bytes:
    return bytes(int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8))


def _primes(n):
    out, k = [], 2
    while len(out) < n:
        if all(k % p for p in out):
            out.append(k)
        k += 1
    return out


def _icbrt(x):
    y = 1 << ((x.bit_length() + 2) // 3)
    while True:
        z = (2 * y + x // (y * y)) // 3
        if z >= y:
            return y
        y = z


def test_constants_are_the_roots_of_the_primes():
    import math

    primes = _primes(64)
    assert ROUND_CONSTANTS == tuple(_icbrt(p << 96) & 0xFFFFFFFF for p in primes)
    assert IV == tuple(math.isqrt(p << 64) & 0xFFFFFFFF for p in primes[:8])


# -- bellperson's / storage-proofs-core's counts -------------------------------------------

def _alloc_bits(cs, n, seed=0):
    rng = random.Random(seed)
    return [Boolean.alloc(cs, rng.getrandbits(1)) for _ in range(n)]


def test_compression_of_allocated_block_costs_25840():
    cs = ConstraintSystem()
    bits = _alloc_bits(cs, 512)
    sha256_compression_function(cs, bits, sha256_iv())
    assert cs.n_constraints - 512 == 25840


def test_sha256_of_512_allocated_bits_costs_44874():
    cs = ConstraintSystem()
    out = sha256(cs, _alloc_bits(cs, 512))
    assert len(out) == 256 and cs.n_constraints - 512 == 44874


def test_hash_leaf_bits_costs_45387():
    cs = ConstraintSystem()
    left, right = _alloc_bits(cs, 256, 1), _alloc_bits(cs, 256, 2)
    hash_leaf_bits(cs, left, right)
    assert cs.n_constraints == 45387


def test_constant_block_folds_to_nothing():
    cs = ConstraintSystem()
    block = [Boolean.constant(i == 0) for i in range(512)]  # the padded empty message
    out = [b for w in sha256_compression_function(cs, block, sha256_iv()) for b in w.into_bits_be()]
    assert cs.n_constraints == 0 and cs.n_private == 0
    assert all(b.kind is CONSTANT for b in out)
    assert bits_to_bytes_be([int(b.bit) for b in out]) == hashlib.sha256(b"").digest()


@pytest.mark.parametrize("msg", [b"", b"abc", b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"])
def test_constant_messages_fold_and_match_nist(msg):
    cs = ConstraintSystem()
    out = sha256(cs, [Boolean.constant(b) for b in be_bits(msg)])
    assert cs.n_constraints == 0
    assert bits_to_bytes_be([int(b.bit) for b in out]) == hashlib.sha256(msg).digest()


# -- digests through the Synthesizer -------------------------------------------------------

class Sha(Circuit):
    """SHA-256 of ``n`` allocated bytes; the digest bits become public inputs."""

    def __init__(self, n):
        self.n = n

    def input_shapes(self):
        return {"bits": (8 * self.n,)}

    def define(self, cs, bits):
        for b in sha256(cs, [Boolean.alloc(cs, v) for v in bits]):
            cs.public(b.lc(cs))


@functools.cache
def sha_synth(n):
    return Synthesizer(Sha(n), check=True)


def circuit_digest(data: bytes) -> bytes:
    return bits_to_bytes_be(sha_synth(len(data)).synthesize(bits=be_bits(data)).public_inputs)


NIST = [
    (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
]


@pytest.mark.parametrize("msg,hexdigest", NIST)
def test_nist_vectors(msg, hexdigest):
    assert circuit_digest(msg).hex() == hexdigest


@pytest.mark.parametrize("n", [1, 55, 64])
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_digest_equals_hashlib(n, data):
    msg = data.draw(st.binary(min_size=n, max_size=n))
    assert circuit_digest(msg) == hashlib.sha256(msg).digest()


def test_block_no_padding_is_one_compression():
    class Block(Circuit):
        def input_shapes(self):
            return {"bits": (512,)}

        def define(self, cs, bits):
            for b in sha256_block_no_padding(cs, [Boolean.alloc(cs, v) for v in bits]):
                cs.public(b.lc(cs))

    msg = bytes(range(64))
    w = Synthesizer(Block(), check=True).synthesize(bits=be_bits(msg))
    # the padded one-block message "a" is one compression of its padded block
    padded = b"a" + b"\x80" + b"\x00" * 61 + b"\x08"
    w2 = Synthesizer(Block(), check=True).synthesize(bits=be_bits(padded))
    assert bits_to_bytes_be(w2.public_inputs) == hashlib.sha256(b"a").digest()
    assert bits_to_bytes_be(w.public_inputs) != hashlib.sha256(msg).digest()  # no padding added


class Check(Circuit):
    """SHA-256 of 3 allocated bytes enforced equal to a given digest."""

    def input_shapes(self):
        return {"bits": (24,), "digest": (256,)}

    def define(self, cs, bits, digest):
        out = sha256(cs, [Boolean.alloc(cs, v) for v in bits])
        with cs.namespace("check"):
            for i, (b, d) in enumerate(zip(out, digest)):
                Boolean.enforce_equal(cs, b, Boolean.alloc(cs, d), name=f"digest bit {i}")


def test_wrong_witness_names_the_row():
    s = Synthesizer(Check(), check=True)
    digest = be_bits(hashlib.sha256(b"abc").digest())
    s.synthesize(bits=be_bits(b"abc"), digest=digest)
    flipped = list(digest)
    flipped[77] ^= 1
    with pytest.raises(UnsatisfiedConstraint, match="check/digest bit 77"):
        s.synthesize(bits=be_bits(b"abc"), digest=flipped)
    bad = be_bits(b"abc")
    bad[5] = 2  # not a bit
    with pytest.raises(UnsatisfiedConstraint, match="boolean constraint"):
        s.synthesize(bits=bad, digest=digest)


# -- Filecoin's trimmed helpers ------------------------------------------------------------

def test_trimmed_native():
    d = sha256_trimmed(b"hello")
    full = hashlib.sha256(b"hello").digest()
    assert d[:31] == full[:31] and d[31] == full[31] & 0x3F
    assert sha256_trimmed_fr(b"hello") == int.from_bytes(d, "little") < 1 << 254


class Leaf(Circuit):
    def input_shapes(self):
        return {"left": (256,), "right": (256,)}

    def define(self, cs, left, right):
        with cs.namespace("left"):
            lb = [Boolean.alloc(cs, v) for v in left]
        with cs.namespace("right"):
            rb = [Boolean.alloc(cs, v) for v in right]
        inputize(cs, hash_leaf_bits(cs, lb, rb))


class Hash2(Circuit):
    def define(self, cs, a, b):
        inputize(cs, hash2(cs, alloc_num(cs, a), alloc_num(cs, b)))


def test_filecoin_helpers_equal_the_native_trimmed_hash():
    rng = random.Random(7)
    a, b = rng.randrange(R), rng.randrange(R)
    ab = a.to_bytes(32, "little") + b.to_bytes(32, "little")
    w = Synthesizer(Leaf(), check=True).synthesize(left=le_bits(ab[:32]), right=le_bits(ab[32:]))
    assert w.public_inputs == [sha256_trimmed_fr(ab)]
    s = Synthesizer(Hash2(), check=True)
    # two to_bits_le (255 bits each), sha256, pack, inputize; the two constant pad bits fold rows away
    assert s.r1cs.n_constraints < 2 * 256 + 44874 + 1 + 1
    assert s.synthesize(a=a, b=b).public_inputs == [sha256_trimmed_fr(ab)]


def test_reverse_bit_numbering_pads_then_reverses_bytes():
    bits = [Boolean.constant(v) for v in [1, 0, 0, 0, 0, 0, 0, 0, 1, 1]]
    out = [int(b.bit) for b in reverse_bit_numbering(bits)]
    assert out == [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 1, 1]


# -- rows as bellperson writes them --------------------------------------------------------

def _row(cs, i):
    return cs.a[i], cs.b[i], cs.c[i]


def test_row_terms():
    cs = ConstraintSystem()
    a, b = AllocatedBit.alloc(cs, 1), AllocatedBit.alloc(cs, 0)
    x, y = a.var.index, b.var.index
    assert _row(cs, 0) == ({0: 1, x: R - 1}, {x: 1}, {})  # (1 - a) * a = 0
    v = AllocatedBit.xor(cs, a, b).var.index
    assert _row(cs, 2) == ({x: 2}, {y: 1}, {x: 1, y: 1, v: R - 1})
    v = AllocatedBit.and_not(cs, a, b).var.index
    assert _row(cs, 3) == ({x: 1}, {0: 1, y: R - 1}, {v: 1})
    v = AllocatedBit.nor(cs, a, b).var.index
    assert _row(cs, 4) == ({0: 1, x: R - 1}, {0: 1, y: R - 1}, {v: 1})
    A, B, C = Boolean.is_(a), Boolean.is_(b), Boolean.alloc(cs, 1)
    z = C.bit.var.index
    ch = Boolean.sha256_ch(cs, A, B, C).bit.var.index
    assert _row(cs, 6) == ({y: 1, z: R - 1}, {x: 1}, {ch: 1, z: R - 1})
    n = cs.n_vars
    maj = Boolean.sha256_maj(cs, A, B, C)
    assert maj.bit.var.index == n  # maj before b & c
    assert _row(cs, 7) == ({y: 1}, {z: 1}, {n + 1: 1})
    assert _row(cs, 8) == ({n + 1: 2, y: R - 1, z: R - 1}, {x: 1}, {n + 1: 1, n: R - 1})
    Boolean.enforce_equal(cs, A.not_(), Boolean.constant(True))
    assert _row(cs, 9) == ({}, {}, {x: 1})  # 1 - (1 - a)
    num = alloc_num(cs, 9)
    bits = to_bits_le(cs, num)
    row = cs.c[-1]
    assert cs.a[-1] == cs.b[-1] == {} and row[num.index] == R - 1 and len(row) == 256
    assert [row[b.bit.var.index] for b in bits[:3]] == [1, 2, 4]
    inp = inputize(cs, num)
    assert _row(cs, cs.n_constraints - 1) == ({inp.index: 1}, {0: 1}, {num.index: 1})
    p = pack_bits(cs, [Boolean.constant(True), A.not_(), B])
    assert _row(cs, cs.n_constraints - 1) == ({0: 3, x: R - 2, y: 4}, {0: 1}, {p.index: 1})


KINDS = ("is", "not", "false", "true")


def _operand(cs, kind, bit):
    if kind == "is":
        return Boolean.is_(bit)
    if kind == "not":
        return Boolean.is_(bit).not_()
    return Boolean.constant(kind == "true")


def _plain(kind, v):
    return {"is": v, "not": 1 - v, "false": 0, "true": 1}[kind]


# rows bellperson spends on xor / and: none with a constant operand, else one
def _expected_rows(kinds):
    return 0 if any(k in ("false", "true") for k in kinds) else 1


class Gates(Circuit):
    """Every gate over every mix of operand kinds on three allocated bits; outputs public."""

    def define(self, cs, a, b, c):
        bits = [AllocatedBit.alloc(cs, v) for v in (a, b, c)]
        self.rows = {}
        for op, n in (("xor", 2), ("and", 2), ("ch", 3), ("maj", 3)):
            for kinds in itertools.product(KINDS, repeat=n):
                ops = [_operand(cs, k, bits[i]) for i, k in enumerate(kinds)]
                before = cs.n_constraints
                out = {"xor": Boolean.xor, "and": Boolean.and_, "ch": Boolean.sha256_ch,
                       "maj": Boolean.sha256_maj}[op](cs, *ops)
                rows = cs.n_constraints - before
                self.rows[op, kinds] = rows
                cs.public(out.lc(cs) if not out.is_constant() else cs.constant(int(out.bit)))


def test_gates_truth_tables_and_folding():
    g = Gates()
    s = Synthesizer(g, check=True)
    keys = list(g.rows)
    for op, kinds in keys:
        if op in ("xor", "and"):
            assert g.rows[op, kinds] == _expected_rows(kinds), (op, kinds)
        elif all(k in ("false", "true") for k in kinds):
            assert g.rows[op, kinds] == 0, (op, kinds)
        elif not any(k in ("false", "true") for k in kinds):
            assert g.rows[op, kinds] == (1 if op == "ch" else 2), (op, kinds)  # maj: maj row + b & c
        else:  # one or two constants: at most one and-row (ch with a = true keeps its own row)
            assert g.rows[op, kinds] <= 1, (op, kinds)
    for vals in itertools.product((0, 1), repeat=3):
        got = s.synthesize(a=vals[0], b=vals[1], c=vals[2]).public_inputs
        for (op, kinds), out in zip(keys, got):
            x = [_plain(k, vals[i]) for i, k in enumerate(kinds)]
            want = {"xor": lambda p, q: p ^ q, "and": lambda p, q: p & q,
                    "ch": lambda p, q, r: (p & q) ^ ((1 - p) & r),
                    "maj": lambda p, q, r: (p & q) ^ (p & r) ^ (q & r)}[op](*x)
            assert out == want, (op, kinds, vals)


def test_enforce_equal_of_different_constants_is_refused():
    cs = ConstraintSystem()
    Boolean.enforce_equal(cs, Boolean.constant(True), Boolean.constant(True))
    assert cs.n_constraints == 0
    with pytest.raises(CircuitError, match="never be equal"):
        Boolean.enforce_equal(cs, Boolean.constant(True), Boolean.constant(False))


# -- UInt32 and MultiEq --------------------------------------------------------------------

def test_multieq_flushes_below_capacity():
    cs = ConstraintSystem()
    x = [UInt32.alloc(cs, 1000 * i + 1) for i in range(9)]
    base = cs.n_constraints
    with MultiEq(cs) as eq:
        for i in range(8):  # 33-bit sums: 7 fit below 254 bits (231), the 8th starts a new row
            UInt32.addmany(cs, [x[i], x[i + 1]], eq)
        rows_before_close = [n for n in cs.names[base:] if n and n.startswith("multieq")]
    assert rows_before_close == ["multieq 0"]
    assert [n for n in cs.names[base:] if n and n.startswith("multieq")] == ["multieq 0", "multieq 1"]
    assert cs.n_constraints - base == 8 * 33 + 2


@settings(max_examples=5, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=10), st.integers(0, 31))
def test_uint32_ops_on_constants(words, k):
    cs = ConstraintSystem()
    u = [UInt32.constant(w) for w in words]
    a, b, c = words[0], words[1], words[-1]
    M = 0xFFFFFFFF
    assert UInt32.addmany(cs, u, None).value == sum(words) & M
    assert u[0].rotr(k).value == ((a >> k) | (a << (32 - k))) & M
    assert u[0].shr(k).value == a >> k
    assert u[0].xor(cs, u[1]).value == a ^ b
    assert UInt32.sha256_ch(cs, u[0], u[1], u[-1]).value == (a & b) ^ (~a & c & M)
    assert UInt32.sha256_maj(cs, u[0], u[1], u[-1]).value == (a & b) ^ (a & c) ^ (b & c)
    assert UInt32.from_bits_be(u[0].into_bits_be()).value == a
    assert cs.n_constraints == 0


class Add(Circuit):
    def input_shapes(self):
        return {"w": (5,)}

    def define(self, cs, w):
        u = [UInt32.alloc(cs, x) for x in w]
        with MultiEq(cs) as eq:
            s = UInt32.addmany(cs, u + [UInt32.constant(0x80000001)], eq)
        for b in s.into_bits():
            cs.public(b.lc(cs))


def test_addmany_result_and_width():
    s = Synthesizer(Add(), check=True)
    assert s.r1cs.n_constraints == 5 * 32 + 35 + 1 + 32  # six operands: 35 result bits; 32 output rows
    w = [0xFFFFFFFF, 0x12345678, 7, 0xDEADBEEF, 1 << 31]
    bits = s.synthesize(w=w).public_inputs
    assert sum(b << i for i, b in enumerate(bits)) == (sum(w) + 0x80000001) & 0xFFFFFFFF


def test_pack_into_inputs_chunks_of_254():
    class Pack(Circuit):
        def input_shapes(self):
            return {"bits": (300,)}

        def define(self, cs, bits):
            pack_into_inputs(cs, [Boolean.alloc(cs, v) for v in bits])

    rng = random.Random(3)
    bits = [rng.getrandbits(1) for _ in range(300)]
    w = Synthesizer(Pack(), check=True).synthesize(bits=bits)
    assert w.public_inputs == [sum(b << i for i, b in enumerate(bits[:254])),
                               sum(b << i for i, b in enumerate(bits[254:]))]


# -- stamped compressions ------------------------------------------------------------------

class TwoHashes(Circuit):
    """Two hashes of the same 64 allocated bytes, the second with a bit repeated, hand-traced or
    stamped with one shared stamper; both digests public."""

    def __init__(self, stamped):
        self.stamped = stamped

    def input_shapes(self):
        return {"bits": (512,)}

    def define(self, cs, bits):
        from cuzk.circuit.gadgets.sha256_stamp import Sha256Stamper

        b = [Boolean.alloc(cs, v) for v in bits]
        st = Sha256Stamper(cs) if self.stamped else None
        aliased = b[:100] + [b[3]] + b[101:]  # bit 3 twice: another template (aliasing differs)
        for msg in (b, b, aliased):
            for o in (st.sha256(msg) if st else sha256(cs, msg)):
                cs.public(o.lc(cs))
        self.templates = None if st is None else st.traced


def test_stamped_sha256_is_the_hand_traced_circuit():
    hand, stamped = TwoHashes(False), TwoHashes(True)
    s0, s1 = Synthesizer(hand, check=True), Synthesizer(stamped, check=True)
    assert stamped.templates == 3  # message block, padding block, message block with bit 3 twice
    assert s0.r1cs.digest == s1.r1cs.digest
    assert list(s0.r1cs.names[:: 997]) == list(s1.r1cs.names[:: 997])
    msg = bytes(random.Random(5).randrange(256) for _ in range(64))
    w0, w1 = s0.synthesize(bits=be_bits(msg)), s1.synthesize(bits=be_bits(msg))
    assert (w0.z == w1.z).all()
    bits = be_bits(msg)
    aliased = bits[:100] + [bits[3]] + bits[101:]
    want = be_bits(hashlib.sha256(msg).digest()) * 2 + be_bits(hashlib.sha256(bits_to_bytes_be(aliased)).digest())
    assert w1.public_inputs == want


def test_uint64_alloc_orders_and_packing():
    from cuzk.circuit.gadgets.uint64 import UInt64

    class Node(Circuit):
        def define(self, cs, node):
            n = UInt64.alloc(cs, node)
            assert UInt64.from_bits_be(n.to_bits_be()).bits == n.bits
            n.pack_into_input(cs)

    s = Synthesizer(Node(), check=True)
    assert s.r1cs.n_constraints == 64 + 1
    assert s.synthesize(node=(1 << 63) + 12345).public_inputs == [(1 << 63) + 12345]
    c = UInt64.constant(0x0123456789ABCDEF)
    assert UInt64.from_bits(c.to_bits_le()).value == 0x0123456789ABCDEF
    assert [int(b.bit) for b in c.to_bits_be()] == [(0x0123456789ABCDEF >> (63 - i)) & 1 for i in range(64)]


class Challenges(Circuit):
    """Two instances of a 64-byte hash, by hand or as ``cs.repeat`` instances whose template
    stamps its compressions (a stamper inside a stamped template)."""

    def __init__(self, nested):
        self.nested = nested

    def input_shapes(self):
        return {"bits": (2, 256)}

    def define(self, cs, bits):
        from cuzk.circuit.gadgets.sha256_stamp import Sha256Stamper

        def one(cs, vs):
            b = [Boolean.is_(AllocatedBit(v)) for v in vs]
            out = Sha256Stamper(cs).sha256(b + b) if self.nested else sha256(cs, b + b)
            return [o.bit.var for o in out]

        groups = [[Boolean.alloc(cs, v).bit.var for v in row] for row in bits]
        outs = cs.repeat(one, [(g,) for g in groups], name="challenge {i}") if self.nested else [one(cs, g) for g in groups]
        for o in outs:
            for v in o:
                cs.public(v)


def test_stamper_inside_a_repeated_template():
    rng = random.Random(11)
    bits = [[rng.getrandbits(1) for _ in range(256)] for _ in range(2)]
    s0, s1 = Synthesizer(Challenges(False), check=True), Synthesizer(Challenges(True), check=True)
    assert s0.r1cs.digest == s1.r1cs.digest
    w0, w1 = s0.synthesize(bits=bits), s1.synthesize(bits=bits)
    assert (w0.z == w1.z).all()
    for j in range(2):
        msg = bits_to_bytes_be(bits[j] + bits[j])
        assert w1.public_inputs[256 * j:256 * (j + 1)] == be_bits(hashlib.sha256(msg).digest())
