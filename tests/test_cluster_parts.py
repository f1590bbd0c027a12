"""The cluster's pure parts, without Ray: clock offsets from round trips (property-tested
against a simulated skewed clock), the prover pool's picks and replacement rules, and the
merged-timeline views (per-actor utilization, disorder, waterfall, one trace process per node),
and the address probe that keeps ``ray.init`` from hanging on a port that is not Ray's."""

import socket
import threading
import time
import types

import pytest
from hypothesis import given, settings, strategies as st

from cuzk.cluster.clock import ClockOffset
from cuzk.cluster.pool import ProverPool
from cuzk.cluster.raylib import connect, probe
from cuzk.errors import ClusterError
from cuzk.cluster.timeline import ClusterTimeline, disorder_ns
from cuzk.timeline import EventKind as K
from cuzk.timeline.events import Event


@settings(max_examples=200, deadline=None)
@given(skew=st.integers(-10**10, 10**10),
       calls=st.lists(st.tuples(st.integers(0, 10**9), st.integers(1, 10**6), st.integers(0, 10**6),
                                st.integers(1, 10**6)), min_size=1, max_size=20))
def test_offset_interval_always_holds_the_true_skew_and_orders_every_call(skew, calls):
    # a node whose clock is driver + skew; each call: sent at t, one-way delays d1/d2, work w
    clock = None
    for t, d1, w, d2 in calls:
        t0, r0 = t, t + d1 + skew
        r1, t1 = r0 + w, t + d1 + w + d2
        if clock is None:
            clock = ClockOffset.first(t0, r0, r1, t1)
        else:
            clock.add(t0, r0, r1, t1)
        assert clock.lo <= skew <= clock.hi and clock.resets == 0
        # this call's node stamps land inside its driver bracket
        assert t0 <= clock.to_driver(r0) <= clock.to_driver(r1) <= t1 + 1
    assert abs(clock.offset_ns - skew) <= clock.uncertainty_ns + 1


def test_a_stepped_clock_restarts_the_interval():
    c = ClockOffset.first(0, 1_000, 1_000, 10)  # offset in [990, 1000]
    c.add(100, 5_100, 5_100, 110)  # the node's clock jumped by 4 us
    assert c.resets == 1 and (c.lo, c.hi) == (4_990, 5_000)


def test_pool_prefers_the_witness_node_and_replaces_only_on_live_nodes():
    alive = {"n1": True, "n2": True}
    spawned = []
    pool = ProverPool(lambda slot: spawned.append(slot.name) or object(), lambda node: alive[node])
    a, b = pool.add("n1"), pool.add("n2")
    pool.start_all()
    assert pool.acquire(prefer="n2") is b and pool.acquire(prefer="n2") is a
    pool.release(a)
    pool.failed(b, b.actor, RuntimeError("actor died"))  # its node lives: replaced
    for t in pool.replacements:
        t.join()
    assert b.state == "idle" and b.restarts == 1 and spawned.count("prover-1") == 2
    alive["n1"] = False
    got = pool.acquire()
    pool.failed(got, got.actor, RuntimeError("node died"))
    assert got.state == "dead" and got.restarts == 0
    assert pool.acquire() is b  # the live slot still serves
    pool.failed(b, object(), RuntimeError("stale"))  # not its current actor: ignored
    assert b.state == "busy"
    alive["n2"] = False
    pool.failed(b, b.actor, RuntimeError("node died"))
    assert pool.acquire() is None  # nothing alive or coming: the job fails, it does not hang


def test_a_replacement_that_cannot_start_holds_back_no_other_slot():
    gate = threading.Event()
    calls = []

    def spawn(slot):
        calls.append(slot.name)
        if len(calls) > 2:  # the replacement: blocks, then fails
            gate.wait(10)
            raise RuntimeError("cannot place it")
        return object()

    pool = ProverPool(spawn, lambda node: True)
    a, b = pool.add("n1"), pool.add("n2")
    pool.start_all()
    s = pool.acquire(prefer="n1")
    pool.failed(s, s.actor, RuntimeError("died"))
    assert a.state == "replacing" and pool.acquire(timeout=1) is b  # the other slot is free meanwhile
    gate.set()
    for t in pool.replacements:
        t.join()
    assert a.state == "dead" and "cannot place" in a.error


