"""The PoRep StackedCircuit against rust-fil-proofs: constraint and input counts of its circuit
tests (storage-proofs-porep/tests/stacked_circuit.rs: 8 nodes per base tree, 2 layers, 1
challenge, 22 inputs; create_label's test; the SHA-256 PoR tests of storage-proofs-core over 64
leaves), a witness built natively (hashlib SHA-256, cuzk's Poseidon trees) that satisfies every
row, and tampered witnesses failing at a named row."""

from __future__ import annotations

import copy
import hashlib
import random

import pytest

from cuzk.circuit import ConstraintSystem
from cuzk.circuits.filecoin.porep.circuit import StackedCircuit
from cuzk.circuits.filecoin.porep.circuit_label import create_label, sha_node
from cuzk.circuits.filecoin.porep.circuit_num import alloc_bit
from cuzk.circuits.filecoin.porep.circuit_por import inclusion
from cuzk.circuit.template_cache import TemplateCache
from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.circuits.filecoin.tree import build_tree
from cuzk.errors import InputError, UnsatisfiedConstraint
from cuzk.field import FR
from cuzk.synth import Synthesizer
from cuzk.synth.program import trace

R = FR.modulus
MASK254 = (1 << 254) - 1


def _counts(shape):
    nodes = 8 * max(shape[1], 1) * max(shape[2], 1)
    cs, _ = trace(StackedCircuit(nodes=nodes, layers=2, challenge_count=1, shape=shape))
    return cs.n_constraints, cs.n_public + 1  # bellperson counts ONE among the inputs


def test_stacked_circuit_base_8_counts():
    assert _counts((8, 0, 0)) == (1_199_620, 22)


@pytest.mark.parametrize("shape, expected", [((2, 0, 0), 1_206_212), ((8, 4, 0), 1_296_576), ((8, 4, 2), 1_346_982)])
def test_stacked_circuit_counts(shape, expected):
    assert _counts(shape) == (expected, 22)


@pytest.mark.parametrize("arity, expected", [(2, 272_295), (4, 216_258), (8, 250_987)])
def test_sha256_por_counts(arity, expected):
    # rust-fil-proofs' PoRCircuit over 64 leaves with a public root (value and root allocated)
    cs = ConstraintSystem()
    cache = TemplateCache()
    v = cs.input_placeholder("x")
    levels = (arity,) * {2: 6, 4: 3, 8: 2}[arity]
    inclusion(cs, levels, lambda cs, kids, lv: sha_node(cs, kids, lv, cache), v, v, v,
              [v] * sum(a - 1 for a in levels), public_root=True)
    assert (cs.n_constraints, cs.n_public + 1) == (expected, 3)


def test_create_label_count():
    # create_label's own test: 37 parents and the id allocated as 256 bits each, layer 3 and
    # node 22 constants
    cs = ConstraintSystem()
    x = cs.input_placeholder("x")
    bits = [[alloc_bit(cs, x) for _ in range(256)] for _ in range(37)]
    rid = [alloc_bit(cs, x) for _ in range(256)]
    create_label(cs, rid, bits, 3, [bool(22 >> i & 1) for i in range(64)], TemplateCache())
    assert cs.n_constraints == 532_025


@pytest.mark.slow  # the traced circuit runs every SHA-256 compression in Python: ~2.5 min here
def test_stamped_and_traced_circuits_are_the_same():
    class Traced(StackedCircuit):
        stamp = False

    kw = dict(nodes=8, layers=2, challenge_count=2, shape=(8, 0, 0))
    a, b = Synthesizer(StackedCircuit(**kw)).r1cs, Synthesizer(Traced(**kw)).r1cs
    assert (a.digest, a.n_public, a.n_private) == (b.digest, b.n_public, b.n_private)
    assert tuple(a.names) == tuple(b.names)


