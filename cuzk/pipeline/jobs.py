"""A job's records: its future (what the caller holds) and the core's bookkeeping of it.

:class:`cuzk.pipeline.core.SchedulerCore` creates both at submit and resolves the future once.
Once a job has ended, neither keeps its inputs: a resolved future may be held for a long time
(the Engine's request table keeps it for ``request_retention_s``), and it must not keep every
job's inputs alive with it.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, InvalidStateError
from typing import Any, Hashable

__all__ = ["ProofFuture", "Job", "AutoJobId", "add_note", "resolve"]

_log = logging.getLogger("cuzk.pipeline")


class ProofFuture(Future):
    """A :class:`concurrent.futures.Future` for one job, with its ``job_id``.

    ``cancel()`` succeeds while the job is still queued and removes it from the queue.
    A partitioned job's result is the list of partition proofs in order. ``timings`` is set by
    an :class:`cuzk.Engine` before the future resolves (None from a plain ``Pipeline``).
    """

    def __init__(self, job_id: Hashable, partitions: int | None = None):
        super().__init__()
        self.job_id = job_id
        self.partitions = partitions  #: number of partitions, None for an unpartitioned job
        self.timings = None  #: per-proof timings (cuzk.engine.JobTimings) from an Engine
        self._on_cancel = None

    def cancel(self) -> bool:
        hook = self._on_cancel
        return hook() if hook is not None else super().cancel()

    def _cancel_now(self) -> bool:
        """``Future.cancel`` itself, then the waiters of ``wait()``/``as_completed()`` are told
        (a queued job never reaches ``set_running_or_notify_cancel`` otherwise)."""
        try:
            return super().cancel()  # runs the done-callbacks; their BaseException propagates
        finally:
            if self.cancelled():
                self.set_running_or_notify_cancel()

    def __repr__(self) -> str:
        return f"<ProofFuture job_id={self.job_id!r} {super().__repr__()[1:-1]}>"


class AutoJobId:
    """The id of a job submitted without one (an Engine's), shown ``#<n>``.

    It equals only an AutoJobId of the same number, never a caller's id: an int ``request_id``
    3 and the third anonymous job are different jobs (a plain int numbering collided, so a
    fresh request id was refused and ``cancel(3)`` cancelled someone else's job).

    >>> AutoJobId(3), AutoJobId(3) == AutoJobId(3), AutoJobId(3) == 3, str(AutoJobId(3))
    (#3, True, False, '#3')
    """

    __slots__ = ("number",)

    def __init__(self, number: int):
        self.number = number

    def __eq__(self, other) -> bool:
        return type(other) is AutoJobId and other.number == self.number

    def __hash__(self) -> int:
        return hash((AutoJobId, self.number))

    def __repr__(self) -> str:
        return f"#{self.number}"


class Job:
    """Bookkeeping for one submitted job; mutated only under the core's lock."""

    __slots__ = ("id", "future", "units", "results", "remaining", "open_units", "started", "finished",
                 "partitioned", "route", "submitted_ns")

    def __init__(self, job_id, future, n_units, partitioned, route):
        self.id, self.future, self.partitioned, self.route = job_id, future, partitioned, route
        self.units: list = []  #: its WorkUnits
        self.results: list = [None] * n_units
        self.remaining = self.open_units = n_units
        self.started = self.finished = False
        self.submitted_ns = 0  #: timeline clock (ns since its epoch) at submit


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``, or nothing when ``exc`` cannot take notes (``__notes__`` set to a
    tuple by the raiser, a read-only exception type): the job must fail with it all the same."""
    try:
        exc.add_note(note)
    except Exception:
        _log.debug("cuzk pipeline: could not annotate %r", exc, exc_info=True)


def resolve(future: Future, *, result: Any = None, exc: BaseException | None = None) -> None:
    """Resolve ``future`` once. A done-callback's ``Exception`` is logged by concurrent.futures;
    its ``BaseException`` propagates to the worker, which survives it (see workers.py)."""
    try:
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)
    except InvalidStateError:  # unreachable while the finished flag is honoured; never hide it
        _log.exception("cuzk pipeline: future of job %r was already resolved", getattr(future, "job_id", None))
