"""SnapDeals through ``cuzk serve`` as Curio sends it: a 2 KiB sector sealed and updated by cuzk's
native code, its bincode PartitionProof and the three 32-byte commitments in a SNAP_DEALS_UPDATE
request (registered update proof 0, Curio's request id), the key from cuzk's development setup
under Filecoin's v28 update name in the param cache (tests/dev_keys.py: made once per machine);
the answer verified against public inputs recomputed from the statement alone, and refused for
any other statement."""

from __future__ import annotations

import random

import pytest

grpc = pytest.importorskip("grpc")

from cuzk.circuits.filecoin.porep import fr32_pad, seal  # noqa: E402
from cuzk.circuits.filecoin.update import partition_proofs, update, verify_update  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402

from dev_keys import dev_param_cache  # noqa: E402
from serve_support import serving, snap_request  # noqa: E402

# a 1.7M-constraint circuit: ~1 min to trace, map its key and prove; ~2 min more of setup where
# this machine has no development key for it yet
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def updated():
    sealed = seal(fr32_pad(random.Random(31).randbytes(2032)), registered_proof=5, prover_id=bytes(range(32)),
                  sector_id=9, ticket=bytes([5] * 32))
    return update(sealed, fr32_pad(random.Random(32).randbytes(2032)))


@pytest.fixture(scope="module")
def served():
    folder, vk = dev_param_cache("snap-2k", seed=9)  # the daemon finds the key by its v28 name
    with serving(folder, timeout=900, key_cache=folder / "keys") as (srv, client):
        yield srv, client, vk


def test_an_update_proved_over_grpc_verifies_for_its_statement_only(served, updated):
    _, client, vk = served
    req = snap_request(updated, partition_proofs(updated), request_id="snap-1000-9", priority=pb.NORMAL)
    r = client.prove(**req)
    assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
    assert r.job_id == "snap-1000-9" and len(r.proof) == 192 and r.total_ms >= r.synthesis_ms
    statement = dict(comm_r_old=updated.comm_r_old, comm_d_new=updated.comm_d_new, comm_r_new=updated.comm_r_new)
    assert verify_update(updated.params, vk, r.proof, **statement)
    for field in statement:
        other = (int.from_bytes(statement[field], "little") + 1).to_bytes(32, "little")
        assert not verify_update(updated.params, vk, r.proof, **{**statement, field: other})
    # the same request id and request: the same job and proof, no second proof
    assert client.prove(**req).proof == r.proof
    srs = {s.circuit_id: s for s in client.status().loaded_srs}
    assert srs["snap-2k"].tier == pb.SRSStatus.HOT and srs["snap-2k"].size_bytes > 0


def test_a_proof_of_another_sector_is_refused_before_it_is_queued(served, updated):
    _, client, _ = served
    other = update(seal(fr32_pad(random.Random(33).randbytes(2032)), registered_proof=5, prover_id=bytes(32),
                        sector_id=10, ticket=bytes([6] * 32)), fr32_pad(random.Random(34).randbytes(2032)))
    req = snap_request(updated, partition_proofs(other))  # the vanilla proof is the other sector's
    with pytest.raises(grpc.RpcError) as e:
        client.submit(**req)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and e.value.details().startswith("comm_r_old:")
    assert "vanilla_proofs[0]" in e.value.details()
