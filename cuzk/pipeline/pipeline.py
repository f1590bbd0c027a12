"""``Pipeline``: concurrent synthesis feeding the prover, with futures, priorities and a timeline.

    >>> class Synth:
    ...     def synthesize(self, x): return x * x
    >>> class Prover:
    ...     def prove(self, w): return f"proof({w})"
    >>> with Pipeline(Synth(), Prover(), concurrency=2) as pipe:
    ...     futures = [pipe.submit({"x": i}) for i in range(3)]
    ...     [f.result(timeout=10) for f in futures]
    ['proof(0)', 'proof(1)', 'proof(4)']
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Hashable, Iterable, Iterator, Mapping, Sequence

import attrs

from cuzk.errors import InputError
from cuzk.pipeline.controller import AutoController, Observation
from cuzk.pipeline.core import TERMINAL_STATES as _TERMINAL, ProofFuture, Route, SchedulerCore
from cuzk.pipeline.metrics import PipelineMetrics
from cuzk.pipeline.scheduler import UNIT_STATES, ConcurrencyGate, Priority, check_int, estimate_synthesized_bytes
from cuzk.timeline.events import EventKind as K
from cuzk.timeline.recorder import Timeline

__all__ = ["Pipeline", "ProofFuture", "PipelineStatus"]



@attrs.frozen
class PipelineStatus:
    """Point-in-time view: unit counts per state and the state of every unfinished job."""

    closed: bool  #: submit() would raise
    concurrency: int  #: current synthesis concurrency limit
    counts: dict  #: state -> work units (done/failed/cancelled are cumulative)
    jobs: dict  #: unfinished job id -> tuple of its units' states (one per partition)
    memory_reserved_bytes: int  #: estimated bytes of admitted, unfinished jobs
    memory_budget: int | None

    def __str__(self) -> str:
        head = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        return f"pipeline {'closed' if self.closed else 'open'}, concurrency {self.concurrency}: {head}"


def _positive_int(name, value, minimum=1) -> int:
    return check_int(f"Pipeline {name}", value, minimum)


class Pipeline(SchedulerCore):
    """Overlap synthesis (CPU) with proving (GPU) for a stream of jobs.

    Order: the next job to synthesize is the highest priority, then the earliest submitted;
    synthesized jobs wait for a prove worker in that same order (since the Engine landed the
    hand-off is priority-ordered, no longer first-synthesized-first-proved), so a CRITICAL job
    overtakes a backlog at both stages. The scheduling mechanism is
    :class:`cuzk.pipeline.core.SchedulerCore`, shared with :class:`cuzk.Engine`.

    Args:
        synthesizer: any object with ``synthesize(**inputs)``.
        prover: any object with ``prove(synthesized)``.
        concurrency: syntheses run at once (threads under a semaphore), or ``"auto"`` to let
            :class:`cuzk.pipeline.controller.AutoController` choose between 1 and ``max_concurrency``.
        lookahead: synthesized jobs that may wait in the channel for a prove worker.
        gpu_workers: prove threads; two per device overlap one job's CPU tail with the next's kernels.
        timeline: where events go (a fresh :class:`Timeline` by default; ``pipe.timeline``).
        memory_budget: bytes of synthesized jobs allowed at once; a job starts synthesis only when
            its estimate (``synthesizer.estimate_bytes()`` or the R1CS counts) fits.
        max_concurrency: upper bound for ``"auto"`` (default: cores, at least 2).

    Raises:
        cuzk.errors.InputError: a stage lacks its method, or a numeric argument is out of range,
            or ``memory_budget`` is set but no size estimate is available.
    """

    def __init__(self, synthesizer, prover, concurrency: int | str = 2, lookahead: int = 1,
                 gpu_workers: int = 1, timeline: Timeline | None = None, memory_budget: int | None = None,
                 *, max_concurrency: int | None = None):
        if not callable(getattr(synthesizer, "synthesize", None)):
            raise InputError(f"synthesizer {synthesizer!r} has no synthesize(**inputs) method")
        if not callable(getattr(prover, "prove", None)):
            raise InputError(f"prover {prover!r} has no prove(synthesized) method")
        if timeline is not None and not isinstance(timeline, Timeline):  # every job failed with AttributeError
            raise InputError(f"timeline must be a cuzk.Timeline or None, got {type(timeline).__name__}")
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.auto = concurrency == "auto"
        if self.auto:
            n_synth = _positive_int("max_concurrency", max_concurrency if max_concurrency is not None
                                    else max(2, cpus))
            self.controller: AutoController | None = AutoController(max_concurrency=n_synth, cpu_count=cpus)
            start = 1
        else:
            n_synth = start = _positive_int("concurrency", concurrency)
            self.controller = None
        self.lookahead = _positive_int("lookahead", lookahead, minimum=0)
        self.gpu_workers = _positive_int("gpu_workers", gpu_workers)
        unit_bytes = estimate_synthesized_bytes(synthesizer)
        if memory_budget is not None:
            _positive_int("memory_budget", memory_budget)
            if unit_bytes is None:
                raise InputError("memory_budget needs a size estimate: give the synthesizer an "
                                 "estimate_bytes() method or an r1cs with constraint/variable counts")
        super().__init__(self.lookahead, timeline, memory_budget)
        self.synthesizer, self.prover = synthesizer, prover
        self._route = Route(synthesizer, prover)
        self._unit_bytes = unit_bytes or 0
        self.gate = ConcurrencyGate(start)
        self._ctl_lock = threading.Lock()
        self._ctl_jobs = 0
        self._ctl_synth: list[float] = []
        self._ctl_mark = (time.perf_counter_ns(), time.process_time_ns(), 0)
        if self.auto:
            self.timeline.record(K.CONCURRENCY, value=start, reason="auto: start")
        self.start_workers(self._route, n_synth, self.gpu_workers, gate=self.gate)

    # -- submitting -------------------------------------------------------------------------
    def submit(self, inputs: Mapping[str, Any], priority: Priority | int | str = Priority.NORMAL,
               job_id: Hashable = None) -> ProofFuture:
        """Queue one proof; returns its future (result: whatever ``prover.prove`` returns).

        Raises:
            cuzk.errors.PipelineClosedError: the pipeline is closed.
            cuzk.errors.InputError: inputs not a mapping, bad priority, or a job id still in use.
        """
        if not isinstance(inputs, Mapping):
            raise InputError(f"inputs must be a mapping of synthesize() keyword arguments, got {type(inputs).__name__}")
        return self.submit_units(self._route, [dict(inputs)], priority, job_id, nbytes=self._unit_bytes)

    def submit_partitioned(self, partitions: Sequence[Mapping[str, Any]],
                           priority: Priority | int | str = Priority.NORMAL, job_id: Hashable = None) -> ProofFuture:
        """Queue a job of several partitions; its future's result is the partition proofs in order.

        If one partition fails the future fails with that exception and the job's remaining
        queued partitions are skipped.

        Raises:
            cuzk.errors.PipelineClosedError, cuzk.errors.InputError: as :meth:`submit`; also an
                empty partition list.
        """
        try:
            parts = list(partitions) if not isinstance(partitions, Mapping) else None
        except TypeError:  # not iterable
            parts = None
        if not parts or not all(isinstance(p, Mapping) for p in parts):
            raise InputError("submit_partitioned needs a non-empty sequence of input mappings")
        return self.submit_units(self._route, [dict(p) for p in parts], priority, job_id, partitioned=True,
                                 nbytes=self._unit_bytes)

    def map(self, inputs: Iterable[Mapping[str, Any]], priority: Priority | int | str = Priority.NORMAL,
            timeout: float | None = None) -> Iterator[Any]:
        """Submit every input now; yield the proofs in input order (like ``Executor.map``).

        Raises:
            TimeoutError: a result was not ready ``timeout`` seconds after the call.
        """
        futures = [self.submit(i, priority) for i in inputs]
        deadline = None if timeout is None else time.monotonic() + timeout

        def results():
            try:
                for f in futures:
                    yield f.result(None if deadline is None else max(0.0, deadline - time.monotonic()))
            finally:
                for f in futures:
                    f.cancel()

        return results()

    def note_synth_seconds(self, seconds: float) -> None:
        if self.controller is not None:
            with self._ctl_lock:
                self._ctl_synth.append(seconds)

    def after_prove(self) -> None:
        """Feed the auto controller once enough jobs were proved since its last decision."""
        if self.controller is None:
            return
        with self._ctl_lock:
            self._ctl_jobs += 1
            c = self.gate.limit
            if self._ctl_jobs < self.controller.evaluate_every(c) or not self._ctl_synth:
                return
            wall0, cpu0, idle0 = self._ctl_mark
            wall, cpu, idle = time.perf_counter_ns(), time.process_time_ns(), self.channel.consumer_wait_ns
            period = max(1, wall - wall0)
            obs = Observation(concurrency=c, jobs=self._ctl_jobs, period_s=period / 1e9,
                              gpu_idle_s=(idle - idle0) / 1e9 / self.gpu_workers,
                              synth_mean_s=sum(self._ctl_synth) / len(self._ctl_synth),
                              cores_busy=(cpu - cpu0) / period, queued=len(self.queue),
                              memory_blocked=self.queue.blocked_by_memory)
            self._ctl_mark, self._ctl_jobs, self._ctl_synth = (wall, cpu, idle), 0, []
            decision = self.controller.decide(obs)
            if decision is not None:
                value, reason = decision
                self.gate.set_limit(value)
                self.timeline.record(K.CONCURRENCY, value=value, reason=reason)

    # -- inspection -------------------------------------------------------------------------
    @property
    def concurrency(self) -> int:
        """Current synthesis concurrency limit."""
        return self.gate.limit

    def status(self) -> PipelineStatus:
        """Counts per state and per-job states; cheap enough to poll."""
        jobs = self.unit_states()
        counts = dict.fromkeys(UNIT_STATES, 0)
        for states in jobs.values():
            for s in states:
                if s not in _TERMINAL:
                    counts[s] += 1
        m = self.metrics_registry.snapshot({})
        for s in _TERMINAL:
            counts[s] = m.counters[s]
        return PipelineStatus(self._closed, self.gate.limit, counts, jobs, self.queue.reserved_bytes,
                              self.memory_budget)

    def metrics(self) -> PipelineMetrics:
        """Counters, gauges and stage-time sums; ``.to_prometheus()`` for scraping."""
        st = self.status()
        gauges = {k: v for k, v in st.counts.items() if k not in _TERMINAL}
        gauges.update(concurrency=st.concurrency, memory_reserved_bytes=st.memory_reserved_bytes,
                      timeline_events=len(self.timeline), timeline_dropped_events=self.timeline.dropped)
        return self.metrics_registry.snapshot(gauges)

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc) -> None:
        self.close(wait=True)

    def __repr__(self) -> str:
        return f"<Pipeline {self.status()}>"
