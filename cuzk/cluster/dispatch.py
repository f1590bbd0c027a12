"""The driver side of one unit's trip through the cluster: the circuit's route (synthesis as a
Ray task, the witness left in the object store) and the prove worker threads that hand
witnesses to prover actors, retry what dead workers dropped and merge the actors' events.

Scheduling is the Engine's (:class:`cuzk.pipeline.core.SchedulerCore`): the core's synthesis
workers pick units in priority/deadline/FIFO order and call :meth:`ClusterRoute.synthesize`,
which returns a :class:`WitnessHandle` (object ref + the node it lives on) instead of the
witness; the handle goes through the core's bounded channel, and :class:`ProveWorker` threads
(one per prover slot) take the best one, pick a free actor, preferring the witness's node, and
report back to the core. Retries (docs/cluster.md): an actor or node that dies, or a witness lost
with its node, costs the unit one retry (``max_retries``); the job's own errors are never retried.
"""

from __future__ import annotations

import itertools
import logging
import time

from cuzk.cluster.raylib import kind_of, unwrap
from cuzk.errors import ClusterError
from cuzk.pipeline.core import Route
from cuzk.pipeline.workers import ProveLoop
from cuzk.timeline.context import current_stage
from cuzk.timeline.events import EventKind as K

__all__ = ["ClusterRoute", "WitnessHandle", "ProveWorker"]

_log = logging.getLogger("cuzk.cluster")
_tokens = itertools.count(1)


class WitnessHandle:
    """A synthesized unit: its witness's object ref, the node holding it, retries so far."""

    __slots__ = ("ref", "node", "retries")

    def __init__(self, ref, node: str, retries: int):
        self.ref, self.node, self.retries = ref, node, retries


class ClusterRoute(Route):
    """A circuit registered on a RayEngine (created by :meth:`RayEngine.register`)."""

    def __init__(self, engine, name: str, synthesizer, synth_ref, key, *, kind: str, priority, concurrency: int):
        super().__init__(synthesizer, None, name)
        self.engine, self.synth_ref, self.key, self.kind = engine, synth_ref, key, kind
        self.priority, self.concurrency, self.synthesis = priority, concurrency, "ray"
        self.executor = synthesizer
        self.unit_bytes = self.pce_bytes = self.key_bytes_reserved = 0  # witnesses live on the workers
        self.tiers: dict[str, str] = {}  # prover slot -> its key tier there
        self.last_use: float | None = None
        self.auto_concurrency, self.gate = False, None  # set by RayEngine.register

    stamps_synthesis = True  # SYNTH_START/SYNTH_END come from the worker that synthesized

    def synthesize(self, **inputs) -> WitnessHandle:
        stage = current_stage()  # set by the core's synthesis worker: which unit this is
        job, part = (None, None) if stage is None else (stage.job_id, stage.partition)
        return synthesize_remote(self.engine, self, inputs, 0, job, part)

    def status(self) -> dict:
        tiers = dict(self.tiers)
        order = ("device", "host", "custom", "disk", "cold")
        best = min(tiers.values(), key=lambda t: order.index(t) if t in order else len(order), default="cold")
        return {"tier": best, "kind": self.kind, "bytes": 0, "last_use": self.last_use, "last_load_s": 0.0,
                "source": self.key if isinstance(self.key, str) else None, "devices": sorted(tiers),
                "actors": tiers}


def _retry(engine, unit_label: str, retries: int, exc: BaseException, stage: str) -> int:
    retries += 1
    engine.counters.add("retries")
    if retries > engine.max_retries:
        raise ClusterError(f"{unit_label}: {stage} failed on lost workers {retries} times (max_retries="
                           f"{engine.max_retries}); last: {type(exc).__name__}: {str(exc)[:300]}") from exc
    _log.warning("cuzk cluster: %s: %s lost (%s), retry %d of %d", unit_label, stage, type(exc).__name__,
                 retries, engine.max_retries)
    return retries


def synthesize_remote(engine, route: ClusterRoute, inputs: dict, retries: int, job=None,
                      partition=None) -> WitnessHandle:
    """Run one synthesis task; retry on dead workers, raise the job's own error unwrapped.
    Its SYNTH_START/SYNTH_END are the task's own stamps, offset-corrected, with the node and
    ``synth-<pid>`` (the Ray worker process) as :attr:`Event.node` / :attr:`Event.worker`."""
    ray = engine.ray
    while True:
        t0 = time.time_ns()
        wref, mref = engine.synth_task.remote(route.synth_ref, inputs, engine.skews)
        try:
            meta = ray.get(mref)
        except BaseException as exc:
            if kind_of(exc) == "job":
                raise unwrap(exc) from None
            retries = _retry(engine, f"circuit {route.name!r}", retries, exc, "synthesis")
            continue
        clock = engine.clock_sample(meta["node"], t0, meta["r0"], meta["r1"], time.time_ns())
        _stamp_synthesis(engine, clock, meta, route.name, job, partition)
        if meta["error"] is not None:
            raise meta["error"]
        return WitnessHandle(wref, meta["node"], retries)


