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

import contextlib
import itertools
import logging
import os
import threading
import time
from concurrent.futures import Future, InvalidStateError
from typing import Any, Hashable, Iterable, Iterator, Mapping, Sequence

import attrs

from cuzk.errors import InputError, PipelineClosedError
from cuzk.pipeline.channel import BoundedChannel
from cuzk.pipeline.controller import AutoController, Observation
from cuzk.pipeline.metrics import MetricsRegistry, PipelineMetrics
from cuzk.pipeline.scheduler import (
    UNIT_STATES, ConcurrencyGate, JobQueue, Priority, WorkUnit, estimate_synthesized_bytes,
)
from cuzk.pipeline.workers import GpuWorker, SynthWorker
from cuzk.timeline.events import EventKind as K
from cuzk.timeline.recorder import Timeline

__all__ = ["Pipeline", "ProofFuture", "PipelineStatus"]

_log = logging.getLogger("cuzk.pipeline")
_TERMINAL = frozenset({"done", "failed", "cancelled"})


class ProofFuture(Future):
    """A :class:`concurrent.futures.Future` for one job, with its ``job_id``.

    ``cancel()`` succeeds while the job is still queued and removes it from the queue.
    A partitioned job's result is the list of partition proofs in order.
    """

    def __init__(self, job_id: Hashable, partitions: int | None = None):
        super().__init__()
        self.job_id = job_id
        self.partitions = partitions  #: number of partitions, None for an unpartitioned job
        self._on_cancel = None

    def cancel(self) -> bool:
        try:
            return super().cancel()  # a done-callback's BaseException propagates from here
        finally:
            hook = self._on_cancel
            if hook is not None and self.cancelled():  # the queued units go, whatever the callbacks did
                self._on_cancel = None
                hook()

    def __repr__(self) -> str:
        return f"<ProofFuture job_id={self.job_id!r} {super().__repr__()[1:-1]}>"


class _Job:
    """Bookkeeping for one submitted job; mutated only under the pipeline lock."""

    __slots__ = ("id", "future", "units", "results", "remaining", "open_units", "started", "finished",
                 "partitioned")

    def __init__(self, job_id, future, n_units, partitioned):
        self.id, self.future, self.partitioned = job_id, future, partitioned
        self.units: list[WorkUnit] = []
        self.results: list = [None] * n_units
        self.remaining = self.open_units = n_units
        self.started = self.finished = False


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


