"""Gadgets (boolean, bits, is_zero/is_equal, Merkle paths) and the porep_like circuit."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.circuit import Circuit
from cuzk.circuit.gadgets import (
    and_, from_bits, is_equal, is_zero, merkle_root, merkle_root_native, not_, or_, poseidon_hash, select,
    to_bits, xor,
)
from cuzk.circuits import porep_like
from cuzk.errors import CircuitError, UnsatisfiedConstraint
from cuzk.field import FR
from cuzk.synth import Synthesizer

R = FR.modulus


class BoolOps(Circuit):
    def define(self, cs, a, b, x, y):
        a, b, x, y = (cs.private(v) for v in (a, b, x, y))
        cs.assert_bool(a)
        cs.assert_bool(b)
        for out in (and_(a, b), or_(a, b), xor(a, b), not_(a), select(a, x, y)):
            cs.public(out)


def test_boolean_gadgets_truth_table():
    s = Synthesizer(BoolOps(), check=True)
    for a, b in itertools.product((0, 1), repeat=2):
        assert s.synthesize(a=a, b=b, x=7, y=9).public_inputs == [a & b, a | b, a ^ b, 1 - a, 7 if a else 9]
    with pytest.raises(UnsatisfiedConstraint):
        s.synthesize(a=2, b=0, x=7, y=9)


class Bits(Circuit):
    def __init__(self, n):
        self.n = n

    def define(self, cs, x):
        bits = to_bits(cs, cs.private(x), self.n)
        for bit in bits:
            cs.public(bit)
        cs.public(from_bits(cs, bits))


@pytest.mark.parametrize("n", [1, 8, 64, 254])
def test_to_bits_range_check(n):
    s = Synthesizer(Bits(n), check=True)
    assert s.r1cs.n_constraints >= n + 1
    for x in {0, 1, (1 << n) - 1, (1 << n) // 3}:
        assert s.synthesize(x=x).public_inputs == [(x >> i) & 1 for i in range(n)] + [x]
    if (1 << n) < R:
        with pytest.raises(UnsatisfiedConstraint, match="recompose"):
            s.synthesize(x=1 << n)  # out of range: the hinted bits cannot recompose x


def test_to_bits_rejects_unsound_width():
    class Wide(Circuit):
        def define(self, cs, x):
            to_bits(cs, cs.private(x), 255)

    with pytest.raises(CircuitError):
        Synthesizer(Wide())


class Zero(Circuit):
    def define(self, cs, x, y):
        x, y = cs.private(x), cs.private(y)
        cs.public(is_zero(cs, x))
        cs.public(is_equal(cs, x, y))


@settings(max_examples=20)
@given(st.sampled_from([0, 1, R - 1]) | st.integers(0, R - 1), st.sampled_from([0, 1]) | st.integers(0, R - 1))
def test_is_zero_is_equal(x, y):
    s = _zero_synth()
    assert s.synthesize(x=x, y=y).public_inputs == [int(x == 0), int(x == y)]
    assert s.synthesize(x=x, y=x).public_inputs[1] == 1


_cache = {}


def _zero_synth():
    if "z" not in _cache:
        _cache["z"] = Synthesizer(Zero(), check=True)
    return _cache["z"]


class Path(Circuit):
    def __init__(self, depth, arity):
        self.depth, self.arity = depth, arity

    def input_shapes(self):
        return {"leaf": (), "index": (), "path": (self.depth, self.arity - 1)}

    def define(self, cs, leaf, index, path):
        bits = to_bits(cs, cs.private(index), {2: 1, 8: 3}[self.arity] * self.depth)
        p = [[cs.private(s) for s in level] for level in path]
        cs.public(merkle_root(cs, cs.private(leaf), p, bits, self.arity))


@pytest.mark.parametrize("arity, depth", [(2, 3), (8, 2)])
def test_merkle_gadget_matches_native(arity, depth):
    s = Synthesizer(Path(depth, arity), check=True)
    leaves = [(i * 7 + 3) ** 3 % R for i in range(arity ** depth)]
    levels = [leaves]
    while len(levels[-1]) > 1:
        prev = levels[-1]
        levels.append([poseidon_hash(prev[i:i + arity]) for i in range(0, len(prev), arity)])
    root = levels[-1][0]
    for index in (0, 1, arity ** depth - 1, (arity ** depth) // 2 + 1):
        path = []
        for lv in range(depth):
            pos = index // arity ** lv
            base = pos - pos % arity
            path.append([levels[lv][base + j] for j in range(arity) if base + j != pos])
        assert merkle_root_native(leaves[index], index, path, arity) == root
        assert s.synthesize(leaf=leaves[index], index=index, path=path).public_inputs == [root]


def test_porep_like_shapes_and_sizes():
    with pytest.raises(CircuitError):
        porep_like(leaves=12, challenges=1)
    with pytest.raises(CircuitError):
        porep_like(leaves=8, challenges=0)
    with pytest.raises(CircuitError):
        porep_like(leaves=8, challenges=1, arity=4)
    s1 = Synthesizer(porep_like(leaves=16, challenges=1))
    s2 = Synthesizer(porep_like(leaves=16, challenges=2))
    per = s2.r1cs.n_constraints - s1.r1cs.n_constraints
    assert 5 * 250 < per < 5 * 300  # (depth + 1) hashes and a range check per challenge


@pytest.mark.parametrize("arity, leaves", [(2, 16), (8, 64)])
def test_porep_like_sample_inputs_are_valid_and_distinct(arity, leaves):
    c = porep_like(leaves=leaves, challenges=3, arity=arity)
    s = Synthesizer(c, check=True)
    seen = set()
    for seed in range(3):
        inp = c.sample_inputs(seed)
        assert c.sample_inputs(seed) == inp  # deterministic
        w = s.synthesize(**inp)
        assert w.public_inputs == [inp["root"], inp["comm"], *inp["challenges"]]
        seen.add(inp["root"])
    assert len(seen) == 3


def test_gadget_misuse_is_a_circuit_error_naming_the_argument():
    from cuzk.circuit import ConstraintSystem
    from cuzk.circuit.gadgets import poseidon

    cs = ConstraintSystem()
    x = cs.private(3)
    for call, what in ((lambda: from_bits(cs, 5), "from_bits"), (lambda: poseidon(cs, 5), "poseidon inputs"),
                       (lambda: merkle_root(cs, x, 5, []), "merkle path"),
                       (lambda: merkle_root(cs, x, [5], [x]), "merkle path level 0"),
                       (lambda: merkle_root(cs, x, [[x]], 7), "index bits")):
        with pytest.raises(CircuitError, match=what):
            call()
    path = [[11], [12]]  # depth 2, arity 2: indices 0..3
    assert merkle_root_native(5, 3, path) != merkle_root_native(5, 2, path)
    for bad in (-1, 4, 1.0, True, "1"):  # another index would silently give another root
        with pytest.raises(CircuitError, match=r"leaf index must be an int in \[0, 4\)"):
            merkle_root_native(5, bad, path)
    with pytest.raises(CircuitError, match="merkle path"):
        merkle_root_native(5, 0, 11)