def test_bad_parameters():
    with pytest.raises(InputError, match="sector size"):
        StackedCircuit(3000)
    with pytest.raises(InputError, match="layers"):
        StackedCircuit(nodes=8, layers=3, challenge_count=1, shape=(8, 0, 0))
    with pytest.raises(InputError, match="needs"):
        StackedCircuit(nodes=8, layers=2)
    assert StackedCircuit(32 << 30).challenge_count == 18


@pytest.mark.slow  # ~20 s and ~3 GiB: 18 challenges of 11 layers traced once each through cs.repeat
def test_32gib_partition_is_traced_with_stamping_and_counted():
    # the production partition, counted without building its ~16 GiB PCE; bellperson's own count
    # of the same blank circuit equals it (tests/test_porep_count_oracle.py)
    from cuzk.synth.placement import pce_sizes

    cs, _ = trace(StackedCircuit(32 << 30))
    sizes = pce_sizes(cs)
    # inputs: ONE, replica_id, comm_d, comm_r, and per challenge the node, its 14 parents and the
    # node three more times (tree D, C and R_last challenges)
    assert (sizes["rows"], cs.n_public + 1) == (130_278_541, 1 + 3 + 18 * 18)


# -- a native witness ------------------------------------------------------------------------

def _le(x: int) -> bytes:
    return x.to_bytes(32, "little")


def _sha_fr(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest(), "little") & MASK254


def _sha_tree(leaves):
    levels = [list(leaves)]
    while len(levels[-1]) > 1:
        lv = levels[-1]
        levels.append([_sha_fr(_le(lv[i]) + _le(lv[i + 1])) for i in range(0, len(lv), 2)])
    return levels


def _sha_path(levels, c):
    return [levels[h][(c >> h) ^ 1] for h in range(len(levels) - 1)]


def _label(replica_id, layer, node, parent_values):
    data = _le(replica_id) + layer.to_bytes(4, "big") + node.to_bytes(8, "big") + bytes(20)
    return _sha_fr(data + b"".join(_le(v) for v in parent_values))


def _expand(parents, layer):
    return parents * 6 + parents[:1] if layer == 1 else parents * 2 + parents[:9]


def native_inputs(circuit: StackedCircuit, seed: int, tamper=None) -> dict:
    """A consistent witness: random labels for every node but the challenged ones, whose labels
    follow from their (random) parents' columns; trees D, C and R built over them. ``tamper``
    "label" / "encoding" builds the trees over a wrong layer-1 label / encoding of challenge 0."""
    rng = random.Random(seed)
    n, L, shape = circuit.nodes, circuit.layers, circuit.shape
    rid = rng.randrange(R) & MASK254
    data = [rng.randrange(R) & MASK254 for _ in range(n)]
    labels = [[rng.randrange(R) & MASK254 for _ in range(n)] for _ in range(L)]  # labels[layer-1][node]
    chal = rng.sample(range(n), circuit.challenge_count)
    parents = {}
    for c in chal:
        others = [v for v in range(n) if v not in chal]
        parents[c] = [rng.choice(others) for _ in range(14)]
        for layer in range(1, L + 1):
            ps = parents[c][:6] if layer == 1 else parents[c]
            vals = [labels[layer - 1][p] for p in ps[:6]] + [labels[layer - 2][p] for p in ps[6:]]
            labels[layer - 1][c] = _label(rid, layer, c, _expand(vals, layer))
    if tamper == "label":
        labels[0][chal[0]] = (labels[0][chal[0]] + 1) % R
    columns = [[labels[l][v] for l in range(L)] for v in range(n)]
    tree_c = build_tree([poseidon_hash(col) for col in columns], shape.arities)
    encoded = [(labels[-1][v] + data[v] + (tamper == "encoding" and v == chal[0])) % R for v in range(n)]
    tree_r = build_tree(encoded, shape.arities)
    d_levels = _sha_tree(data)
    flat = lambda tree, v: [x for lv in tree.path(v) for x in lv]  # noqa: E731
    inp = {
        "replica_id": rid, "comm_d": d_levels[-1][0], "comm_c": tree_c.root, "comm_r_last": tree_r.root,
        "comm_r": poseidon_hash([tree_c.root, tree_r.root]),
        "challenges": chal, "data_leaves": [data[c] for c in chal],
        "comm_d_path": [_sha_path(d_levels, c) for c in chal],
        "drg_parents": [parents[c][:6] for c in chal], "exp_parents": [parents[c][6:] for c in chal],
        "drg_columns": [[list(columns[p]) for p in parents[c][:6]] for c in chal],
        "exp_columns": [[list(columns[p]) for p in parents[c][6:]] for c in chal],
        "drg_paths": [[flat(tree_c, p) for p in parents[c][:6]] for c in chal],
        "exp_paths": [[flat(tree_c, p) for p in parents[c][6:]] for c in chal],
        "comm_r_last_path": [flat(tree_r, c) for c in chal], "comm_c_path": [flat(tree_c, c) for c in chal],
    }
    return inp, [parents[c] for c in chal]


