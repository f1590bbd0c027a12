"""``summary()``: the one-call diagnosis of a pipeline run, as a frozen attrs object.

    >>> from cuzk.timeline.events import Event, EventKind as K
    >>> s = summary([Event(0, K.GPU_START, 1), Event(10**9, K.GPU_END, 1)])
    >>> s.gpu_utilization, s.seconds_per_proof
    (1.0, 1.0)
"""

from __future__ import annotations

import math
import os
from typing import Iterable

import attrs

from cuzk.errors import InputError
from cuzk.timeline.analysis import (
    Stats, gap_histogram, gpu_window, idle_gaps, job_breakdowns, spans, stats, switch_gaps, union_seconds,
)
from cuzk.timeline.events import Event, EventKind

__all__ = ["Summary", "CircuitSummary", "summary"]

_NS = 1e9


@attrs.frozen
class CircuitSummary:
    """One circuit's share of a run (an Engine's timeline): outcomes, its GPU utilization over
    the run's window, and its per-proof latencies."""

    jobs_done: int
    jobs_failed: int
    jobs_cancelled: int
    gpu_utilization: float  #: union of this circuit's GPU spans / the summary's window
    synth_seconds: Stats
    gpu_seconds: Stats
    queue_wait_seconds: Stats
    total_seconds: Stats  #: submit -> done, per job/partition

    def __str__(self) -> str:
        return (f"{self.jobs_done}/{self.jobs_failed}/{self.jobs_cancelled} done/failed/cancelled, "
                f"GPU {100 * self.gpu_utilization:.1f}%, total {self.total_seconds}")


