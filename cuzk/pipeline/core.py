"""The one scheduling mechanism: jobs, work units, futures and the workers that run them.

:class:`SchedulerCore` owns the priority queue (with memory admission), the ordered hand-off
channel, the job table and every future. It knows nothing of circuits or keys: each unit
carries a *route*, an object with ``synthesize(**inputs)`` and ``prover_for(worker, unit)``
(see :class:`Route`). :class:`cuzk.Pipeline` is the core with one route;
:class:`cuzk.Engine` composes a core with a route per registered circuit, synthesis workers
per route and prove workers per device. Picks follow ``WorkUnit.order`` (priority, deadline,
submission) at both stages; a unit whose deadline has passed when a synthesis slot or a prove
worker picks it fails with :class:`cuzk.errors.DeadlineExceededError` instead of running.

    >>> class Stages:
    ...     def synthesize(self, x): return x + 1
    ...     def prove(self, w): return w * 10
    >>> core = SchedulerCore(lookahead=1)
    >>> route = Route(Stages(), Stages())
    >>> _ = core.start_workers(route, synth_workers=1, prove_workers=1)
    >>> core.submit_units(route, [{"x": 1}]).result(timeout=10)
    20
    >>> core.close()
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Hashable

import attrs

from cuzk.errors import DeadlineExceededError, InputError, PipelineClosedError
from cuzk.pipeline.channel import BoundedChannel
from cuzk.pipeline.jobs import Job, ProofFuture, add_note, resolve
from cuzk.pipeline.metrics import MetricsRegistry
from cuzk.pipeline.scheduler import ConcurrencyGate, JobQueue, Priority, WorkUnit
from cuzk.pipeline.workers import GpuWorker, SynthWorker
from cuzk.timeline.events import EventKind as K
from cuzk.timeline.recorder import Timeline

__all__ = ["SchedulerCore", "Route", "ProofFuture", "Job", "TERMINAL_STATES"]

_log = logging.getLogger("cuzk.pipeline")
TERMINAL_STATES = frozenset({"done", "failed", "cancelled"})


@attrs.define(eq=False)
class Route:
    """The stages of one kind of job: a synthesizer and the prover its proofs need.

    ``prover_for(worker, unit)`` runs on the prove worker before ``GPU_START``: a route that
    loads keys (the Engine's) does it there, so the load is not counted as proving.
    """

    synthesizer: Any
    prover: Any
    name: str | None = None  #: circuit name carried to status; None for a Pipeline
    #: True when ``synthesize`` records its own SYNTH_START/SYNTH_END (a cluster route stamps
    #: them on the worker that synthesized, docs/cluster.md); the synthesis worker then does not
    stamps_synthesis = False

    @property
    def circuit_detail(self) -> dict:
        """``{"circuit": name}`` for timeline records, or ``{}`` without a name."""
        return {} if self.name is None else {"circuit": self.name}

    def synthesize(self, **inputs):
        return self.synthesizer.synthesize(**inputs)

    def prover_for(self, worker, unit: WorkUnit):
        return self.prover


class _Locked:
    """Listener hold outside, lock inside (a class: a generator context manager cost 3x)."""

    __slots__ = ("_hold", "_lock")

    def __init__(self, hold, lock):
        self._hold, self._lock = hold, lock

    def __enter__(self) -> None:
        self._hold.__enter__()
        self._lock.acquire()

    def __exit__(self, *exc) -> bool:
        self._lock.release()
        self._hold.__exit__(*exc)
        return False


class SchedulerCore:
    """Jobs, the queue, the channel and the workers; see the module docstring.

    Args:
        lookahead: synthesized units that may wait in the channel for a prove worker.
        timeline: where events go (a fresh :class:`Timeline` by default).
        memory_budget: bytes of admitted units (and whatever :meth:`JobQueue.reserve` holds).
        before_resolve: called with the :class:`Job` (outside the lock) just before its future
            resolves; the Engine sets the future's timings there.
    """

    def __init__(self, lookahead: int = 1, timeline: Timeline | None = None, memory_budget: int | None = None,
                 before_resolve: Callable[[Job], None] | None = None):
        self.lookahead = lookahead
        self.timeline = timeline if timeline is not None else Timeline()
        self.memory_budget = memory_budget
        self.queue = JobQueue(memory_budget)
        self.channel = BoundedChannel(lookahead)
        self.metrics_registry = MetricsRegistry()
        self._before_resolve = before_resolve
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._jobs: dict[Hashable, Job] = {}
        self._closed = False
        self._threads: list[threading.Thread] = []
        self._synth_alive = 0
        self._synth_started = self._prove_started = 0

    # -- workers --------------------------------------------------------------------------------
    def start_workers(self, route: Route | None, synth_workers: int = 0, prove_workers: int = 0, *,
                      gate: ConcurrencyGate | None = None, device: Any = None) -> list[threading.Thread]:
        """Start synthesis workers for ``route`` (None: any route) and prove workers (bound to
        ``device``, any route). Workers of one route share ``gate`` (default: one of their own)."""
        threads: list[threading.Thread] = []
        if synth_workers:
            gate = gate or ConcurrencyGate(synth_workers)
            accept = None if route is None else (lambda u, r=route: u.route is r)
            for _ in range(synth_workers):
                threads.append(SynthWorker(self, self._synth_started, gate=gate, accept=accept))
                self._synth_started += 1
        for _ in range(prove_workers):
            threads.append(GpuWorker(self, self._prove_started, device=device))
            self._prove_started += 1
        with self._lock:
            self._synth_alive += synth_workers
            self._threads += threads
        for t in threads:
            t.start()
        return threads

    # -- submitting -----------------------------------------------------------------------------
    def _locked(self) -> "_Locked":
        """The core's lock; listener calls of events recorded under it wait until it is
        released (a listener that calls ``status()`` or ``submit()`` would deadlock otherwise)."""
        return _Locked(self.timeline.deferred_listeners(), self._lock)

    def submit_units(self, route: Route, inputs_list: list, priority: Priority | int | str = Priority.NORMAL,
                     job_id: Hashable = None, *, partitioned: bool = False, deadline: float | None = None,
                     nbytes: int = 0) -> ProofFuture:
        """Queue one job of ``len(inputs_list)`` units on ``route``; returns its future.

        A ``deadline`` already past is not an error here: the units fail at their first pick.

        Raises:
            cuzk.errors.PipelineClosedError: the core is closed.
            cuzk.errors.InputError: bad priority, non-str input names, or a job id still in use.
        """
        priority = Priority.coerce(priority)
        for inputs in inputs_list:  # **inputs with a non-str key failed the job with a TypeError
            bad = [k for k in inputs if not isinstance(k, str)]
            if bad:
                raise InputError(f"input names must be strings, got {bad!r:.80}")
        try:
            hash(job_id)
        except TypeError:
            raise InputError(f"job_id must be hashable, got {type(job_id).__name__}") from None
        hold = self.timeline.deferred_listeners()
        hold.__enter__()  # listeners hear of the submit after the lock is released
        try:
            with self._lock:
                if self._closed:
                    raise PipelineClosedError("submit() on a closed pipeline")
                seq = next(self._seq)
                if job_id is None:
                    job_id = seq
                    while job_id in self._jobs:  # a user's explicit int id (or True) may hold it
                        job_id = seq = next(self._seq)
                elif job_id in self._jobs:
                    raise InputError(f"job id {job_id!r} is already in use by an unfinished job")
                future = ProofFuture(job_id, len(inputs_list) if partitioned else None)
                job = Job(job_id, future, len(inputs_list), partitioned, route)
                job.submitted_ns = self.timeline.now_ns()
                future._on_cancel = lambda: self._cancel_job(job)
                self._jobs[job_id] = job
                for k, inputs in enumerate(inputs_list):
                    part = k if partitioned else None
                    unit = WorkUnit(job, part, inputs, seq, priority, nbytes, route=route, deadline=deadline)
                    job.units.append(unit)
                    self.timeline.record(K.JOB_SUBMIT, job_id, part, None, priority=priority.name,
                                         **route.circuit_detail)
                    self.metrics_registry.inc("submitted")
                    self.queue.put(unit)
        except BaseException:
            hold.__exit__(None, None, None)
            raise
        try:
            hold.__exit__(None, None, None)
        except BaseException:  # a listener's Ctrl-C on this thread: the caller never gets the
            job.future.cancel()  # future, so the job must not run unseen
            raise
        return future

    def cancel(self, job: ProofFuture | Hashable) -> bool:
        """Cancel a queued job (by future or job id); False if it already started or finished."""
        if isinstance(job, Future):
            return job.cancel()
        with self._lock:
            rec = self._jobs.get(job)
        return rec.future.cancel() if rec is not None else False

    # -- callbacks from the workers (see workers.py) --------------------------------------------
    def _terminal(self, unit: WorkUnit, state: str, kind: K, **detail) -> None:
        unit.state = state
        self.timeline.record(kind, unit.job.id, unit.partition, threading.current_thread().name, **detail,
                             **unit.route.circuit_detail)
        self.metrics_registry.inc(state)
        unit.inputs = None  # a resolved future outlives its job (request retention): not its inputs
        job = unit.job
        job.open_units -= 1
        if job.open_units == 0:
            # The cancel hook is a closure over the job (so its units): a finished job's future
            # is RUNNING or done, so Future.cancel answers for it as the hook would.
            job.future._on_cancel = None
            if self._jobs.get(job.id) is job:
                del self._jobs[job.id]
        # A route that went idle may have keys the queue's memory admission can now evict.
        self.queue.poke()

    def _cancel_job(self, job: Job) -> bool:
        """``job.future.cancel()``: while no unit started, take the job's units out of the queue
        and its id out of the table *first*, then cancel the future (its done-callbacks may
        resubmit under the same id); else ``Future.cancel`` decides (False once running)."""
        with self.timeline.deferred_listeners():
            with self._lock:
                wanted = not job.started and not job.finished
                if wanted:
                    job.finished = job.started = True  # started: nobody else calls set_running_...
                    self.queue.remove(lambda u: u.job is job)
                    for u in job.units:  # queued, or taken by a worker not yet at start_unit
                        self._terminal(u, "cancelled", K.JOB_CANCELLED, reason="cancelled")
            return job.future._cancel_now() if wanted else Future.cancel(job.future)

    def start_unit(self, unit: WorkUnit) -> bool:
        """A synthesis worker took ``unit``: False (and the unit is cancelled or failed) if it
        should not run. Every check is made under the lock, and an expiring job is marked
        started first, so a cancel racing the expiry is refused rather than half-applied."""
        with self._locked():
            job = unit.job
            if unit.state in TERMINAL_STATES:  # cancelled while this worker held it (_cancel_job)
                return False
            if job.finished:
                self._terminal(unit, "cancelled", K.JOB_CANCELLED, reason="job already finished")
                return False
            if not self._mark_started(unit):
                return False
            if not unit.expired(time.time()):
                unit.state = "synthesizing"
                return True
        self.fail_unit(unit, _deadline_error(unit, "synthesis"), "synthesis (deadline)")
        return False

    def still_wanted(self, unit: WorkUnit) -> bool:
        """A prove worker picked ``unit`` up: False (unit cancelled or failed) if a sibling
        partition failed or its deadline passed while it waited."""
        with self._locked():
            if unit.job.finished:
                self._terminal(unit, "cancelled", K.JOB_CANCELLED, reason="job already finished")
                return False
            if not unit.expired(time.time()):
                return True
        self.fail_unit(unit, _deadline_error(unit, "proving"), "proving (deadline)")
        return False

    def set_state(self, unit: WorkUnit, state: str) -> None:
        unit.state = state

    def fail_unit(self, unit: WorkUnit, exc: BaseException, stage: str, *, queued: bool = False) -> bool:
        """Fail ``unit``'s job with ``exc`` (once) and skip its queued partitions; False if
        nothing was done.

        ``queued``: only while ``unit`` is still in the queue (no worker took it), decided under
        the same lock as the failure, so a worker taking it or a cancel never races it.

        The future is resolved with the original exception object whatever annotating it does
        (an ``exc.__notes__`` that is not a list makes ``add_note`` raise); listeners hear of
        the failure only after that.
        """
        with self.timeline.deferred_listeners():
            with self._lock:
                if queued and not self._claim_queued(unit):
                    return False
                if unit.state in TERMINAL_STATES:
                    # cancelled with its job (a sibling partition failed first, or a cancel): this
                    # failure is the sibling's twin, expected; anything else after the end is a fault
                    expected = unit.state == "cancelled" and unit.job.finished
                    _log.log(logging.DEBUG if expected else logging.ERROR,
                             "cuzk pipeline: %s after job %r finished: %r", stage, unit.job.id, exc)
                    return False
                self._terminal(unit, "failed", K.JOB_FAILED, stage=stage, error=type(exc).__name__)
                job = unit.job
                if job.finished:
                    return True  # a sibling partition already failed the future
                job.finished = True
                self.queue.remove(lambda u: u.job is job)
                for u in job.units:  # queued, or taken by a worker not yet at start_unit
                    if u.state == "queued":
                        self._terminal(u, "cancelled", K.JOB_CANCELLED, reason=f"partition {unit.partition} failed")
                for u in job.units:  # proofs made, never delivered
                    if u.state == "proved":
                        self._terminal(u, "cancelled", K.JOB_CANCELLED,
                                       reason=f"discarded: partition {unit.partition} failed")
            where = "" if unit.partition is None else f" partition {unit.partition}"
            try:
                add_note(exc, f"cuzk pipeline: {stage} of job {job.id!r}{where} failed in "
                               f"{threading.current_thread().name}")
                self._run_before_resolve(job)
            finally:
                resolve(job.future, exc=exc)
        return True

    def _claim_queued(self, unit: WorkUnit) -> bool:
        """Under the lock: take ``unit`` out of the queue to fail it there; False when a worker
        took it or its job ended. As in :meth:`start_unit`, the job is marked started and its
        future set running first, so a cancel arriving later is refused, not half-applied."""
        job = unit.job
        if unit.state != "queued" or job.finished or not self.queue.remove(lambda u: u is unit):
            return False
        return self._mark_started(unit)

    def _mark_started(self, unit: WorkUnit) -> bool:
        """Under the lock: mark ``unit``'s job started and its future running; False (the unit
        cancelled) when the future was cancelled by ``Future.cancel`` directly."""
        job = unit.job
        if not job.started:
            job.started = True
            if not job.future.set_running_or_notify_cancel():
                job.finished = True
                self._terminal(unit, "cancelled", K.JOB_CANCELLED, reason="cancelled")
                return False
        return True

    def complete_unit(self, unit: WorkUnit, proof: Any) -> None:
        """Store ``unit``'s proof; resolve the future when the job's last partition is done.

        ``JOB_DONE`` events count delivered proofs: a partition's proof waits in state
        ``"proved"`` until the whole job is delivered, and all its partitions record ``JOB_DONE``
        then; a partition proved after (or waiting when) its job failed or was cancelled is
        recorded as ``JOB_CANCELLED`` with ``reason="discarded: ..."``.
        """
        with self.timeline.deferred_listeners():
            with self._lock:
                job = unit.job
                if job.finished:
                    self._terminal(unit, "cancelled", K.JOB_CANCELLED,
                                   reason="discarded: the job had already failed or was cancelled")
                    return
                job.results[unit.partition or 0] = proof
                job.remaining -= 1
                if job.remaining:
                    unit.state = "proved"
                    return
                for u in job.units:
                    self._terminal(u, "done", K.JOB_DONE)
                job.finished = True
                result = list(job.results) if job.partitioned else job.results[0]
                job.results = []
            try:
                self._run_before_resolve(job)
            finally:
                resolve(job.future, result=result)

    def _run_before_resolve(self, job: Job) -> None:
        if self._before_resolve is not None:
            try:
                self._before_resolve(job)
            except Exception:  # timings are a report: never the reason a job is lost
                _log.exception("cuzk pipeline: before_resolve hook failed for job %r", job.id)

    def synth_worker_exited(self) -> None:
        with self._lock:
            self._synth_alive -= 1
            last = self._synth_alive == 0
        if last:  # nothing more can be synthesized: let the prove workers drain and stop
            self.channel.close()

    # Hooks the auto-concurrency Pipeline overrides; no-ops here.
    def note_synth_seconds(self, seconds: float) -> None:
        pass

    def after_prove(self) -> None:
        pass

    # -- inspection -----------------------------------------------------------------------------
    def unit_states(self) -> dict:
        """Unfinished job id -> tuple of its units' states."""
        with self._lock:
            return {j.id: tuple(u.state for u in j.units) for j in self._jobs.values()}

    def busy(self, route: Route) -> bool:
        """Whether ``route`` has a unit queued or on its way (a job leaves the table only when
        all its units ended, so a failed job's partitions still proving count)."""
        with self._lock:
            return any(u.route is route and u.state not in TERMINAL_STATES
                       for job in self._jobs.values() for u in job.units)

    def threads(self) -> list[threading.Thread]:
        """The worker threads started so far."""
        with self._lock:
            return list(self._threads)

    def jobs_snapshot(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    # -- shutting down --------------------------------------------------------------------------
    def close(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop accepting jobs. Queued jobs are drained, or cancelled with ``cancel_futures=True``
        (jobs already started always finish). With ``wait`` block until every worker exited.
        A done-callback that raises while its job is cancelled here does not stop the close: the
        other jobs are cancelled and the workers stopped, then its exception is raised.
        Calling it again is harmless. Called on one of the core's own threads (a future's
        done-callback runs there) it cannot wait: the other workers may be waiting on that very
        thread, so it returns at once and the workers finish the remaining jobs by themselves.
        """
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
            threads = list(self._threads)
            no_synth = self._synth_alive == 0
        raised = None
        if cancel_futures:
            for job in jobs:
                try:
                    job.future.cancel()
                except BaseException as exc:  # a done-callback's: cancel the rest, close, then raise it
                    raised = raised or exc
        self.queue.close()
        if no_synth:  # no synthesis worker will ever close the channel
            self.channel.close()
        if wait and threading.current_thread() not in threads:
            for t in threads:
                t.join()
        if raised is not None:
            raise raised

    @property
    def closed(self) -> bool:
        return self._closed


def _deadline_error(unit: WorkUnit, stage: str) -> DeadlineExceededError:
    late = time.time() - unit.deadline
    return DeadlineExceededError(f"job {unit.job.id!r} missed its deadline by {late:.3f} s while queued "
                                 f"for {stage}; it was not {'synthesized' if stage == 'synthesis' else 'proved'}")
