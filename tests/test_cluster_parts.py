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


# -- membership: nodes that join, CPU provers retiring, circuits an actor cannot serve ----------
def _wait(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def test_retired_slots_take_no_job_and_stop_after_their_proof():
    stopped = []
    pool = ProverPool(lambda slot: object(), lambda node: True, stop=stopped.append)
    cpu0, cpu1, gpu = pool.add(None), pool.add(None), pool.add("n1")
    pool.start_all()
    busy = pool.acquire()
    assert busy is cpu0
    idle_actor = cpu1.actor
    assert pool.retire([cpu0, cpu1]) == [cpu0, cpu1]
    assert (cpu0.state, cpu1.state) == ("retiring", "retired") and stopped == [idle_actor]
    assert pool.acquire(timeout=1) is gpu and pool.acquire(timeout=0.05) is None  # never a retired one
    busy_actor = cpu0.actor
    pool.release(cpu0)  # its last proof is done: it stops now
    assert cpu0.state == "retired" and stopped == [idle_actor, busy_actor]
    pool.failed(cpu0, busy_actor, RuntimeError("late death"))  # no replacement for a retired slot
    assert cpu0.state == "retired" and not pool.replacements


def test_a_slot_started_late_serves_once_up_and_holds_back_none_meanwhile():
    gate, stopped = threading.Event(), []

    def spawn(slot):
        if slot.name != "prover-0":
            assert gate.wait(10)
        return object()

    pool = ProverPool(spawn, lambda node: True, stop=stopped.append)
    first = pool.add("n1")
    pool.start_all()
    late = pool.add("n2")
    pool.start(late)  # the joiner: in the background
    assert late.state == "starting" and pool.acquire(timeout=1) is first
    gate.set()
    _wait(lambda: late.state == "idle")
    assert pool.acquire(timeout=1) is late
    # retired while it still starts: once up it is stopped, never used
    gate.clear()
    third = pool.add("n3")
    pool.start(third)
    assert pool.retire([third]) == [third] and third.state == "retiring"
    gate.set()
    _wait(lambda: third.state == "retired")
    assert len(stopped) == 1 and third.actor is None


def test_acquire_skips_slots_that_cannot_prove_the_circuit():
    pool = ProverPool(lambda slot: object(), lambda node: True)
    a, b = pool.add("n1"), pool.add("n2")
    pool.start_all()
    b.unavailable["seal"] = "'/keys/seal.params' does not exist on node n2"
    assert pool.acquire(prefer="n2", circuit="seal") is a
    assert pool.acquire(circuit="seal", timeout=0.05) is None  # b idle, but it cannot: a busy, so wait
    pool.failed(a, a.actor, RuntimeError("died"))  # replacement starts: still worth waiting for
    for t in pool.replacements:
        t.join()
    assert pool.acquire(circuit="post", prefer="n2") is b  # b serves every other circuit
    a_slot = pool.acquire(circuit="seal")
    assert a_slot is a
    a.state = "dead"
    assert pool.acquire(circuit="seal") is None  # none that can is alive or coming: fail, not hang


class _Remote:
    def __init__(self, fn):
        self.remote = fn


class _FakeActor:
    """A prover actor's calls, answered in-process (``ray.get`` of the fake is the identity)."""

    def __init__(self, readable, on_register=None):
        self.circuits = []
        self.info = _Remote(lambda: {"node": "n1", "pid": 1, "backend": "cpu", "clock_ns": time.time_ns()})
        self.clock = _Remote(time.time_ns)
        self.keys = _Remote(lambda: list(self.circuits))
        self.check_key = _Remote(lambda path: None if path in readable else f"{path!r} does not exist on node n1")
        self.register = _Remote(lambda name, synth, key: (self.circuits.append(name),
                                                          on_register and on_register(name)))


def _fake_engine(regs):
    ray = types.SimpleNamespace(get=lambda x, timeout=None: x, kill=lambda actor: None,
                                exceptions=types.SimpleNamespace(RayTaskError=KeyError, GetTimeoutError=TimeoutError))
    return types.SimpleNamespace(ray=ray, _backend_arg="cpu", _prover_budget=None, skews={}, start_timeout_s=5.0,
                                 _registrations=list(regs), _reg_lock=threading.RLock(),
                                 clock_sample=lambda *a: None)


def test_circuits_registered_while_an_actor_starts_reach_it_before_it_goes_live():
    from cuzk.cluster.actors import ActorStarter

    engine = _fake_engine([("a", None, "/keys/a.params")])

    def late_registrations(name):  # register() ran after spawn() read the list
        if name == "a":
            engine._registrations += [("b", None, object()), ("c", None, "/keys/missing.params")]

    actor = _FakeActor({"/keys/a.params"}, late_registrations)
    cls = types.SimpleNamespace(options=lambda **kw: types.SimpleNamespace(remote=lambda *a: actor))
    starter = ActorStarter(engine, cls)
    pool = ProverPool(starter.spawn, lambda node: True, ready=starter.ready, stop=starter.stop)
    slot = pool.add(None)
    with engine._reg_lock:  # a register() in progress: the slot cannot go live meanwhile
        pool.start(slot)
        _wait(lambda: "a" in actor.circuits)  # spawn() replays what it read; ready() waits for the lock
        time.sleep(0.1)
        assert slot.state == "starting" and actor.circuits == ["a"]
        engine._registrations.append(("d", None, object()))
    _wait(lambda: slot.state == "idle")
    assert actor.circuits == ["a", "b", "d"]
    # a key its node cannot read leaves that circuit out of this actor only, with why
    assert list(slot.unavailable) == ["c"] and "/keys/missing.params" in slot.unavailable["c"]
    assert slot.status()["unavailable"] == slot.unavailable and slot.node == "n1"
    assert pool.acquire(circuit="c", timeout=0.05) is None and pool.acquire(circuit="d") is slot


def test_the_watcher_adds_slots_for_joining_gpu_nodes_grows_defaults_and_retires_cpu_provers():
    from cuzk.cluster.nodes import NodeWatcher
    from cuzk.pipeline.channel import BoundedChannel
    from cuzk.pipeline.scheduler import ConcurrencyGate

    nodes = [{"NodeID": "cpu-box", "Alive": True, "Resources": {"CPU": 8.0}}]
    started, dispatchers = [], []
    core = types.SimpleNamespace(channel=BoundedChannel(1), lookahead=1,
                                 start_workers=lambda route, synth_workers, gate: started.append(synth_workers))
    auto = types.SimpleNamespace(auto_concurrency=True, concurrency=1, gate=ConcurrencyGate(1))
    fixed = types.SimpleNamespace(auto_concurrency=False, concurrency=1, gate=ConcurrencyGate(1))
    engine = types.SimpleNamespace(ray=types.SimpleNamespace(nodes=lambda: nodes), _reg_lock=threading.RLock(),
                                   _closed=False, _routes={"auto": auto, "fixed": fixed}, core=core,
                                   _auto_lookahead=True, add_dispatchers=dispatchers.append, devices=[])
    gate = threading.Event()

    def spawn(slot):  # a GPU actor comes up only once the test lets it
        assert not slot.pinned or gate.wait(10)
        return object()

    engine.pool = ProverPool(spawn, lambda node: any(n["NodeID"] == node and n["Alive"] for n in nodes))
    watcher = NodeWatcher(engine, 0.01)
    assert watcher.add_new() == []  # no GPU anywhere: the engine makes CPU provers
    cpu = engine.pool.add(None)
    engine.pool.start_all()
    watcher.poll()
    assert len(engine.pool.slots) == 1 and cpu.state == "idle"
    nodes.append({"NodeID": "gpu-a", "Alive": True, "Resources": {"GPU": 2.0, "CPU": 4.0}})
    watcher.poll()  # the joiners' actors start in the background
    gpus = engine.pool.slots[1:]
    assert [(s.name, s.node, s.state) for s in gpus] == [("prover-1", "gpu-a", "starting"),
                                                         ("prover-2", "gpu-a", "starting")]
    assert (auto.concurrency, auto.gate._limit, started) == (3, 3, [2]) and fixed.concurrency == 1
    assert core.channel.capacity == 3 and dispatchers == [3] and engine.devices[-1] == "prover-2"
    assert cpu.state == "idle"  # not retired: no GPU actor is up yet...
    gate.set()
    _wait(lambda: all(s.state == "idle" for s in gpus))
    gpus[0].unavailable["seal"] = "no key on gpu-a"
    gpus[1].unavailable["seal"] = "no key on gpu-a"
    watcher.poll()
    assert cpu.state == "idle"  # ...and a GPU actor without every circuit does not replace it
    gpus[1].unavailable.clear()
    watcher.poll()
    assert cpu.state == "retired" and watcher.status()["joined"] == 2 and watcher.status()["gpu_nodes"] == {"gpu-a": 2}
    watcher.poll()
    assert len(engine.pool.slots) == 3  # a node seen once gets its slots once
    nodes[1]["Alive"] = False  # the node left: its idle actors are dead at the next poll
    watcher.poll()
    assert [s.state for s in gpus] == ["dead", "dead"]
    watcher.start()
    watcher.stop()
    assert not watcher.is_alive()
