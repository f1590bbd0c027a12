"""A 2 KiB sector update proved end to end: sealed, updated, its partition proved as one partitioned
job of a cuzk.Engine, verified against public inputs recomputed from the statement (and refused for
any other statement), and, with the Rust oracle, accepted by filecoin-proofs' own
verify_empty_sector_update_proof under cuzk's verifying key (a tampered proof refused)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import attrs
import pytest

import cuzk
from cuzk.circuits.filecoin.porep import fr32_pad, seal
from cuzk.circuits.filecoin.update import (
    circuit_for, partition_proofs, prove_update, update, update_public_inputs, verify_update,
)
from cuzk.errors import InputError, ParamsFormatError

pytestmark = pytest.mark.slow  # 1.7M-constraint proofs; the key's setup (~2.5 min) runs once per machine


@pytest.fixture(scope="module")
def updated():
    sealed = seal(fr32_pad(random.Random(21).randbytes(2032)), registered_proof=5, prover_id=bytes(range(32)),
                  sector_id=9, ticket=bytes([7] * 32))
    return update(sealed, fr32_pad(random.Random(22).randbytes(2032)))


@pytest.fixture(scope="module")
def keys(updated):
    from dev_keys import dev_keys

    synth = cuzk.Synthesizer(circuit_for(updated.params))
    pk, vk = dev_keys("snap-2k", 9, synth.r1cs)  # the daemon tests' key (tests/dev_keys.py)
    return synth, pk, vk


@pytest.fixture(scope="module")
def proof(updated, keys):
    synth, pk, _ = keys
    with cuzk.Engine(device="cpu") as engine:
        engine.register("update-2k", synth, pk)
        return prove_update(updated, None, proofs=partition_proofs(updated), engine=engine, name="update-2k",
                            request_id="sector-9-update")


def _statement(u, **over):
    return dict(dict(comm_r_old=u.comm_r_old, comm_d_new=u.comm_d_new, comm_r_new=u.comm_r_new), **over)


def test_engine_proof_verifies_for_its_statement_only(updated, keys, proof):
    vk = keys[2]
    assert len(proof) == 192 and verify_update(updated.params, vk, proof, **_statement(updated))
    assert len(update_public_inputs(updated.params, 0, **_statement(updated))) + 1 == len(vk.ic)
    for field in ("comm_r_old", "comm_d_new", "comm_r_new"):
        other = (int.from_bytes(getattr(updated, field), "little") + 1).to_bytes(32, "little")
        assert not verify_update(updated.params, vk, proof, **_statement(updated, **{field: other}))
    with pytest.raises(InputError, match="192 bytes"):
        verify_update(updated.params, vk, proof + b"\x00", **_statement(updated))
    with pytest.raises(ParamsFormatError):
        verify_update(updated.params, vk, bytes([0xFF]) * 192, **_statement(updated))
    with pytest.raises(InputError, match="needs the registered circuit's name"):
        prove_update(updated, None, engine=object())
    with pytest.raises(InputError, match="this update has 1 partitions, got 2"):
        prove_update(updated, None, proofs=partition_proofs(updated) * 2)
    with pytest.raises(InputError, match="comm_r_new is not Poseidon"):
        prove_update(attrs.evolve(updated, comm_r_new=updated.comm_r_old), keys[1])


def test_filecoin_proofs_verifier_accepts_cuzks_proof(tmp_path, updated, keys, proof):
    sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
    from rust_oracle import run_oracle

    from cuzk.formats.bellperson import vk_to_bytes

    (tmp_path / "cuzk.vk").write_bytes(vk_to_bytes(keys[2]))
    (tmp_path / "update.proof").write_bytes(proof)
    args = ["--vk", tmp_path / "cuzk.vk", "--comm-r-old", updated.comm_r_old.hex(),
            "--comm-r-new", updated.comm_r_new.hex(), "--comm-d-new", updated.comm_d_new.hex()]
    ok = run_oracle(tmp_path / "tmp", "verify-update", "--proof", tmp_path / "update.proof", *args)
    assert ok.value["valid"] is True and ok.value["circuit_identifier"].startswith("empty-sector-update-")
    # A with its y-sign flipped: still a curve point, no longer the proof
    bad = bytearray(proof)
    bad[0] ^= 0x20
    (tmp_path / "bad.proof").write_bytes(bytes(bad))
    out = run_oracle(tmp_path / "tmp", "verify-update", "--proof", tmp_path / "bad.proof", *args, check=False)
    assert (out.returncode, out.value["valid"]) == (1, False)