def _add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``, or nothing when ``exc`` cannot take notes (``__notes__`` set to a
    tuple by the raiser, a read-only exception type): the job must fail with it all the same."""
    try:
        exc.add_note(note)
    except Exception:
        _log.debug("cuzk pipeline: could not annotate %r", exc, exc_info=True)


def _resolve(future: Future, *, result: Any = None, exc: BaseException | None = None) -> None:
    """Resolve ``future`` once. A done-callback's ``Exception`` is logged by concurrent.futures;
    its ``BaseException`` propagates to the worker, which survives it (see workers.py)."""
    try:
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)
    except InvalidStateError:  # unreachable while the finished flag is honoured; never hide it
        _log.exception("cuzk pipeline: future of job %r was already resolved", getattr(future, "job_id", None))


def _positive_int(name, value, minimum=1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InputError(f"Pipeline {name} must be an int >= {minimum}, got {value!r}")
    return value


class Pipeline:
    """Overlap synthesis (CPU) with proving (GPU) for a stream of jobs.

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
        self.synthesizer, self.prover = synthesizer, prover
        self.timeline = timeline if timeline is not None else Timeline()
        self.memory_budget = memory_budget
        self._unit_bytes = unit_bytes or 0
        self.queue = JobQueue(memory_budget)
        self.channel = BoundedChannel(self.lookahead)
        self.gate = ConcurrencyGate(start)
        self.metrics_registry = MetricsRegistry()
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._jobs: dict[Hashable, _Job] = {}
        self._closed = False
        self._ctl_lock = threading.Lock()
        self._ctl_jobs = 0
        self._ctl_synth: list[float] = []
        self._ctl_mark = (time.perf_counter_ns(), time.process_time_ns(), 0)
        if self.auto:
            self.timeline.record(K.CONCURRENCY, value=start, reason="auto: start")
        self._synth_alive = n_synth
        self._threads = [SynthWorker(self, i) for i in range(n_synth)]
        self._threads += [GpuWorker(self, i) for i in range(self.gpu_workers)]
        for t in self._threads:
            t.start()

    @contextlib.contextmanager
    def _locked(self):
        """The pipeline lock; listener calls of events recorded under it wait until it is
        released (a listener that calls ``status()`` or ``submit()`` would deadlock otherwise)."""
        with self.timeline.deferred_listeners(), self._lock:
            yield

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
        return self._submit([dict(inputs)], priority, job_id, partitioned=False)

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
        return self._submit([dict(p) for p in parts], priority, job_id, partitioned=True)

    def _submit(self, inputs_list, priority, job_id, partitioned) -> ProofFuture:
        priority = Priority.coerce(priority)
        for inputs in inputs_list:  # **inputs with a non-str key failed the job with a TypeError
            bad = [k for k in inputs if not isinstance(k, str)]
            if bad:
                raise InputError(f"input names must be strings, got {bad!r:.80}")
        try:
            hash(job_id)
        except TypeError:
            raise InputError(f"job_id must be hashable, got {type(job_id).__name__}") from None
        with self._locked():
            if self._closed:
                raise PipelineClosedError("submit() on a closed pipeline")
            seq = next(self._seq)
            job_id = seq if job_id is None else job_id
            if job_id in self._jobs:
                raise InputError(f"job id {job_id!r} is already in use by an unfinished job")
            future = ProofFuture(job_id, len(inputs_list) if partitioned else None)
            job = _Job(job_id, future, len(inputs_list), partitioned)
            future._on_cancel = lambda: self._cancel_job(job)
            self._jobs[job_id] = job
            for k, inputs in enumerate(inputs_list):
                part = k if partitioned else None
                unit = WorkUnit(job, part, inputs, seq, priority, self._unit_bytes)
                job.units.append(unit)
                self.timeline.record(K.JOB_SUBMIT, job_id, part, None, priority=priority.name)
                self.metrics_registry.inc("submitted")
                self.queue.put(unit)
        return future

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

    def cancel(self, job: ProofFuture | Hashable) -> bool:
        """Cancel a queued job (by future or job id); False if it already started or finished."""
        if isinstance(job, Future):
            return job.cancel()
        with self._lock:
            rec = self._jobs.get(job)
        return rec.future.cancel() if rec is not None else False

    # -- callbacks from the workers (see workers.py) --------------------------------------
    def _terminal(self, unit: WorkUnit, state: str, kind: K, **detail) -> None:
        unit.state = state
        self.timeline.record(kind, unit.job.id, unit.partition, threading.current_thread().name, **detail)
        self.metrics_registry.inc(state)
        job = unit.job
        job.open_units -= 1
        if job.open_units == 0 and self._jobs.get(job.id) is job:
            del self._jobs[job.id]

    def _cancel_job(self, job: _Job) -> None:
        with self._locked():
            job.finished = True
            for u in self.queue.remove(lambda u: u.job is job):
                self._terminal(u, "cancelled", K.JOB_CANCELLED, reason="cancelled")

    def start_unit(self, unit: WorkUnit) -> bool:
        """A synthesis worker took ``unit``: False (and the unit is cancelled) if it should not run."""
        with self._locked():
            job = unit.job
            if job.finished:
                self._terminal(unit, "cancelled", K.JOB_CANCELLED, reason="job already finished")
                return False
            if not job.started:
                if not job.future.set_running_or_notify_cancel():
                    job.finished = True
                    self._terminal(unit, "cancelled", K.JOB_CANCELLED, reason="cancelled")
                    return False
                job.started = True
            unit.state = "synthesizing"
            return True

    def still_wanted(self, unit: WorkUnit) -> bool:
        """A prove worker picked ``unit`` up: False (unit cancelled) if a sibling partition failed."""
        with self._locked():
            if unit.job.finished:
                self._terminal(unit, "cancelled", K.JOB_CANCELLED, reason="job already finished")
                return False
            return True

    def set_state(self, unit: WorkUnit, state: str) -> None:
        unit.state = state

    def fail_unit(self, unit: WorkUnit, exc: BaseException, stage: str) -> None:
        """Fail ``unit``'s job with ``exc`` (once) and skip its queued partitions.

        The future is resolved with the original exception object whatever annotating it does
        (an ``exc.__notes__`` that is not a list makes ``add_note`` raise); listeners hear of
        the failure only after that.
        """
        with self.timeline.deferred_listeners():
            with self._lock:
                if unit.state in _TERMINAL:
                    _log.error("cuzk pipeline: %s after job %r finished: %r", stage, unit.job.id, exc)
                    return
                self._terminal(unit, "failed", K.JOB_FAILED, stage=stage, error=type(exc).__name__)
                job = unit.job
                if job.finished:
                    return  # a sibling partition already failed the future
                job.finished = True
                for u in self.queue.remove(lambda u: u.job is job):
                    self._terminal(u, "cancelled", K.JOB_CANCELLED, reason=f"partition {unit.partition} failed")
            where = "" if unit.partition is None else f" partition {unit.partition}"
            try:
                _add_note(exc, f"cuzk pipeline: {stage} of job {job.id!r}{where} failed in "
                               f"{threading.current_thread().name}")
            finally:
                _resolve(job.future, exc=exc)

    def complete_unit(self, unit: WorkUnit, proof: Any) -> None:
        """Store ``unit``'s proof; resolve the future when the job's last partition is done.

        A partition proved after its job already failed (or was cancelled) is recorded as
        ``JOB_CANCELLED`` with ``reason="discarded: ..."``, not ``JOB_DONE``: ``JOB_DONE`` events
        count delivered proofs.
        """
        with self.timeline.deferred_listeners():
            with self._lock:
                job = unit.job
                if job.finished:
                    self._terminal(unit, "cancelled", K.JOB_CANCELLED,
                                   reason="discarded: the job had already failed or was cancelled")
                    return
                self._terminal(unit, "done", K.JOB_DONE)
                job.results[unit.partition or 0] = proof
                job.remaining -= 1
                if job.remaining:
                    return
                job.finished = True
                result = list(job.results) if job.partitioned else job.results[0]
                job.results = []
            _resolve(job.future, result=result)

    def synth_worker_exited(self) -> None:
        with self._lock:
            self._synth_alive -= 1
            last = self._synth_alive == 0
        if last:  # nothing more can be synthesized: let the prove workers drain and stop
            self.channel.close()

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
        with self._lock:
            jobs = {j.id: tuple(u.state for u in j.units) for j in self._jobs.values()}
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

    # -- shutting down ----------------------------------------------------------------------
    def close(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop accepting jobs. Queued jobs are drained, or cancelled with ``cancel_futures=True``
        (jobs already started always finish). With ``wait`` block until every worker exited.
        Calling it again is harmless. Called on one of the pipeline's own threads (a future's
        done-callback runs there) it cannot wait: the other workers may be waiting on that very
        thread, so it returns at once and the workers finish the remaining jobs by themselves.
        """
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
        if cancel_futures:
            for job in jobs:
                job.future.cancel()
        self.queue.close()
        if wait and threading.current_thread() not in self._threads:
            for t in self._threads:
                t.join()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc) -> None:
        self.close(wait=True)

    def __repr__(self) -> str:
        return f"<Pipeline {self.status()}>"
