"""``cuzk serve`` over loopback and a Unix socket, on a tiny circuit (Cube): the extension's
ProveCircuit, status, metrics (the same text as HTTP /metrics), key preload/evict, and every
SubmitProofRequest field refused in turn with INVALID_ARGUMENT naming it."""

from __future__ import annotations

import json
import os
import stat
import threading
import urllib.request

import pytest

grpc = pytest.importorskip("grpc")

import cuzk  # noqa: E402
from cuzk.formats.snarkjs_json import public_to_json  # noqa: E402
from cuzk.groth16 import Proof  # noqa: E402
from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.direct import DirectCalls  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import config_text, cube_entry, cube_keys  # noqa: E402


@pytest.fixture(scope="module", params=["call-api", "grpcio-handlers"])
def served(tmp_path_factory, request):
    """The daemon with cuzk's services on grpc-core's call API (cuzk/serve/direct.py), and again
    on grpcio's own handlers, the transport where that API is missing: the same answers."""
    with pytest.MonkeyPatch.context() as mp:
        if request.param == "grpcio-handlers":
            mp.setattr(DirectCalls, "attach", classmethod(lambda cls, *a, **k: None))
        yield from _served(tmp_path_factory, request.param)


def _served(tmp_path_factory, transport):
    folder = tmp_path_factory.mktemp("serve")
    params, vk = cube_keys(folder)
    sock = folder / "run" / "cuzk.sock"
    cfg = parse_config(config_text(folder, listen=["127.0.0.1:0", f"unix://{sock}"],
                                   extra='status_listen = "127.0.0.1:0"\nrequest_retention = 60',
                                   circuits=cube_entry(params)))
    before = {t.name for t in threading.enumerate()}
    srv = Server(cfg)
    assert (srv.direct is not None) == (transport == "call-api")
    client = Client(srv.tcp_address, timeout=120)
    try:
        yield srv, client, vk, sock
    finally:
        client.close()
        srv.stop(grace_s=5)
    leaked = {t.name for t in threading.enumerate() if t.is_alive()} - before
    assert not [n for n in leaked if n.startswith("cuzk-serve")], leaked


