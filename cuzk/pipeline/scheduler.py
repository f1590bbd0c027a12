"""What runs next: a priority queue of work units with memory-budget admission, and the
resizable gate that caps concurrent syntheses.

Order is priority (CRITICAL > HIGH > NORMAL > LOW), then deadline (earliest first; none
last), then submission sequence, then partition index, so the partitions of one job stay
together and in order. The same key orders the hand-off to the prove workers
(:class:`cuzk.pipeline.channel.BoundedChannel`), so a CRITICAL job synthesized behind a
backlog is proved next.

    >>> q = JobQueue()
    >>> for seq, prio in [(1, Priority.LOW), (2, Priority.HIGH), (3, Priority.NORMAL)]:
    ...     q.put(WorkUnit(job=None, partition=None, inputs={}, seq=seq, priority=prio))
    >>> [q.take().seq for _ in range(3)]
    [2, 3, 1]
"""

from __future__ import annotations

import enum
import heapq
import itertools
import logging
import numbers
import threading
import time
from typing import Any, Callable

import attrs

from cuzk.errors import InputError, PipelineClosedError

__all__ = ["Priority", "WorkUnit", "JobQueue", "ConcurrencyGate", "UNIT_STATES", "LIVE_STATES",
           "estimate_synthesized_bytes", "check_int"]

_log = logging.getLogger("cuzk.pipeline")


