"""PoRep C2 and SnapDeals through ``cuzk serve`` from rust-fil-proofs' own payloads, sent as Curio
sends them, answered bytes checked by filecoin-proofs' own verifiers.

tests/test_serve_porep.py and tests/test_serve_snap.py send what cuzk's sealer and updater wrote,
so a mistake shared by cuzk's writer and the daemon's reader would cancel out there. Here a 2 KiB
sector is sealed and updated by rust-fil-proofs (the Rust oracle, tests/oracles/rust-fil-proofs):
its ``c1.json`` (the SealCommitPhase1Output JSON that Curio's storage hands to the daemon) and its
bincode PartitionProof go to the daemon through the Go client (tests/oracles/curio-client), whose
``prove-porep`` and ``prove-snap`` commands build the requests as Curio's ``PoRepSnarkCuzk`` and
``ProveUpdateCuzk`` do: the C1 envelope by Go's encoding/json, the snap vanilla proof read as the
JSON array of byte strings Curio stores. The same request built in Python and sent through
cuzk's grpcio client names the same job (the daemon keys a request id to the request's bytes):
the same proof comes back, none is made twice. The answers go to ``verify_seal`` and
``verify_empty_sector_update_proof`` through the oracle, with the verifying key file the daemon
reads beside its key (cuzk's development keys, tests/dev_keys.py: Filecoin's parameters are not
reachable here), and are refused for another statement. Skipped where grpc, go or cargo is absent."""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")
for tool in ("go", "cargo"):
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed: the Go client or the Rust oracle cannot be built",
                    allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracles"))
from rust_oracle import run_oracle  # noqa: E402

from cuzk.serve.filecoin import filecoin_circuit  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402

from dev_keys import dev_param_cache  # noqa: E402
from serve_support import curio_client_binary, serving  # noqa: E402

# the oracle seals and updates in seconds; each proof is a 2.7M (PoRep) or 1.7M (SnapDeals)
# constraint circuit proved on the CPU: ~30 and ~15 s on 2 cores once this machine holds the
# development keys (tests/dev_keys.py: minutes of setup each where it does not)
pytestmark = pytest.mark.slow

MINER, SECTOR = 1000, 42
# Filecoin's prover id of miner f01000: the actor id's LEB128 bytes, zero-padded to 32
PROVER_ID = bytes([0xE8, 0x07]).ljust(32, b"\0")
TICKET, SEED = bytes(range(1, 33)), bytes(range(200, 232))
SEAL_PROOF, UPDATE_PROOF = 5, 0  # StackedDrg2KiBV1_1; the 2 KiB empty-sector update


@pytest.fixture(scope="module")
def go_client():
    return curio_client_binary()


@pytest.fixture(scope="module")
def sector(tmp_path_factory):
    """A 2 KiB sector sealed by the oracle (its C1 for SEED), then updated with new data."""
    root = tmp_path_factory.mktemp("seal-oracle")
    (root / "data.bin").write_bytes(random.Random(51).randbytes(2032))
    (root / "new.bin").write_bytes(random.Random(52).randbytes(2032))
    run_oracle(root / "tmp", "seal", "--registered-proof", str(SEAL_PROOF), "--sector-size", "2048",
               "--prover-id", PROVER_ID.hex(), "--sector-id", str(SECTOR), "--ticket", TICKET.hex(),
               "--seed", SEED.hex(), "--data", root / "data.bin", "--out", root / "sector")
    up = run_oracle(root / "tmp", "update", "--sector", root / "sector", "--data", root / "new.bin",
                    "--out", root / "update", "--counts-only").value
    assert up["vanilla_verifies"] and up["partitions"] == 1
    # Curio's stored snap vanilla proof: encoding/json of [][]byte, each a base64 string
    vanilla = [base64.b64encode((root / "update" / f).read_bytes()).decode() for f in up["partition_proofs"]]
    (root / "snap-vanilla.json").write_text(json.dumps(vanilla))
    return root, up


