"""PoRep commit phase 2: a sealed 2 KiB sector's C1 proved partition by partition, directly and
through a cuzk.Engine, checked against public inputs recomputed from the statement alone; a test
configuration of two partitions (the same circuit, four challenges) exercises the Engine's
partitioned jobs: in-order assembly, a tampered partition failing the whole sector, a cancelled
sector. With the Rust oracle, filecoin-proofs' own verify_seal takes cuzk's proof."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import attrs
import pytest

import cuzk
from cuzk.circuits.filecoin.porep import c2, fr32_pad, seal
from cuzk.circuits.filecoin.porep.c1 import commit_phase1
from cuzk.errors import InputError, ParamsFormatError, UnsatisfiedConstraint

pytestmark = pytest.mark.slow  # 2.7M-constraint proofs; the key's setup (~2 min) runs once per machine

PROVER_ID, SECTOR_ID, TICKET = bytes(range(32)), 42, bytes([9] * 32)
SEED = bytes(range(100, 132))


@pytest.fixture(scope="module")
def sealed():
    data = fr32_pad(random.Random(7).randbytes(2032))
    return seal(data, registered_proof=5, prover_id=PROVER_ID, sector_id=SECTOR_ID, ticket=TICKET)


@pytest.fixture(scope="module")
def c1(sealed):
    return commit_phase1(sealed, SEED)


@pytest.fixture(scope="module")
def keys(sealed):
    from dev_keys import dev_keys

    synth = cuzk.Synthesizer(c2.circuit_for(sealed.proof))
    pk, vk = dev_keys("porep-2k", 5, synth.r1cs)  # the daemon tests' key (tests/dev_keys.py)
    return synth, pk, vk


@pytest.fixture(scope="module")
def proof(c1, keys):
    return c2.commit_phase2(c1, keys[1])


def test_public_inputs_come_from_the_statement(c1, sealed):
    from cuzk.circuits.filecoin.porep.c1 import circuit_inputs

    inp = circuit_inputs(c1, 0)
    parents = [d + e for d, e in zip(inp["drg_parents"], inp["exp_parents"])]
    want = c2.circuit_for(sealed.proof).public_inputs(inp["replica_id"], inp["comm_d"], inp["comm_r"],
                                                      inp["challenges"], parents)
    assert c2.seal_public_inputs(sealed.proof, c1.replica_id, c1.comm_d, c1.comm_r, SEED, 0) == want
    assert len(want) == 39
    with pytest.raises(InputError, match="partition must be in"):
        c2.seal_public_inputs(sealed.proof, c1.replica_id, c1.comm_d, c1.comm_r, SEED, 1)
    with pytest.raises(InputError, match="seed must be 32 bytes"):
        c2.seal_public_inputs(sealed.proof, c1.replica_id, c1.comm_d, c1.comm_r, SEED[:31], 0)


def test_direct_c2_verifies_and_only_for_its_statement(c1, keys, proof):
    vk = keys[2]
    assert len(proof) == c2.PROOF_BYTES and c2.verify_commit_phase2(c1, vk, proof)
    assert not c2.verify_commit_phase2(attrs.evolve(c1, seed=bytes(32)), vk, proof)
    assert not c2.verify_commit_phase2(attrs.evolve(c1, comm_d=bytes(32)), vk, proof)
    with pytest.raises(InputError, match="192 bytes"):
        c2.verify_commit_phase2(c1, vk, proof[:-1])
    with pytest.raises(ParamsFormatError):
        c2.verify_commit_phase2(c1, vk, bytes([0xFF]) * 192)


def _two_partitions(sealed):
    """The 2 KiB proof with 2 partitions of 2 challenges: the same partition circuit and key."""
    proof = attrs.evolve(sealed.proof, partitions=2, minimum_challenges=4)
    return proof, commit_phase1(attrs.evolve(sealed, proof=proof), SEED)


def test_partitioned_c2_through_the_engine(sealed, keys):
    synth, pk, vk = keys
    proof, c1 = _two_partitions(sealed)
    assert c2.circuit_for(proof).challenge_count == 2 and len(c1.vanilla_proofs) == 2
    parts = [list(p) for p in c1.vanilla_proofs]
    vp = parts[0][1]
    parts[0][1] = attrs.evolve(vp, comm_d_proofs=attrs.evolve(vp.comm_d_proofs, leaf=bytes(32)))
    tampered = attrs.evolve(c1, vanilla_proofs=parts)
    with cuzk.Engine(device="cpu") as engine:
        engine.register("porep-2k", synth, pk)
        out = c2.commit_phase2(c1, None, engine=engine, name="porep-2k", proof=proof, request_id="sector-42")
        assert len(out) == 2 * c2.PROOF_BYTES
        assert c2.verify_commit_phase2(c1, vk, out, proof=proof)
        # the partitions are in order: swapped, neither verifies
        assert not c2.verify_commit_phase2(c1, vk, out[192:] + out[:192], proof=proof)
        # a comm_d leaf of partition 0 tampered: the whole sector fails (partition 1 is skipped); a
        # sector queued behind it and cancelled is never proved
        bad = engine.submit_partitioned("porep-2k", c2.partition_inputs(tampered, proof), request_id="s1")
        queued = engine.submit_partitioned("porep-2k", c2.partition_inputs(c1, proof), request_id="s2")
        assert engine.cancel("s2") and queued.cancelled()
        with pytest.raises(UnsatisfiedConstraint):
            bad.result(timeout=600)
    with pytest.raises(InputError, match="holds 2 partitions"):
        c2.partition_inputs(c1)  # the registered proof has one partition
    with pytest.raises(InputError, match="needs the registered circuit's name"):
        c2.commit_phase2(c1, None, engine=object(), proof=proof)


def test_filecoin_proofs_verify_seal_accepts_cuzks_c2(tmp_path, c1, keys, proof):
    sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
    from rust_oracle import run_oracle

    from cuzk.formats.bellperson import vk_to_bytes

    (tmp_path / "c1.json").write_text(c1.to_json())
    (tmp_path / "cuzk.vk").write_bytes(vk_to_bytes(keys[2]))
    (tmp_path / "c2.proof").write_bytes(proof)
    args = ["--vk", tmp_path / "cuzk.vk", "--proof", tmp_path / "c2.proof", "--c1", tmp_path / "c1.json",
            "--prover-id", PROVER_ID.hex(), "--sector-id", str(SECTOR_ID)]
    for method in ("filecoin-proofs", "bellperson"):
        ok = run_oracle(tmp_path / f"tmp-{method}", "verify-seal", *args, "--method", method)
        assert ok.returncode == 0 and ok.value["valid"] is True, method
    bad = run_oracle(tmp_path / "tmp-bad", "verify-seal", *args, "--seed", bytes(32).hex(), check=False)
    assert bad.returncode == 1 and bad.value["valid"] is False
