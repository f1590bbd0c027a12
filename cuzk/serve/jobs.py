"""The daemon's jobs: idempotent request ids, queue positions, answers, retention.

A job is one request the Engine runs: its Engine future, and a result future the RPCs wait on,
resolved with the proof bytes filecoin-proofs would return (or the error, or cancelled) once the
Engine's future ends and the work's ``finish`` step (concatenating partitions, checking a PoRep
proof against its statement) has run on a small pool. A request id names one job while it is
live and for ``retention_s`` after it ended: the same id with the same request (by digest) gets
the same job, with another request ``ALREADY_EXISTS``. At most ``max_jobs`` are kept: the oldest
ended ones go first, and when every kept job is still live a new one is refused
(RESOURCE_EXHAUSTED) instead of growing without bound.

Queue position: the live jobs not started yet that the Engine's scheduler takes before this one
(priority, then deadline, then submission order; docs/engine.md, "Scheduling"), so 0 means next
(or already running).
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import logging
import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

from cuzk.serve.logs import JobLines
from cuzk.serve.validate import RequestError

__all__ = ["Job", "JobTable", "request_digest", "job_outcome", "outcome_of"]

_log = logging.getLogger("cuzk.serve")
_RANK = {"low": 0, "normal": 1, "high": 2, "critical": 3}
_WAITERS_LOCK = threading.Lock()  # Job._waiters of every job: held for a set operation only


def request_digest(*parts) -> bytes:
    """A digest of a request's defining fields (bytes, str, ints, lists of bytes)."""
    h = hashlib.blake2b(digest_size=24)
    for p in parts:
        if isinstance(p, (list, tuple)):
            h.update(b"L%d;" % len(p))
            for x in p:
                h.update(b"%d;" % len(x))
                h.update(x)
        else:
            data = p if isinstance(p, bytes) else str(p).encode()
            h.update(b"%d;" % len(data))
            h.update(data)
    return h.digest()


class Job:
    """One request the Engine runs (see the module doc)."""

    __slots__ = ("id", "digest", "kind", "circuit", "priority", "deadline", "seq", "submitted", "engine_future",
                 "result", "ended_at", "extra", "_waiters")

    def __init__(self, job_id, digest, kind, circuit, priority, deadline, seq):
        self.id, self.digest, self.kind, self.circuit = job_id, digest, kind, circuit
        self.priority, self.deadline, self.seq = priority, deadline, seq
        self.submitted = time.monotonic()
        self.engine_future = None
        self.result: Future = Future()
        self.ended_at: float | None = None
        self.extra = None  # an extension job's public inputs, once taken from its synthesizer
        # what the RPCs waiting now want called at the end (an Event's set, or the answer of a
        # call that waits on no thread: cuzk/serve/pending.py): one done callback calls them, and
        # each wait takes its own out again, so a client polling a long job with short timeouts
        # leaves nothing behind (a done callback per wait would stay on the future until the end)
        self._waiters: set = set()
        self.result.add_done_callback(self._wake_waiters)

    def _wake_waiters(self, _f) -> None:
        with _WAITERS_LOCK:
            waiting = list(self._waiters)
        for fn in waiting:
            try:
                fn()
            except Exception:  # noqa: BLE001 - one waiter's failure must not keep the others waiting
                _log.exception("job %s: a waiter failed", self.id)

    def add_waiter(self, fn: Callable[[], None]) -> bool:
        """Call ``fn()`` when the job ends, on the thread that ends it; False (and ``fn`` not kept)
        when it has ended already. :meth:`remove_waiter` takes it out."""
        with _WAITERS_LOCK:
            self._waiters.add(fn)
        if self.result.done():  # ended before the add: its callback may have run already
            self.remove_waiter(fn)
            return False
        return True

    def remove_waiter(self, fn: Callable[[], None]) -> None:
        with _WAITERS_LOCK:
            self._waiters.discard(fn)

    def wait(self, timeout: float | None, wake: threading.Event | None = None) -> None:
        """Until the job ends, ``timeout`` seconds pass (None: no limit) or ``wake`` is set."""
        ev = wake if wake is not None else threading.Event()
        fn = ev.set
        if self.add_waiter(fn):
            try:
                ev.wait(timeout)
            finally:
                self.remove_waiter(fn)

    @property
    def started(self) -> bool:
        f = self.engine_future
        return f is not None and (f.running() or f.done())

    @property
    def live(self) -> bool:
        return not self.result.done()

    def rank(self) -> tuple:
        return (-_RANK.get(self.priority, 1), self.deadline if self.deadline is not None else math.inf, self.seq)

    def state(self) -> str:
        if self.result.done():
            if self.result.cancelled():
                return "cancelled"
            return "failed" if self.result.exception() is not None else "completed"
        return "running" if self.started else "queued"