def _go(binary, addr: str, *args) -> dict:
    proc = subprocess.run([str(binary), "-addr", addr, "-prove-timeout", "15m", *map(str, args)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)["result"]
    assert result["status"] == "COMPLETED", result
    return result


def _key_file(folder: Path, circuit_id: str) -> Path:
    """The .vk the daemon's param cache holds beside the key, under Filecoin's v28 name."""
    return folder / filecoin_circuit(circuit_id).vk_name


def test_porep_c2_of_a_rust_fil_proofs_c1_verifies_with_filecoin_proofs(go_client, sector, tmp_path):
    root, _ = sector
    c1 = root / "sector" / "c1.json"
    folder, _ = dev_param_cache("porep-2k", seed=5)
    with serving(folder, timeout=900, key_cache=folder / "keys") as (srv, client):
        result = _go(go_client, srv.tcp_address, "prove-porep", c1, MINER, SECTOR, SEAL_PROOF, 2048)
        envelope = json.dumps({"SectorNum": SECTOR, "Phase1Out": base64.b64encode(c1.read_bytes()).decode(),
                               "SectorSize": 2048}, separators=(",", ":")).encode()
        again = client.prove(request_id=f"porep-{MINER}-{SECTOR}", proof_kind=pb.POREP_SEAL_COMMIT, sector_size=2048,
                             registered_proof=SEAL_PROOF, priority=pb.NORMAL, vanilla_proof=envelope,
                             sector_number=SECTOR, miner_id=MINER)
        completed = client.status().total_proofs_completed
    assert result["job_id"] == again.job_id == f"porep-{MINER}-{SECTOR}"
    assert base64.b64decode(result["proof"]) == again.proof and completed == 1
    (tmp_path / "c2.proof").write_bytes(base64.b64decode(result["proof"]))
    args = ["--vk", _key_file(folder, "porep-2k"), "--proof", tmp_path / "c2.proof", "--c1", c1,
            "--prover-id", PROVER_ID.hex(), "--sector-id", str(SECTOR)]
    ok = run_oracle(tmp_path / "tmp", "verify-seal", *args, "--method", "filecoin-proofs")
    assert ok.value["valid"] is True
    bad = run_oracle(tmp_path / "tmp", "verify-seal", *args, "--method", "filecoin-proofs",
                     "--seed", bytes(32).hex(), check=False)
    assert (bad.returncode, bad.value["valid"]) == (1, False)


def test_snap_update_of_a_rust_fil_proofs_partition_proof_verifies_with_filecoin_proofs(go_client, sector, tmp_path):
    root, up = sector
    comms = [up["comm_r_old"], up["comm_r_new"], up["comm_d_new"]]
    folder, _ = dev_param_cache("snap-2k", seed=9)
    with serving(folder, timeout=900, key_cache=folder / "keys") as (srv, client):
        result = _go(go_client, srv.tcp_address, "prove-snap", root / "snap-vanilla.json", *comms, MINER, SECTOR,
                     UPDATE_PROOF, 2048)
        again = client.prove(request_id=f"snap-{MINER}-{SECTOR}", proof_kind=pb.SNAP_DEALS_UPDATE, sector_size=2048,
                             registered_proof=UPDATE_PROOF, priority=pb.NORMAL, sector_number=SECTOR, miner_id=MINER,
                             vanilla_proofs=[(root / "update" / f).read_bytes() for f in up["partition_proofs"]],
                             **{k: bytes.fromhex(v) for k, v in zip(("comm_r_old", "comm_r_new", "comm_d_new"), comms)})
        completed = client.status().total_proofs_completed
    assert result["job_id"] == again.job_id == f"snap-{MINER}-{SECTOR}"
    assert base64.b64decode(result["proof"]) == again.proof and completed == 1
    (tmp_path / "update.proof").write_bytes(base64.b64decode(result["proof"]))
    statement = dict(zip(("--comm-r-old", "--comm-r-new", "--comm-d-new"), comms))
    args = ["--vk", _key_file(folder, "snap-2k"), "--proof", tmp_path / "update.proof"]
    ok = run_oracle(tmp_path / "tmp", "verify-update", *args, *(x for kv in statement.items() for x in kv))
    assert ok.value["valid"] is True
    other = {**statement, "--comm-d-new": up["comm_r_old"]}
    bad = run_oracle(tmp_path / "tmp", "verify-update", *args, *(x for kv in other.items() for x in kv), check=False)
    assert (bad.returncode, bad.value["valid"]) == (1, False)