def check_int(what: str, value, minimum: int = 1) -> int:
    """``value`` if it is an int (not a bool) >= ``minimum``; the Pipeline's and the Engine's
    count arguments (concurrency, lookahead, workers, device ids) all go through it.

    Raises:
        cuzk.errors.InputError: naming ``what``.

    >>> check_int("lookahead", 0, minimum=0)
    0
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"{what} must be an int >= {minimum}, got {value!r}")
    return value

#: Life of a work unit, in order; the last three are terminal. "proved": a partition's proof
#: waits for its job's other partitions (it becomes "done" when the whole job is delivered).
UNIT_STATES = ("queued", "synthesizing", "waiting_for_gpu", "proving", "proved", "done", "failed", "cancelled")
#: The states of a unit still on its way (status() counts them per state).
LIVE_STATES = UNIT_STATES[:5]


class Priority(enum.IntEnum):
    """Scheduling priority; higher runs first."""

    LOW = 0
    NORMAL = 1
    HIGH = 2
    CRITICAL = 3

    @classmethod
    def coerce(cls, value: Any) -> "Priority":
        """Accept a Priority, its int value or its name (case-insensitive).

        Raises:
            cuzk.errors.InputError: anything else.

        >>> Priority.coerce("high"), Priority.coerce(0)
        (<Priority.HIGH: 2>, <Priority.LOW: 0>)
        """
        if isinstance(value, cls):
            return value
        try:
            if isinstance(value, str):
                return cls[value.upper()]
            if isinstance(value, int) and not isinstance(value, bool):
                return cls(value)
        except (KeyError, ValueError):
            pass
        raise InputError(f"priority must be one of {[p.name for p in cls]}, got {value!r}")


_NO_DEADLINE = float("inf")


@attrs.define(eq=False)
class WorkUnit:
    """One synthesis + prove: a whole job, or one partition of a partitioned job."""

    job: Any  #: the pipeline's job record (owns the future)
    partition: int | None  #: index within the job, None if unpartitioned
    inputs: Any  #: keyword arguments for ``synthesize``
    seq: int  #: submission sequence number of the job (FIFO tie-break)
    priority: Priority = Priority.NORMAL
    nbytes: int = 0  #: estimated size of the synthesized result (memory budget)
    state: str = "queued"
    route: Any = None  #: the stages that run it (see cuzk.pipeline.core.Route)
    deadline: float | None = None  #: ``time.time()`` after which it must not start a stage
    #: per-unit measurements the workers fill in (seconds): synth, prove, key_load, device
    marks: dict = attrs.field(factory=dict)

    @property
    def order(self) -> tuple:
        """The scheduling key: priority, deadline, submission order, partition."""
        return (-int(self.priority), _NO_DEADLINE if self.deadline is None else self.deadline,
                self.seq, self.partition or 0)

    def expired(self, now: float) -> bool:
        """Whether the deadline has passed at ``now`` (a ``time.time()`` value)."""
        return self.deadline is not None and now > self.deadline


class JobQueue:
    """Priority queue with memory admission: ``take`` hands out the head unit only when its
    estimated size fits in what the budget has left (a unit bigger than the whole budget runs
    alone rather than never). Closing lets workers drain what is queued, then ``take`` returns None.

    ``on_blocked(unit)``, when set, is called (outside the queue's lock) by a taker whose unit
    does not fit, before it waits and again each time it wakes: the owner of what else is
    reserved (the Engine's keys) frees what it can there, or fails the unit if nothing ever will.
    """

    #: the longest a taker blocked by memory waits before asking ``on_blocked`` again: what makes
    #: room (a route going idle, a key load ending) is not always an event of this queue
    BLOCKED_POLL_S = 0.5

    def __init__(self, memory_budget: int | None = None, on_blocked: Callable[[WorkUnit], None] | None = None):
        self._heap: list = []
        self._tie = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self.memory_budget = memory_budget
        self.reserved_bytes = 0
        self.on_blocked = on_blocked

    def put(self, unit: WorkUnit) -> None:
        """Queue ``unit``. Raises :class:`cuzk.errors.PipelineClosedError` after :meth:`close`."""
        with self._cond:
            if self._closed:
                raise PipelineClosedError("cannot queue work: the pipeline is closed")
            heapq.heappush(self._heap, (unit.order, next(self._tie), unit))
            self._cond.notify_all()

    def _fits(self, unit: WorkUnit) -> bool:
        if self.memory_budget is None or self.reserved_bytes == 0 or unit.nbytes == 0:
            return True
        return self.reserved_bytes + unit.nbytes <= self.memory_budget

    def _head(self, accept) -> int | None:
        """Index in the heap of the best unit ``accept`` takes (0 is the best of all)."""
        if not self._heap:
            return None
        if accept is None or accept(self._heap[0][-1]):
            return 0
        best = None
        for i, entry in enumerate(self._heap):  # a few hundred entries: a scan beats a heap per route
            if accept(entry[-1]) and (best is None or entry[:2] < self._heap[best][:2]):
                best = i
        return best

    def take(self, timeout: float | None = None, accept: Callable[[WorkUnit], bool] | None = None) -> WorkUnit | None:
        """Block until the best unit (that ``accept`` takes, if given) fits the budget; reserve
        its bytes and return it.

        Returns None once the queue is closed and holds nothing ``accept`` takes (or on timeout).
        """
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            asked = False
            while True:
                picked = self._head(accept)
                if picked is None:
                    if self._closed:
                        return None
                elif self._fits(self._heap[picked][-1]):
                    break
                elif self.on_blocked is not None and not asked:
                    asked = True
                    self._ask_blocked(self._heap[picked][-1])
                    continue  # the heap may have changed meanwhile
                asked = False
                wait = None if end is None else end - time.monotonic()
                if wait is not None and wait <= 0:
                    return None
                if picked is not None and self.on_blocked is not None:
                    wait = self.BLOCKED_POLL_S if wait is None else min(wait, self.BLOCKED_POLL_S)
                self._cond.wait(wait)
            entry = self._heap[picked]
            last = self._heap.pop()
            if entry is not last:  # remove from the middle: replace, then restore the heap
                self._heap[picked] = last
                heapq.heapify(self._heap)
            unit = entry[-1]
            self.reserved_bytes += unit.nbytes
            return unit

    def _ask_blocked(self, unit: WorkUnit) -> None:
        """``on_blocked(unit)`` without the queue's lock (it reserves, releases and removes)."""
        self._cond.release()
        try:
            self.on_blocked(unit)
        except BaseException:  # the taker is a worker thread: it lives on, the unit waits
            _log.exception("cuzk pipeline: making room for job %r failed", getattr(unit.job, "id", None))
        finally:
            self._cond.acquire()

    def poke(self) -> None:
        """Wake waiting takers to look again (an ``accept`` answer may have changed)."""
        with self._cond:
            self._cond.notify_all()

    def reserve(self, nbytes: int) -> None:
        """Hold ``nbytes`` of the budget for something other than a unit (a resident key)."""
        with self._cond:
            self.reserved_bytes += nbytes

    def release(self, nbytes: int) -> None:
        """Return ``nbytes`` of budget (the synthesized result was dropped)."""
        if nbytes:
            with self._cond:
                self.reserved_bytes -= nbytes
                self._cond.notify_all()

    def remove(self, predicate: Callable[[WorkUnit], bool]) -> list[WorkUnit]:
        """Take every queued unit matching ``predicate`` out of the queue; returns them."""
        with self._cond:
            keep = [entry for entry in self._heap if not predicate(entry[-1])]
            if len(keep) == len(self._heap):
                return []
            gone = [entry[-1] for entry in self._heap if predicate(entry[-1])]
            heapq.heapify(keep)
            self._heap = keep
            self._cond.notify_all()
            return gone

    def close(self) -> None:
        """Refuse new units; workers drain the rest."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def blocked_by_memory(self) -> bool:
        """True when a unit is waiting only because the memory budget is full."""
        with self._cond:
            return bool(self._heap) and not self._fits(self._heap[0][-1])

    def __len__(self) -> int:
        return len(self._heap)

    def units(self) -> list[WorkUnit]:
        """A snapshot of the queued units, best first."""
        with self._cond:
            return [entry[-1] for entry in sorted(self._heap, key=lambda e: e[:2])]


class ConcurrencyGate:
    """A semaphore whose limit can change while permits are held (for ``concurrency="auto"``).

    Lowering the limit never interrupts a holder; new acquirers wait until ``active < limit``.

    >>> g = ConcurrencyGate(1)
    >>> g.acquire(), g.acquire(timeout=0.01)
    (True, False)
    """

    def __init__(self, limit: int):
        self._cond = threading.Condition()
        self._limit = int(limit)
        self._active = 0
        self._shutdown = False

    def acquire(self, timeout: float | None = None) -> bool:
        """Take a permit; False on timeout or after :meth:`shutdown`."""
        with self._cond:
            ok = self._cond.wait_for(lambda: self._shutdown or self._active < self._limit, timeout)
            if not ok or self._shutdown:
                return False
            self._active += 1
            return True

    def release(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    def set_limit(self, limit: int) -> None:
        with self._cond:
            self._limit = int(limit)
            self._cond.notify_all()

    def shutdown(self) -> None:
        """Wake every waiter and refuse further permits (the queue is drained)."""
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def active(self) -> int:
        return self._active


# Bytes per field element (Fr, 4 x 64-bit limbs).
_FR_BYTES = 32
_CONSTRAINT_NAMES = ("num_constraints", "n_constraints", "constraints")
_VARIABLE_NAMES = ("num_variables", "n_variables", "n_vars", "num_vars")


def _count(obj, names) -> int | None:
    for name in names:
        v = getattr(obj, name, None)
        if callable(v):
            v = v()
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def estimate_synthesized_bytes(synthesizer) -> int | None:
    """Estimated size of one synthesized job, for memory-budget admission.

    Uses ``synthesizer.estimate_bytes()`` when it exists; else the R1CS counts of
    ``synthesizer.r1cs``: a, b, c (one Fr element per constraint each) plus the assignment
    (one per variable), i.e. ``3 * constraints * 32 + variables * 32`` bytes. None if neither
    is available.

    Raises:
        cuzk.errors.InputError: ``estimate_bytes()`` returned something other than an int >= 0.

    >>> class R1cs: num_constraints, num_variables = 1000, 1200
    >>> class Synth: r1cs = R1cs()
    >>> estimate_synthesized_bytes(Synth())
    134400
    """
    fn = getattr(synthesizer, "estimate_bytes", None)
    if callable(fn):
        value = fn()
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            # a negative estimate grew the budget with every admitted job; a float was truncated
            raise InputError(f"{type(synthesizer).__name__}.estimate_bytes() must return an int >= 0, "
                             f"got {value!r}")
        return int(value)
    r1cs = getattr(synthesizer, "r1cs", None)
    if r1cs is None:
        return None
    n_c, n_v = _count(r1cs, _CONSTRAINT_NAMES), _count(r1cs, _VARIABLE_NAMES)
    if n_c is None or n_v is None:
        return None
    return 3 * n_c * _FR_BYTES + n_v * _FR_BYTES
