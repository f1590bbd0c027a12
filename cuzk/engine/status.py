"""What an Engine tells operators: ``status()`` (a JSON-serialisable dict) and ``metrics()``
(Prometheus text). Counters and latency histograms live here, apart from the ring-buffered
timeline, so they never lose history.

    >>> stats = EngineStats()
    >>> stats.add_circuit("cube")
    >>> stats.snapshot()["cube"]["done"]
    0
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future

from cuzk.pipeline.scheduler import UNIT_STATES

__all__ = ["EngineStats", "engine_status", "engine_metrics", "LATENCY_BUCKETS"]

#: Upper bounds (seconds) of the per-circuit latency histograms: WinningPoSt must finish in
#: seconds, sealing partitions take minutes.
LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
_OUTCOMES = ("done", "failed", "cancelled", "deduplicated")
_STAGES = ("queue_wait_s", "key_load_s", "synth_s", "prove_s", "total_s")


class EngineStats:
    """Per-circuit job outcomes and stage-latency histograms (thread-safe)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: dict[str, dict[str, int]] = {}
        self._hist: dict[str, dict[str, list]] = {}  # circuit -> stage -> [bucket counts..., sum, count]

    def add_circuit(self, name: str) -> None:
        with self._lock:
            self._counts[name] = dict.fromkeys(("submitted",) + _OUTCOMES, 0)
            self._hist[name] = {s: [0] * len(LATENCY_BUCKETS) + [0.0, 0] for s in _STAGES}

    def deduplicated(self, name: str) -> None:
        with self._lock:
            self._counts[name]["deduplicated"] += 1

    def job_ended(self, name: str, future: Future) -> None:
        outcome = "cancelled" if future.cancelled() else ("failed" if future.exception() is not None else "done")
        timings = getattr(future, "timings", None)
        with self._lock:
            counts = self._counts[name]
            counts["submitted"] += 1
            counts[outcome] += 1
            if timings is None or outcome != "done":
                return
            for stage in _STAGES:
                value = getattr(timings, stage)
                row = self._hist[name][stage]
                for i, bound in enumerate(LATENCY_BUCKETS):
                    if value <= bound:
                        row[i] += 1
                row[-2] += value
                row[-1] += 1

    def snapshot(self) -> dict:
        with self._lock:
            return {name: dict(c) for name, c in self._counts.items()}

    def histograms(self) -> dict:
        with self._lock:
            return {name: {s: list(row) for s, row in stages.items()} for name, stages in self._hist.items()}


def engine_status(engine) -> dict:
    """See :meth:`cuzk.Engine.status`."""
    per_circuit = {name: dict.fromkeys(UNIT_STATES[:4], 0) for name in engine.circuits()}
    for job in engine.core.jobs_snapshot():
        name = getattr(job.route, "name", None)
        if name in per_circuit:
            for unit in job.units:
                if unit.state in per_circuit[name]:
                    per_circuit[name][unit.state] += 1
    outcomes = engine.stats.snapshot()
    circuits = {}
    keys = {}
    pce = 0
    for name in engine.circuits():
        route = engine._route(name)
        circuits[name] = {**per_circuit[name], **{k: outcomes[name][k] for k in _OUTCOMES},
                          "priority": route.priority.name, "synthesis": route.synthesis,
                          "concurrency": route.concurrency}
        keys[name] = route.status()
        pce += route.pce_bytes
    queue = engine.core.queue
    key_bytes = sum(engine._route(n).key_bytes_reserved for n in engine.circuits())
    workers = []
    for t in engine.core._threads:
        unit = getattr(t, "current", None)
        if not hasattr(t, "device"):
            continue
        workers.append({"name": t.name, "device": t.device, "alive": t.is_alive(),
                        "state": "idle" if unit is None else unit.state,
                        "job": None if unit is None else _jsonable(unit.job.id),
                        "circuit": None if unit is None else unit.route.name})
    return {
        "time": time.time(),
        "closed": engine.closed,
        "backend": engine.backend,
        "devices": engine.devices,
        "circuits": circuits,
        "keys": keys,
        "memory": {"budget": engine.memory_budget, "reserved": queue.reserved_bytes, "keys": key_bytes,
                   "pce": pce, "witnesses": max(0, queue.reserved_bytes - key_bytes - pce),
                   "blocked": queue.blocked_by_memory},
        "workers": workers,
        "timeline": {"events": len(engine.timeline), "dropped": engine.timeline.dropped},
    }


def _jsonable(x):
    return x if x is None or isinstance(x, (bool, int, float, str)) else str(x)


def engine_metrics(engine) -> str:
    """See :meth:`cuzk.Engine.metrics`."""
    from cuzk.engine.prometheus import MetricsText

    st = engine_status(engine)
    out = MetricsText(prefix="cuzk")
    for outcome in ("submitted",) + _OUTCOMES:
        out.counter(f"jobs_{outcome}", f"jobs {outcome} per circuit",
                    {(("circuit", n),): c[outcome] for n, c in engine.stats.snapshot().items()})
    for state in UNIT_STATES[:4]:
        out.gauge(f"units_{state}", f"work units {state} now",
                  {(("circuit", n),): c[state] for n, c in st["circuits"].items()})
    for stage in _STAGES:
        out.histogram(f"job_{stage.removesuffix('_s')}_seconds", f"per-proof {stage} of delivered proofs",
                      LATENCY_BUCKETS, {(("circuit", n),): h[stage] for n, h in engine.stats.histograms().items()})
    out.gauge("key_bytes", "bytes of each circuit's key held in memory",
              {(("circuit", n),): k["bytes"] if k["tier"] in ("host", "device") else 0 for n, k in st["keys"].items()})
    mem = st["memory"]
    out.gauge("memory_reserved_bytes", "bytes reserved in the memory budget", {(): mem["reserved"]})
    if mem["budget"] is not None:
        out.gauge("memory_budget_bytes", "the memory budget", {(): mem["budget"]})
    out.gauge("workers_busy", "prove workers proving now",
              {(): sum(1 for w in st["workers"] if w["state"] != "idle")})
    out.gauge("timeline_dropped_events", "events dropped by the timeline ring buffer", {(): st["timeline"]["dropped"]})
    return out.render()
