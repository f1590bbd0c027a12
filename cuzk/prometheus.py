"""Prometheus text exposition format (version 0.0.4): a builder for counters, gauges, summaries
and histograms, a thread-safe histogram accumulator, and the Pipeline's metrics in that form.

Rules the builder enforces, so what it renders always parses:

* every name gets the ``cuzk_`` prefix (once) and must match ``[a-zA-Z_:][a-zA-Z0-9_:]*``;
  counters end in ``_total`` (added when missing), as the Pipeline's own renderer writes them;
* a metric family is written once, ``# HELP`` then ``# TYPE`` then all its samples, whatever
  order they were added in; a name may not change type, nor repeat a label set;
* label names match ``[a-zA-Z_][a-zA-Z0-9_]*``, don't start with ``__`` and avoid ``le``
  (histograms) and ``quantile`` (summaries); label values escape ``\\``, ``"`` and newline; help
  text escapes ``\\`` and newline;
* values are ints, or floats written so Go's ``ParseFloat`` reads them back (``NaN``,
  ``+Inf``, ``-Inf``); histogram buckets are cumulative, end with ``le="+Inf"`` equal to
  ``_count``.

    >>> m = MetricsText()
    >>> m.counter("proofs", "Proofs completed.", 3, labels={"circuit": "porep"})
    >>> m.gauge("queue_depth", "Jobs waiting.", 2)
    >>> h = Histogram([0.5, 1.0])
    >>> h.observe(0.25); h.observe(0.75)
    >>> m.histogram("prove_seconds", "Prove time.", h.snapshot())
    >>> print(m.render(), end="")
    # HELP cuzk_proofs_total Proofs completed.
    # TYPE cuzk_proofs_total counter
    cuzk_proofs_total{circuit="porep"} 3
    # HELP cuzk_queue_depth Jobs waiting.
    # TYPE cuzk_queue_depth gauge
    cuzk_queue_depth 2
    # HELP cuzk_prove_seconds Prove time.
    # TYPE cuzk_prove_seconds histogram
    cuzk_prove_seconds_bucket{le="0.5"} 1
    cuzk_prove_seconds_bucket{le="1.0"} 2
    cuzk_prove_seconds_bucket{le="+Inf"} 2
    cuzk_prove_seconds_sum 1.0
    cuzk_prove_seconds_count 2
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from typing import Mapping

import attrs

from cuzk.errors import InputError

__all__ = ["MetricsText", "Histogram", "HistogramSnapshot", "add_pipeline_metrics", "format_value",
           "escape_label_value", "PREFIX", "SECONDS_BUCKETS", "CONTENT_TYPE"]

PREFIX = "cuzk_"
#: The ``Content-Type`` of the text format.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Default histogram bounds for durations: 1 ms to ~17 min, roughly ×2.5 apart (proofs range
#: from milliseconds for toy circuits to minutes for production ones).
SECONDS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0,
                   100.0, 250.0, 500.0, 1000.0)
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
_RESERVED = {"histogram": "le", "summary": "quantile"}


def format_value(v) -> str:
    """A sample value as the text format writes it (ints exact, floats round-trip)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            v = float(v)  # numpy scalars
        except (TypeError, ValueError):
            raise InputError(f"a metric value must be a number, got {type(v).__name__}") from None
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


def escape_label_value(v) -> str:
    """``\\`` → ``\\\\``, ``"`` → ``\\"``, newline → ``\\n``."""
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("\n", "\\n")


@attrs.frozen
class HistogramSnapshot:
    """Cumulative bucket counts at one moment: ``buckets`` is ``((upper bound, count), ...)``
    over the finite bounds, ascending; the ``+Inf`` bucket is ``count``."""

    buckets: tuple
    sum: float
    count: int


