"""The merged timeline of a RayEngine: one row per prover actor, one trace process per node,
utilization per actor and for the cluster, and how much stage disorder the merge left.

Events from the actors arrive with :attr:`cuzk.timeline.Event.worker` = the actor's stable name
and :attr:`~cuzk.timeline.Event.node` = its node, already on the driver's clock
(:mod:`cuzk.cluster.clock`); driver events (submit, synthesis seen from the driver, pickup,
done) have no node.

    >>> from cuzk.timeline import EventKind as K
    >>> tl = ClusterTimeline()
    >>> for t, kind, job, w in [(0, K.GPU_START, 1, "prover-0"), (10, K.GPU_END, 1, "prover-0"),
    ...                         (5, K.GPU_START, 2, "prover-1"), (10, K.GPU_END, 2, "prover-1")]:
    ...     tl.record_at(t, kind, job_id=job, worker=w, node="n" + w[-1])
    >>> u = tl.utilization(); (u["actors"], u["cluster"], u["parallelism"])
    ({'prover-0': 1.0, 'prover-1': 0.5}, 0.75, 1.5)
"""

from __future__ import annotations

from typing import Iterable

from cuzk.timeline.analysis import spans, union_seconds
from cuzk.timeline.events import Event, EventKind as K
from cuzk.timeline.recorder import Timeline
from cuzk.timeline.render import to_chrome_trace

__all__ = ["ClusterTimeline", "STAGE_ORDER", "disorder_ns", "actor_utilization", "actor_waterfall"]

#: the order a delivered unit's stage events must have on the merged timeline
STAGE_ORDER = (K.JOB_SUBMIT, K.SYNTH_START, K.SYNTH_END, K.CHAN_SEND, K.GPU_PICKUP, K.GPU_START, K.GPU_END,
               K.JOB_DONE)


def _gpu_spans(events):
    return [s for s in spans(events) if s.stage == "GPU"]


def actor_utilization(events: Iterable[Event]) -> dict:
    """Busy fraction of each actor (GPU spans) over the window from the first GPU_START to the
    last GPU_END, the cluster's mean, and ``parallelism`` (busy seconds / window seconds)."""
    gpu = _gpu_spans(list(events))
    if not gpu:
        return {"actors": {}, "cluster": 0.0, "parallelism": 0.0, "window_s": 0.0}
    window = (min(s.start_ns for s in gpu), max(s.end_ns for s in gpu))
    length = (window[1] - window[0]) / 1e9
    per: dict[str, list] = {}
    for s in gpu:
        per.setdefault(s.worker or "?", []).append((s.start_ns, s.end_ns))
    busy = {w: union_seconds(iv, window) for w, iv in sorted(per.items())}
    if length <= 0:
        return {"actors": dict.fromkeys(busy, 0.0), "cluster": 0.0, "parallelism": 0.0, "window_s": 0.0}
    total = sum(busy.values())
    return {"actors": {w: round(b / length, 6) for w, b in busy.items()},
            "cluster": round(total / length / len(busy), 6), "parallelism": round(total / length, 6),
            "window_s": length}


def disorder_ns(events: Iterable[Event]) -> int:
    """The largest amount (ns) by which a unit's stage event precedes one that must come before
    it (:data:`STAGE_ORDER`); 0 when every unit is in order. Units with a retry or several
    attempts are compared by their first occurrence of each kind."""
    rank = {k: i for i, k in enumerate(STAGE_ORDER)}
    first: dict[tuple, dict] = {}
    for e in events:
        if e.kind in rank:
            first.setdefault(e.unit, {}).setdefault(e.kind, e.t_ns)
    worst = 0
    for stamps in first.values():
        seen = sorted(stamps.items(), key=lambda kv: rank[kv[0]])
        latest = None
        for _, t in seen:
            if latest is not None and t < latest:
                worst = max(worst, latest - t)
            latest = t if latest is None else max(latest, t)
    return worst


def actor_waterfall(events: Iterable[Event], width: int = 72) -> str:
    """One row per prover actor: ``#`` where it was proving, then its utilization.

    >>> from cuzk.timeline import EventKind as K
    >>> print(actor_waterfall([Event(0, K.GPU_START, 1, worker="p0"), Event(10, K.GPU_END, 1)], width=10))
    p0  |##########| 100%
    """
    events = list(events)
    gpu = _gpu_spans(events)
    if not gpu:
        return "(no proofs)"
    t0, t1 = min(s.start_ns for s in gpu), max(s.end_ns for s in gpu)
    scale = width / max(1, t1 - t0)
    util = actor_utilization(events)["actors"]
    rows: dict[str, list] = {}
    for s in gpu:
        row = rows.setdefault(s.worker or "?", [" "] * width)
        a = min(width - 1, int((s.start_ns - t0) * scale))
        b = max(a + 1, min(width, int((s.end_ns - t0) * scale + 0.999)))
        row[a:b] = "#" * (b - a)
    pad = max(len(w) for w in rows)
    return "\n".join(f"{w:<{pad}}  |{''.join(r)}| {util.get(w, 0):.0%}" for w, r in sorted(rows.items()))


class ClusterTimeline(Timeline):
    """A :class:`cuzk.Timeline` whose waterfall has one row per actor and whose Chrome trace has
    one process per node (the driver is process 1)."""

    def waterfall(self, width: int = 72, max_rows: int = 40) -> str:
        return actor_waterfall(self.events(), width=width)

    def utilization(self) -> dict:
        """See :func:`actor_utilization`."""
        return actor_utilization(self.events())

    def disorder_ns(self) -> int:
        """See :func:`disorder_ns`."""
        return disorder_ns(self.events())

    def to_chrome_trace(self) -> dict:
        events = self.events()
        trace = to_chrome_trace(events)
        node_of = {e.worker: e.node for e in events if e.node is not None and e.worker is not None}
        nodes = sorted(set(node_of.values()))
        pid = {n: i + 2 for i, n in enumerate(nodes)}
        names = {}
        entries = trace["traceEvents"]
        for entry in entries:
            if entry.get("name") == "thread_name" and entry.get("ph") == "M":
                names[entry["tid"]] = entry["args"]["name"]
        for entry in entries:
            node = node_of.get(names.get(entry.get("tid")))
            if node is not None:
                entry["pid"] = pid[node]
        for n in nodes:
            entries.append({"name": "process_name", "ph": "M", "pid": pid[n], "args": {"name": f"node {n[:12]}"}})
        return trace
