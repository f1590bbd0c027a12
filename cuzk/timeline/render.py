"""Ways to look at a timeline: ASCII waterfall, matplotlib figure, Chrome trace, log lines, HTML.

All take an event snapshot (``timeline.events()``) and return text or data:

    >>> from cuzk.timeline.events import Event, EventKind as K
    >>> evs = [Event(0, K.JOB_SUBMIT, 1), Event(0, K.SYNTH_START, 1), Event(4, K.SYNTH_END, 1),
    ...        Event(4, K.GPU_START, 1), Event(8, K.GPU_END, 1), Event(8, K.JOB_DONE, 1)]
    >>> print(waterfall(evs, width=8).splitlines()[1])
    P1  SSSSGGGG
"""

from __future__ import annotations

import html
from typing import Any, Hashable, Iterable

from cuzk.errors import BackendUnavailableError, InputError
from cuzk.timeline.analysis import spans
from cuzk.timeline.events import TERMINAL_KINDS, Event, EventKind

__all__ = ["waterfall", "plot", "to_chrome_trace", "log_line", "to_html", "unit_label"]


def unit_label(job_id: Hashable, partition: int | None, circuit: str | None = None) -> str:
    """Row label: ``P<job>`` for integer ids, the id itself otherwise, ``.k`` for partition k,
    prefixed ``<circuit>:`` when the job has a circuit (an Engine's).

    >>> unit_label(3, None), unit_label("sector-9", 2), unit_label(4, None, "winning")
    ('P3', 'sector-9.2', 'winning:P4')
    """
    base = f"P{job_id}" if isinstance(job_id, int) and not isinstance(job_id, bool) else str(job_id)
    base = base if circuit is None else f"{circuit}:{base}"
    return base if partition is None else f"{base}.{partition}"


def _units(events: list[Event]) -> dict[tuple, dict]:
    """Per unit: first/last time, terminal kind, spans by stage."""
    units: dict[tuple, dict] = {}
    for e in events:
        if e.job_id is None:
            continue
        u = units.setdefault(e.unit, {"first": e.t_ns, "last": e.t_ns, "end": None, "spans": [], "circuit": None})
        if e.circuit is not None:
            u["circuit"] = e.circuit
        u["first"] = min(u["first"], e.t_ns)
        u["last"] = max(u["last"], e.t_ns)
        if e.kind in TERMINAL_KINDS:
            u["end"] = e.kind
    for s in spans(events):
        if not s.is_sub_span and (s.job_id, s.partition) in units:
            units[(s.job_id, s.partition)]["spans"].append(s)
    return units


