"""cs.repeat (stamping): a stamped compile equals tracing every instance by hand — matrices,
digest, names, public-input layout, witness — for random sub-circuits; and its misuses are
CircuitErrors."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cuzk
from cuzk.circuit import Circuit, ConstraintSystem
from cuzk.circuit.gadgets import is_zero, merkle_root, merkle_root_native, poseidon_hash, to_bits
from cuzk.errors import CircuitError
from cuzk.field import FR
from cuzk.synth import Synthesizer
from cuzk.synth.program import trace
from cuzk.synth.r1cs import R1CS, csr_from_rows

R = FR.modulus

# -- random sub-circuits ----------------------------------------------------------------------

_I = st.integers(0, 999)  # an index into the values made so far (taken modulo their count)
OPS = st.lists(st.one_of(
    st.tuples(st.just("mul"), _I, _I),
    st.tuples(st.just("lin"), _I, _I, st.integers(-3, 3)),
    st.tuples(st.just("public"), _I),
    st.tuples(st.just("value"), st.integers(-2, 2)),
    st.tuples(st.just("hint"), _I),
    st.tuples(st.just("assert"), _I, _I),
    st.tuples(st.just("bool"), _I),
    st.tuples(st.just("bits"), _I, st.integers(1, 3)),
    st.tuples(st.just("const"), st.integers(-5, 5)),
    st.tuples(st.just("is_zero"), _I),
), min_size=1, max_size=12)


def gadget(ops):
    """fn(cs, shared, mine, value, combo, c): a sub-circuit made of ``ops``; returns its last value."""

    def fn(cs, shared, mine, value, combo, c):
        vals = [shared, mine, combo, cs.constant(c)]
        for op in ops:
            kind, a = op[0], op[1] if len(op) > 1 else 0
            x = vals[a % len(vals)]
            if kind == "mul":
                vals.append(x * vals[op[2] % len(vals)])
            elif kind == "lin":
                vals.append(x + op[3] * vals[op[2] % len(vals)] + c)
            elif kind == "public":
                vals.append(cs.public(x, name="pub"))
            elif kind == "value":  # witness arithmetic with an int: a shared constant register
                vals.append(cs.private(value * 3 + op[1]))
            elif kind == "hint":
                vals.append(cs.private(x.value.inverse()))
            elif kind == "assert":
                cs.assert_equal(x, vals[op[2] % len(vals)], name="eq")
            elif kind == "bool":
                cs.assert_bool(x)
            elif kind == "bits":
                vals.extend(to_bits(cs, x, op[2]))
            elif kind == "const":
                vals.append(cs.constant(op[1]) + x)
            else:
                vals.append(is_zero(cs, x))
        return vals[-1]

    return fn


class Repeated(Circuit):
    """k instances of ``fn`` over a shared public variable, per-instance variables, witness
    values and combinations, traced by hand or stamped; the results feed one public sum."""

    def __init__(self, fn, k, stamp, name, nested=False):
        self.fn, self.k, self.stamp, self.name, self.nested = fn, k, stamp, name, nested

    def input_shapes(self):
        return {"s": (), "x": (self.k,), "v": (self.k,)}

    def run(self, cs, fn, items, name):
        if self.stamp:
            return cs.repeat(fn, items, name=name)
        out = []
        for i, a in enumerate(items):
            if name is None:
                out.append(fn(cs, *a))
            else:
                with cs.namespace(name.replace("{i}", str(i))):
                    out.append(fn(cs, *a))
        return out

    def define(self, cs, s, x, v):
        shared = cs.public(s, name="s")
        xs = [cs.private(e) for e in x]
        items = [(shared, xs[i], v[i], xs[i] + 2 * shared, 7) for i in range(self.k)]
        if not self.nested:
            outs = self.run(cs, self.fn, items, self.name)
        else:  # pairs of instances, each pair one instance of an outer repeat
            def pair(cs, *flat):
                return list(self.run(cs, self.fn, [flat[:5], flat[5:]], "inner{i}"))
            pairs = [items[i] + items[i + 1] for i in range(0, self.k - 1, 2)]
            outer = self.run(cs, pair, pairs, self.name)
            outs = [o for p in outer for o in p]
        total = cs.constant(0)
        for o in outs:
            total = total + o
        cs.public(total, name="total")


def _inputs(k, seed):
    rng = random.Random(seed)
    return {"s": rng.randrange(R), "x": [rng.choice([0, 1, rng.randrange(R)]) for _ in range(k)],
            "v": [rng.randrange(R) for _ in range(k)]}


def reference_digest(circuit) -> str:
    """The digest of a hand-traced circuit through the row-dict CSR builder (csr_from_rows,
    which the compile used before stamping): an oracle independent of cuzk/synth/placement.py."""
    cs, _ = trace(circuit)
    assert not cs._blocks
    kinds = np.asarray(cs._var_kind)
    pub, prv = np.flatnonzero(kinds == 1), np.flatnonzero(kinds == 2)
    perm = np.zeros(kinds.shape[0], dtype=np.int64)
    perm[pub] = 1 + np.arange(pub.shape[0])
    perm[prv] = 1 + pub.shape[0] + np.arange(prv.shape[0])
    field = cuzk.curves.get(cs.curve).Fr
    return R1CS.build(pub.shape[0], prv.shape[0], *(csr_from_rows(r, perm, field) for r in (cs.a, cs.b, cs.c))).digest


def assert_same(hand: Synthesizer, stamped: Synthesizer, inputs):
    h, s = hand.r1cs, stamped.r1cs
    assert h.digest == reference_digest(hand.circuit)
    assert (s.n_public, s.n_private, s.n_constraints) == (h.n_public, h.n_private, h.n_constraints)
    assert s.digest == h.digest  # A, B, C: every row, column order and coefficient
    assert tuple(s.names) == tuple(h.names)
    wh, ws = hand.synthesize_inputs(inputs, check=False), stamped.synthesize_inputs(inputs, check=False)
    for f in ("z", "a", "b", "c"):
        assert np.array_equal(getattr(ws, f), getattr(wh, f)), f
    assert ws.public_inputs == wh.public_inputs


@settings(max_examples=25)
@given(ops=OPS, k=st.integers(1, 4), name=st.sampled_from([None, "c{i}", "same"]), seed=st.integers(0, 99))
def test_stamped_compile_equals_hand_trace(ops, k, name, seed):
    fn = gadget(ops)
    assert_same(Synthesizer(Repeated(fn, k, False, name)), Synthesizer(Repeated(fn, k, True, name)), _inputs(k, seed))


@settings(max_examples=15)
@given(ops=OPS, pairs=st.integers(1, 2), seed=st.integers(0, 99))
def test_nested_repeat_equals_hand_trace(ops, pairs, seed):
    fn, k = gadget(ops), 2 * pairs
    assert_same(Synthesizer(Repeated(fn, k, False, "p{i}", True)), Synthesizer(Repeated(fn, k, True, "p{i}", True)),
                _inputs(k, seed))


# -- a storage-proof shape: shared root, public packed index inside each instance, a proof ----

def por(cs, root, index, leaf, path):
    index = cs.public(index, name="index")
    bits = to_bits(cs, index, 2)
    p = [[cs.private(s) for s in level] for level in path]
    cs.assert_equal(merkle_root(cs, cs.private(leaf), p, bits, 2), root, name="root")


class Paths(Circuit):
    def __init__(self, k, stamp):
        self.k, self.stamp = k, stamp

    def input_shapes(self):
        return {"root": (), "index": (self.k,), "leaf": (self.k,), "path": (self.k, 2, 1)}

    def define(self, cs, root, index, leaf, path):
        root = cs.public(root, name="root")
        items = [(root, index[i], leaf[i], path[i]) for i in range(self.k)]
        if self.stamp:
            cs.repeat(por, items, name="challenge{i}")
        else:
            for i, a in enumerate(items):
                with cs.namespace(f"challenge{i}"):
                    por(cs, *a)


def _paths_inputs(k, seed):
    rng = random.Random(seed)
    leaves = [rng.randrange(R) for _ in range(4)]
    mid = [poseidon_hash(leaves[:2]), poseidon_hash(leaves[2:])]
    root = poseidon_hash(mid)
    idx = [rng.randrange(4) for _ in range(k)]
    path = [[[leaves[j ^ 1]], [mid[(j >> 1) ^ 1]]] for j in idx]
    assert all(merkle_root_native(leaves[j], j, p) == root for j, p in zip(idx, path))
    return {"root": root, "index": idx, "leaf": [leaves[j] for j in idx], "path": path}


def test_stamped_paths_prove_and_verify():
    k = 3
    inputs = _paths_inputs(k, 5)
    hand, stamped = Synthesizer(Paths(k, False)), Synthesizer(Paths(k, True), check=True)
    assert_same(hand, stamped, inputs)
    assert stamped.r1cs.n_public == 1 + k  # the root, then each instance's packed index
    pk, vk = cuzk.groth16.setup(stamped.r1cs, np.random.default_rng(3))
    w = stamped.synthesize(**inputs)
    assert w.public_inputs == [inputs["root"], *inputs["index"]]
    proof = cuzk.groth16.prove(pk, w)
    assert cuzk.groth16.verify(vk, w.public_inputs, proof)
    assert not cuzk.groth16.verify(vk, [inputs["root"], *inputs["index"][::-1]], proof) or inputs["index"] == inputs["index"][::-1]
    assert not cuzk.groth16.verify(vk, [inputs["root"] + 1, *inputs["index"]], proof)


def test_pce_file_of_a_stamped_circuit_round_trips(tmp_path):
    s = Synthesizer(Paths(2, True))
    s.save(tmp_path / "p.pce")
    t = Synthesizer.load(tmp_path / "p.pce")
    assert t.r1cs.digest == s.r1cs.digest and tuple(t.r1cs.names) == tuple(s.r1cs.names)
    inputs = _paths_inputs(2, 9)
    assert np.array_equal(t.synthesize(**inputs).z, s.synthesize(**inputs).z)


def test_pending_digest_is_the_matrices_digest_and_pickles_as_a_string():
    import pickle

    from cuzk.synth.r1cs import PendingDigest, r1cs_digest

    s = Synthesizer(Paths(2, True))
    r = s.r1cs
    assert isinstance(r._digest, PendingDigest)  # the stamped compile returns before the hash ends
    want = r1cs_digest(r.n_public, r.n_private, r.n_constraints, (r.a, r.b, r.c))
    copy = pickle.loads(pickle.dumps(s))  # as sent to a synthesis worker process
    assert type(copy.r1cs._digest) is str and copy.r1cs.digest == r.digest == want


def test_unsatisfied_stamped_row_is_named():
    inputs = _paths_inputs(2, 4)
    inputs["leaf"][1] = (inputs["leaf"][1] + 1) % R
    with pytest.raises(cuzk.errors.UnsatisfiedConstraint, match="challenge1/root"):
        Synthesizer(Paths(2, True), check=True).synthesize(**inputs)


# -- results, counts, errors -------------------------------------------------------------------

def test_results_are_the_instances_outputs_and_counts_include_blocks():
    cs = ConstraintSystem()
    r = cs.public(5)
    xs = [cs.private(i) for i in range(3)]
    out = cs.repeat(lambda cs, x, r: (cs.public(x * r), x.value), [(x, r) for x in xs])
    assert len(out) == 3 and cs.n_constraints == 6 and cs.n_public == 4 and cs.n_private == 6
    v, val = out[2]
    assert v.is_public and not out[1][0].is_public is False
    assert val.slot == xs[2]._slot and out[-1][0].index == out[2][0].index
    assert cs.n_vars == 1 + 4 + 6
    with pytest.raises(IndexError):
        out[3]
    assert len(cs.repeat(lambda cs, x: x, [])) == 0


@pytest.mark.parametrize("items, match", [
    (lambda a, b, c: [(a, b), (c, c)], "one variable in two places"),
    (lambda a, b, c: [(a, a), (b, c)], "different variables where instance 0 passes one variable twice"),
    (lambda a, b, c: [(a, [b]), (a, [b, c])], "not shaped like"),
    (lambda a, b, c: [(a, 1), (b, 2)], "differs from instance 0"),
    (lambda a, b, c: [(a, b), (a, b.value)], "passes a variable here"),
    (lambda a, b, c: [(a, b + c), (a, 2 * b + c)], "only the\nvariables may differ|only the variables may differ"),
    (lambda a, b, c: [(a, b), (a, a.cs.one)], "passes a variable here"),
])
def test_instances_that_do_not_fit_instance_0s_trace_are_refused(items, match):
    cs = ConstraintSystem()
    a, b, c = (cs.private(i) for i in range(3))
    with pytest.raises(CircuitError, match=match):
        cs.repeat(lambda cs, x, y: x, items(a, b, c))


def test_functions_that_reach_the_enclosing_circuit_are_refused():
    cs = ConstraintSystem()
    outer = cs.private(3)
    with pytest.raises(CircuitError, match="two different constraint systems") as e:
        cs.repeat(lambda t, x: x * outer, [(cs.private(1),)])
    assert any("pass variables of the enclosing" in n for n in e.value.__notes__)
    with pytest.raises(CircuitError, match="added to the enclosing"):
        cs.repeat(lambda t, x: cs.private(7), [(cs.private(1),)])
    with pytest.raises(CircuitError, match="cannot create circuit inputs"):
        cs.repeat(lambda t, x: t.input_placeholder("y"), [(cs.private(1),)])
    with pytest.raises(CircuitError, match="sequence of argument tuples"):
        cs.repeat(lambda t, x: x, 5)
    with pytest.raises(CircuitError, match="another constraint system"):
        cs.repeat(lambda t, x: x, [(ConstraintSystem().private(1),)])


def test_progress_reports_every_stage_to_the_end():
    seen = []
    Synthesizer(Paths(2, True), progress=lambda *a: seen.append(a))
    stages = [s for s, _, _ in seen]
    assert stages[0] == "trace" and "place" in stages
    last = [a for a in seen if a[0] == "place"][-1]
    assert last[1] == last[2] > 0
    with pytest.raises(cuzk.errors.InputError, match="progress"):
        Synthesizer(Paths(1, True), progress="yes")
