"""Poseidon as one parameter-set type: the neptune (Filecoin) and circomlib variants.

Oracles: neptune's published hash vectors and gadget constraint counts, circomlib's
own MDS matrices (read from the pinned circomlib package when installed) and its known output
Poseidon([1, 2]); a bit-at-a-time Grain LFSR written here from the reference description.
"""

import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cuzk
from cuzk.circuit import Circuit, ConstraintSystem
from cuzk.circuit.gadgets.poseidon import poseidon_gadget
from cuzk.circuit.gadgets.poseidon_grain import GrainStream
from cuzk.circuit.gadgets.poseidon_sparse import sparse_form, sparse_permute
from cuzk.circuit.gadgets.poseidon_spec import (
    CIRCOMLIB_PARTIAL_ROUNDS, NEPTUNE_PARTIAL_ROUNDS, PoseidonSpec, neptune_tag, poseidon_spec,
)
from cuzk.circuits.filecoin import poseidon_hash
from cuzk.circuits.filecoin.native import kernel_constants, permute_rows
from cuzk.errors import CircuitError, FieldValueError, InputError
from cuzk.field import FR, Fr
from cuzk.synth import Synthesizer

R = FR.modulus
NEPTUNE_2 = 0x396508D75E76A56B739E0FD902EFE161A6FBA9339D05A69D2E203C369A02E7FF
NEPTUNE_8 = 0x2394611DA3A5DE5512010042116770774B682E9D9CC4AED92A9934F56D38A5E6
# circomlibjs' test: poseidon([1, 2]) over BN254 Fr
CIRCOMLIB_1_2 = 7853200120776062878684798364095072458815029376092732009249414926327459813530
CIRCOMLIB_CONSTANTS = Path(__file__).parent / "circom/node_modules/circomlib/circuits/poseidon_constants.circom"


def test_neptune_vectors_python_and_native():
    assert poseidon_spec("neptune", 3).hash([0, 1]) == NEPTUNE_2
    assert poseidon_spec("neptune", 9).hash(list(range(8))) == NEPTUNE_8
    h2, h8 = poseidon_hash([0, 1]), poseidon_hash(list(range(8)))
    assert (h2, h8) == (NEPTUNE_2, NEPTUNE_8) and type(h2) is int


def test_neptune_parameters():
    for arity, rp in NEPTUNE_PARTIAL_ROUNDS.items():
        s = poseidon_spec("neptune", arity + 1)
        assert (s.r_f, s.r_p, s.output, s.tag, s.layout) == (8, rp, 1, (1 << arity) - 1, "allocated")
        assert len(s.round_constants) == (8 + rp) * s.t and all(0 <= c < R for c in s.round_constants)
        assert all(s.mds[i][j] * (i + j + s.t) % R == 1 for i in range(s.t) for j in range(s.t))
    assert neptune_tag("constant_length", 8, 3) == 3 << 64


@settings(max_examples=4, deadline=None)
@given(st.sampled_from(sorted(NEPTUNE_PARTIAL_ROUNDS)), st.integers(0, 2**32))
def test_native_kernel_matches_python_permutation(arity, seed):
    spec = poseidon_spec("neptune", arity + 1)
    rng = random.Random(seed)
    states = [[rng.randrange(R) for _ in range(spec.t)] for _ in range(2)]
    got = permute_rows(Fr.from_ints([x for s in states for x in s]).reshape(2, spec.t, 4), *kernel_constants(spec))
    assert [Fr.to_ints(g) for g in got] == [spec.permute(s) for s in states]


def test_sparse_form_is_the_same_permutation():
    for spec in (poseidon_spec("neptune", 12), poseidon_spec("circomlib", 4), poseidon_spec("cuzk", 9)):
        x = [random.Random(spec.t).randrange(spec.modulus) for _ in range(spec.t)]
        assert sparse_permute(sparse_form(spec), x) == spec.permute(x)


def test_constant_length_hash():
    spec = poseidon_spec("neptune", 5)
    assert poseidon_hash([3, 4], arity=4, hash_type="constant_length") == spec.hash([3, 4, 0, 0], tag=2 << 64)
    assert poseidon_hash([3, 4], arity=4, hash_type="constant_length") != poseidon_hash([3, 4, 0], arity=4, hash_type="constant_length")


@pytest.mark.parametrize("bad, kw", [
    ([1, 2, 3], {}),  # arity 3 is not neptune's
    ([1, 2], {"arity": 4}),  # merkle_tree needs exactly arity values
    ([], {"arity": 2, "hash_type": "constant_length"}),
    ([1, 2, 3], {"arity": 2, "hash_type": "constant_length"}),
    ([1, 2], {"hash_type": "sponge"}),
    ([1, R], {}),
    ([1, -1], {}),
    ([1, 1.5], {}),
    ("12", {}),
])
def test_poseidon_hash_bad_input(bad, kw):
    with pytest.raises(InputError):
        poseidon_hash(bad, **kw)


