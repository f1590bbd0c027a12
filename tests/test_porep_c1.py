"""PoRep commit phase 1: the vanilla proofs of a sealed 2 KiB sector, the SealCommitPhase1Output
JSON layout of filecoin-proofs-api (written out here by hand, key by key), byte-identical round
trips, the consistency check naming the field a tampered document breaks, and a fuzzed reader."""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cuzk.circuits.filecoin.porep.c1 import (
    SealCommitPhase1Output, commit_phase1, partition_challenges, vanilla_variant,
)
from cuzk.circuits.filecoin.porep.c1_check import label_of, sha254_node
from cuzk.circuits.filecoin.porep.challenges import interactive_challenges
from cuzk.circuits.filecoin.porep.fr32 import fr32_pad
from cuzk.circuits.filecoin.porep.registered import registered_seal_proof
from cuzk.circuits.filecoin.porep.seal import seal
from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.errors import CuzkError, InputError, VanillaFormatError
from cuzk.field import FR

SEED = bytes(range(100, 132))
PROOF_ID = 5  # StackedDrg2KiBV1_1: 1 partition of 2 challenges, 2 layers, tree 8-0-0 over 64 nodes


@pytest.fixture(scope="module")
def sealed():
    data = fr32_pad(random.Random(7).randbytes(2032))
    return seal(data, registered_proof=PROOF_ID, prover_id=bytes(range(32)), sector_id=42, ticket=bytes([9] * 32))


@pytest.fixture(scope="module")
def c1(sealed):
    return commit_phase1(sealed, SEED)


@pytest.fixture(scope="module")
def c1_text(c1):
    return c1.to_json()


def _i(b: bytes) -> int:
    return int.from_bytes(b, "little")


# ---- what commit_phase1 builds ----

def test_commit_phase1_opens_the_sector_at_its_challenges(sealed, c1):
    assert (c1.registered_proof, c1.comm_r, c1.comm_d, c1.replica_id, c1.seed, c1.ticket) == \
        (PROOF_ID, sealed.comm_r, sealed.comm_d, sealed.replica_id, SEED, sealed.ticket)
    (proofs,) = c1.vanilla_proofs
    nodes = interactive_challenges(64, sealed.replica_id, SEED, 2, partition=0)
    assert [p.challenge for p in proofs] == nodes and len(nodes) == 2
    for c, p in zip(nodes, proofs):
        assert p.comm_d_proofs.leaf == sealed.data_node(c) and p.comm_d_proofs.root == sealed.comm_d
        assert _i(p.comm_r_last_proof.leaf) == sealed.replica_node(c) and p.comm_r_last_proof.root == sealed.comm_r_last
        assert p.comm_r_last_proof.siblings() == sealed.replica_path(c)
        cols = p.replica_column_proofs
        assert [_i(r) for r in cols.c_x.column.rows] == sealed.column(c)
        assert _i(cols.c_x.inclusion_proof.leaf) == poseidon_hash(sealed.column(c))
        assert [cp.column.index for cp in cols.drg_parents + cols.exp_parents] == sealed.node_parents(c)
        drg, exp = sealed.node_parents(c)[:6], sealed.node_parents(c)[6:]
        l1, l2 = p.labeling_proofs
        assert [_i(x) for x in l1.parents] == [sealed.label(1, drg[j % 6]) for j in range(37)]
        two = [sealed.label(2, q) for q in drg] + [sealed.label(1, q) for q in exp]
        assert [_i(x) for x in l2.parents] == [two[j % 14] for j in range(37)]
        assert (l1.layer_index, l2.layer_index, l1.node, l2.node) == (1, 2, c, c)
        assert _i(label_of(sealed.replica_id, 2, c, l2.parents)) == sealed.label(2, c)
        assert (p.encoding_proof.parents, p.encoding_proof.layer_index) == (l2.parents, 2)
        assert (sealed.label(2, c) + _i(sealed.data_node(c))) % FR.modulus == sealed.replica_node(c)
    c1.check()


def test_tree_d_node_hash_is_sha256_truncated():
    import hashlib
    d = bytearray(hashlib.sha256(bytes(64)).digest())
    d[31] &= 0x3F
    assert sha254_node(bytes(32), bytes(32)) == bytes(d)


