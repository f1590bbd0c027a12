"""The system under test, behind the six calls the fault driver uses.

The driver and oracle only ever call ``submit``, ``submit_partitioned``, ``cancel``, ``close``,
``status`` and ``timeline`` (plus ``live_threads`` for the leak check and ``id_reusable`` for
id reuse), so pointing the harness at another front end means writing one more adapter with the
same methods and a factory like :func:`pipeline_target`; :mod:`reliability.engine_target` is
the one for :class:`cuzk.Engine`, with the Engine's own actions (deadlines, repeated request
ids, ``evict``) and checks.

What an adapter for :class:`cuzk.Engine` has to translate (checked against engine.py as of
this commit): ``register`` one circuit with the fake stages (``key`` = the fake prover) and
``concurrency`` an int ("auto" is a Pipeline feature); ``gpu_workers`` is
``workers_per_device`` on ``device="cpu"``; ``job_id`` is ``request_id``, which is idempotent
(a known id returns the *same* future), so pass ``request_retention_s=0`` for the Pipeline's
"reuse after completion" meaning, or teach the driver that a reused id may return the old
future; a closed engine raises ``EngineError``, which the adapter turns into
``PipelineClosedError``; ``status()`` is a dict per circuit, to be mapped onto
:class:`StatusView`; the worker threads are ``engine.core._threads``.

    >>> from reliability.stages import Registry, FaultSynthesizer, FaultProver
    >>> from reliability.plan import UnitSpec
    >>> reg = Registry()
    >>> t = PipelineTarget(FaultSynthesizer(reg), FaultProver(reg), concurrency=1)
    >>> f = t.submit({"u": UnitSpec(("k", None), 1, "ok", "ok", 0.0)}, priority=1, job_id="k")
    >>> f.result(timeout=10)[:3], t.close(wait=True), t.live_threads()
    (('proof', 'k', None), None, [])
"""

from __future__ import annotations

import threading
from typing import Any, Hashable, Mapping, Sequence

from cuzk.pipeline import Pipeline
from cuzk.timeline import Timeline

__all__ = ["PipelineTarget", "StatusView", "pipeline_target", "all_prefixed_threads"]


class StatusView:
    """What the oracle reads from a status call: unit counts per state, unfinished job ids,
    reserved memory and the budget."""

    __slots__ = ("closed", "counts", "jobs", "memory_reserved_bytes", "memory_budget", "circuits")

    def __init__(self, closed, counts, jobs, memory_reserved_bytes, memory_budget, circuits=None):
        self.closed, self.counts, self.jobs = closed, counts, jobs
        self.memory_reserved_bytes, self.memory_budget = memory_reserved_bytes, memory_budget
        self.circuits = circuits  # an Engine's per-circuit job counts (status()["circuits"]); None for a Pipeline


class PipelineTarget:
    """:class:`cuzk.pipeline.Pipeline` as a fault-injection target."""

    thread_prefix = "cuzk-"

    def __init__(self, synthesizer, prover, *, concurrency=2, lookahead=1, gpu_workers=1,
                 memory_budget=None, timeline: Timeline | None = None):
        self.pipe = Pipeline(synthesizer, prover, concurrency=concurrency, lookahead=lookahead,
                             gpu_workers=gpu_workers, timeline=timeline, memory_budget=memory_budget)
        self.timeline = self.pipe.timeline
        self._threads = list(self.pipe._threads)  # for the leak check; the pipeline's own record

    def submit(self, inputs: Mapping[str, Any], priority, job_id: Hashable = None):
        return self.pipe.submit(inputs, priority=priority, job_id=job_id)

    def submit_partitioned(self, parts: Sequence[Mapping[str, Any]], priority, job_id: Hashable = None):
        return self.pipe.submit_partitioned(parts, priority=priority, job_id=job_id)

    def cancel(self, future) -> bool:
        return self.pipe.cancel(future)

    def close(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self.pipe.close(wait=wait, cancel_futures=cancel_futures)

    def status(self) -> StatusView:
        s = self.pipe.status()
        return StatusView(s.closed, dict(s.counts), dict(s.jobs), s.memory_reserved_bytes, s.memory_budget)

    def metrics(self):
        return self.pipe.metrics()

    def id_reusable(self, rec) -> bool:
        """Whether the driver may submit again under ``rec``'s id as a new job: the pipeline
        frees an id before the job's future resolves."""
        return rec.future.done()

    def live_threads(self) -> list[str]:
        """Names of this target's worker threads still alive."""
        return [t.name for t in self._threads if t.is_alive()]


def pipeline_target(cfg, synthesizer, prover, timeline: Timeline) -> PipelineTarget:
    """Build the pipeline an :class:`~reliability.plan.EpisodeConfig` describes."""
    return PipelineTarget(synthesizer, prover, concurrency=cfg.concurrency, lookahead=cfg.lookahead,
                          gpu_workers=cfg.gpu_workers, memory_budget=cfg.memory_budget, timeline=timeline)


def all_prefixed_threads(prefix: str) -> list[str]:
    """Every live thread whose name starts with ``prefix`` (any target's)."""
    return [t.name for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]
