"""Pure functions from an event snapshot to plain data: spans, per-job breakdowns, utilization.

Nothing here reads a clock or holds state, so every number can be checked on a hand-built
event list:

    >>> from cuzk.timeline.events import Event, EventKind as K
    >>> ms = 1_000_000
    >>> evs = [Event(0, K.GPU_START, 1), Event(10 * ms, K.GPU_END, 1),
    ...        Event(20 * ms, K.GPU_START, 2), Event(30 * ms, K.GPU_END, 2)]
    >>> sp = spans(evs)
    >>> round(gpu_utilization(sp), 3), [round(g, 3) for g in idle_gaps(sp)]
    (0.667, [0.01])

:func:`cuzk.timeline.summary.summary` gathers these into one :class:`~cuzk.timeline.summary.Summary`.
"""

from __future__ import annotations

import math
from typing import Hashable, Iterable, Sequence

import attrs

from cuzk.timeline.events import STAGE_BOUNDS, Event, EventKind

__all__ = [
    "Span", "Stats", "JobBreakdown", "JobSwitchGap",
    "spans", "stats", "job_breakdowns", "merge_intervals", "union_seconds", "gpu_window",
    "gpu_utilization", "idle_gaps", "switch_gaps", "gap_histogram",
    "GAP_BUCKETS",
]

_NS = 1e9
#: Idle-gap histogram buckets: (label, upper bound in seconds). Short gaps are channel hand-off
#: overhead; medium ones a synthesis that barely kept up; long ones a starved GPU.
GAP_BUCKETS = (("<50ms", 0.05), ("50-500ms", 0.5), (">500ms", math.inf))

_START = {start: stage for stage, (start, _) in STAGE_BOUNDS.items()}
_END = {end: stage for stage, (_, end) in STAGE_BOUNDS.items()}


@attrs.frozen
class Span:
    """A closed interval of one stage (``SYNTH``, ``GPU``) or a prover sub-span (``MSM_A``, ...)."""

    stage: str  #: "SYNTH", "GPU" or the sub-span name
    job_id: Hashable  #: job it belongs to
    partition: int | None  #: partition index, None for unpartitioned jobs
    worker: str | None  #: thread that ran it
    start_ns: int  #: start, ns since the epoch
    end_ns: int  #: end, ns since the epoch
    thread_cpu_s: float | None = None  #: CPU seconds of the recording thread during the span
    process_cpu_s: float | None = None  #: CPU seconds of the whole process during the span
    error: str | None = None  #: exception type name if the stage raised
    device_s: float | None = None  #: GPU time inside the span (CUDA events), for device sub-spans
    circuit: str | None = None  #: the job's circuit (Engine), None in a Pipeline

    @property
    def seconds(self) -> float:
        """Wall-clock length."""
        return (self.end_ns - self.start_ns) / _NS

    @property
    def is_sub_span(self) -> bool:
        """True for prover sub-spans, False for SYNTH/GPU."""
        return self.stage not in STAGE_BOUNDS


@attrs.frozen
class Stats:
    """Count, mean and percentiles of a list of durations (seconds); NaN when empty.

    >>> stats([1.0, 2.0, 3.0, 4.0]).p50
    2.5
    """

    count: int
    mean: float
    p50: float
    p95: float
    min: float
    max: float
    total: float

    def __str__(self) -> str:
        if not self.count:
            return "-"
        return f"{self.mean:.3f} / {self.p50:.3f} / {self.p95:.3f}"


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    # Linear interpolation between closest ranks (numpy's default), so small samples are exact.
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def stats(values: Iterable[float]) -> Stats:
    """Summary statistics of ``values``.

    >>> stats([]).count, math.isnan(stats([]).mean)
    (0, True)
    """
    v = sorted(float(x) for x in values)
    if not v:
        nan = math.nan
        return Stats(0, nan, nan, nan, nan, nan, 0.0)
    total = math.fsum(v)
    return Stats(len(v), total / len(v), _percentile(v, 0.5), _percentile(v, 0.95), v[0], v[-1], total)


def _cpu_delta(start: Event, end: Event, key: str) -> float | None:
    a, b = start.detail.get(key), end.detail.get(key)
    if a is None or b is None:
        return None
    return (b - a) / _NS


def _device_s(end: Event) -> float | None:
    ms = end.detail.get("device_ms")
    return None if ms is None else float(ms) / 1e3


