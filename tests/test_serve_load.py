"""``cuzk serve`` under many clients at once: 32 threads sending a mix of proofs (fresh and
repeated request ids), short waits followed by AwaitProof, cancels of queued jobs and clients that
disconnect mid-call. No job is lost or answered twice: every call gets an answer, every job ends
once, a repeated id never makes a second proof, and the Engine made exactly as many proofs as
jobs completed. ``CUZK_SERVE_LOAD_REQUESTS`` sets the count (default 320; 2,000 for the full run)."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")

from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import circuits_pb2 as cpb  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import DaemonProcess, config_text, cube_entry  # noqa: E402

A = pb.AwaitProofResponse
THREADS = 32
REQUESTS = int(os.environ.get("CUZK_SERVE_LOAD_REQUESTS", "320"))
# the daemon's own peak RSS under the mix (docs/perf/serve.md, "Load", gives the measured figure)
RSS_BOUND_MB = 300


def _request(x: int, request_id: str):
    return cpb.ProveCircuitRequest(circuit="cube", inputs_json=f'{{"x": {x}, "out": {x ** 3 + x + 5}}}',
                                   request_id=request_id)


def _mix(client) -> tuple[Counter, list, set]:
    """THREADS threads sending REQUESTS calls of the mix; ``(outcomes, errors, request ids used)``."""
    outcomes: Counter = Counter()
    errors: list = []
    ids: set = set()
    lock = threading.Lock()

    def worker(k):
        rng = random.Random(k)
        for i in range(REQUESTS // THREADS):
            x = rng.randrange(1, 1000)
            inputs = {"x": x, "out": x ** 3 + x + 5}
            what = rng.random()
            try:
                if what < 0.45:  # a fresh proof
                    rid = f"t{k}-{i}"
                    got = client.prove_circuit("cube", inputs, request_id=rid).result.status
                elif what < 0.6:  # a repeated id (another thread's or our own earlier one)
                    rid = f"shared-{rng.randrange(max(1, i)) % 8}"
                    got = client.prove_circuit("cube", {"x": 0, "out": 5}, request_id=rid).result.status
                elif what < 0.75:  # a short wait, then AwaitProof
                    rid = f"w{k}-{i}"
                    got = client.prove_circuit("cube", inputs, request_id=rid, timeout_ms=1).result.status
                    if got == A.TIMEOUT:
                        got = client.await_proof(rid).status
                elif what < 0.9:  # submit-and-cancel: the call waits, another cancels it
                    rid = f"c{k}-{i}"
                    call = client.circuits.ProveCircuit.future(_request(x, rid), timeout=300)
                    try:
                        client.cancel(rid)
                    except grpc.RpcError as e:  # not claimed yet when the cancel came: fine
                        assert e.code() == grpc.StatusCode.NOT_FOUND
                    got = call.result().result.status
                else:  # a client that goes away mid-call; the job goes on
                    rid = f"d{k}-{i}"
                    call = client.circuits.ProveCircuit.future(_request(x, rid), timeout=300)
                    call.cancel()
                    got = "disconnected"
                with lock:
                    outcomes[got] += 1
                    ids.add(rid)
            except Exception as e:  # noqa: BLE001 - collected: the assertion names them
                errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    return outcomes, errors, ids


def _check_outcomes(outcomes: Counter, errors: list) -> None:
    assert not errors, errors[:5]
    assert sum(outcomes.values()) == (REQUESTS // THREADS) * THREADS
    assert set(outcomes) <= {A.COMPLETED, A.CANCELLED, "disconnected"}, outcomes


def test_many_clients_mixed_work(cube):
    folder, params = cube
    cfg = parse_config(config_text(folder, circuits=cube_entry(params), extra="max_concurrent_rpcs = 128"))
    with Server(cfg) as srv:
        client = Client(srv.tcp_address, timeout=300)
        client.prove_circuit("cube", {"x": 1, "out": 7})  # warm
        outcomes, errors, _ = _mix(client)
        _check_outcomes(outcomes, errors)
        # disconnected clients' jobs still end: wait for every job
        deadline = time.monotonic() + 120  # (futures.wait would not see a plain cancel(): poll done())
        while any(j.live for j in srv.daemon.jobs.snapshot()) and time.monotonic() < deadline:
            time.sleep(0.05)
        stuck = [(j.id, j.state()) for j in srv.daemon.jobs.snapshot() if j.live]
        assert not stuck, stuck
        jobs = srv.daemon.jobs.snapshot()
        counts = srv.daemon.jobs.counts
        ended = sum(counts.values())
        engine = srv.daemon.engine.status()["circuits"]["cube"]
        client.close()
    assert all(not j.live for j in jobs)
    assert ended == len(jobs)  # each job ended exactly once (retention keeps them all here)
    assert counts["failed"] == 0
    # one Engine proof per completed job: repeated ids never proved twice
    assert engine["done"] == counts["completed"] and engine["cancelled"] == counts["cancelled"]
    assert len({j.id for j in jobs if j.id.startswith("shared-")}) <= 8


def _peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM) in MB."""
    field = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(field["VmHWM"].split()[0]) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the daemon's peak RSS from /proc")
def test_a_daemon_process_under_the_mix_answers_every_job_once_within_its_rss_bound(cube, tmp_path):
    """The same mix against ``cuzk serve`` in a process of its own, seen only through its RPCs:
    every request id the clients used is a job that ended once (AwaitProof answers it COMPLETED
    or CANCELLED; an id a disconnected client never delivered is unknown), the daemon's counts
    add up to those jobs, one Engine proof per completed job, and the daemon's peak RSS (VmHWM)
    stays under RSS_BOUND_MB."""
    folder, params = cube
    config = tmp_path / "cuzk.toml"
    config.write_text(config_text(folder, circuits=cube_entry(params), extra="max_concurrent_rpcs = 128"))
    daemon = DaemonProcess(config)
    try:
        client = Client(daemon.tcp, timeout=300)
        client.prove_circuit("cube", {"x": 1, "out": 7})  # warm
        outcomes, errors, ids = _mix(client)
        _check_outcomes(outcomes, errors)
        deadline = time.monotonic() + 120
        while (q := client.status().queues) and any(x.pending + x.in_progress for x in q):
            assert time.monotonic() < deadline, q
            time.sleep(0.05)
        ended: Counter = Counter()
        for rid in sorted(ids):
            try:
                ended[client.await_proof(rid, timeout_ms=1).status] += 1
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.NOT_FOUND and rid.startswith("d"), (rid, e.details())
        st = json.loads(client.status().engine_status_json)
        peak = _peak_rss_mb(daemon.proc.pid)
        client.close()
    finally:
        code = daemon.terminate()
    assert code == 0, "\n".join(daemon.lines[-20:])
    assert set(ended) <= {A.COMPLETED, A.CANCELLED}, ended
    counts = st["jobs"]
    assert counts["failed"] == 0
    # the warm-up is one more completed job; every other job is one of the ids, ended once
    assert (counts["completed"], counts["cancelled"]) == (ended[A.COMPLETED] + 1, ended[A.CANCELLED])
    cube = st["engine"]["circuits"]["cube"]
    assert (cube["done"], cube["cancelled"]) == (counts["completed"], counts["cancelled"])
    print(f"daemon peak RSS {peak:.0f} MB after {REQUESTS} requests")
    assert peak < RSS_BOUND_MB, f"the daemon's peak RSS {peak:.0f} MB is over {RSS_BOUND_MB} MB"