@pytest.fixture(scope="module")
def small():
    c = StackedCircuit(nodes=8, layers=2, challenge_count=2, shape=(8, 0, 0))
    return c, Synthesizer(c, check=True)


def test_native_witness_satisfies_and_public_inputs_match(small):
    circuit, synth = small
    inp, parents = native_inputs(circuit, seed=7)
    out = synth.synthesize(**inp)
    expected = circuit.public_inputs(inp["replica_id"], inp["comm_d"], inp["comm_r"], inp["challenges"], parents)
    assert out.public_inputs == expected
    assert len(expected) == 3 + 2 * 18


def _tampered(inp, key, path, delta=1):
    out = {k: (v if k != key else copy.deepcopy(v)) for k, v in inp.items()}
    if not path:
        out[key] = (out[key] + delta) % R
        return out
    ref = out[key]
    for p in path[:-1]:
        ref = ref[p]
    ref[path[-1]] = (ref[path[-1]] + delta) % R
    return out


@pytest.mark.parametrize("key, path, row", [
    ("drg_columns", (0, 2, 1), "challenge_0/drg_parent_2_inclusion/enforce root is correct"),  # a parent's row
    ("exp_columns", (0, 5, 0), "challenge_0/exp_parent_5_inclusion/enforce root is correct"),
    ("drg_parents", (1, 4), "challenge_1/drg_parent_4_inclusion/enforce root is correct"),  # a parent's index
    ("drg_paths", (0, 0, 3), "challenge_0/drg_parent_0_inclusion/enforce root is correct"),  # a path element
    ("comm_d_path", (1, 0), "challenge_1/comm_d_inclusion/enforce root is correct"),
    ("data_leaves", (0,), "challenge_0/comm_d_inclusion/enforce root is correct"),
    ("comm_r_last_path", (1, 6), "challenge_1/comm_r_last_data_inclusion/enforce root is correct"),
    ("comm_c", (), "enforce comm_r = H(comm_c || comm_r_last)"),
])
def test_tampered_witness_fails_at_the_named_row(small, key, path, row):
    circuit, synth = small
    inp, _ = native_inputs(circuit, seed=7)
    with pytest.raises(UnsatisfiedConstraint) as e:
        synth.synthesize(**_tampered(inp, key, path))
    assert e.value.name == row


@pytest.mark.parametrize("tamper, row", [
    ("label", "challenge_0/c_x_inclusion/enforce root is correct"),
    ("encoding", "challenge_0/comm_r_last_data_inclusion/enforce root is correct"),
])
def test_trees_over_a_wrong_label_or_encoding_fail(small, tamper, row):
    circuit, synth = small
    inp, _ = native_inputs(circuit, seed=7, tamper=tamper)
    with pytest.raises(UnsatisfiedConstraint) as e:
        synth.synthesize(**inp)
    assert e.value.name == row
