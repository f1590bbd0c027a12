"""RayEngine on a local three-node Ray cluster (each node declares one GPU; the provers use
the CPU backend): proofs verify, the Engine's scheduling rules hold, the merged timeline is in
order with injected clock skews removed, a killed actor and then a killed node lose no job,
and misuse gets cuzk errors. One cluster for the module (it costs ~15 s to start)."""

import os
import sys
import threading
import time
from collections import Counter

import pytest

# before Ray is imported: otherwise its nodes advertise the machine's interface address
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")

import cuzk  # noqa: E402
from cuzk.circuits.cube import Cube  # noqa: E402
from cuzk.cluster import RayEngine  # noqa: E402
from cuzk.cluster.timeline import STAGE_ORDER  # noqa: E402
from cuzk.errors import ClusterError, DeadlineExceededError, InputError, ProofVerificationError  # noqa: E402
from cuzk.groth16 import setup, verify  # noqa: E402
from cuzk.timeline import EventKind as K  # noqa: E402
from cluster_support import SlowProver, Unpicklable  # noqa: E402
from ray_startup import START_TIMEOUT_S, one_cluster, patient_nodes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SKEWS_S = (0.0, 3.0, -2.0)  # injected per node: the merge must remove them
NODE = dict(num_cpus=1, num_gpus=1, object_store_memory=80 * 2**20, node_ip_address="127.0.0.1")


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    env = {"PYTHONPATH": os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the nodes' processes inherit it
    try:
        with one_cluster(), patient_nodes():
            c = Cluster(initialize_head=True, head_node_args=dict(
                include_dashboard=False,
                **NODE))
            try:
                assert c.address.startswith("127.0.0.1:"), c.address  # loopback only
                workers = [c.add_node(**NODE) for _ in range(2)]
                c.wait_for_nodes(timeout=START_TIMEOUT_S)
                yield c, workers
            finally:
                if ray.is_initialized():
                    ray.shutdown()
                c.shutdown()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def cube():
    synth = cuzk.Synthesizer(Cube())
    pk, vk = setup(synth.r1cs)
    return synth, pk, vk


@pytest.fixture(scope="module")
def engine(cluster, cube):
    c, workers = cluster
    nodes = [c.head_node.node_id] + [w.node_id for w in workers]
    e = RayEngine(c.address, clock_skew=dict(zip(nodes, SKEWS_S)), start_timeout_s=90)
    e.skewed = dict(zip(nodes, SKEWS_S))
    synth, pk, vk = cube
    e.register("cube", synth, pk)
    e.register("slow", synth, SlowProver(pk, 0.6))
    try:
        yield e
    finally:
        e.close()


def _public(seed):
    return Cube().public_inputs(Cube().sample_inputs(seed=seed))


def test_proofs_verify_across_the_nodes_and_status_shows_the_actors(engine, cube):
    _, _, vk = cube
    fs = {s: engine.submit("cube", Cube().sample_inputs(seed=s)) for s in range(1, 7)}
    for s, f in fs.items():
        proof = f.result(timeout=300)
        assert verify(vk, _public(s), proof) and not verify(vk, [_public(s)[0] + 1], proof)
        assert f.timings.prove_s > 0
    st = engine.status()
    assert st["circuits"]["cube"]["done"] == 6
    actors = st["cluster"]["actors"]
    assert len(actors) == 3 and len({a["node"] for a in actors}) == 3
    assert sum(a["proofs"] for a in actors) == 6 and st["cluster"]["retries"] == 0
    assert "cuzk_cluster_actors_alive 3" in engine.metrics()


def test_request_ids_priorities_and_deadlines_as_in_the_engine(engine, cube):
    _, _, vk = cube
    f = engine.submit("cube", Cube().sample_inputs(seed=9), request_id="req-9", priority="critical")
    assert engine.submit("cube", Cube().sample_inputs(seed=9), request_id="req-9") is f
    with pytest.raises(InputError):
        engine.submit("cube", Cube().sample_inputs(seed=8), request_id="req-9")
    late = engine.submit("cube", Cube().sample_inputs(seed=10), deadline=time.time() - 1)
    with pytest.raises(DeadlineExceededError):
        late.result(timeout=60)
    assert verify(vk, _public(9), f.result(timeout=60)) and f.job_id == "req-9"
    parts = engine.submit_partitioned("cube", [Cube().sample_inputs(seed=s) for s in (11, 12)])
    assert [verify(vk, _public(s), p) for s, p in zip((11, 12), parts.result(timeout=300))] == [True, True]
    assert not [e for e in engine.timeline.events() if e.job_id == late.job_id and e.kind == K.GPU_START]


def test_the_jobs_own_fault_fails_it_without_a_retry(engine):
    bad = dict(Cube().sample_inputs(seed=4), out=1)  # unsatisfied: the actor's prover refuses it
    before = engine.status()["cluster"]["retries"]
    with pytest.raises((ProofVerificationError, cuzk.errors.CuzkError)):
        engine.submit("cube", bad).result(timeout=60)
    assert engine.status()["cluster"]["retries"] == before


def test_merged_timeline_is_in_order_and_the_injected_skews_are_removed(engine):
    events = engine.timeline.events()
    done = {e.unit for e in events if e.kind == K.JOB_DONE}
    assert done
    by_unit = {}
    for e in events:
        by_unit.setdefault(e.unit, []).append(e)
    for unit in done:
        kinds = [e.kind for e in by_unit[unit] if e.kind in STAGE_ORDER]
        assert [k for k in kinds if k in (K.JOB_SUBMIT, K.SYNTH_START, K.SYNTH_END, K.GPU_START, K.GPU_END,
                                          K.JOB_DONE)] == [K.JOB_SUBMIT, K.SYNTH_START, K.SYNTH_END, K.GPU_START,
                                                           K.GPU_END, K.JOB_DONE], unit
        assert kinds == sorted(kinds, key=STAGE_ORDER.index), unit
        gpu = [e for e in by_unit[unit] if e.kind == K.GPU_START][0]
        assert gpu.worker.startswith("prover-") and gpu.node is not None
        # synthesis is stamped by the Ray worker that ran it, on its node's (skewed) clock
        synth = [e for e in by_unit[unit] if e.kind in (K.SYNTH_START, K.SYNTH_END)]
        assert {e.node for e in synth} <= set(engine.skewed) and len({e.worker for e in synth}) == 1, synth
        assert synth[0].worker.startswith("synth-") and synth[0].circuit == unit_circuit(by_unit[unit])
        assert synth[1].detail["thread_cpu_ns"] >= synth[0].detail["thread_cpu_ns"]
    assert {e.node for e in events if e.kind == K.SYNTH_START} - {None}, "no synthesis stamped on a node"
    assert engine.timeline.disorder_ns() == 0
    offsets = engine.status()["cluster"]["clock_offsets"]
    for node, skew in engine.skewed.items():
        found = offsets[node]
        assert abs(found["offset_s"] - skew) <= found["uncertainty_s"] + 0.05, (node, found, skew)
    trace = engine.timeline.to_chrome_trace()["traceEvents"]
    assert {e["args"]["name"][:5] for e in trace if e.get("name") == "process_name"} >= {"node "}
    assert len({e["pid"] for e in trace if e.get("ph") == "X" and e.get("cat") == "gpu"}) == 3
    rows = engine.timeline.waterfall().splitlines()
    assert sorted(r.split()[0] for r in rows) == ["prover-0", "prover-1", "prover-2"]
    util = engine.timeline.utilization()
    assert set(util["actors"]) == {"prover-0", "prover-1", "prover-2"} and 0 < util["cluster"] <= 1


def unit_circuit(events):
    return next(e.circuit for e in events if e.kind == K.JOB_SUBMIT)


_count_lock = threading.Lock()


def _resolutions(futures, calls):
    """Count each future's resolutions into ``calls`` (a done-callback runs once per resolution)."""
    lock = _count_lock
    for f in futures:
        def count(_f, k=f.job_id):
            with lock:
                calls[k] += 1
        f.add_done_callback(count)


def _busy_slot(engine, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [s for s in engine.pool.slots if s.state == "busy" and s.current is not None]
        if busy:
            return busy[0]
        time.sleep(0.05)
    raise AssertionError("no actor became busy")


def test_killed_actor_then_killed_node_lose_no_job(engine, cluster, cube):
    c, workers = cluster
    _, _, vk = cube
    fs = [engine.submit("slow", Cube().sample_inputs(seed=s)) for s in range(20, 26)]
    calls = Counter()
    _resolutions(fs, calls)
    slot = _busy_slot(engine)
    time.sleep(0.2)  # inside the prover's sleep
    ray.kill(slot.actor, no_restart=True)
    for s, f in zip(range(20, 26), fs):
        assert verify(vk, _public(s), f.result(timeout=300))
    st = engine.status()["cluster"]
    assert st["retries"] >= 1
    deadline = time.monotonic() + 90
    while engine.status()["cluster"]["restarts"] < 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert engine.status()["cluster"]["restarts"] >= 1  # its node lives: replaced in place
    # now a whole node
    fs2 = [engine.submit("slow", Cube().sample_inputs(seed=s)) for s in range(30, 38)]
    _resolutions(fs2, calls)
    victim = workers[-1]
    deadline = time.monotonic() + 60
    while not any(s.state == "busy" and s.node == victim.node_id for s in engine.pool.slots):
        assert time.monotonic() < deadline, "no job reached the victim node"
        time.sleep(0.05)
    time.sleep(0.2)
    c.remove_node(victim)
    for s, f in zip(range(30, 38), fs2):
        assert verify(vk, _public(s), f.result(timeout=300))
    time.sleep(0.2)
    assert all(n == 1 for n in calls.values()) and len(calls) == 14
    done = Counter(e.job_id for e in engine.timeline.events() if e.kind in (K.JOB_DONE, K.JOB_FAILED)
                   and e.circuit == "slow")
    assert all(done[f.job_id] == 1 for f in fs + fs2)
    st = engine.status()
    assert st["circuits"]["slow"]["done"] == 14  # (resynthesized: only if a witness lived there)
    assert [a["state"] for a in st["cluster"]["actors"] if a["node"] == victim.node_id] == ["dead"]


def test_bad_input_gets_cuzk_errors(engine, cube, monkeypatch):
    synth, pk, _ = cube
    with pytest.raises(ClusterError, match="cannot read its key"):
        engine.register("missing-key", synth, "/nonexistent/cuzk-test.params")
    with pytest.raises(ClusterError, match="cannot be serialised"):
        engine.register("unpicklable", Unpicklable(), pk)
    t0 = time.monotonic()
    with pytest.raises(ClusterError, match="does not answer"):
        RayEngine("127.0.0.1:9", connect_timeout_s=1.0)
    assert time.monotonic() - t0 < 10
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ClusterError, match="needs Ray"):
        RayEngine()