def waterfall(events: Iterable[Event], width: int = 72, max_rows: int = 40) -> str:
    """ASCII chart, one row per job/partition: ``S`` synthesis, ``G`` prove, ``.`` waiting.

    Columns are scaled so the whole run fits ``width`` characters; a row ends with ``x`` for a
    failed job and ``-`` for a cancelled one. Only the last ``max_rows`` rows are drawn.

    >>> waterfall([])
    '(no jobs on the timeline)'
    """
    for name, v in (("width", width), ("max_rows", max_rows)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:  # max_rows <= 0 hit max() of nothing
            raise InputError(f"waterfall {name} must be a positive int, got {v!r}")
    events = sorted(events, key=lambda e: e.t_ns)
    units = _units(events)
    if not units:
        return "(no jobs on the timeline)"
    width = max(8, width)
    t0 = min(u["first"] for u in units.values())
    t1 = max(u["last"] for u in units.values())
    scale = width / max(1, t1 - t0)

    def col(t: int) -> int:
        return min(width - 1, int((t - t0) * scale))

    def col_end(t_start: int, t_end: int) -> int:  # exclusive end, at least one cell wide
        return max(col(t_start) + 1, min(width, int((t_end - t0) * scale + 0.5)))

    keys = list(units)
    hidden = max(0, len(keys) - max_rows)
    keys = keys[hidden:]
    labels = {k: unit_label(*k, units[k]["circuit"]) for k in keys}
    lw = max(len(x) for x in labels.values())
    lines = [f"{'':<{lw}}  0s{'':>{max(0, width - 12)}}{(t1 - t0) / 1e9:>9.3f}s"]
    for k in keys:
        u = units[k]
        row = [" "] * width
        for i in range(col(u["first"]), col_end(u["first"], u["last"])):
            row[i] = "."
        for s in u["spans"]:
            ch = "S" if s.stage == "SYNTH" else "G"
            for i in range(col(s.start_ns), col_end(s.start_ns, s.end_ns)):
                row[i] = ch
        mark = {EventKind.JOB_FAILED: "x", EventKind.JOB_CANCELLED: "-"}.get(u["end"])
        if mark:
            row[col(u["last"])] = mark
        lines.append(f"{labels[k]:<{lw}}  {''.join(row).rstrip()}")
    if hidden:
        lines.append(f"({hidden} earlier rows not shown)")
    lines.append("S synthesis  G prove  . waiting  x failed  - cancelled")
    return "\n".join(lines)


def plot(events: Iterable[Event], ax=None):
    """Matplotlib waterfall (synthesis and prove bars per job, sub-spans as thin bars).

    Raises:
        cuzk.errors.BackendUnavailableError: matplotlib is not installed (``pip install 'cuzk[plot]'``).
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise BackendUnavailableError(
            "Timeline.plot() needs matplotlib, which is not installed; pip install 'cuzk[plot]'") from e
    events = sorted(events, key=lambda e: e.t_ns)
    units = list(_units(events))
    row = {u: i for i, u in enumerate(units)}
    if ax is None:
        fig, ax = plt.subplots(figsize=(10, 1 + 0.3 * max(1, len(units))))
    else:
        fig = ax.figure
    colors = {"SYNTH": "tab:blue", "GPU": "tab:orange"}
    for s in spans(events):
        y = row.get((s.job_id, s.partition))
        if y is None:
            continue
        if s.is_sub_span:
            ax.broken_barh([(s.start_ns / 1e9, s.seconds)], (y + 0.05, 0.2), color="tab:red", alpha=0.6)
        else:
            ax.broken_barh([(s.start_ns / 1e9, s.seconds)], (y - 0.35, 0.7), color=colors[s.stage],
                           label=s.stage)
    ax.set_yticks(range(len(units)), [unit_label(*u) for u in units])
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    if uniq:
        ax.legend(uniq.values(), uniq.keys(), loc="upper left")
    return fig


def _jsonable(x: Any) -> Any:
    return x if x is None or isinstance(x, (bool, int, float, str)) else str(x)


def to_chrome_trace(events: Iterable[Event]) -> dict:
    """Trace-event JSON (``json.dump`` it) for Perfetto or chrome://tracing.

    >>> from cuzk.timeline.events import EventKind as K
    >>> t = to_chrome_trace([Event(0, K.GPU_START, 1, worker="cuzk-gpu-0"), Event(2000, K.GPU_END, 1)])
    >>> [e["ph"] for e in t["traceEvents"]][-1], t["traceEvents"][-1]["dur"]
    ('X', 2.0)
    """
    events = sorted(events, key=lambda e: e.t_ns)
    tids: dict[str, int] = {}
    out: list[dict] = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "cuzk pipeline"}}]

    def tid(worker: str | None) -> int:
        name = worker or "main"
        if name not in tids:
            tids[name] = len(tids) + 1
            out.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tids[name], "args": {"name": name}})
        return tids[name]

    for e in events:
        if e.kind in TERMINAL_KINDS or e.kind is EventKind.JOB_SUBMIT:
            out.append({"name": f"{e.kind.value} {unit_label(e.job_id, e.partition)}", "ph": "i", "s": "t",
                        "ts": e.t_ns / 1e3, "pid": 1, "tid": tid(e.worker),
                        "args": {k: _jsonable(v) for k, v in e.detail.items()}})
        elif e.kind is EventKind.CONCURRENCY:
            out.append({"name": "concurrency", "ph": "C", "ts": e.t_ns / 1e3, "pid": 1,
                        "args": {"value": _jsonable(e.detail.get("value"))}})
    for s in spans(events):
        args = {"job": _jsonable(s.job_id), "partition": s.partition, "thread_cpu_s": s.thread_cpu_s,
                "process_cpu_s": s.process_cpu_s}
        if s.error:
            args["error"] = s.error
        if s.device_s is not None:
            args["device_ms"] = s.device_s * 1e3
        out.append({"name": f"{s.stage} {unit_label(s.job_id, s.partition)}",
                    "cat": {"SYNTH": "synth", "GPU": "gpu"}.get(s.stage, "kernel"), "ph": "X",
                    "ts": s.start_ns / 1e3, "dur": (s.end_ns - s.start_ns) / 1e3, "pid": 1,
                    "tid": tid(s.worker), "args": args})
    return {"traceEvents": out, "displayTimeUnit": "ms"}


def log_line(event: Event) -> str:
    """``TIMELINE,<ms>,<event>,<job>,<detail>``; detail is ``key=value`` pairs joined by ``;``.

    >>> log_line(Event(1_500_000, EventKind.SYNTH_END, 4, worker="cuzk-synth-0"))
    'TIMELINE,1.500,SYNTH_END,4,worker=cuzk-synth-0'
    """
    parts = []
    if event.partition is not None:
        parts.append(f"partition={event.partition}")
    if event.worker is not None:
        parts.append(f"worker={event.worker}")
    parts.extend(f"{k}={v}" for k, v in event.detail.items())
    # Commas would break the CSV shape log tooling splits on.
    detail = ";".join(parts).replace(",", " ")
    job = "" if event.job_id is None else str(event.job_id).replace(",", " ")
    return f"TIMELINE,{event.t_ns / 1e6:.3f},{event.kind.value},{job},{detail}"


def to_html(events: Iterable[Event]) -> str:
    """Summary table and waterfall as HTML ``<pre>`` blocks (what notebooks show)."""
    from cuzk.timeline.summary import summary

    events = list(events)
    return (f"<div class='cuzk-timeline'><pre>{html.escape(str(summary(events)))}</pre>"
            f"<pre>{html.escape(waterfall(events))}</pre></div>")
