"""RayEngine on a cluster whose membership changes: it starts with no GPU (two nodes of
``num_gpus=0``: ``cpu_provers`` CPU actors prove), then GPU nodes join and get actors of their
own. Key paths name ``$CUZK_KEYS``, set per node (``add_node(env_vars=...)``, which the raylet's
worker processes inherit): a node whose folder lacks the key is named by register(), and a
joining node that lacks it is left out of that circuit without failing a job. Once a GPU actor
serves every circuit the CPU provers retire (docs/cluster.md, "Nodes that join"). One cluster
for the module; each node added costs a few seconds."""

import os
import time

import pytest

# before Ray is imported: otherwise its nodes advertise the machine's interface address
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")

from cuzk.circuits.cube import Cube  # noqa: E402
from cuzk.cluster import RayEngine  # noqa: E402
from cuzk.errors import ClusterError  # noqa: E402
from cuzk.groth16 import verify  # noqa: E402
from cuzk.timeline import EventKind as K  # noqa: E402
from test_cluster import _public, cube  # noqa: E402, F401  (cube: the module-scoped Cube key fixture)
from ray_startup import START_TIMEOUT_S, one_cluster, patient_nodes  # noqa: E402

NODE = dict(num_cpus=1, object_store_memory=80 * 2**20, node_ip_address="127.0.0.1")
KEY = "$CUZK_KEYS/cube.params"  # each node reads it from its own folder
WAIT_S = 120  # an actor's start on a loaded 2-core machine: imports, Numba cache loads
PROOF_S = 300  # a first proof in a fresh actor may compile the kernels (a cold Numba cache)


@pytest.fixture(scope="module")
def keys(cube, tmp_path_factory):
    good, empty = tmp_path_factory.mktemp("keys-good"), tmp_path_factory.mktemp("keys-empty")
    cube[1].write(good / "cube.params")
    return str(good), str(empty)


@pytest.fixture(scope="module")
def cluster(keys):
    from ray.cluster_utils import Cluster

    good, _ = keys
    with one_cluster(), patient_nodes():  # also for the nodes the tests add
        c = Cluster(initialize_head=True, head_node_args=dict(
            include_dashboard=False, num_gpus=0, env_vars={"CUZK_KEYS": good}, **NODE))
        try:
            assert c.address.startswith("127.0.0.1:"), c.address  # loopback only
            c.add_node(num_gpus=0, env_vars={"CUZK_KEYS": good}, **NODE)
            c.wait_for_nodes(timeout=START_TIMEOUT_S)
            ray.init(address=c.address)  # the engine reuses it: its actors can be checked after close()
            yield c
        finally:
            if ray.is_initialized():
                ray.shutdown()
            c.shutdown()


@pytest.fixture(scope="module")
def engine(cluster, cube):
    synth, pk, _ = cube
    e = RayEngine(cluster.address, cpu_provers=2, node_poll_s=0.5, start_timeout_s=WAIT_S)
    e.register("cube", synth, pk)  # a key through the object store: every node has it
    e.register("cube-file", synth, KEY)
    try:
        yield e
    finally:
        e.close()


def _prove_all(engine, vk, circuit, seeds):
    fs = {s: engine.submit(circuit, Cube().sample_inputs(seed=s)) for s in seeds}
    for s, f in fs.items():
        proof = f.result(timeout=PROOF_S)
        assert verify(vk, _public(s), proof) and not verify(vk, [_public(s)[0] + 1], proof)
    return [f.job_id for f in fs.values()]


def _provers_of(engine, job_ids):
    ids = set(job_ids)
    return {e.worker for e in engine.timeline.events() if e.kind == K.GPU_START and e.job_id in ids}