@attrs.frozen
class Summary:
    """What a run looked like. All times in seconds; ratios in 0..1. ``str()`` is a table."""

    jobs_done: int  #: jobs/partitions that completed
    jobs_failed: int  #: jobs/partitions whose future failed
    jobs_cancelled: int  #: cancelled while queued or skipped after a sibling partition failed
    window: tuple[float, float] | None  #: analysis window (seconds since epoch)
    window_seconds: float  #: its length
    fill_seconds: float  #: first submit -> first GPU start (pipeline fill, outside the default window)
    gpu_utilization: float  #: union of GPU spans / window
    kernel_utilization: dict  #: sub-span name (and "ALL") -> share of GPU-busy time it covered
    seconds_per_proof: float  #: window / GPU spans ending in it (steady-state throughput)
    wall_seconds_per_proof: float  #: first submit -> last GPU end, per proof (includes fill)
    synth_seconds: Stats  #: per-proof synthesis time
    gpu_seconds: Stats  #: per-proof prove time
    queue_wait_seconds: Stats  #: submit -> synthesis start
    channel_wait_seconds: Stats  #: synthesis end -> GPU start
    total_seconds: Stats  #: submit -> done
    idle_gaps: tuple  #: seconds between consecutive GPU-busy intervals in the window
    idle_gap_histogram: dict  #: counts per bucket, see analysis.GAP_BUCKETS
    switch_gaps: tuple  #: :class:`JobSwitchGap` per job switch
    cpu_contention_ratio: float | None  #: synth wall seconds / synth thread-CPU seconds (1 = own core)
    cpu_cores_busy: float | None  #: process CPU seconds per wall second over the window
    cpu_count: int  #: cores this process may use
    concurrency_changes: tuple  #: (t seconds, value, reason) from the auto controller
    #: sub-span name -> :class:`Stats` of its GPU time (CUDA events) per proof; device sub-spans only
    device_seconds: dict = attrs.field(factory=dict)
    #: circuit name -> :class:`CircuitSummary`, for events that carry a circuit (an Engine's)
    circuits: dict = attrs.field(factory=dict)

    def __str__(self) -> str:
        def f(x, unit="s"):
            return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}{unit}"

        rows = [
            ("jobs done / failed / cancelled", f"{self.jobs_done} / {self.jobs_failed} / {self.jobs_cancelled}"),
            ("GPU utilization", "-" if self.window is None else f"{100 * self.gpu_utilization:.1f}%"),
            ("window", "-" if self.window is None else
             f"{self.window[0]:.3f}s .. {self.window[1]:.3f}s ({self.window_seconds:.3f}s)"),
            ("pipeline fill", f(self.fill_seconds)),
            ("seconds per proof (steady)", f(self.seconds_per_proof)),
            ("seconds per proof (wall)", f(self.wall_seconds_per_proof)),
            ("synth  mean / p50 / p95", str(self.synth_seconds)),
            ("gpu    mean / p50 / p95", str(self.gpu_seconds)),
            ("queue wait mean / p50 / p95", str(self.queue_wait_seconds)),
            ("channel wait mean / p50 / p95", str(self.channel_wait_seconds)),
            ("idle gaps (count, total)", f"{len(self.idle_gaps)}, {f(math.fsum(self.idle_gaps))}"),
            ("idle gap histogram", ", ".join(f"{k}: {v}" for k, v in self.idle_gap_histogram.items())),
            ("CPU contention (wall/CPU)", f(self.cpu_contention_ratio, "")),
            ("CPU cores busy", "-" if self.cpu_cores_busy is None
             else f"{self.cpu_cores_busy:.2f} of {self.cpu_count}"),
        ]
        for name, share in self.kernel_utilization.items():
            label = "all sub-spans" if name == "ALL" else name  # "ALL": the union of the named kernels
            rows.append((f"  {label} share of GPU time", f"{100 * share:.1f}%"))
        for name, st in self.device_seconds.items():
            rows.append((f"  {name} GPU time mean / p50 / p95", str(st)))
        for name, cs in self.circuits.items():
            rows.append((f"  circuit {name}", str(cs)))
        for t, value, reason in self.concurrency_changes:
            rows.append((f"  concurrency -> {value} at {t:.3f}s", reason))
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def _window_ns(window, all_spans) -> tuple[int, int] | None:
    if window is None:
        return gpu_window(all_spans)
    try:
        t0, t1 = (float(x) for x in window)
    except (TypeError, ValueError):
        raise InputError(f"summary window must be (t0, t1) in seconds, got {window!r}") from None
    if not t1 > t0:
        raise InputError(f"summary window must have t1 > t0, got {window!r}")
    return (round(t0 * _NS), round(t1 * _NS))


def _cpu_cores_busy(events: list[Event], window: tuple[int, int]) -> float | None:
    stamped = [e for e in events if "process_cpu_ns" in e.detail and window[0] <= e.t_ns <= window[1]]
    if len(stamped) < 2 or stamped[-1].t_ns <= stamped[0].t_ns:
        return None
    cpu = stamped[-1].detail["process_cpu_ns"] - stamped[0].detail["process_cpu_ns"]
    return cpu / (stamped[-1].t_ns - stamped[0].t_ns)


