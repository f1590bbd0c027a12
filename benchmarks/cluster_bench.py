"""RayEngine figures on a local Ray cluster of simulated GPU nodes (each declares
``num_gpus=1``; stages sleep, so the 2-core machine is not what limits them). Each figure is a
ratio against a baseline run in this process.

1. Throughput, prove-bound (synthesis ``--synth-ms``, prove ``--prove-ms``), with 1, 2, 3 GPU
   nodes: ``--jobs`` jobs after a warm-up (actors started, one job each), timed from the first
   submit to the last result. parallelism = jobs x prove time / wall; speedup = parallelism
   against the 1-node run (targets: >= 1.8 at 2, >= 2.6 at 3).
2. Overhead per job of the Ray path against the local Engine: ``--seq`` jobs one at a time
   (submit, wait) with sleeping stages of ``--stage-ms``, on one prover each; overhead =
   median latency(Ray) - median latency(Engine).
3. Recovery after a node is killed mid-proof: from ``remove_node`` to the last of that node's
   units starting to prove (GPU_START) on another actor, on the merged timeline.
4. Clock offsets: skews injected per node (0, +3 s, -2 s); the offsets found, their error and
   uncertainty, and the largest stage disorder left in the merged timeline.
5. A GPU node that joins a running engine (``node_poll_s`` 1 s) while ``--join-jobs`` jobs
   wait: from the ``add_node`` call to its raylet up (``add_node`` returned), its slot added
   (the engine's node poll), its actor live, and its first proof starting (GPU_START on the
   merged timeline).

    python benchmarks/cluster_bench.py [--jobs 24] [--prove-ms 300] [--synth-ms 20] [--seq 30]
                                       [--join-jobs 60] [--sections throughput,overhead,clocks,recovery,join]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback addresses only

import cuzk  # noqa: E402
from cuzk.timeline import EventKind as K  # noqa: E402

NODE = dict(num_cpus=1, num_gpus=1, object_store_memory=80 * 2**20, node_ip_address="127.0.0.1")


class Sleepy:
    """Stages that only sleep (pickled by value: this file is __main__)."""

    def __init__(self, synth_s, prove_s):
        self.synth_s, self.prove_s = synth_s, prove_s

    def synthesize(self, i=0):
        time.sleep(self.synth_s)
        return i

    def prove(self, w):
        time.sleep(self.prove_s)
        return ("proof", w)


def _engine(cluster, **kw):
    from cuzk.cluster import RayEngine

    return RayEngine(cluster.address, start_timeout_s=180, **kw)


def _run(engine, name, jobs, first=0):
    t0 = time.perf_counter()
    fs = [engine.submit(name, {"i": first + i}) for i in range(jobs)]
    for f in fs:
        f.result(timeout=600)
    return time.perf_counter() - t0


def throughput(cluster, nodes_wanted, jobs, synth_s, prove_s) -> dict:
    out = {}
    for k in nodes_wanted:
        while len(cluster.list_all_nodes()) < k:
            cluster.add_node(**NODE)
        cluster.wait_for_nodes()
        with _engine(cluster) as e:
            e.register("sleepy", Sleepy(synth_s, prove_s), Sleepy(synth_s, prove_s))
            _run(e, "sleepy", 2 * k)  # warm: every actor and synthesis worker has run once
            e.timeline.clear()  # utilization of the timed run only
            wall = _run(e, "sleepy", jobs, first=1000)
            util = e.timeline.utilization()
        par = jobs * prove_s / wall
        out[k] = {"wall_s": wall, "parallelism": par, "actor_utilization": util["actors"]}
        print(f"  {k} GPU node(s): {jobs} jobs in {wall:.2f} s, parallelism {par:.2f}, "
              f"actor utilization {util['actors']}", flush=True)
    base = out[nodes_wanted[0]]["parallelism"]
    for k in nodes_wanted:
        out[k]["speedup"] = out[k]["parallelism"] / base
    return out


def overhead(cluster, seq, stage_s) -> dict:
    def latencies(engine):
        engine.register("sleepy", Sleepy(stage_s, stage_s), Sleepy(stage_s, stage_s))
        _run(engine, "sleepy", 3)
        lat = []
        for i in range(seq):
            t0 = time.perf_counter()
            engine.submit("sleepy", {"i": i}).result(timeout=60)
            lat.append(time.perf_counter() - t0)
        return statistics.median(lat)

    with cuzk.Engine(device="cpu", memory_budget=None) as local:
        base = latencies(local)
    with _engine(cluster) as e:
        ray_lat = latencies(e)
    return {"engine_ms": base * 1e3, "ray_ms": ray_lat * 1e3, "overhead_ms": (ray_lat - base) * 1e3}


def recovery(cluster, prove_s) -> dict:
    victim = cluster.list_all_nodes()[-1]
    with _engine(cluster) as e:
        e.register("sleepy", Sleepy(0.01, prove_s), Sleepy(0.01, prove_s))
        _run(e, "sleepy", 6)
        fs = [e.submit("sleepy", {"i": i}) for i in range(12)]
        deadline = time.monotonic() + 120
        while not any(s.state == "busy" and s.node == victim.node_id for s in e.pool.slots):
            assert time.monotonic() < deadline, "no job reached the victim node"
            time.sleep(0.01)
        time.sleep(prove_s / 3)
        on_victim = [s.current for s in e.pool.slots if s.node == victim.node_id and s.current is not None]
        t_kill = e.timeline.now_ns()
        cluster.remove_node(victim)
        for f in fs:
            f.result(timeout=600)
        starts = {}
        for ev in e.timeline.events():
            if ev.kind == K.GPU_START and ev.t_ns > t_kill:
                starts.setdefault((ev.job_id, ev.partition), ev.t_ns)
        again = [starts[u] for u in on_victim if u in starts]
        st = e.status()["cluster"]
    return {"units_on_victim": len(on_victim), "recovery_s": (max(again) - t_kill) / 1e9 if again else None,
            "retries": st["retries"], "resynthesized": st["resynthesized"]}


def clocks(cluster, jobs, prove_s) -> dict:
    nodes = [n.node_id for n in cluster.list_all_nodes()]
    skews = dict(zip(nodes, (0.0, 3.0, -2.0)))
    with _engine(cluster, clock_skew=skews) as e:
        e.register("sleepy", Sleepy(0.01, prove_s), Sleepy(0.01, prove_s))
        _run(e, "sleepy", jobs)
        found = e.status()["cluster"]["clock_offsets"]
        disorder = e.timeline.disorder_ns()
    rows = {n[:8]: {"injected_s": skews[n], "found_s": found[n]["offset_s"],
                    "error_ms": (found[n]["offset_s"] - skews[n]) * 1e3,
                    "uncertainty_ms": found[n]["uncertainty_s"] * 1e3} for n in nodes if n in found}
    return {"nodes": rows, "disorder_ns": disorder}


def join(cluster, jobs, prove_s) -> dict:
    with _engine(cluster, node_poll_s=1.0) as e:
        e.register("sleepy", Sleepy(0.01, prove_s), Sleepy(0.01, prove_s))
        _run(e, "sleepy", 2 * len(e.pool.slots))  # warm
        fs = [e.submit("sleepy", {"i": i}) for i in range(jobs)]  # a backlog: the joiner finds work at once
        t0, p0 = e.timeline.now_ns(), time.perf_counter()
        node = cluster.add_node(**NODE).node_id
        up = time.perf_counter() - p0
        deadline = time.monotonic() + 300

        def until(cond):
            while not cond():
                assert time.monotonic() < deadline, "the joining node's actor did not come up"
                time.sleep(0.005)
            return time.perf_counter() - p0

        added = until(lambda: any(s.node == node for s in e.pool.slots))
        slot = next(s for s in e.pool.slots if s.node == node)
        live = until(lambda: slot.state in ("idle", "busy"))
        for f in fs:
            f.result(timeout=600)
        first = min((ev.t_ns for ev in e.timeline.events() if ev.kind == K.GPU_START and ev.worker == slot.name),
                    default=None)
        proofs = slot.proofs
    return {"add_node_s": up, "slot_s": added, "live_s": live, "first_proof_s": None if first is None else
            (first - t0) / 1e9, "proofs_on_new": proofs, "jobs": jobs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=24)
    ap.add_argument("--prove-ms", type=float, default=300.0)
    ap.add_argument("--synth-ms", type=float, default=20.0)
    ap.add_argument("--seq", type=int, default=30)
    ap.add_argument("--stage-ms", type=float, default=1.0)
    ap.add_argument("--join-jobs", type=int, default=60)
    ap.add_argument("--sections", default="throughput,overhead,clocks,recovery,join")
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args=dict(include_dashboard=False, **NODE))
    try:
        if "throughput" in sections:
            print(f"1. throughput, prove-bound ({args.synth_ms:g} ms synthesis, {args.prove_ms:g} ms prove):",
                  flush=True)
            tp = throughput(cluster, [1, 2, 3], args.jobs, args.synth_ms / 1e3, args.prove_ms / 1e3)
            for k, r in tp.items():
                print(f"   {k} node(s): parallelism {r['parallelism']:.2f}, speedup vs 1 node {r['speedup']:.2f}x")
        if "overhead" in sections:
            print(f"2. overhead per job ({args.seq} sequential jobs, stages {args.stage_ms:g} ms):", flush=True)
            ov = overhead(cluster, args.seq, args.stage_ms / 1e3)
            print(f"   median latency: Engine {ov['engine_ms']:.2f} ms, RayEngine {ov['ray_ms']:.2f} ms, "
                  f"overhead {ov['overhead_ms']:.2f} ms/job (ratio {ov['ray_ms'] / ov['engine_ms']:.2f}x)")
        if "clocks" in sections:
            while len(cluster.list_all_nodes()) < 3:
                cluster.add_node(**NODE)
            cluster.wait_for_nodes()
            print("3. clock offsets (skews injected per node):", flush=True)
            ck = clocks(cluster, args.jobs, args.prove_ms / 1e3)
            for n, r in ck["nodes"].items():
                print(f"   node {n}: injected {r['injected_s']:+.3f} s, found {r['found_s']:+.6f} s, "
                      f"error {r['error_ms']:+.3f} ms, uncertainty +/-{r['uncertainty_ms']:.3f} ms")
            print(f"   largest stage disorder left in the merged timeline: {ck['disorder_ns']} ns")
        if "recovery" in sections:
            while len(cluster.list_all_nodes()) < 2:
                cluster.add_node(**NODE)
            cluster.wait_for_nodes()
            print("4. recovery after killing a node mid-proof:", flush=True)
            rc = recovery(cluster, args.prove_ms / 1e3)
            print(f"   {rc['units_on_victim']} unit(s) on the node; proving again elsewhere after "
                  f"{rc['recovery_s']:.3f} s; retries {rc['retries']}, re-synthesized {rc['resynthesized']}")
        if "join" in sections:
            n0 = len(cluster.list_all_nodes())
            print(f"5. a GPU node joining a running engine of {n0} node(s), {args.join_jobs} jobs waiting "
                  f"({args.prove_ms:g} ms prove):", flush=True)
            jn = join(cluster, args.join_jobs, args.prove_ms / 1e3)
            first = "never" if jn["first_proof_s"] is None else f"{jn['first_proof_s']:.2f} s"
            print(f"   after add_node: raylet up {jn['add_node_s']:.2f} s, slot added {jn['slot_s']:.2f} s, "
                  f"actor live {jn['live_s']:.2f} s, first proof there {first}; "
                  f"{jn['proofs_on_new']} of {jn['jobs']} proofs on it")
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