class JobTable:
    """Thread-safe table of jobs by id (see the module doc)."""

    def __init__(self, *, retention_s: float, max_jobs: int, finish_workers: int = 2):
        self.retention_s = retention_s
        self.max_jobs = max_jobs
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._seq = itertools.count()
        self._ended: collections.deque = collections.deque()  # ended jobs, oldest first: purged from the left
        self._finisher = ThreadPoolExecutor(max_workers=finish_workers, thread_name_prefix="cuzk-serve-finish")
        self._lines = JobLines(_log)  # each job's end, written off the thread that ends it
        self.counts = {"completed": 0, "failed": 0, "cancelled": 0}
        self._counted: dict[str, dict[str, int]] = {}

    def get(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise RequestError("NOT_FOUND", f"job_id: no job {job_id!r} (unknown, or ended more than "
                                            f"{self.retention_s:g} s ago)")
        return job

    def claim(self, job_id: str, digest: bytes, kind: str, circuit: str, priority: str, deadline) -> tuple[Job, bool]:
        """The job for ``job_id`` and whether it is new (the caller must then :meth:`start` or
        :meth:`drop` it). An empty id gets a fresh unique one.

        Raises:
            RequestError: ALREADY_EXISTS (the id names another request), RESOURCE_EXHAUSTED (the table is full of live jobs).
        """
        with self._lock:
            self._purge()
            seq = next(self._seq)
            if not job_id:
                job_id = f"cuzk-{seq}-{time.time_ns():x}"
            known = self._jobs.get(job_id)
            if known is not None:
                if known.digest != digest:
                    raise RequestError("ALREADY_EXISTS", f"request_id: {job_id!r} was already used for another "
                                                         "request (other proof kind, payload or circuit)")
                return known, False
            if len(self._jobs) >= self.max_jobs:
                raise RequestError("RESOURCE_EXHAUSTED", f"{len(self._jobs)} jobs are queued or running, the "
                                                         f"daemon's bound ([daemon] max_jobs); retry later")
            job = Job(job_id, digest, kind, circuit, priority, deadline, seq)
            self._jobs[job_id] = job
            return job, True

    def drop(self, job: Job) -> None:
        """Forget a claimed job whose submit failed (so a corrected retry may use its id)."""
        with self._lock:
            if self._jobs.get(job.id) is job:
                del self._jobs[job.id]

    def fail_claim(self, job: Job, error: BaseException) -> None:
        """A claimed job whose submit failed: anyone already waiting on it gets the error, and the
        id is forgotten (a corrected retry may use it)."""
        if not job.result.done():
            job.result.set_exception(error if isinstance(error, Exception) else RuntimeError(str(error)))
        self.drop(job)

    def start(self, job: Job, engine_future, finish: Callable, *, heavy: bool = False) -> None:
        """Tie ``job`` to its Engine future; ``finish(result)`` turns the Engine's result into the
        answer: on the pool when ``heavy`` (a PoRep proof's check against its statement), else at
        once on the thread that resolved the Engine's future (a proof's bytes: microseconds)."""
        job.engine_future = engine_future

        def done(f):
            if f.cancelled():
                self._end(job, cancelled=True)
            elif f.exception() is not None:
                self._end(job, error=f.exception())
            elif not heavy:
                self._finish(job, finish, f.result())
            else:
                try:
                    self._finisher.submit(self._finish, job, finish, f.result())
                except RuntimeError:  # the pool is shut down (the daemon is stopping)
                    self._finish(job, finish, f.result())

        engine_future.add_done_callback(done)

    def _finish(self, job: Job, finish: Callable, result) -> None:
        try:
            answer = finish(result)
        except Exception as e:  # noqa: BLE001 - a bad proof or a broken finish step fails this job only
            self._end(job, error=e)
        else:
            self._end(job, value=answer)

    def _end(self, job: Job, *, value=None, error=None, cancelled=False) -> None:
        outcome = "cancelled" if cancelled else "failed" if error is not None else "completed"
        # counted before the result is set: a waiting call may be answered on this very thread as
        # the result is set, and a GetStatus right after that answer must count this job
        with self._lock:
            job.ended_at = time.monotonic()
            self._ended.append(job)
            self.counts[outcome] += 1
            per = self._counted.setdefault(job.kind, dict.fromkeys(self.counts, 0))
            per[outcome] += 1
        if cancelled:
            job.result.cancel()
        elif error is not None:
            job.result.set_exception(error)
        else:
            job.result.set_result(value)
        self._lines.post(job, outcome, error)

    def _purge(self) -> None:
        """Forget ended jobs older than the retention, and the oldest ended ones beyond ``max_jobs``
        (called with the lock held; amortised O(1): ended jobs wait in end order)."""
        now = time.monotonic()
        ended = self._ended
        while ended and (now - ended[0].ended_at >= self.retention_s or len(self._jobs) >= self.max_jobs):
            job = ended.popleft()
            if self._jobs.get(job.id) is job:
                del self._jobs[job.id]

    def queue_position(self, job: Job) -> int:
        if job.started or not job.live:
            return 0
        mine = job.rank()
        with self._lock:
            return sum(1 for j in self._jobs.values() if j is not job and j.live and not j.started and j.rank() < mine)

    def snapshot(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def per_kind(self) -> dict:
        """kind -> outcome counts of ended jobs."""
        with self._lock:
            return {k: dict(v) for k, v in self._counted.items()}

    def cancel_queued(self, cancel: Callable) -> int:
        """Cancel every job not started yet through ``cancel(engine_future)``; returns how many."""
        n = 0
        for job in self.snapshot():
            if job.live and not job.started and job.engine_future is not None and cancel(job.engine_future):
                n += 1
        return n

    def close(self) -> None:
        self._finisher.shutdown(wait=True)
        self._lines.close()


def job_outcome(job: Job):
    """``(status, value_or_error)`` of ``job`` now: "COMPLETED", "FAILED", "CANCELLED" or
    "TIMEOUT" (not ended yet)."""
    f = job.result
    if not f.done():
        return "TIMEOUT", None
    if f.cancelled():
        return "CANCELLED", None
    if f.exception() is not None:
        return "FAILED", f.exception()
    return "COMPLETED", f.result()


def outcome_of(job: Job, timeout: float | None, wake: threading.Event | None = None):
    """:func:`job_outcome` after waiting at most ``timeout`` seconds (None: until it ends) or until
    ``wake`` is set (the client went away); a job not ended is left as it is ("TIMEOUT")."""
    job.wait(timeout, wake)
    return job_outcome(job)