def _grain_bits_reference(field, sbox, n, t, r_f, r_p, count):
    """The Grain description read literally: one bit per step, list state."""
    s = []
    for value, width in ((field, 2), (sbox, 4), (n, 12), (t, 12), (r_f, 10), (r_p, 10)):
        s += [(value >> (width - 1 - i)) & 1 for i in range(width)]
    s += [1] * 30

    def step():
        b = s[62] ^ s[51] ^ s[38] ^ s[23] ^ s[13] ^ s[0]
        s.pop(0)
        s.append(b)
        return b

    for _ in range(160):
        step()
    out = []
    while len(out) < count:
        b1, b2 = step(), step()
        if b1:
            out.append(b2)
    return out


def test_grain_stream_matches_bitwise_reference():
    for seed in ((1, 1, 255, 9, 8, 57), (1, 0, 254, 3, 8, 57)):
        g = GrainStream(field=seed[0], sbox=seed[1], n=seed[2], t=seed[3], r_f=seed[4], r_p=seed[5])
        assert g.bits(3000).tolist() == _grain_bits_reference(*seed, 3000)


class NeptuneHash(Circuit):
    def __init__(self, arity):
        self.arity = arity

    def input_shapes(self):
        return {"x": (self.arity,)}

    def define(self, cs, x):
        xs = [cs.private(v) for v in x]
        h = poseidon_gadget(cs, poseidon_spec("neptune", self.arity + 1), xs)
        cs.public(h)


@pytest.mark.parametrize("arity, count", [(2, 311), (4, None), (8, 505), (11, 598), (16, None)])
def test_neptune_gadget_counts_and_values(arity, count):
    s = Synthesizer(NeptuneHash(arity), check=True)
    spec = poseidon_spec("neptune", arity + 1)
    # neptune's layout: 3 per S-box of an allocated input, 4 per later S-box, 1 for the output
    assert s.r1cs.n_constraints - 1 == 3 * arity + 4 * (7 * spec.t + spec.r_p) + 1
    if count is not None:
        assert s.r1cs.n_constraints - 1 == count  # the cs.public row is ours
    rng = random.Random(arity)
    for _ in range(2):
        xs = [rng.randrange(R) for _ in range(arity)]
        assert s.synthesize(x=xs).public_inputs == [spec.hash(xs)]


# the rust-fil-proofs oracle's R1CS dump of a 2 KiB PoRep partition (tests/oracles/rust-fil-proofs/
# README.md), row 261: the first input's x^5 row of H(comm_c, comm_r_last), the constants neptune's
# circuit puts there (its first round constant for lane 1 and minus its compressed post-add)
NEPTUNE_2_PRE_1 = 4695678156115054936680786087307863602995304265245167757860173424904862777109
NEPTUNE_2_MINUS_POST_1 = 43529763055313569487547014076474257539056283005053883172484278656455926889017


def test_neptune_gadget_rows_follow_neptunes_circuit():
    cs = ConstraintSystem()
    x, y = cs.private(5), cs.private(6)
    poseidon_gadget(cs, poseidon_spec("neptune", 3), [x, y])
    # an allocated input skips the allocation row: (x + pre)^2, l2^2, then (x + pre) * l4 = l5 - post
    l2, l4, l5 = (next(iter(cs.c[i])) for i in range(3))
    pre = {x.index: 1, 0: NEPTUNE_2_PRE_1}
    assert (cs.a[0], cs.b[0], cs.a[1], cs.b[1]) == (pre, pre, {l2: 1}, {l2: 1})
    assert (cs.a[2], cs.b[2], cs.c[2]) == (pre, {l4: 1}, {l5: 1, 0: NEPTUNE_2_MINUS_POST_1})
    assert cs.a[3] == {y.index: 1, 0: poseidon_spec("neptune", 3).round_constants[2]}


def test_gadget_refuses_a_spec_of_another_curve():
    cs = ConstraintSystem()
    with pytest.raises(CircuitError, match="bn254"):
        poseidon_gadget(cs, poseidon_spec("circomlib", 3), [cs.private(1), cs.private(2)])


def test_unknown_variant_and_width():
    with pytest.raises(CircuitError):
        poseidon_spec("sponge", 3)
    with pytest.raises(CircuitError):
        poseidon_spec("neptune", 4)
    with pytest.raises(CircuitError):
        poseidon_spec("circomlib", 18)
    with pytest.raises(FieldValueError):
        poseidon_spec("circomlib", 3).hash([1, R + 5])


def test_circomlib_known_output():
    spec = poseidon_spec("circomlib", 3)
    assert isinstance(spec, PoseidonSpec) and (spec.curve, spec.output, spec.tag) == ("bn254", 0, 0)
    assert spec.hash([1, 2]) == CIRCOMLIB_1_2