def spans(events: Iterable[Event]) -> tuple[Span, ...]:
    """Pair start/end events into closed spans, sorted by start time.

    Starts without an end (still running, or an end lost to the ring buffer) and ends without
    a start are left out.

    >>> from cuzk.timeline.events import EventKind as K
    >>> [s.seconds for s in spans([Event(0, K.SYNTH_START, 1), Event(5 * 10**8, K.SYNTH_END, 1)])]
    [0.5]
    """
    open_: dict[tuple, list[Event]] = {}
    out: list[Span] = []
    for e in sorted(events, key=lambda ev: ev.t_ns):
        if e.kind in _START or e.kind is EventKind.SPAN_START:
            stage = _START.get(e.kind) or str(e.detail.get("name"))
            open_.setdefault((stage, e.job_id, e.partition), []).append(e)
        elif e.kind in _END or e.kind is EventKind.SPAN_END:
            stage = _END.get(e.kind) or str(e.detail.get("name"))
            stack = open_.get((stage, e.job_id, e.partition))
            if not stack:
                continue
            s = stack.pop()
            out.append(Span(stage, e.job_id, e.partition, s.worker or e.worker, s.t_ns, e.t_ns,
                            _cpu_delta(s, e, "thread_cpu_ns"), _cpu_delta(s, e, "process_cpu_ns"),
                            e.detail.get("error"), _device_s(e), s.circuit or e.circuit))
    out.sort(key=lambda sp: (sp.start_ns, sp.end_ns))
    return tuple(out)


@attrs.frozen
class JobBreakdown:
    """Where one job (or one partition) spent its time; None where the stage never happened."""

    job_id: Hashable
    partition: int | None
    status: str  #: "done", "failed", "cancelled" or "running"
    submit_s: float | None  #: JOB_SUBMIT time (seconds since epoch)
    queue_wait_s: float | None  #: submit -> synthesis start
    synth_s: float | None  #: synthesis span
    channel_wait_s: float | None  #: synthesis end -> GPU start (blocked send + waiting for a prove worker)
    gpu_s: float | None  #: prove span
    total_s: float | None  #: submit -> done/failed/cancelled
    error: str | None = None  #: error type for failed jobs
    circuit: str | None = None  #: the job's circuit (Engine), None in a Pipeline


def job_breakdowns(events: Iterable[Event]) -> tuple[JobBreakdown, ...]:
    """One :class:`JobBreakdown` per (job, partition), in order of first appearance.

    >>> from cuzk.timeline.events import EventKind as K
    >>> b, = job_breakdowns([Event(0, K.JOB_SUBMIT, 1), Event(10**9, K.SYNTH_START, 1),
    ...                      Event(3 * 10**9, K.SYNTH_END, 1), Event(3 * 10**9, K.JOB_FAILED, 1)])
    >>> b.status, b.queue_wait_s, b.synth_s, b.total_s
    ('failed', 1.0, 2.0, 3.0)
    """
    firsts: dict[tuple, dict[EventKind, Event]] = {}
    circuits: dict[tuple, str] = {}
    for e in sorted(events, key=lambda ev: ev.t_ns):
        if e.kind in (EventKind.SPAN_START, EventKind.SPAN_END, EventKind.CONCURRENCY):
            continue
        firsts.setdefault(e.unit, {}).setdefault(e.kind, e)
        if e.circuit is not None:
            circuits.setdefault(e.unit, e.circuit)

    def t(evs, kind):
        ev = evs.get(kind)
        return None if ev is None else ev.t_ns

    def d(a, b):
        return None if a is None or b is None else (b - a) / _NS

    out = []
    for (job_id, part), evs in firsts.items():
        end_kind = next((k for k in (EventKind.JOB_DONE, EventKind.JOB_FAILED, EventKind.JOB_CANCELLED)
                         if k in evs), None)
        status = {EventKind.JOB_DONE: "done", EventKind.JOB_FAILED: "failed",
                  EventKind.JOB_CANCELLED: "cancelled", None: "running"}[end_kind]
        sub = t(evs, EventKind.JOB_SUBMIT)
        end = t(evs, end_kind) if end_kind else None
        err = evs[end_kind].detail.get("error") if end_kind is EventKind.JOB_FAILED else None
        out.append(JobBreakdown(
            job_id, part, status, None if sub is None else sub / _NS,
            d(sub, t(evs, EventKind.SYNTH_START)),
            d(t(evs, EventKind.SYNTH_START), t(evs, EventKind.SYNTH_END)),
            d(t(evs, EventKind.SYNTH_END), t(evs, EventKind.GPU_START)),
            d(t(evs, EventKind.GPU_START), t(evs, EventKind.GPU_END)),
            d(sub, end), err, circuits.get((job_id, part))))
    return tuple(out)