def test_commit_phase1_refuses_bad_arguments(sealed):
    with pytest.raises(InputError, match="seed must be 32 bytes"):
        commit_phase1(sealed, bytes(31))
    with pytest.raises(InputError, match=r"partitions must be in 1\.\.1"):
        commit_phase1(sealed, SEED, partitions=2)


# ---- the JSON layout, key by key as filecoin-proofs-api's serde derives write it ----

def _d(b: int) -> list:
    """A 32-byte domain as serde writes [u8; 32]: 32 numbers."""
    return [b] + [0] * 31


def _single(root, leaf, levels):
    return {"data": {"Single": {"root": _d(root), "leaf": _d(leaf),
                                "path": {"path": [{"hashes": [_d(h) for h in hs], "index": i} for hs, i in levels]}}}}


def _column_proof(index):
    return {"column": {"index": index, "rows": [_d(index), _d(index + 1)], "_h": None},
            "inclusion_proof": _single(3, 4, [([5, 6, 7, 8, 9, 10, 11], 2)])}


def _hand_built_doc():
    proof = {
        "comm_d_proofs": _single(1, 2, [([3], 0), ([4], 1)]),
        "comm_r_last_proof": _single(5, 6, [([1, 2, 3, 4, 5, 6, 7], 7)]),
        "replica_column_proofs": {"c_x": _column_proof(1), "drg_parents": [_column_proof(10 + j) for j in range(6)],
                                  "exp_parents": [_column_proof(20 + j) for j in range(8)]},
        "labeling_proofs": [{"parents": [_d(j) for j in range(37)], "layer_index": layer, "node": 1} for layer in (1, 2)],
        "encoding_proof": {"parents": [_d(j) for j in range(37)], "layer_index": 2, "node": 1},
    }
    return {"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": {"StackedDrg2KiBV1": [[proof]]},
            "comm_r": _d(11), "comm_d": _d(12), "replica_id": _d(13), "seed": _d(14), "ticket": _d(15)}


def _compact(doc) -> str:
    return json.dumps(doc, separators=(",", ":"))


def test_hand_built_document_reads_and_writes_back_byte_for_byte():
    text = _compact(_hand_built_doc())
    out = SealCommitPhase1Output.from_json(text)
    assert out.registered_proof == PROOF_ID and out.seal_proof.name == "StackedDrg2KiBV1_1"
    assert (out.comm_r[0], out.comm_d[0], out.replica_id[0], out.seed[0], out.ticket[0]) == (11, 12, 13, 14, 15)
    (p,), = out.vanilla_proofs
    assert p.comm_d_proofs.kind == "Single" and p.comm_d_proofs.path_index() == 2
    assert p.replica_column_proofs.drg_parents[1].column.index == 11
    assert p.replica_column_proofs.exp_parents[7].inclusion_proof.base[0].index == 2
    assert [lp.layer_index for lp in p.labeling_proofs] == [1, 2] and p.encoding_proof.parents[36][0] == 36
    assert out.to_json() == text
    assert out.to_json().encode() == text.encode("utf-8")
    assert SealCommitPhase1Output.from_bincode(out.to_bincode(), PROOF_ID) == out


def test_vanilla_proofs_key_is_the_size_with_v1_only():
    assert [vanilla_variant(i) for i in (0, 5, 10, 15, 3, 8, 19)] == [
        "StackedDrg2KiBV1"] * 4 + ["StackedDrg32GiBV1", "StackedDrg32GiBV1", "StackedDrg64GiBV1"]
    doc = _hand_built_doc()
    doc["vanilla_proofs"] = {"StackedDrg2KiBV1_1": doc["vanilla_proofs"]["StackedDrg2KiBV1"]}
    with pytest.raises(VanillaFormatError, match="VanillaSealProof has no variant 'StackedDrg2KiBV1_1'") as e:
        SealCommitPhase1Output.from_json(_compact(doc))
    assert e.value.path == "$.vanilla_proofs"
    doc = _hand_built_doc()
    doc["registered_proof"] = "StackedDrg8MiBV1_1"
    with pytest.raises(VanillaFormatError, match="StackedDrg2KiBV1 proofs, registered_proof StackedDrg8MiBV1_1 takes StackedDrg8MiBV1"):
        SealCommitPhase1Output.from_json(_compact(doc))


