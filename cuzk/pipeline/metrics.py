"""Pipeline counters and stage-time sums, kept apart from the (ring-buffered) timeline so they
never lose history; ``PipelineMetrics.to_prometheus()`` renders the text exposition format.

    >>> reg = MetricsRegistry()
    >>> reg.inc("submitted"); reg.observe("synth", 0.5)
    >>> m = reg.snapshot(gauges={"concurrency": 2})
    >>> m.counters["submitted"], m.stage_seconds["synth"]
    (1, (1, 0.5))
"""

from __future__ import annotations

import threading

import attrs

__all__ = ["MetricsRegistry", "PipelineMetrics", "COUNTERS"]

#: Counted per work unit (a partition counts once).
COUNTERS = ("submitted", "done", "failed", "cancelled")


@attrs.frozen
class PipelineMetrics:
    """A point-in-time copy of the pipeline's counters, gauges and stage-time sums."""

    counters: dict  #: name -> count (see COUNTERS)
    gauges: dict  #: name -> current value (queued, synthesizing, ..., concurrency, memory)
    stage_seconds: dict  #: stage -> (count, total seconds)

    def mean_seconds(self, stage: str) -> float:
        """Mean duration of ``stage`` (NaN if none ran)."""
        n, total = self.stage_seconds.get(stage, (0, 0.0))
        return total / n if n else float("nan")

    def to_prometheus(self, prefix: str = "cuzk_pipeline") -> str:
        """Prometheus text format (counters ``_total``, gauges, stage summaries ``_sum``/``_count``),
        rendered by cuzk's one exposition writer (:mod:`cuzk.prometheus`); ``prefix`` starts with
        ``cuzk_``.

        >>> print(PipelineMetrics({"done": 3}, {"queued": 1}, {}).to_prometheus(), end="")
        # HELP cuzk_pipeline_done_total Work units proved.
        # TYPE cuzk_pipeline_done_total counter
        cuzk_pipeline_done_total 3
        # HELP cuzk_pipeline_queued Current queued.
        # TYPE cuzk_pipeline_queued gauge
        cuzk_pipeline_queued 1
        """
        from cuzk.prometheus import MetricsText, add_pipeline_metrics

        m = MetricsText()
        add_pipeline_metrics(m, self, prefix=prefix.removeprefix("cuzk_") + "_")
        return m.render()


class MetricsRegistry:
    """Thread-safe counters and stage-time accumulators."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counters = dict.fromkeys(COUNTERS, 0)
        self._stages: dict[str, list] = {}

    def inc(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counters[name] = self._counters.get(name, 0) + n

    def observe(self, stage: str, seconds: float) -> None:
        with self._lock:
            acc = self._stages.setdefault(stage, [0, 0.0])
            acc[0] += 1
            acc[1] += seconds

    def snapshot(self, gauges: dict) -> PipelineMetrics:
        with self._lock:
            return PipelineMetrics(dict(self._counters), dict(gauges),
                                   {k: (n, t) for k, (n, t) in self._stages.items()})