def merge_intervals(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of intervals as a sorted list of disjoint ones (touching intervals merge).

    >>> merge_intervals([(5, 8), (0, 2), (1, 3), (8, 9)])
    [(0, 3), (5, 9)]
    """
    merged: list[list[int]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def _clip(intervals: Iterable[tuple[int, int]], window: tuple[int, int]) -> list[tuple[int, int]]:
    lo, hi = window
    return [(max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo)]


def union_seconds(intervals: Iterable[tuple[int, int]], window: tuple[int, int] | None = None) -> float:
    """Seconds covered by the union of ns intervals, optionally clipped to ``window``.

    >>> union_seconds([(0, 10**9), (5 * 10**8, 2 * 10**9)])
    2.0
    """
    merged = merge_intervals(intervals)
    if window is not None:
        merged = _clip(merged, window)
    return sum(e - s for s, e in merged) / _NS


def _gpu_spans(all_spans: Iterable[Span]) -> list[Span]:
    return [s for s in all_spans if s.stage == "GPU"]


def gpu_window(all_spans: Iterable[Span]) -> tuple[int, int] | None:
    """Default analysis window in ns: first GPU start to last GPU end (steady state), or None."""
    g = _gpu_spans(all_spans)
    if not g:
        return None
    return (min(s.start_ns for s in g), max(s.end_ns for s in g))


def gpu_utilization(all_spans: Iterable[Span], window: tuple[int, int] | None = None) -> float:
    """Union of GPU spans over all prove workers divided by the window length (0 if no window).

    >>> gpu_utilization([Span("GPU", 1, None, None, 0, 10), Span("GPU", 2, None, None, 5, 20)], (0, 40))
    0.5
    """
    all_spans = list(all_spans)
    window = window or gpu_window(all_spans)
    if window is None or window[1] <= window[0]:
        return 0.0
    busy = union_seconds(((s.start_ns, s.end_ns) for s in _gpu_spans(all_spans)), window)
    return busy / ((window[1] - window[0]) / _NS)


def idle_gaps(all_spans: Iterable[Span], window: tuple[int, int] | None = None) -> list[float]:
    """Seconds between consecutive GPU-busy intervals (no prove worker busy) inside the window.

    >>> idle_gaps([Span("GPU", 1, None, None, 0, 10**9), Span("GPU", 2, None, None, 3 * 10**9, 4 * 10**9)])
    [2.0]
    """
    all_spans = list(all_spans)
    window = window or gpu_window(all_spans)
    if window is None:
        return []
    busy = _clip(merge_intervals((s.start_ns, s.end_ns) for s in _gpu_spans(all_spans)), window)
    gaps = [(b[0] - a[1]) / _NS for a, b in zip(busy, busy[1:])]
    # Idle time at the window's edges counts too when a custom window reaches past the GPU spans.
    if busy and busy[0][0] > window[0]:
        gaps.insert(0, (busy[0][0] - window[0]) / _NS)
    if busy and busy[-1][1] < window[1]:
        gaps.append((window[1] - busy[-1][1]) / _NS)
    return gaps


@attrs.frozen
class JobSwitchGap:
    """GPU idle time when a prove worker moved from one job to the next (0 when they overlapped)."""

    previous: tuple  #: (job_id, partition) whose GPU span ended
    next: tuple  #: (job_id, partition) whose GPU span started
    seconds: float


def switch_gaps(all_spans: Iterable[Span]) -> tuple[JobSwitchGap, ...]:
    """The GPU gap at each job switch, in GPU start order."""
    g = sorted(_gpu_spans(all_spans), key=lambda s: s.start_ns)
    out = []
    for i in range(1, len(g)):
        prev = max(g[:i], key=lambda s: s.end_ns)
        out.append(JobSwitchGap((prev.job_id, prev.partition), (g[i].job_id, g[i].partition),
                                max(0, g[i].start_ns - prev.end_ns) / _NS))
    return tuple(out)


def gap_histogram(gaps: Iterable[float]) -> dict[str, int]:
    """Count gaps per :data:`GAP_BUCKETS` bucket.

    >>> gap_histogram([0.01, 0.2, 0.3, 2.0])
    {'<50ms': 1, '50-500ms': 2, '>500ms': 1}
    """
    hist = {label: 0 for label, _ in GAP_BUCKETS}
    for g in gaps:
        label = next(lbl for lbl, hi in GAP_BUCKETS if g < hi)
        hist[label] += 1
    return hist