def test_sealed_output_layout_and_round_trips(c1, c1_text):
    doc = json.loads(c1_text)
    assert list(doc) == ["registered_proof", "vanilla_proofs", "comm_r", "comm_d", "replica_id", "seed", "ticket"]
    assert doc["registered_proof"] == "StackedDrg2KiBV1_1" and list(doc["vanilla_proofs"]) == ["StackedDrg2KiBV1"]
    p = doc["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]
    assert list(p) == ["comm_d_proofs", "comm_r_last_proof", "replica_column_proofs", "labeling_proofs", "encoding_proof"]
    assert list(p["comm_d_proofs"]["data"]["Single"]) == ["root", "leaf", "path"]
    assert [len(e["hashes"]) for e in p["comm_d_proofs"]["data"]["Single"]["path"]["path"]] == [1] * 6
    assert [len(e["hashes"]) for e in p["comm_r_last_proof"]["data"]["Single"]["path"]["path"]] == [7, 7]
    assert list(p["replica_column_proofs"]) == ["c_x", "drg_parents", "exp_parents"]
    assert list(p["replica_column_proofs"]["c_x"]["column"]) == ["index", "rows", "_h"]
    assert p["replica_column_proofs"]["c_x"]["column"]["_h"] is None
    assert list(p["labeling_proofs"][0]) == list(p["encoding_proof"]) == ["parents", "layer_index", "node"]
    assert doc["seed"] == list(SEED) and " " not in c1_text
    again = SealCommitPhase1Output.from_json(c1_text.encode())
    assert again == c1 and again.to_json() == c1_text
    raw = c1.to_bincode()
    assert raw[:16] == (1).to_bytes(8, "little") + (2).to_bytes(8, "little")  # 1 partition of 2 proofs
    assert raw[-32:] == c1.ticket and SealCommitPhase1Output.from_bincode(raw, PROOF_ID) == c1


def test_read_refuses_a_file_over_the_bound(tmp_path, c1_text):
    f = tmp_path / "c1.json"
    f.write_text(c1_text)
    assert SealCommitPhase1Output.read(f).to_json() == c1_text
    with pytest.raises(VanillaFormatError, match="refusing to read it"):
        SealCommitPhase1Output.read(f, max_bytes=1000)


# ---- the consistency check names what a tampered document breaks ----

_P = "$.vanilla_proofs.StackedDrg2KiBV1[0]"


def _bump(d: list):
    d[0] ^= 1  # stays below r: the top byte is untouched


TAMPERS = [
    ("drg parent sibling", lambda p: _bump(p["replica_column_proofs"]["drg_parents"][3]["inclusion_proof"]["data"]
                                           ["Single"]["path"]["path"][0]["hashes"][2]),
     f"{_P}[1].replica_column_proofs.drg_parents[3].inclusion_proof", "does not hash to its root"),
    ("c_x row", lambda p: _bump(p["replica_column_proofs"]["c_x"]["column"]["rows"][1]),
     f"{_P}[1].replica_column_proofs.c_x.inclusion_proof.data.Single.leaf", "Poseidon hash of the column"),
    ("exp parent index", lambda p: p["replica_column_proofs"]["exp_parents"][2]["column"].update(index=3),
     f"{_P}[1].replica_column_proofs.exp_parents[2].column.index", "expected node"),
    ("labeling parents", lambda p: _bump(p["labeling_proofs"][1]["parents"][0]),
     f"{_P}[1].labeling_proofs[1].parents", "parent columns' rows"),
    ("labeling node", lambda p: p["labeling_proofs"][0].update(node=5),
     f"{_P}[1].labeling_proofs[0]", "expected layer 1 node"),
    ("encoding layer", lambda p: p["encoding_proof"].update(layer_index=1),
     f"{_P}[1].encoding_proof", "last layer's labeling proof"),
    ("data leaf", lambda p: _bump(p["comm_d_proofs"]["data"]["Single"]["leaf"]),
     f"{_P}[1].comm_d_proofs", "does not hash to comm_d"),
    ("replica leaf", lambda p: _bump(p["comm_r_last_proof"]["data"]["Single"]["leaf"]),
     f"{_P}[1].comm_r_last_proof", "does not hash to its root comm_r_last"),
    ("non-canonical sibling", lambda p: p["comm_r_last_proof"]["data"]["Single"]["path"]["path"][1]["hashes"].__setitem__(
        4, list(FR.modulus.to_bytes(32, "little"))),
     f"{_P}[1].comm_r_last_proof.data.Single.path.path[1].hashes[4]", "not a canonical field element"),
    ("lost expander parent", lambda p: p["replica_column_proofs"]["exp_parents"].pop(),
     f"{_P}[1].replica_column_proofs.exp_parents", "7 column proofs, a node has 8"),
]


@pytest.mark.parametrize("what, tamper, path, message", TAMPERS, ids=[t[0] for t in TAMPERS])
def test_check_names_the_tampered_field(c1_text, what, tamper, path, message):
    doc = json.loads(c1_text)
    tamper(doc["vanilla_proofs"]["StackedDrg2KiBV1"][0][1])
    out = SealCommitPhase1Output.from_json(_compact(doc))
    with pytest.raises(VanillaFormatError) as e:
        out.check()
    assert e.value.path == path and message in str(e.value)
    assert "partition 0, challenge 1 (node " in str(e.value)


def test_check_names_commitments_and_challenges(c1_text, c1):
    doc = json.loads(c1_text)
    _bump(doc["comm_r"])
    with pytest.raises(VanillaFormatError, match="comm_r is not Poseidon") as e:
        SealCommitPhase1Output.from_json(_compact(doc)).check()
    assert e.value.path == "$.comm_r"
    doc = json.loads(c1_text)
    doc["seed"] = _d(1)  # other challenges: the proofs open the wrong nodes
    with pytest.raises(VanillaFormatError, match="the path leads from node") as e:
        SealCommitPhase1Output.from_json(_compact(doc)).check()
    assert e.value.path == f"{_P}[0].comm_d_proofs"
    SealCommitPhase1Output.from_json(_compact(doc)).check(challenges=False)  # the proofs themselves still hold
    with pytest.raises(VanillaFormatError, match=r"1 partition\(s\), expected 2"):
        c1.check(partitions=2)


# ---- the reader under fuzzing: every failure is a cuzk error ----

def _locations(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _locations(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):  # a few items of each array keep the walk short
            yield from _locations(v, path + (i,))


_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 1 << 65), st.floats(allow_nan=False), st.text(max_size=4)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=4), c, max_size=2)), max_leaves=4)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_documents_fail_only_with_cuzk_errors(c1_text, data):
    doc = json.loads(c1_text)
    spots = list(_locations(doc))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(spots))
        parent, key = doc, None
        for k in path[:-1]:
            parent = parent[k]
        if not path:
            doc = data.draw(_json_values)
            break
        key, op = path[-1], data.draw(st.sampled_from(["replace", "delete", "add", "duplicate"]))
        try:
            if op == "replace":
                parent[key] = data.draw(_json_values)
            elif op == "delete":
                del parent[key]
            elif op == "add" and isinstance(parent, dict):
                parent[data.draw(st.text(max_size=5))] = data.draw(_json_values)
            elif op == "duplicate" and isinstance(parent, list):
                parent.insert(key, copy.deepcopy(parent[key]))
        except (KeyError, IndexError, TypeError):
            pass  # the walk went through a node an earlier mutation replaced
    text = json.dumps(doc)
    if data.draw(st.booleans()):  # and at the text level: a cut or a changed character
        i = data.draw(st.integers(0, len(text)))
        text = text[:i] + data.draw(st.sampled_from(["", "]", "}", "x", '"', "-", "9e999", "\\u"])) + text[i + 1:]
    try:
        out = SealCommitPhase1Output.from_json(text)
    except CuzkError as e:
        assert isinstance(e, VanillaFormatError)
        return
    assert SealCommitPhase1Output.from_json(out.to_json()) == out
    try:
        out.check()
    except CuzkError as e:
        assert isinstance(e, InputError)