def _wait_for(cond, what, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _actor(engine, name):
    return next(a for a in engine.status()["cluster"]["actors"] if a["name"] == name)


def test_a_gpu_less_cluster_proves_on_its_cpu_provers(engine, cube):
    _, _, vk = cube
    jobs = _prove_all(engine, vk, "cube", range(1, 5)) + _prove_all(engine, vk, "cube-file", range(5, 9))
    assert _provers_of(engine, jobs) <= {"prover-0", "prover-1"}
    st = engine.status()["cluster"]
    assert [(a["name"], a["pinned"], a["backend"], a["state"]) for a in st["actors"]] == [
        ("prover-0", False, "cpu", "idle"), ("prover-1", False, "cpu", "idle")]
    assert sum(a["proofs"] for a in st["actors"]) == 8 and st["alive"] == 2
    assert st["nodes"]["gpu_nodes"] == {} and st["nodes"]["joined"] == 0 and st["nodes"]["polls"] >= 1


def test_a_joining_gpu_node_without_the_key_gets_an_actor_left_out_of_that_circuit(engine, cluster, cube, keys):
    _, _, vk = cube
    _, empty = keys
    node = cluster.add_node(num_gpus=1, env_vars={"CUZK_KEYS": empty}, **NODE).node_id
    _wait_for(lambda: len(engine.pool.slots) == 3 and engine.pool.slots[2].state == "idle", "prover-2 on the new node")
    a = _actor(engine, "prover-2")
    assert a["node"] == node and a["pinned"] and list(a["unavailable"]) == ["cube-file"]
    assert node in a["unavailable"]["cube-file"] and os.path.join(empty, "cube.params") in a["unavailable"]["cube-file"]
    # no job of that circuit goes there, none fails; the CPU provers stay (a GPU actor lacks a circuit)
    jobs = _prove_all(engine, vk, "cube-file", range(10, 16))
    assert "prover-2" not in _provers_of(engine, jobs)
    _prove_all(engine, vk, "cube", range(16, 20))
    st = engine.status()
    assert [x["state"] for x in st["cluster"]["actors"][:2]] == ["idle", "idle"]
    assert node in st["cluster"]["clock_offsets"] and st["cluster"]["nodes"]["joined"] == 1
    assert engine._routes["cube"].concurrency == 3 and engine.core.channel.capacity == 3  # defaults grew
    assert len([w for w in st["workers"] if w["kind"] == "prove"]) == 3


def test_register_names_the_node_that_cannot_read_the_key(engine, cube, keys):
    synth, _, _ = cube
    _, empty = keys
    bad = _actor(engine, "prover-2")["node"]
    with pytest.raises(ClusterError, match="cannot read its key") as err:
        engine.register("cube-file-2", synth, KEY)
    msg = str(err.value)
    assert "1 node(s)" in msg and bad in msg and os.path.join(empty, "cube.params") in msg
    assert all(a["node"] not in msg for a in engine.status()["cluster"]["actors"][:2])  # the others can
    with pytest.raises(ClusterError, match=r"\$CUZK_NOPE not set on node"):
        engine.register("cube-nope", synth, "$CUZK_NOPE/cube.params")
    assert "cube-file-2" not in engine.status()["circuits"]


def _wait_gone(actors, within_s: float = 60.0) -> None:
    """Every actor stops answering within ``within_s``. ray.kill is asynchronous: a call sent
    right after it may still run once (seen in one CI run), so the first call is not the test."""
    deadline = time.monotonic() + within_s
    for actor in actors:
        while True:
            try:
                ray.get(actor.info.remote(), timeout=30)
            except ray.exceptions.RayActorError:
                break
            assert time.monotonic() < deadline, f"an actor still answers {within_s:.0f} s after it was stopped"
            time.sleep(0.2)


def test_cpu_provers_retire_once_a_gpu_actor_serves_every_circuit(engine, cluster, cube, keys):
    _, _, vk = cube
    good, _ = keys
    cpu_actors = [s.actor for s in engine.pool.slots[:2]]
    node = cluster.add_node(num_gpus=1, env_vars={"CUZK_KEYS": good}, **NODE).node_id
    _wait_for(lambda: [s.state for s in engine.pool.slots] == ["retired", "retired", "idle", "idle"],
              "prover-3 up and the CPU provers retired")
    _wait_gone(cpu_actors)  # stopped, not just set aside
    assert _actor(engine, "prover-3")["node"] == node and _actor(engine, "prover-3")["unavailable"] == {}
    file_jobs = _prove_all(engine, vk, "cube-file", range(20, 24))
    cube_jobs = _prove_all(engine, vk, "cube", range(24, 30))
    assert _provers_of(engine, file_jobs) == {"prover-3"}  # the only actor with that key now
    assert _provers_of(engine, cube_jobs) <= {"prover-2", "prover-3"}
    st = engine.status()["cluster"]
    assert st["alive"] == 2 and st["nodes"]["joined"] == 2 and len(st["nodes"]["gpu_nodes"]) == 2
    metrics = engine.metrics()
    assert 'cuzk_cluster_actors{state="retired"} 2' in metrics and "cuzk_cluster_actors_joined_total 2" in metrics
    assert "cuzk_cluster_actors_alive 2" in metrics
    rows = [r.split()[0] for r in engine.timeline.waterfall().splitlines()]
    assert {"prover-2", "prover-3"} <= set(rows)
    assert {"prover-2", "prover-3"} <= set(engine.timeline.utilization()["actors"])


def test_close_stops_the_watcher_the_dispatchers_and_every_actor(engine):
    actors = [s.actor for s in engine.pool.slots if s.actor is not None]
    assert len(actors) == 2
    engine.close()
    threads = [engine.nodes, *engine._provers, *engine.pool.replacements]
    assert not [t.name for t in threads if t.is_alive()]
    _wait_gone(actors)