class Histogram:
    """A thread-safe histogram accumulator (bounds fixed at creation).

    Args:
        bounds: finite upper bounds, strictly increasing (default :data:`SECONDS_BUCKETS`).

    Raises:
        InputError: bounds not strictly increasing, or not finite numbers.
    """

    def __init__(self, bounds=SECONDS_BUCKETS):
        b = [float(x) for x in bounds]
        if any(not math.isfinite(x) for x in b) or any(x >= y for x, y in zip(b, b[1:])):
            raise InputError(f"histogram bounds must be finite and strictly increasing, got {list(bounds)}")
        self._bounds = tuple(b)
        self._counts = [0] * len(b)  # per bucket, not cumulative (cumulated in snapshot)
        self._over = 0
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        """Count one observation (``le`` is inclusive: a value equal to a bound falls in its bucket)."""
        v = float(value)
        i = bisect.bisect_left(self._bounds, v)
        with self._lock:
            if i < len(self._counts):
                self._counts[i] += 1
            else:
                self._over += 1
            self._sum += v

    def snapshot(self) -> HistogramSnapshot:
        with self._lock:
            counts, over, total = list(self._counts), self._over, self._sum
        cum, acc = [], 0
        for bound, c in zip(self._bounds, counts):
            acc += c
            cum.append((bound, acc))
        return HistogramSnapshot(buckets=tuple(cum), sum=total, count=acc + over)


class MetricsText:
    """Builds one exposition: add samples in any order, :meth:`render` groups them by family.

    Args:
        prefix: put before every name that does not already start with it (default ``cuzk_``).
    """

    def __init__(self, prefix: str = PREFIX):
        self.prefix = prefix
        self._families: dict[str, dict] = {}  # name -> {"type", "help", "samples": [(line...)], "keys": set}

    def _add(self, name: str, kind: str, help: str, labels: Mapping | None, lines) -> None:
        """Validate everything, then record the family and its sample lines (nothing on error).

        ``lines(full name, sorted label items)`` returns the sample lines."""
        if not isinstance(name, str) or not name:
            raise InputError(f"a metric name must be a non-empty str, got {name!r}")
        full = name if name.startswith(self.prefix) else self.prefix + name
        if kind == "counter" and not full.endswith("_total"):
            full += "_total"
        if not _NAME.match(full):
            raise InputError(f"{full!r} is not a valid Prometheus metric name")
        fam = self._families.get(full)
        if fam is not None and fam["type"] != kind:
            raise InputError(f"metric {full} is a {fam['type']}, cannot add a {kind} sample to it")
        if labels is not None and not isinstance(labels, Mapping):
            raise InputError(f"labels must be a mapping, got {type(labels).__name__}")
        items = tuple(sorted((labels or {}).items(), key=lambda kv: str(kv[0])))
        for k, _ in items:
            if not isinstance(k, str) or not _LABEL.match(k) or k.startswith("__") or k == _RESERVED.get(kind):
                raise InputError(f"{k!r} cannot be a label name of a {kind}")
        if fam is not None and items in fam["keys"]:
            raise InputError(f"metric {full} already has a sample with labels {dict(items)}")
        new = lines(full, items)
        if fam is None:
            fam = self._families[full] = {"type": kind, "help": str(help), "samples": [], "keys": set()}
        fam["keys"].add(items)
        fam["samples"] += new

    @staticmethod
    def _line(name: str, labels: tuple, value) -> str:
        body = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels)
        return f"{name}{{{body}}} {format_value(value)}" if body else f"{name} {format_value(value)}"

    def counter(self, name: str, help: str, value, *, labels: Mapping | None = None) -> None:
        """A monotonically increasing count (``_total`` appended to the name when missing).

        Raises:
            InputError: a bad name or label, a repeated label set, a type clash, a value that
                is not a number or is negative.
        """
        if format_value(value).startswith("-"):
            raise InputError(f"counter {name} cannot be negative, got {value}")
        self._add(name, "counter", help, labels, lambda full, lab: [self._line(full, lab, value)])

    def gauge(self, name: str, help: str, value, *, labels: Mapping | None = None) -> None:
        """A value that goes up and down (errors as :meth:`counter`, negatives allowed)."""
        format_value(value)
        self._add(name, "gauge", help, labels, lambda full, lab: [self._line(full, lab, value)])

    def summary(self, name: str, help: str, *, sum: float, count: int, labels: Mapping | None = None) -> None:
        """``_sum`` and ``_count`` without quantiles (e.g. total seconds over a number of runs)."""
        self._add(name, "summary", help, labels, lambda full, lab: [
            self._line(f"{full}_sum", lab, float(sum)), self._line(f"{full}_count", lab, int(count))])

    def histogram(self, name: str, help: str, snap: HistogramSnapshot, *, labels: Mapping | None = None) -> None:
        """``_bucket{le=...}`` (cumulative, then ``+Inf``), ``_sum`` and ``_count`` from a snapshot.

        Raises:
            InputError: as :meth:`counter`; also bucket bounds not increasing, or counts that
                decrease or exceed ``count``.
        """
        prev_b, prev_c = -math.inf, 0
        for bound, c in snap.buckets:
            if not bound > prev_b or c < prev_c or c > snap.count:
                raise InputError(f"histogram {name}: buckets must have increasing bounds and cumulative "
                                 f"counts <= count, got {snap.buckets} with count {snap.count}")
            prev_b, prev_c = bound, c

        def lines(full, lab):
            out = [self._line(f"{full}_bucket", lab + (("le", format_value(float(b))),), c) for b, c in snap.buckets]
            out.append(self._line(f"{full}_bucket", lab + (("le", "+Inf"),), snap.count))
            return out + [self._line(f"{full}_sum", lab, float(snap.sum)), self._line(f"{full}_count", lab,
                                                                                      int(snap.count))]

        self._add(name, "histogram", help, labels, lines)

    def render(self) -> str:
        """The exposition text (ends with a newline; empty when nothing was added)."""
        out = []
        for name, fam in self._families.items():
            out.append(f"# HELP {name} {_escape_help(fam['help'])}")
            out.append(f"# TYPE {name} {fam['type']}")
            out += fam["samples"]
        return "\n".join(out) + "\n" if out else ""