def test_challenges_follow_the_registered_proof():
    p = registered_seal_proof(PROOF_ID)
    rid = bytes(range(32))[:31] + b"\x00"
    assert partition_challenges(p, rid, SEED, bytes(32), 0) == interactive_challenges(64, rid, SEED, 2)


# ---- rust-fil-proofs' own C1 output ----

# sha256 of the c1.json rust-fil-proofs 19.1.0 writes (serde_json::to_vec) for the fixture's sector
# (raw data random.Random(7).randbytes(2032), prover_id bytes(range(32)), sector_id 42, ticket 09^32,
# seed SEED), made with the Rust oracle: cuzk-fil-oracle --tmp T seal --registered-proof ID
# --prover-id 000102..1f --sector-id 42 --ticket 0909..09 --seed 6465..83 --data data.bin --out D
RUST_C1_SHA256 = {
    0: ("a8cfe118b56e565d", "4594765dbda9caa71ed33a27dc21ad326cd9bcf042681336d054c6938902e1b3"),  # API 1.0 graph
    5: ("6e5ed667fb810177", "afb8f0a4858b9321c87d260cc4593cf1fa7317b8b5015356fb059d9939f7abc9"),
    10: ("2159475118fb9545", "d3ce063873939a5fbe423c3ac5aa06e5f3265ee758ee769c4755ac9cb81fa6df"),  # synthetic
    15: ("d3d86419e46bbc4f", "01980b228c946dd54656e514101386d9db857428df65d331d98f9d11d910d793"),  # NI: 13 partitions
}