def _stamp_synthesis(engine, clock, meta: dict, circuit: str, job, partition) -> None:
    worker, node = f"synth-{meta['pid']}", meta["node"]
    (tc0, pc0), (tc1, pc1) = meta["cpu"]
    error = {} if meta["error"] is None else {"error": type(meta["error"]).__name__}
    base = engine.timeline_base_ns
    tl = engine.timeline
    tl.record_at(clock.to_driver(meta["r0"]) + base, K.SYNTH_START, job, partition, worker, node=node,
                 circuit=circuit, thread_cpu_ns=tc0, process_cpu_ns=pc0)
    tl.record_at(clock.to_driver(meta["r1"]) + base, K.SYNTH_END, job, partition, worker, node=node,
                 circuit=circuit, thread_cpu_ns=tc1, process_cpu_ns=pc1, **error)


class ProveWorker(ProveLoop):
    """Takes witness handles from the core's channel (best order first) and proves each on a
    prover actor, with retries (see the module docstring)."""

    _logger = _log
    _label = "cluster"

    def __init__(self, engine, index: int):
        super().__init__(name=f"cuzk-ray-{index}", daemon=True)
        self.engine, self.core = engine, engine.core
        self.current = None  #: the unit being proved, or None

    def _prove(self, unit, handle: WitnessHandle) -> None:
        core = self.core
        wanted = False
        try:
            wanted = core.still_wanted(unit)
        finally:
            if not wanted:
                core.queue.release(unit.nbytes)
        if not wanted:
            return
        core.timeline.record(K.GPU_PICKUP, unit.job.id, unit.partition, self.name, **unit.route.circuit_detail)
        self.current = unit
        core.set_state(unit, "proving")
        try:
            proof = self._prove_with_retries(unit, handle)
        except BaseException as exc:
            core.queue.release(unit.nbytes)
            core.fail_unit(unit, exc, "proving")
            return
        core.queue.release(unit.nbytes)
        core.complete_unit(unit, proof)

    def _prove_with_retries(self, unit, handle: WitnessHandle):
        engine, route = self.engine, unit.route
        ray = engine.ray
        label = f"job {unit.job.id!r}" + ("" if unit.partition is None else f" partition {unit.partition}")
        retries = handle.retries
        while True:
            if not engine.node_alive(handle.node):  # the witness went with its node: make it again
                retries = _retry(engine, label, retries, ClusterError(f"node {handle.node} is gone"), "witness")
                engine.counters.add("resynthesized")
                handle = synthesize_remote(engine, route, unit.inputs, retries, unit.job.id, unit.partition)
                retries = handle.retries
            slot = engine.pool.acquire(prefer=handle.node, circuit=route.name)
            if slot is None:
                raise ClusterError(f"{label}: no prover actor is alive for circuit {route.name!r} (every slot "
                                   f"dead, retired or unable to read its key: see status()['cluster'])")
            actor = slot.actor
            slot.current = (unit.job.id, unit.partition)
            local = slot.node == handle.node
            token = next(_tokens)
            t0 = time.time_ns()
            try:
                reply = ray.get(actor.prove.remote(route.name, token, handle.ref))
            except BaseException as exc:
                kind = kind_of(exc)
                if kind == "dead":
                    engine.pool.failed(slot, actor, exc)
                else:
                    engine.pool.release(slot)
                if kind == "job":
                    raise unwrap(exc) from None
                retries = _retry(engine, label, retries, exc, "proving" if kind == "dead" else "witness")
                if kind == "lost":
                    engine.counters.add("resynthesized")
                    handle = synthesize_remote(engine, route, unit.inputs, retries, unit.job.id, unit.partition)
                    retries = handle.retries
                continue
            t1 = time.time_ns()
            slot.proofs += 1
            slot.local += local
            slot.busy_ns += t1 - t0
            engine.pool.release(slot)
            engine.merge(slot, reply, t0, t1, unit)
            route.tiers[slot.name] = reply["keys"].get(route.name, "cold")
            route.last_use = time.time()
            if reply["error"] is not None:
                raise reply["error"]
            timings = reply["timings"] or {}
            unit.marks["prove_s"] = timings.get("prove_s", 0.0)
            unit.marks["key_load_s"] = timings.get("key_load_s", 0.0)
            if timings.get("device_s") is not None:
                unit.marks["device_s"] = timings["device_s"]
            unit.marks["retries"] = retries
            return reply["proof"]
