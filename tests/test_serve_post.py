"""WindowPoSt and WinningPoSt through ``cuzk serve`` exactly as Curio sends them: bincode
FallbackPoStSectorProof vanilla proofs of 2 KiB sectors (made by cuzk), keys under Filecoin's v28
names in the param cache, proofs checked against public inputs derived from the randomness; and
the job RPCs on them: SubmitProof's idempotency and queue positions, AwaitProof's timeout,
CancelProof, Prove, deadlines, timings."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")

import cuzk  # noqa: E402
from cuzk.field import FR  # noqa: E402
from cuzk.groth16 import Proof  # noqa: E402
from cuzk.serve.filecoin import filecoin_circuit  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402

from serve_support import (  # noqa: E402
    filecoin_keys, serving, sectors, window_public, window_request, winning_public, winning_request,
)

A = pb.AwaitProofResponse


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("params")
    vks = {"wpost-2k": filecoin_keys(folder, "wpost-2k")}  # read from the param cache by its v28 name
    # WinningPoSt's key is handed over in memory: its first checked read from a file takes ~50 s
    # on two cores, and the file path is the WindowPoSt test's
    engine = cuzk.Engine(device="cpu", memory_budget=None)
    synth = cuzk.Synthesizer(filecoin_circuit("winning-2k").circuit())
    pk, vks["winning-2k"] = cuzk.groth16.setup(synth.r1cs, rng=np.random.default_rng(3))
    engine.register("winning-2k", synth, pk, priority="critical")
    with serving(folder, engine=engine) as (srv, client):
        yield srv, client, vks


def test_window_post_partition_verifies(served):
    _, client, vks = served
    secs, randomness = sectors(2), random.Random(1).randrange(FR.modulus)
    r = client.prove(**window_request(secs, randomness, request_id="wdpost-1000-0-[1 2 3]"))
    assert r.status == A.COMPLETED, r.error_message
    assert len(r.proof) == 192 and r.job_id == "wdpost-1000-0-[1 2 3]"
    assert cuzk.groth16.verify(vks["wpost-2k"], window_public(secs, randomness), Proof.from_bytes(r.proof))
    assert r.total_ms >= r.synthesis_ms and r.gpu_compute_ms > 0


def test_a_short_partition_and_api_1_0_numbering(served):
    _, client, vks = served
    secs, randomness = sectors(1, seed=3), random.Random(2).randrange(FR.modulus)
    # registered proof 5: StackedDrgWindow2KiBV1 (API 1.0: challenge indices count sectors), partition 3
    req = window_request(secs, randomness, registered_proof=5, partition=3)
    r = client.prove(**req)
    assert r.status == A.COMPLETED, r.error_message
    pub = window_public(secs, randomness, registered_proof=5, partition=3)
    assert cuzk.groth16.verify(vks["wpost-2k"], pub, Proof.from_bytes(r.proof))
    # the same vanilla proofs claimed for partition 0: their paths are not partition 0's challenges
    code = None
    try:
        client.prove(**{**req, "partition_index": 0})
    except grpc.RpcError as e:
        code, msg = e.code(), e.details()
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "challenge" in msg


def test_winning_post_verifies(served):
    _, client, vks = served
    (sector,), randomness = sectors(1, seed=5), random.Random(3).randrange(FR.modulus)
    r = client.prove(**winning_request(sector, randomness, request_id="winpost-1000-ab"))
    assert r.status == A.COMPLETED, r.error_message
    assert cuzk.groth16.verify(vks["winning-2k"], winning_public(sector, randomness), Proof.from_bytes(r.proof))


def test_tampered_vanilla_proofs_are_refused_by_field(served):
    _, client, _ = served
    secs, randomness = sectors(2, seed=11), random.Random(4).randrange(FR.modulus)
    good = window_request(secs, randomness)
    other = random.Random(5).randrange(FR.modulus)
    cases = {
        # other randomness: the paths are no longer the challenges (the vanilla proof is named)
        "vanilla_proofs[0]: sector 100: inclusion proof 0 opens leaf": {**good, "randomness": other.to_bytes(32, "little")},
        "vanilla_proofs[1]": {**good, "vanilla_proofs": [good["vanilla_proofs"][0], good["vanilla_proofs"][1][:-1]]},
        "vanilla_proofs": {**good, "vanilla_proofs": [good["vanilla_proofs"][0]] * 2},  # one sector twice
    }
    flipped = bytearray(good["vanilla_proofs"][0])
    flipped[8 + 5] ^= 1  # a byte of comm_r: no longer Poseidon(comm_c, comm_r_last)
    cases["vanilla_proofs[0]: sector 100: comm_r"] = {**good, "vanilla_proofs": [bytes(flipped), good["vanilla_proofs"][1]]}
    for field, req in cases.items():
        with pytest.raises(grpc.RpcError) as e:
            client.submit(**req)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and e.value.details().startswith(field), \
            (field, e.value.details())


def test_submit_await_cancel_and_queue_positions(served):
    srv, client, vks = served
    secs = sectors(2, seed=21)
    reqs = [window_request(secs, random.Random(100 + k).randrange(FR.modulus), request_id=f"q-{k}") for k in range(4)]
    subs = [client.submit(**r) for r in reqs]
    assert [s.job_id for s in subs] == ["q-0", "q-1", "q-2", "q-3"]
    # one prove worker: q-0 runs (or is next), the rest queue behind it in submission order; a
    # position is taken at its submit, and the queue may drain between submits (a job whose
    # synthesis started is no longer queued), so each is at most the number submitted before it
    assert all(0 <= s.queue_position <= k for k, s in enumerate(subs))
    # q-3 waits behind what is queued; position 0 only once q-2 has started (proofs this small can
    # drain the queue while a loaded host is still making the four submits)
    assert subs[3].queue_position >= 1 or srv.daemon.jobs.get("q-2").started
    # idempotent: the same id and request returns the same job, never a second proof
    assert client.submit(**reqs[2]).job_id == "q-2"
    with pytest.raises(grpc.RpcError) as e:
        client.submit(**{**reqs[3], "request_id": "q-2"})
    assert e.value.code() == grpc.StatusCode.ALREADY_EXISTS
    # a critical job jumps the queue: nothing queued is ahead of it
    crit = client.submit(**window_request(secs, 12345, request_id="q-crit", priority=pb.CRITICAL))
    assert crit.queue_position == 0
    # cancel a queued one
    c = client.cancel("q-3")
    assert c.cancelled and not c.was_running
    assert client.await_proof("q-3").status == A.CANCELLED
    # a short wait answers TIMEOUT and leaves the job alone
    t0 = time.monotonic()
    late = client.await_proof("q-2", timeout_ms=50)
    assert late.status in (A.TIMEOUT, A.COMPLETED) and time.monotonic() - t0 < 30
    for k in (0, 1, 2):
        r = client.await_proof(f"q-{k}")
        assert r.status == A.COMPLETED, r.error_message
        pub = window_public(secs, int.from_bytes(reqs[k]["randomness"], "little"))
        assert cuzk.groth16.verify(vks["wpost-2k"], pub, Proof.from_bytes(r.proof))
    assert client.await_proof("q-crit").status == A.COMPLETED
    done = client.cancel("q-0")
    assert not done.cancelled and not done.was_running
    st = client.status()
    assert any(s.circuit_id == "wpost-2k" for s in st.loaded_srs)
    assert st.total_proofs_completed >= 4


def test_a_deadline_already_past_fails_the_job(served):
    _, client, _ = served
    secs = sectors(2, seed=31)
    r = client.prove(**window_request(secs, 777, deadline_unix_ms=int((time.time() - 1) * 1000)))
    assert r.status == A.FAILED and "eadline" in r.error_message


def test_prove_timeout_leaves_the_job_running(served):
    _, client, _ = served
    secs = sectors(2, seed=41)
    r = client.prove(**window_request(secs, 999, request_id="slow-1"), timeout_ms=1)
    assert r.status in (A.TIMEOUT, A.COMPLETED)
    assert client.await_proof("slow-1").status == A.COMPLETED