def _code(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code(), e.value.details()


def test_prove_circuit_returns_snarkjs_json_and_a_verified_proof(served):
    srv, client, vk, _ = served
    r = client.prove_circuit("cube", {"x": 3, "out": 35}, request_id="cube-1")
    assert r.result.status == pb.AwaitProofResponse.COMPLETED and r.result.job_id == "cube-1"
    assert json.loads(r.public_json) == public_to_json([35])
    proof = json.loads(r.proof_json)
    assert proof["protocol"] == "groth16" and proof["curve"] == "bls12381"
    assert cuzk.groth16.verify(vk, [35], Proof.from_bytes(r.result.proof))
    assert r.result.total_ms >= r.result.gpu_compute_ms
    # the same id and inputs: the same job, answered again; other inputs under that id: refused
    again = client.prove_circuit("cube", {"x": 3, "out": 35}, request_id="cube-1")
    assert again.result.proof == r.result.proof and again.proof_json == r.proof_json
    # Curio's AwaitProof on an extension job: the same proof bytes
    assert client.await_proof("cube-1").proof == r.result.proof
    code, msg = _code(lambda: client.prove_circuit("cube", {"x": 2, "out": 15}, request_id="cube-1"))
    assert code == grpc.StatusCode.ALREADY_EXISTS and "request_id" in msg


def test_a_wrong_witness_fails_its_job_and_the_daemon_serves_on(served):
    _, client, vk, _ = served
    r = client.prove_circuit("cube", {"x": 3, "out": 36})
    assert r.result.status == pb.AwaitProofResponse.FAILED and r.result.error_message
    assert not r.proof_json
    ok = client.prove_circuit("cube", '{"x": "0x2", "out": "15"}')
    assert ok.result.status == pb.AwaitProofResponse.COMPLETED and json.loads(ok.public_json) == ["15"]


@pytest.mark.parametrize("kwargs, code, named", [
    (dict(circuit="nope", inputs={"x": 1}), "NOT_FOUND", "circuit"),
    (dict(circuit="wpost-2k", inputs={"x": 1}), "NOT_FOUND", "circuit"),
    (dict(circuit="cube"), "INVALID_ARGUMENT", "inputs_json"),
    (dict(circuit="cube", inputs="[1, 2]"), "INVALID_ARGUMENT", "inputs_json"),
    (dict(circuit="cube", inputs="{not json"), "INVALID_ARGUMENT", "inputs_json"),
    (dict(circuit="cube", inputs='{"x": 1.5, "out": 1}'), "INVALID_ARGUMENT", "inputs_json"),
    (dict(circuit="cube", inputs='{"x": "ten", "out": 1}'), "INVALID_ARGUMENT", "inputs_json"),
    (dict(circuit="cube", inputs={"x": 1, "out": 7}, wtns=b"wtns"), "INVALID_ARGUMENT", "inputs_json"),
    (dict(circuit="cube", inputs={"x": 1}, request_id="x" * 300), "INVALID_ARGUMENT", "request_id"),
    (dict(circuit="cube", inputs={"x": 1}, request_id="a\nb"), "INVALID_ARGUMENT", "request_id"),
    (dict(circuit="cube", inputs={"x": 1}, priority=9), "INVALID_ARGUMENT", "priority"),
    (dict(circuit="cube", inputs={"x": 1}, deadline_unix_ms=1 << 62), "INVALID_ARGUMENT", "deadline_unix_ms"),
    (dict(circuit="cube", inputs={"x": 1}, timeout_ms=1 << 62), "INVALID_ARGUMENT", "timeout_ms"),
    (dict(circuit="", inputs={"x": 1}), "INVALID_ARGUMENT", "circuit"),
])
def test_prove_circuit_refusals_name_the_field(served, kwargs, code, named):
    _, client, _, _ = served
    got, msg = _code(lambda: client.prove_circuit(**kwargs))
    assert got == getattr(grpc.StatusCode, code) and named in msg


def test_missing_inputs_fail_the_job_with_a_message(served):
    _, client, _, _ = served
    r = client.prove_circuit("cube", {"x": 1})  # "out" missing: the synthesizer's InputError
    assert r.result.status == pb.AwaitProofResponse.FAILED and "out" in r.result.error_message


def test_status_metrics_and_the_http_endpoints(served):
    srv, client, _, _ = served
    client.prove_circuit("cube", {"x": 1, "out": 7})
    st = client.status()
    assert st.backend == "cpu" and st.uptime_seconds >= 0 and st.total_proofs_completed >= 1
    assert [g.name for g in st.gpus] == ["cpu"]
    (cube,) = [s for s in st.loaded_srs if s.circuit_id == "cube"]
    assert cube.tier == pb.SRSStatus.HOT and cube.size_bytes > 0
    full = client.status_json()
    assert full["engine"]["circuits"]["cube"]["done"] >= 1 and "uptime_s" in full
    text = client.metrics()
    for series in ('cuzk_jobs_done_total{circuit="cube"}', "cuzk_serve_uptime_seconds", "process_resident_memory_bytes",
                   'cuzk_serve_rpcs_total{code="OK",method="ProveCircuit"}', 'cuzk_serve_jobs_total{kind="circuit:cube"'):
        assert series in text, series
    http = urllib.request.urlopen(f"{srv.status_address}/metrics", timeout=10).read().decode()
    strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith(("process_", "cuzk_serve_uptime", "cuzk_serve_rpcs"))]  # noqa: E731
    assert strip(http) == strip(client.metrics())
    doc = json.load(urllib.request.urlopen(f"{srv.status_address}/status", timeout=10))
    assert doc["engine"]["circuits"]["cube"]["done"] >= 1