def _run(events):
    tl = ClusterTimeline()
    for t, kind, job, worker, node in events:
        tl.record_at(t, kind, job, None, worker, node=node)
    return tl


def test_disorder_measures_the_worst_stage_inversion():
    ok = [(0, K.JOB_SUBMIT, 1, None, None), (5, K.GPU_START, 1, "p0", "a"), (9, K.GPU_END, 1, "p0", "a"),
          (10, K.JOB_DONE, 1, None, None)]
    assert disorder_ns(_run(ok).events()) == 0
    bad = ok + [(0, K.JOB_SUBMIT, 2, None, None), (30, K.GPU_PICKUP, 2, None, None),
                (25, K.GPU_START, 2, "p1", "b"), (40, K.GPU_END, 2, "p1", "b"), (41, K.JOB_DONE, 2, None, None)]
    assert disorder_ns(_run(bad).events()) == 5


def test_trace_has_a_process_per_node_and_the_waterfall_a_row_per_actor(tmp_path):
    tl = _run([(0, K.GPU_START, 1, "prover-0", "node-a"), (10, K.GPU_END, 1, "prover-0", "node-a"),
               (0, K.GPU_START, 2, "prover-1", "node-b"), (5, K.GPU_END, 2, "prover-1", "node-b"),
               (1, K.JOB_DONE, 2, None, None)])
    trace = tl.to_chrome_trace()["traceEvents"]
    gpu_pids = {e["args"].get("job", e["tid"]): e["pid"] for e in trace if e.get("ph") == "X"}
    assert len(set(gpu_pids.values())) == 2 and 1 not in gpu_pids.values()
    names = {e["pid"]: e["args"]["name"] for e in trace if e.get("name") == "process_name"}
    assert {names[p] for p in gpu_pids.values()} == {"node node-a", "node node-b"}
    rows = tl.waterfall(width=10).splitlines()
    assert rows == ["prover-0  |##########| 100%", "prover-1  |#####     | 50%"]
    assert tl.utilization()["parallelism"] == pytest.approx(1.5)
    path = tmp_path / "t.jsonl"
    tl.save(path)  # Event.node survives a save/load
    assert {e.node for e in ClusterTimeline.load(path).events()} == {"node-a", "node-b", None}


@pytest.fixture
def listener():
    """A TCP listener on 127.0.0.1 that accepts connections and then does ``behave(conn)``."""
    srv = socket.create_server(("127.0.0.1", 0))
    held, state = [], {"behave": lambda conn: None}

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            held.append(conn)
            state["behave"](conn)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"127.0.0.1:{srv.getsockname()[1]}", state
    finally:
        srv.close()
        for conn in held:
            conn.close()
        t.join(5)


def test_an_address_that_accepts_tcp_but_never_speaks_ray_fails_within_the_timeout(listener, monkeypatch):
    address, state = listener
    t0 = time.monotonic()
    with pytest.raises(ClusterError, match="said nothing"):
        probe(address, 0.5)
    with pytest.raises(ClusterError, match="not an HTTP/2 SETTINGS"):
        state["behave"] = lambda conn: conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        probe("ray://" + address, 0.5)
    state["behave"] = lambda conn: conn.close()
    with pytest.raises(ClusterError, match="closed it"):
        probe(address, 0.5)
    assert time.monotonic() - t0 < 5
    # connect() probes before ray.init, which would hang on such a port: init is never reached
    state["behave"] = lambda conn: None
    calls = []
    fake = types.SimpleNamespace(is_initialized=lambda: False, init=lambda **kw: calls.append(kw))
    monkeypatch.setattr("cuzk.cluster.raylib.require_ray", lambda: fake)
    with pytest.raises(ClusterError, match="does not speak Ray"):
        connect(address, 0.5)
    assert calls == []