@pytest.mark.parametrize("proof_id", sorted(RUST_C1_SHA256))
def test_c1_json_is_rust_fil_proofs_byte_for_byte(proof_id):
    import hashlib

    data = fr32_pad(random.Random(7).randbytes(2032))
    s = seal(data, registered_proof=proof_id, prover_id=bytes(range(32)), sector_id=42, ticket=bytes([9] * 32))
    out = commit_phase1(s, SEED)
    comm_r, digest = RUST_C1_SHA256[proof_id]
    assert out.comm_r.hex()[:16] == comm_r
    text = out.to_json()
    assert hashlib.sha256(text.encode()).hexdigest() == digest
    out.check()
    assert SealCommitPhase1Output.from_json(text).to_json() == text


# ---- a C1 output the Rust oracle made, when given its directory ----

def _oracle_dirs():
    root = os.environ.get("CUZK_ORACLE_SEAL_DIR")
    return [Path(root)] if root else []


@pytest.mark.parametrize("out_dir", _oracle_dirs() or [pytest.param(None, marks=pytest.mark.skip(
    reason="set CUZK_ORACLE_SEAL_DIR to the --out directory of the Rust oracle's `seal` command"))])
def test_rust_oracle_c1_reads_checks_and_is_reproduced(out_dir):
    summary = json.loads((out_dir / "seal.json").read_text())
    raw = (out_dir / summary["c1"]).read_bytes()
    out = SealCommitPhase1Output.from_json(raw)
    assert out.to_json().encode() == raw  # serde_json::to_vec's bytes, written back byte for byte
    assert out.registered_proof == summary["registered_proof_id"] and out.comm_r.hex() == summary["comm_r"]
    out.check()
    data = (out_dir / summary["staged"]).read_bytes()
    ours = seal(data, registered_proof=out.registered_proof, prover_id=bytes.fromhex(summary["prover_id"]),
                sector_id=summary["sector_id"], ticket=bytes.fromhex(summary["ticket"]))
    assert commit_phase1(ours, bytes.fromhex(summary["seed"])).to_json().encode() == raw


# ---- the vanilla proofs satisfy the StackedCircuit ----

@pytest.mark.slow
def test_vanilla_proofs_satisfy_the_stacked_circuit(c1):
    from cuzk.circuits.filecoin.porep.c1 import circuit_inputs
    from cuzk.circuits.filecoin.porep.circuit import StackedCircuit
    from cuzk.synth import Synthesizer

    circuit = StackedCircuit(2048, api_version="1.1")
    inp = circuit_inputs(c1, 0)
    synth = Synthesizer(circuit, check=True)
    out = synth.synthesize(**inp)
    parents = [d + e for d, e in zip(inp["drg_parents"], inp["exp_parents"])]
    assert out.public_inputs == circuit.public_inputs(inp["replica_id"], inp["comm_d"], inp["comm_r"],
                                                      inp["challenges"], parents)