def summary(events: Iterable[Event], window: tuple[float, float] | None = None) -> Summary:
    """Summarize a run. ``window=(t0, t1)`` in seconds since the epoch; default: GPU steady state.

    Raises:
        cuzk.errors.InputError: a malformed window.

    >>> summary([]).jobs_done
    0
    """
    events = sorted(events, key=lambda e: e.t_ns)
    all_spans = spans(events)
    win = _window_ns(window, all_spans)
    gpu = [s for s in all_spans if s.stage == "GPU"]
    synth = [s for s in all_spans if s.stage == "SYNTH"]
    breakdowns = job_breakdowns(events)
    counts = {st: sum(1 for b in breakdowns if b.status == st) for st in ("done", "failed", "cancelled")}

    nan = math.nan
    if win is not None and win[1] > win[0]:
        length = (win[1] - win[0]) / _NS
        gpu_busy = union_seconds(((s.start_ns, s.end_ns) for s in gpu), win)
        util = gpu_busy / length
        gaps = tuple(idle_gaps(all_spans, win))
        ending = sum(1 for s in gpu if win[0] < s.end_ns <= win[1])
        per_proof = length / ending if ending else nan
        kernel = {}
        subs = [s for s in all_spans if s.is_sub_span]
        for name in sorted({s.stage for s in subs}):
            covered = union_seconds(((s.start_ns, s.end_ns) for s in subs if s.stage == name), win)
            kernel[name] = covered / gpu_busy if gpu_busy else 0.0
        if subs:
            kernel["ALL"] = union_seconds(((s.start_ns, s.end_ns) for s in subs), win) / gpu_busy if gpu_busy else 0.0
        cores = _cpu_cores_busy(events, win)
        window_s = (win[0] / _NS, win[1] / _NS)
    else:
        length, util, gaps, per_proof, kernel, cores, window_s = 0.0, 0.0, (), nan, {}, None, None

    submits = [e.t_ns for e in events if e.kind is EventKind.JOB_SUBMIT]
    starts = [e.t_ns for e in events if e.kind is EventKind.SYNTH_START]
    first = min(submits or starts, default=None)
    fill = (gpu[0].start_ns - first) / _NS if gpu and first is not None else nan
    wall = ((max(s.end_ns for s in gpu) - first) / _NS / len(gpu)) if gpu and first is not None else nan

    synth_cpu = [s.thread_cpu_s for s in synth if s.thread_cpu_s is not None]
    contention = None
    if synth_cpu and math.fsum(synth_cpu) > 0:
        contention = math.fsum(s.seconds for s in synth if s.thread_cpu_s is not None) / math.fsum(synth_cpu)

    changes = tuple((e.t_ns / _NS, e.detail.get("value"), str(e.detail.get("reason", "")))
                    for e in events if e.kind is EventKind.CONCURRENCY)

    def col(attr, circuit=None, any_circuit=True):
        return stats(getattr(b, attr) for b in breakdowns
                     if getattr(b, attr) is not None and (any_circuit or b.circuit == circuit))

    per_circuit = {}
    for name in sorted({b.circuit for b in breakdowns if b.circuit is not None}):
        mine = [b for b in breakdowns if b.circuit == name]
        its_gpu = [(s.start_ns, s.end_ns) for s in gpu if s.circuit == name]
        per_circuit[name] = CircuitSummary(
            jobs_done=sum(b.status == "done" for b in mine), jobs_failed=sum(b.status == "failed" for b in mine),
            jobs_cancelled=sum(b.status == "cancelled" for b in mine),
            gpu_utilization=union_seconds(its_gpu, win) / length if win is not None and length else 0.0,
            synth_seconds=stats(s.seconds for s in synth if s.circuit == name),
            gpu_seconds=stats(s.seconds for s in gpu if s.circuit == name),
            queue_wait_seconds=col("queue_wait_s", name, False), total_seconds=col("total_s", name, False))

    return Summary(
        jobs_done=counts["done"], jobs_failed=counts["failed"], jobs_cancelled=counts["cancelled"],
        window=window_s, window_seconds=length, fill_seconds=fill, gpu_utilization=util,
        kernel_utilization=kernel, seconds_per_proof=per_proof, wall_seconds_per_proof=wall,
        synth_seconds=stats(s.seconds for s in synth), gpu_seconds=stats(s.seconds for s in gpu),
        queue_wait_seconds=col("queue_wait_s"), channel_wait_seconds=col("channel_wait_s"),
        total_seconds=col("total_s"), idle_gaps=gaps, idle_gap_histogram=gap_histogram(gaps),
        switch_gaps=switch_gaps(all_spans), cpu_contention_ratio=contention, cpu_cores_busy=cores,
        cpu_count=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
        concurrency_changes=changes,
        device_seconds={name: stats(s.device_s for s in all_spans if s.stage == name and s.device_s is not None)
                        for name in sorted({s.stage for s in all_spans if s.device_s is not None})},
        circuits=per_circuit,
    )
