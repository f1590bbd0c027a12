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
import math
import textwrap
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


#: legend names of the stage bars
_STAGE_LABELS = {"SYNTH": "synthesis", "GPU": "prove"}


def _plot_title(events: list[Event], n_units: int) -> str:
    """``GPU utilization 55.6% · 0.018 s/proof · 5 jobs`` (:func:`cuzk.timeline.summary.summary`)."""
    from cuzk.timeline.summary import summary

    s = summary(events)
    parts = [f"{n_units} job{'' if n_units == 1 else 's'}"]
    if math.isfinite(s.seconds_per_proof):
        parts.insert(0, f"{s.seconds_per_proof:.3f} s/proof")
    if math.isfinite(s.gpu_utilization):
        parts.insert(0, f"GPU utilization {100 * s.gpu_utilization:.1f}%")
    return " · ".join(parts)


def plot(events: Iterable[Event], ax=None, *, title: str | None = None):
    """Matplotlib waterfall: a row per job, its synthesis and prove bars, and the prover's
    sub-steps (``cuzk.timeline.span``: H, MSM_A, ...) as thin bars inside the prove bar.

    The title gives the GPU utilization and seconds per proof of :func:`summary` (``title``
    replaces it); the legend names each kind of bar and sits right of the axes, so it covers no
    row. A figure made here uses constrained layout, which keeps the title, axis labels and
    legend inside it; with ``ax`` given, the caller's figure keeps its own layout.

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
        # 1.6 in: title, tick labels and the x-axis label, whatever the number of rows
        fig, ax = plt.subplots(figsize=(10, 1.6 + 0.3 * max(1, len(units))), layout="constrained")
    else:
        fig = ax.figure
    colors = {"SYNTH": "tab:blue", "GPU": "tab:orange"}
    sub_names: list[str] = []
    for s in spans(events):
        y = row.get((s.job_id, s.partition))
        if y is None:
            continue
        if s.is_sub_span:
            # zorder: above the prove bar, which starts with its first sub-step and is drawn after it
            ax.broken_barh([(s.start_ns / 1e9, s.seconds)], (y + 0.05, 0.2), color="tab:red", alpha=0.6,
                           label="sub-step", zorder=3)
            if s.stage not in sub_names:
                sub_names.append(s.stage)
        else:
            ax.broken_barh([(s.start_ns / 1e9, s.seconds)], (y - 0.35, 0.7), color=colors[s.stage],
                           label=_STAGE_LABELS[s.stage])
    ax.set_yticks(range(len(units)), [unit_label(*u) for u in units])
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the timeline's start")
    ax.set_title(_plot_title(events, len(units)) if title is None else title)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    order = [x for x in (*_STAGE_LABELS.values(), "sub-step") if x in uniq]
    if order:
        names = textwrap.fill(", ".join(sub_names), width=20)  # the legend is a narrow column
        text = {"sub-step": f"prove sub-steps:\n{names}"}
        ax.legend([uniq[x] for x in order], [text.get(x, x) for x in order], loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
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
