"""cuzk's SnapDeals against rust-fil-proofs itself (the Rust oracle, tests/oracles/): a 2 KiB sector
sealed by the oracle and updated with the same data by both gives the same commitments, new
replica, decoded data and vanilla partition proof bytes (bincode), and the EmptySectorUpdate
circuit of that partition proof is bellperson's R1CS row by row with the same assignment of every
variable. Skipped where cargo is absent."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
from r1cs_compare import first_row_difference, witness_difference  # noqa: E402
from rust_oracle import read_r1cs, read_witness, run_oracle  # noqa: E402

import cuzk  # noqa: E402
from cuzk.circuits.filecoin.porep import fr32_pad, seal  # noqa: E402
from cuzk.circuits.filecoin.update import (  # noqa: E402
    PartitionProof, circuit_for, circuit_inputs, decode, partition_proof, update, verify_partition_proof,
)

PROVER_ID, SECTOR_ID = bytes(range(32)), 7
TICKET, SEED = bytes([0x5A] * 31 + [0x01]), bytes([0xC3] * 32)


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """The oracle's sealed 2 KiB sector, its update with new data, and the partition's R1CS dump."""
    root = tmp_path_factory.mktemp("update-oracle")
    raw, new = random.Random(20240611).randbytes(2032), random.Random(31).randbytes(2032)
    (root / "data.bin").write_bytes(raw)
    (root / "new.bin").write_bytes(new)
    run_oracle(root / "tmp", "seal", "--registered-proof", "5", "--prover-id", PROVER_ID.hex(), "--sector-id",
               str(SECTOR_ID), "--ticket", TICKET.hex(), "--seed", SEED.hex(), "--data", root / "data.bin",
               "--out", root / "sector")
    out = run_oracle(root / "tmp", "update", "--sector", root / "sector", "--data", root / "new.bin", "--out",
                     root / "up", "--r1cs", root / "p0.r1cs")
    return {"raw": raw, "new": new, "dir": root / "up", "sector": root / "sector", "value": out.value,
            "r1cs": root / "p0.r1cs"}


@pytest.fixture(scope="module")
def ours(oracle):
    sealed = seal(fr32_pad(oracle["raw"]), registered_proof=5, prover_id=PROVER_ID, sector_id=SECTOR_ID, ticket=TICKET)
    return sealed, update(sealed, fr32_pad(oracle["new"]))


def test_native_update_gives_the_oracles_replica_and_commitments(oracle, ours):
    sealed, u = ours
    v = oracle["value"]
    assert (oracle["sector"] / "sealed.bin").read_bytes() == sealed.replica.tobytes()
    assert (u.comm_r_old.hex(), u.comm_d_new.hex(), u.comm_r_new.hex(), u.comm_r_last_new.hex(), u.h) == \
        (v["comm_r_old"], v["comm_d_new"], v["comm_r_new"], v["comm_r_last_new"], v["h"])
    assert (oracle["dir"] / "update.bin").read_bytes() == u.replica.tobytes()
    assert (oracle["dir"] / "staged.bin").read_bytes() == u.data.tobytes()
    got = decode(u.replica, sealed.replica, comm_d_new=u.comm_d_new, comm_r_old=u.comm_r_old)
    assert (oracle["dir"] / "decoded.bin").read_bytes() == got.tobytes() == fr32_pad(oracle["new"])


def test_partition_proof_bytes_are_rust_fil_proofs(oracle, ours):
    _, u = ours
    theirs = (oracle["dir"] / "partition-0.bin").read_bytes()
    mine = partition_proof(u, 0)
    assert oracle["value"]["partitions"] == 1 and oracle["value"]["vanilla_verifies"]
    assert mine.to_bincode() == theirs
    parsed = PartitionProof.from_bincode(theirs)
    assert parsed == mine
    assert verify_partition_proof(u.params, parsed, k=0, comm_r_old=u.comm_r_old, comm_d_new=u.comm_d_new,
                                  comm_r_new=u.comm_r_new)


def test_update_circuit_is_bellpersons_row_by_row(oracle, ours):
    _, u = ours
    proof = PartitionProof.from_bincode((oracle["dir"] / "partition-0.bin").read_bytes())
    synth = cuzk.Synthesizer(circuit_for(u.params))
    w = synth.synthesize(**circuit_inputs(u.params, proof, k=0, comm_r_old=u.comm_r_old, comm_d_new=u.comm_d_new,
                                          comm_r_new=u.comm_r_new))
    dump = read_r1cs(oracle["r1cs"])
    summary = oracle["value"]["dump"]
    assert summary["satisfied"] and summary["public_inputs_match_verifier"]
    assert (synth.r1cs.n_public + 1, synth.r1cs.n_private, synth.r1cs.n_constraints) == \
        (dump.num_inputs, dump.num_aux, dump.num_constraints) == (5, 1_703_569, 1_705_039)
    assert witness_difference(w.z, read_witness(Path(summary["witness"]))) is None
    for m in "abc":
        assert first_row_difference(synth.r1cs, dump, m) is None
    assert [int.from_bytes(bytes.fromhex(h), "little") for h in summary["public_inputs"]] == list(w.public_inputs)
    # a guard on the guard: one changed coefficient is found
    ids = dump.b.coeff_ids.copy()
    ids[7] = (ids[7] + 1) % len(dump.coeffs)
    broken = type(dump)(dump.num_inputs, dump.num_aux, dump.num_constraints, dump.coeffs, dump.a,
                        type(dump.b)(dump.b.row_offsets, dump.b.columns, ids), dump.c)
    assert first_row_difference(synth.r1cs, broken, "b") is not None
    summary_file = json.loads((oracle["dir"] / "update.json").read_text())
    assert summary_file["comm_r_new"] == oracle["value"]["comm_r_new"]
    assert np.asarray(w.z).shape[0] == dump.num_inputs + dump.num_aux