_PIPELINE_HELP = {"submitted": "Work units submitted.", "done": "Work units proved.",
                  "failed": "Work units failed.", "cancelled": "Work units cancelled."}


def add_pipeline_metrics(m: MetricsText, metrics, *, labels: Mapping | None = None,
                         prefix: str = "pipeline_") -> None:
    """Add a :class:`cuzk.pipeline.metrics.PipelineMetrics` snapshot to ``m`` under ``prefix``,
    with ``labels`` on every sample (e.g. ``{"circuit": "porep"}``, so one exposition can hold
    several pipelines); the same names as ``PipelineMetrics.to_prometheus()``. Gauges that are
    None or not numbers are left out.

    >>> from cuzk.pipeline.metrics import PipelineMetrics
    >>> m = MetricsText()
    >>> add_pipeline_metrics(m, PipelineMetrics({"done": 3}, {"queued": 1}, {"gpu": (3, 1.5)}), labels={"circuit": "c"})
    >>> print(m.render(), end="")
    # HELP cuzk_pipeline_done_total Work units proved.
    # TYPE cuzk_pipeline_done_total counter
    cuzk_pipeline_done_total{circuit="c"} 3
    # HELP cuzk_pipeline_queued Current queued.
    # TYPE cuzk_pipeline_queued gauge
    cuzk_pipeline_queued{circuit="c"} 1
    # HELP cuzk_pipeline_stage_seconds Seconds spent per stage (sum and count of runs).
    # TYPE cuzk_pipeline_stage_seconds summary
    cuzk_pipeline_stage_seconds_sum{circuit="c",stage="gpu"} 1.5
    cuzk_pipeline_stage_seconds_count{circuit="c",stage="gpu"} 3
    """
    labels = dict(labels or {})
    for name, value in metrics.counters.items():
        m.counter(f"{prefix}{name}", _PIPELINE_HELP.get(name, f"Count of {name}."), value, labels=labels)
    for name, value in metrics.gauges.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        m.gauge(f"{prefix}{name}", f"Current {name.replace('_', ' ')}.", value, labels=labels)
    for stage, (n, total) in metrics.stage_seconds.items():
        m.summary(f"{prefix}stage_seconds", "Seconds spent per stage (sum and count of runs).", sum=total, count=n,
                  labels={**labels, "stage": stage})