def _toolchain():
    """scripts/snarkjs_ceremony.py with the pinned circom/snarkjs packages installed (or a skip)."""
    path = Path(__file__).parent.parent / "scripts" / "snarkjs_ceremony.py"
    spec = importlib.util.spec_from_file_location("snarkjs_ceremony", path)
    ceremony = sys.modules.setdefault("snarkjs_ceremony", importlib.util.module_from_spec(spec))
    if not hasattr(ceremony, "ensure_toolchain"):
        spec.loader.exec_module(ceremony)
    ok, why = ceremony.toolchain_status()
    if not ok:
        pytest.skip(why)
    ceremony.ensure_toolchain()
    return ceremony


def _circomlib_constants() -> str:
    if not CIRCOMLIB_CONSTANTS.exists():
        _toolchain()
    return CIRCOMLIB_CONSTANTS.read_text()


CIRCOM_WIDTHS = (2, 5, 16)  # inputs per circomlib Poseidon in the oracle circuit (t = 3, 6, 17)
CIRCOM_X = [i * 7919 + 3 for i in range(16)]


@pytest.fixture(scope="module")
def circom_outputs():
    """circomlib's Poseidon(n) of CIRCOM_X[:n], from a witness computed by circom's own WASM
    (compiled with --prime bn128, run by node, exported by snarkjs)."""
    ceremony = _toolchain()
    node = shutil.which("node")
    rel = Path("build") / f"poseidon-variants-{os.getpid()}"
    build = ceremony.CIRCOM_DIR / rel
    build.mkdir(parents=True, exist_ok=True)
    comps = "\n".join(f"    component p{n} = Poseidon({n}); signal output h{n};\n"
                       f"    for (var i = 0; i < {n}; i++) {{ p{n}.inputs[i] <== x[i]; }}\n    h{n} <== p{n}.out;"
                       for n in CIRCOM_WIDTHS)
    (build / "h.circom").write_text(
        'pragma circom 2.0.0;\ninclude "circomlib/circuits/poseidon.circom";\n'
        f"template Hashes() {{\n    signal input x[16];\n{comps}\n}}\ncomponent main = Hashes();\n")
    (build / "in.json").write_text(json.dumps({"x": [str(v) for v in CIRCOM_X]}))
    try:
        for cmd, cwd in (
            ([str(ceremony._BIN / "circom2"), str(rel / "h.circom"), "--wasm", "--prime", "bn128", "-l", "node_modules",
              "-o", str(rel)], ceremony.CIRCOM_DIR),
            ([node, "h_js/generate_witness.js", "h_js/h.wasm", "in.json", "w.wtns"], build),
            ([str(ceremony._BIN / "snarkjs"), "wtns", "export", "json", "w.wtns", "w.json"], build),
        ):
            r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        witness = json.loads((build / "w.json").read_text())
    finally:
        shutil.rmtree(build, ignore_errors=True)
    assert witness[0] == "1"
    return {n: int(witness[1 + k]) for k, n in enumerate(CIRCOM_WIDTHS)}  # outputs follow ONE


def test_circomlib_native_hash_matches_a_circom_witness(circom_outputs):
    for n in CIRCOM_WIDTHS:
        assert poseidon_spec("circomlib", n + 1).hash(CIRCOM_X[:n]) == circom_outputs[n]


class CircomlibHash(Circuit):
    def input_shapes(self):
        return {"x": (16,)}

    def define(self, cs, x):
        xs = [cs.private(v) for v in x]
        for n in CIRCOM_WIDTHS:
            cs.public(poseidon_gadget(cs, poseidon_spec("circomlib", n + 1), xs[:n]))


def test_circomlib_gadget_on_bn254_matches_the_circom_witness(circom_outputs):
    synth = Synthesizer(CircomlibHash(), curve="bn254", check=True)
    w = synth.synthesize(x=CIRCOM_X)
    assert w.public_inputs == [circom_outputs[n] for n in CIRCOM_WIDTHS]
    pk, vk = cuzk.groth16.setup(synth.r1cs)  # and it proves on BN254
    proof = cuzk.GpuProver(pk, device="cpu").prove(w)
    assert cuzk.groth16.verify(vk, w.public_inputs, proof)
    assert not cuzk.groth16.verify(vk, [w.public_inputs[0] + 1, *w.public_inputs[1:]], proof)


def test_circomlib_mds_matrices_match_circomlibs_own():
    text = _circomlib_constants()
    body = text[text.index("function POSEIDON_M"):text.index("function POSEIDON_P")]
    parts = re.split(r"t\s*==\s*(\d+)", body)
    seen = set()
    for t_text, block in zip(parts[1::2], parts[2::2]):
        t = int(t_text)
        nums = [int(x, 16) for x in re.findall(r"0x[0-9a-fA-F]+", block)]
        spec = poseidon_spec("circomlib", t)
        # circomlib stores M transposed relative to the reference script's M[i][j] = 1/(x_i + y_j)
        assert nums == [spec.mds[j][i] for i in range(t) for j in range(t)], t
        seen.add(t)
    assert seen >= set(range(3, 18)) and seen <= set(CIRCOMLIB_PARTIAL_ROUNDS)
