"""PoRep C2 end to end through ``cuzk serve`` as Curio sends it: a 2 KiB sector sealed by cuzk's
native sealer, its C1 output (filecoin-proofs-api's SealCommitPhase1Output JSON) in Curio's
envelope ``{SectorNum, Phase1Out: base64(C1 JSON), SectorSize}``, the key from cuzk's development
setup under Filecoin's v28 PoRep name in the param cache (tests/dev_keys.py: made once per
machine); the answer checked with ``verify_commit_phase2`` against the sector's statement, and
refused for another seed."""

from __future__ import annotations

import base64
import json
import random

import attrs
import pytest

grpc = pytest.importorskip("grpc")

from cuzk.circuits.filecoin.porep import c2, fr32_pad, seal  # noqa: E402
from cuzk.circuits.filecoin.porep.c1 import commit_phase1  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402

from dev_keys import dev_param_cache  # noqa: E402
from serve_support import serving  # noqa: E402

# a 2.7M-constraint circuit: ~1.5 min to trace, map its key and prove; ~3 min more of setup where
# this machine has no development key for it yet
pytestmark = pytest.mark.slow

MINER, SECTOR = 1000, 42
SEED = bytes(range(100, 132))


def _envelope(c1, sector_number: int = SECTOR) -> bytes:
    """Curio's wrapC1Output: Go's json.Marshal of {SectorNum, Phase1Out []byte, SectorSize}."""
    return json.dumps({"SectorNum": sector_number, "Phase1Out": base64.b64encode(c1.to_json().encode()).decode(),
                       "SectorSize": 2048}, separators=(",", ":")).encode()


@pytest.fixture(scope="module")
def c1():
    sealed = seal(fr32_pad(random.Random(41).randbytes(2032)), registered_proof=5, prover_id=bytes(range(32)),
                  sector_id=SECTOR, ticket=bytes([9] * 32))
    return commit_phase1(sealed, SEED)


@pytest.fixture(scope="module")
def served():
    folder, vk = dev_param_cache("porep-2k", seed=5)  # the daemon finds the key and its .vk by their v28 names
    with serving(folder, timeout=900, key_cache=folder / "keys") as (srv, client):
        yield srv, client, vk


def test_c2_proved_over_grpc_verifies_for_its_statement_only(served, c1):
    _, client, vk = served
    # Curio's PoRepSnarkCuzk: request id porep-<miner>-<sector>, RegisteredSealProof 5 (2 KiB V1_1)
    r = client.prove(request_id=f"porep-{MINER}-{SECTOR}", proof_kind=pb.POREP_SEAL_COMMIT, sector_size=2048,
                     registered_proof=5, priority=pb.NORMAL, vanilla_proof=_envelope(c1), sector_number=SECTOR,
                     miner_id=MINER)
    assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
    assert len(r.proof) == c2.PROOF_BYTES and r.job_id == f"porep-{MINER}-{SECTOR}"
    assert c2.verify_commit_phase2(c1, vk, r.proof)
    assert not c2.verify_commit_phase2(attrs.evolve(c1, seed=bytes(32)), vk, r.proof)
    assert r.total_ms >= r.synthesis_ms > 0


def test_an_envelope_of_another_sector_number_is_refused(served, c1):
    _, client, _ = served
    with pytest.raises(grpc.RpcError) as e:
        client.submit(proof_kind=pb.POREP_SEAL_COMMIT, sector_size=2048, registered_proof=5,
                      vanilla_proof=_envelope(c1, SECTOR + 1), sector_number=SECTOR)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.details().startswith("vanilla_proof.SectorNum")
