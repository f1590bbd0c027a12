"""cuzk's PoRep against rust-fil-proofs itself (the Rust oracle, tests/oracles/): the same sector
sealed by both gives the same C1 bytes, and the StackedCircuit of that C1 is the same R1CS, row by
row and term by term, with the same assignment of every variable, as bellperson synthesizes it.
Only that makes Filecoin's own parameters prove cuzk's witnesses. Skipped where cargo is absent."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
from r1cs_compare import first_row_difference, witness_difference  # noqa: E402
from rust_oracle import read_r1cs, read_witness, run_oracle  # noqa: E402

import cuzk  # noqa: E402
from cuzk.circuits.filecoin.porep import c2, commit_phase1, seal  # noqa: E402
from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output, circuit_inputs  # noqa: E402

PROVER_ID, SECTOR_ID = bytes(range(32)), 7
TICKET, SEED = bytes([0x5A] * 31 + [0x01]), bytes([0xC3] * 32)


@pytest.fixture(scope="module", params=[5, 0], ids=["V1_1", "V1"])
def sealed(request, tmp_path_factory):
    """One 2 KiB sector of seeded data sealed by the oracle, and its R1CS and witness dump."""
    proof_id = request.param
    root = tmp_path_factory.mktemp(f"oracle{proof_id}")
    raw = random.Random(20240611).randbytes(2032)
    (root / "data.bin").write_bytes(raw)
    run_oracle(root / "tmp", "seal", "--registered-proof", str(proof_id), "--sector-size", "2048",
               "--prover-id", PROVER_ID.hex(), "--sector-id", str(SECTOR_ID), "--ticket", TICKET.hex(),
               "--seed", SEED.hex(), "--data", root / "data.bin", "--out", root / "sector")
    dump = run_oracle(root / "tmp", "dump-r1cs", "--c1", root / "sector" / "c1.json", "--partition", "0",
                      "--out", root / "p0.r1cs")
    return {"id": proof_id, "raw": raw, "dir": root / "sector", "dump": dump.value, "r1cs": root / "p0.r1cs"}


def test_native_seal_gives_the_oracles_c1_bytes(sealed):
    from cuzk.circuits.filecoin.porep import fr32_pad

    ours = seal(fr32_pad(sealed["raw"]), registered_proof=sealed["id"], prover_id=PROVER_ID, sector_id=SECTOR_ID,
                ticket=TICKET)
    assert commit_phase1(ours, SEED).to_json().encode() == (sealed["dir"] / "c1.json").read_bytes()


@pytest.mark.slow  # two 2.7M-constraint systems compared: ~1 min
def test_stacked_circuit_is_bellpersons_row_by_row(sealed):
    c1 = SealCommitPhase1Output.from_json((sealed["dir"] / "c1.json").read_bytes())
    synth = cuzk.Synthesizer(c2.circuit_for(c1.seal_proof))
    w = synth.synthesize(**circuit_inputs(c1, 0))
    dump = read_r1cs(sealed["r1cs"])
    assert (synth.r1cs.n_public + 1, synth.r1cs.n_private, synth.r1cs.n_constraints) == \
        (dump.num_inputs, dump.num_aux, dump.num_constraints)
    assert witness_difference(w.z, read_witness(Path(sealed["dump"]["witness"]))) is None
    for m in "abc":
        assert first_row_difference(synth.r1cs, dump, m) is None
    assert [int.from_bytes(bytes.fromhex(h), "little") for h in sealed["dump"]["public_inputs"]] == \
        list(w.public_inputs)


def test_the_comparison_can_fail(sealed):
    """A guard on the guard: one changed coefficient and one changed value are found."""
    c1 = SealCommitPhase1Output.from_json((sealed["dir"] / "c1.json").read_bytes())
    synth = cuzk.Synthesizer(c2.circuit_for(c1.seal_proof))
    dump = read_r1cs(sealed["r1cs"])
    coeff_ids = dump.c.coeff_ids.copy()
    coeff_ids[100] = (coeff_ids[100] + 1) % len(dump.coeffs)
    broken = type(dump)(dump.num_inputs, dump.num_aux, dump.num_constraints, dump.coeffs, dump.a, dump.b,
                        type(dump.c)(dump.c.row_offsets, dump.c.columns, coeff_ids))
    assert first_row_difference(synth.r1cs, broken, "c") is not None
    wit = read_witness(Path(sealed["dump"]["witness"]))
    fr = cuzk.curves.get("bls12_381").Fr
    z = fr.to_mont(np.ascontiguousarray(wit.z).view(np.uint64).reshape(-1, 4))
    assert witness_difference(z, wit) is None
    z[1234] = fr.add(z[1234:1235], fr.one(1))[0]
    assert "variable 1234" in witness_difference(z, wit)