def test_preload_and_evict(served):
    _, client, _, _ = served
    client.evict("cube")
    r = client.preload("cube")
    assert not r.already_loaded
    assert client.preload("cube").already_loaded
    e = client.evict("cube")
    assert e.was_loaded and e.freed_bytes > 0
    assert client.evict("cube").was_loaded is False
    assert client.evict("wpost-2k").was_loaded is False  # a Filecoin circuit never used: nothing loaded
    code, msg = _code(lambda: client.preload("wpost-2k"))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and ".params" in msg
    code, msg = _code(lambda: client.preload("snap-32g"))  # refused before its 16 partitions' circuit is traced
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "v28-empty-sector-update-" in msg
    assert _code(lambda: client.preload("nope"))[0] == grpc.StatusCode.NOT_FOUND
    assert _code(lambda: client.evict(""))[0] == grpc.StatusCode.INVALID_ARGUMENT


def test_list_circuits(served):
    _, client, _, _ = served
    names = {c.name: c for c in client.list_circuits()}
    assert names["cube"].source == "config" and names["cube"].registered
    assert names["winning-32g"].key.endswith("559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e.params")
    assert names["snap-2k"].key.endswith("fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194.params")


def test_the_unix_socket_is_private_and_serves(served):
    _, _, _, sock = served
    assert stat.S_ISSOCK(os.stat(sock).st_mode) and stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    with Client(f"unix://{sock}", timeout=60) as c:
        assert c.prove_circuit("cube", {"x": 2, "out": 15}).result.status == pb.AwaitProofResponse.COMPLETED


GOOD = dict(proof_kind=3, sector_size=2048, registered_proof=10, vanilla_proofs=[b"\0" * 8], randomness=bytes(32))


