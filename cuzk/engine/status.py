"""What an Engine tells operators: ``status()`` (a JSON-serialisable dict) and ``metrics()``
(Prometheus text). Counters and latency histograms live here, apart from the ring-buffered
timeline, so they never lose history.

    >>> stats = EngineStats()
    >>> stats.add_circuit("cube")
    >>> stats.snapshot()["cube"]["done"]
    0
    >>> sorted(stats.histograms()["cube"])
    ['key_load_s', 'prove_s', 'queue_wait_s', 'synth_s', 'total_s']
"""

from __future__ import annotations

import threading
import time

from cuzk.prometheus import SECONDS_BUCKETS, Histogram, MetricsText
from cuzk.pipeline.scheduler import LIVE_STATES

__all__ = ["EngineStats", "engine_status", "engine_metrics"]

_OUTCOMES = ("done", "failed", "cancelled", "deduplicated")
_STAGES = ("queue_wait_s", "key_load_s", "synth_s", "prove_s", "total_s")


class EngineStats:
    """Per-circuit job outcomes and stage-latency histograms of delivered proofs (thread-safe)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: dict[str, dict[str, int]] = {}
        self._hist: dict[str, dict[str, Histogram]] = {}

    def add_circuit(self, name: str) -> None:
        with self._lock:
            self._counts[name] = dict.fromkeys(("submitted",) + _OUTCOMES, 0)
            self._hist[name] = {s: Histogram(SECONDS_BUCKETS) for s in _STAGES}

    def deduplicated(self, name: str) -> None:
        with self._lock:
            self._counts[name]["deduplicated"] += 1

    def submitted(self, name: str, n: int = 1) -> None:
        """A new job is being queued (deduplicated submits are not new jobs; -1 undoes a refused one)."""
        with self._lock:
            self._counts[name]["submitted"] += n

    def job_ended(self, name: str, outcome: str, timings=None) -> None:
        """A job ended with ``outcome`` (done, failed, cancelled); a delivered proof's
        ``timings`` go to the latency histograms."""
        with self._lock:
            self._counts[name][outcome] += 1
            hists = self._hist[name]
        if timings is not None and outcome == "done":
            for stage in _STAGES:
                hists[stage].observe(getattr(timings, stage))

    def snapshot(self) -> dict:
        with self._lock:
            return {name: dict(c) for name, c in self._counts.items()}

    def histograms(self) -> dict:
        with self._lock:
            hists = {name: dict(h) for name, h in self._hist.items()}
        return {name: {s: h.snapshot() for s, h in stages.items()} for name, stages in hists.items()}


def engine_status(engine) -> dict:
    """See :meth:`cuzk.Engine.status`."""
    per_circuit = {name: dict.fromkeys(LIVE_STATES, 0) for name in engine.circuits()}
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
    for t in engine.core.threads():
        unit = getattr(t, "current", None)
        kind = "prove" if hasattr(t, "device") else "synthesis"
        workers.append({"name": t.name, "kind": kind, "device": getattr(t, "device", None), "alive": t.is_alive(),
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
                   "blocked": queue.blocked_by_memory,
                   "devices": engine.device_tier.status() if engine.device_tier is not None else None},
        "workers": workers,
        "timeline": {"events": len(engine.timeline), "dropped": engine.timeline.dropped},
    }


def _jsonable(x):
    return x if x is None or isinstance(x, (bool, int, float, str)) else str(x)


def engine_metrics(engine) -> str:
    """See :meth:`cuzk.Engine.metrics`."""
    st = engine_status(engine)
    out = MetricsText()
    for name, counts in engine.stats.snapshot().items():
        lab = {"circuit": name}
        for outcome in ("submitted",) + _OUTCOMES:
            out.counter(f"jobs_{outcome}", f"Jobs {outcome}, per circuit (a partitioned job counts once).",
                        counts[outcome], labels=lab)
    for name, c in st["circuits"].items():
        for state in LIVE_STATES:
            out.gauge(f"units_{state}", f"Work units {state} now (a partition is a unit).", c[state],
                      labels={"circuit": name})
    for name, stages in engine.stats.histograms().items():
        for stage, snap in stages.items():
            out.histogram(f"job_{stage.removesuffix('_s')}_seconds",
                          f"Per-proof {stage.removesuffix('_s').replace('_', ' ')} seconds of delivered proofs.",
                          snap, labels={"circuit": name})
    for name, k in st["keys"].items():
        out.gauge("key_resident_bytes", "Bytes of the circuit's key held in memory (host or device tier).",
                  k["bytes"] if k["tier"] in ("host", "device") else 0, labels={"circuit": name, "tier": k["tier"]})
    mem = st["memory"]
    out.gauge("memory_reserved_bytes", "Bytes reserved in the memory budget (keys + PCEs + witnesses).",
              mem["reserved"])
    if mem["budget"] is not None:
        out.gauge("memory_budget_bytes", "The engine's memory budget.", mem["budget"])
    for dev, d in (mem["devices"] or {}).items():
        out.gauge("device_key_bytes", "Bytes of keys resident on a CUDA device.", d["keys"], labels={"device": dev})
    out.gauge("prove_workers_busy", "Prove workers proving now.",
              sum(1 for w in st["workers"] if w["kind"] == "prove" and w["state"] != "idle"))
    out.gauge("timeline_dropped_events", "Events dropped by the timeline's ring buffer.", st["timeline"]["dropped"])
    return out.render()
