"""``cuzk serve`` as operators run it: ``python -m cuzk serve --config FILE`` in its own process,
SIGTERM while proofs run and more wait, then started again. Every waiting client gets an answer:
running proofs COMPLETED (and valid), queued ones CANCELLED, none dropped; the process exits 0
and the next one serves on the same addresses."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")

import cuzk  # noqa: E402
from cuzk.circuits import porep_like  # noqa: E402
from cuzk.groth16 import Proof  # noqa: E402
from cuzk.serve import Client  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402

from serve_support import DaemonProcess, config_text  # noqa: E402

A = pb.AwaitProofResponse
JOBS = 8


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("restart")
    circuit = porep_like()  # ~12k constraints: a few tenths of a second per proof, so a queue forms
    synth = cuzk.Synthesizer(circuit)
    pk, vk = cuzk.groth16.setup(synth.r1cs, rng=np.random.default_rng(4))
    pk.write(folder / "slow.params")
    sock = folder / "s" / "cuzk.sock"
    entry = f'[[circuits]]\nname = "slow"\nparams = "{folder / "slow.params"}"\ncircuit = "cuzk.circuits:porep_like"\n'
    (folder / "cuzk.toml").write_text(config_text(folder, listen=["127.0.0.1:0", f"unix://{sock}"], circuits=entry))
    return folder, circuit, vk, sock


def test_sigterm_answers_every_client_then_a_restart_serves(setup):
    folder, circuit, vk, sock = setup
    d = DaemonProcess(folder / "cuzk.toml")
    try:
        assert any(a.startswith("unix://") for a in d.addresses) and d.tcp.startswith("127.0.0.1:")
        client = Client(d.tcp, timeout=300)
        client.prove_circuit("slow", circuit.sample_inputs(seed=100))  # warm (kernels loaded, key read)
        answers: dict = {}

        def prove(k):
            try:
                answers[k] = client.prove_circuit("slow", circuit.sample_inputs(seed=k), request_id=f"r-{k}")
            except grpc.RpcError as e:  # recorded: the assertion below says which
                answers[k] = e

        threads = [threading.Thread(target=prove, args=(k,)) for k in range(JOBS)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # every job submitted, proofs running and more waiting behind them
            st = client.status_json()
            q = st["queues"].get("circuit:slow", {})
            known = q.get("pending", 0) + q.get("in_progress", 0) + st["jobs"]["completed"] - 1  # less the warm-up
            if known == JOBS and q.get("in_progress", 0) >= 1 and q.get("pending", 0) >= 2:
                break
            time.sleep(0.02)
        assert d.terminate(timeout=120) == 0
        for t in threads:
            t.join(60)
        client.close()
    finally:
        d.kill()
    assert sorted(answers) == list(range(JOBS)), "a client got no answer"
    assert all(not isinstance(a, Exception) for a in answers.values()), answers
    status = {k: a.result.status for k, a in answers.items()}
    done = [k for k, s in status.items() if s == A.COMPLETED]
    cancelled = [k for k, s in status.items() if s == A.CANCELLED]
    assert done and cancelled and len(done) + len(cancelled) == JOBS, status
    for k in done:
        public = [int(x) for x in json.loads(answers[k].public_json)]
        assert public == circuit.public_inputs(circuit.sample_inputs(seed=k))
        assert cuzk.groth16.verify(vk, public, Proof.from_bytes(answers[k].result.proof))
    out = "\n".join(d.lines)
    assert "SIGTERM" in out and f"{len(cancelled)} queued jobs cancelled" in out, out
    assert not sock.exists()  # the socket file goes with the daemon

    again = DaemonProcess(folder / "cuzk.toml")
    try:
        with Client(f"unix://{sock}", timeout=300) as c:
            r = c.prove_circuit("slow", circuit.sample_inputs(seed=1))
            assert r.result.status == A.COMPLETED
            with pytest.raises(grpc.RpcError) as e:  # jobs live in memory: a new daemon does not know them
                c.await_proof("r-0")
            assert e.value.code() == grpc.StatusCode.NOT_FOUND
        assert again.terminate() == 0
    finally:
        again.kill()