@pytest.mark.parametrize("change, code, named", [
    (dict(proof_kind=0), "INVALID_ARGUMENT", "proof_kind"),
    (dict(proof_kind=9), "INVALID_ARGUMENT", "proof_kind"),
    (dict(priority=7), "INVALID_ARGUMENT", "priority"),
    (dict(request_id="r" * 257), "INVALID_ARGUMENT", "request_id"),
    (dict(request_id="a\x00b"), "INVALID_ARGUMENT", "request_id"),
    (dict(sector_size=4096), "INVALID_ARGUMENT", "sector_size"),
    (dict(sector_size=8 << 20), "INVALID_ARGUMENT", "sector_size"),
    (dict(registered_proof=99), "INVALID_ARGUMENT", "registered_proof"),
    (dict(registered_proof=0), "INVALID_ARGUMENT", "registered_proof"),
    (dict(randomness=bytes(31)), "INVALID_ARGUMENT", "randomness"),
    (dict(randomness=b"\xff" * 32), "INVALID_ARGUMENT", "randomness"),
    (dict(vanilla_proofs=[]), "INVALID_ARGUMENT", "vanilla_proofs"),
    (dict(vanilla_proofs=[b"\0"] * 3), "INVALID_ARGUMENT", "vanilla_proofs"),
    (dict(vanilla_proofs=[b"garbage"]), "INVALID_ARGUMENT", "vanilla_proofs[0]"),
    (dict(vanilla_proof=b"{}"), "INVALID_ARGUMENT", "vanilla_proof"),
    (dict(comm_r_old=bytes(32)), "INVALID_ARGUMENT", "comm_r_old"),
    (dict(deadline_unix_ms=1 << 60), "INVALID_ARGUMENT", "deadline_unix_ms"),
    (dict(proof_kind=4, registered_proof=0, partition_index=1), "INVALID_ARGUMENT", "partition_index"),
    (dict(proof_kind=2, registered_proof=0), "INVALID_ARGUMENT", "randomness"),
    (dict(proof_kind=2, registered_proof=0, randomness=b""), "INVALID_ARGUMENT", "comm_r_old"),
    (dict(proof_kind=2, registered_proof=5, randomness=b""), "INVALID_ARGUMENT", "registered_proof"),
    (dict(proof_kind=2, registered_proof=1, randomness=b""), "INVALID_ARGUMENT", "sector_size"),
    (dict(proof_kind=2, registered_proof=0, randomness=b"", comm_r_old=bytes(32), comm_d_new=b"\xff" * 32),
     "INVALID_ARGUMENT", "comm_d_new"),
    (dict(proof_kind=2, registered_proof=0, randomness=b"", comm_r_old=bytes(32), comm_d_new=bytes(32),
          comm_r_new=bytes(32)), "INVALID_ARGUMENT", "vanilla_proofs[0]"),
    (dict(proof_kind=2, registered_proof=0, randomness=b"", comm_r_old=bytes(32), comm_d_new=bytes(32),
          comm_r_new=bytes(32), vanilla_proofs=[b"\0"] * 2), "INVALID_ARGUMENT", "vanilla_proofs"),
    (dict(proof_kind=1, registered_proof=5, vanilla_proofs=[], randomness=b""), "INVALID_ARGUMENT", "vanilla_proof"),
    (dict(proof_kind=1, registered_proof=5, vanilla_proofs=[], randomness=b"", vanilla_proof=b"[1]"), "INVALID_ARGUMENT",
     "vanilla_proof"),
    (dict(proof_kind=1, registered_proof=5, vanilla_proofs=[], randomness=b"",
          vanilla_proof=b'{"SectorNum": 1, "Phase1Out": "!!", "SectorSize": 2048}'), "INVALID_ARGUMENT",
     "vanilla_proof.Phase1Out"),
    (dict(proof_kind=1, registered_proof=5, vanilla_proofs=[], randomness=b"",
          vanilla_proof=b'{"SectorNum": 0, "Phase1Out": "e30=", "SectorSize": 4096}'), "INVALID_ARGUMENT",
     "vanilla_proof.SectorSize"),
    (dict(proof_kind=1, registered_proof=5, vanilla_proofs=[], randomness=b"",
          vanilla_proof=b'{"SectorNum": 0, "Phase1Out": "e30=", "SectorSize": 2048}'), "INVALID_ARGUMENT",
     "vanilla_proof.Phase1Out"),
    (dict(proof_kind=1, registered_proof=25, vanilla_proofs=[], randomness=b""), "INVALID_ARGUMENT", "registered_proof"),
])
def test_each_submit_field_is_checked(served, change, code, named):
    _, client, _, _ = served
    fields = {**GOOD, **change}
    for call in (lambda: client.submit(**fields), lambda: client.prove(**fields)):
        got, msg = _code(call)
        assert got == getattr(grpc.StatusCode, code), msg
        assert named in msg


def test_prove_without_submit_and_unknown_jobs(served):
    srv, client, _, _ = served
    code, msg = _code(lambda: client.engine.Prove(pb.ProveRequest(), timeout=30))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "submit" in msg
    assert _code(lambda: client.await_proof("no-such-job"))[0] == grpc.StatusCode.NOT_FOUND
    assert _code(lambda: client.await_proof(""))[0] == grpc.StatusCode.INVALID_ARGUMENT
    assert _code(lambda: client.cancel("no-such-job"))[0] == grpc.StatusCode.NOT_FOUND
    # a refused submit leaves no job behind: its id is free for a corrected retry
    _code(lambda: client.submit(**{**GOOD, "request_id": "retry-me"}))
    assert _code(lambda: client.await_proof("retry-me"))[0] == grpc.StatusCode.NOT_FOUND


def test_srs_preload_at_start(tmp_path):
    params, _ = cube_keys(tmp_path)
    text = config_text(tmp_path, circuits=cube_entry(params)).replace("[srs]\n", '[srs]\npreload = ["cube", "wpost-2k"]\n')
    cfg = parse_config(text)
    with Server(cfg) as srv:
        srv.preloading.join(60)
        keys = srv.daemon.engine.status()["keys"]
        assert keys["cube"]["tier"] == "host"  # loaded; wpost-2k has no parameter file: logged, not fatal
        assert "wpost-2k" not in keys
