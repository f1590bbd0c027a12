"""Answers that come when a job ends: what a waiting RPC (AwaitProof, Prove, ProveCircuit) hands
its transport instead of blocking a thread, and the one thread their timeouts share.

A :class:`Pending` is a job, a timeout and how to turn the job's outcome into the reply. The
transport chooses how to wait for it: a call served on grpc-core's call API
(cuzk/serve/direct.py) is answered by whichever thread ends the job, or by the timer thread when
the timeout comes first, so no thread waits and none is woken; a call served by grpcio's own
handlers waits on its handler's thread (:meth:`Pending.wait`).

    >>> from concurrent.futures import Future
    >>> from cuzk.serve.jobs import Job
    >>> job = Job("j-1", b"", "WINNING_POST", "winning-2k", "critical", None, 0)
    >>> p = Pending(job, None, lambda status, value: (status, value))
    >>> got = []
    >>> cancel = p.when_ready(lambda reply: got.append(reply()), Timers())
    >>> job.result.set_result(b"proof")       # the thread that ends the job answers
    >>> got
    [('COMPLETED', b'proof')]
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Callable

from cuzk.serve.jobs import Job, job_outcome, outcome_of

__all__ = ["Pending", "Timers"]

_log = logging.getLogger("cuzk.serve")


class Timers:
    """One thread that calls functions at their times, started at the first :meth:`call_later`.
    A cancelled entry stays in the heap until its time or until cancelled ones are most of it
    (then the heap is rebuilt), so a client that polls with long timeouts and goes away each time
    leaves a bounded amount behind."""

    def __init__(self, name: str = "cuzk-serve-timers"):
        self._name = name
        self._heap: list = []
        self._cv = threading.Condition(threading.Lock())
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._cancelled = 0
        self._closed = False

    def call_later(self, delay: float, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` on the timers' thread ``delay`` seconds from now; returns a cancel."""
        entry = [time.monotonic() + max(0.0, delay), next(self._seq), fn]
        with self._cv:
            if self._closed:
                raise RuntimeError("timers closed")
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            if self._heap[0] is entry:
                self._cv.notify()

        def cancel() -> None:
            with self._cv:
                if entry[2] is not None:
                    entry[2] = None
                    self._cancelled += 1
                    if self._cancelled > 64 and 2 * self._cancelled > len(self._heap):
                        self._heap = [e for e in self._heap if e[2] is not None]
                        heapq.heapify(self._heap)
                        self._cancelled = 0

        return cancel

    def _next(self):
        with self._cv:
            while not self._closed:
                now = time.monotonic()
                while self._heap and self._heap[0][2] is None:
                    heapq.heappop(self._heap)
                    self._cancelled -= 1
                if self._heap and self._heap[0][0] <= now:
                    entry = heapq.heappop(self._heap)
                    fn, entry[2] = entry[2], None
                    return fn
                self._cv.wait(self._heap[0][0] - now if self._heap else None)
            return None

    def _run(self) -> None:
        while (fn := self._next()) is not None:
            try:
                fn()
            except Exception:  # noqa: BLE001 - the thread serves every other timer too
                _log.exception("a timer failed")

    def __len__(self) -> int:
        with self._cv:
            return len(self._heap) - self._cancelled

    def close(self) -> None:
        """Stop the thread; timers not due yet are dropped."""
        with self._cv:
            self._closed = True
            self._heap.clear()
            self._cv.notify()
        if self._thread is not None:
            self._thread.join(10.0)


class Pending:
    """The answer of a call that waits on ``job``: ``answer(status, value)`` once it ends, or
    ``answer("TIMEOUT", None)`` after ``timeout`` seconds (None: no limit; the job goes on)."""

    __slots__ = ("job", "timeout", "answer")

    def __init__(self, job: Job, timeout: float | None, answer: Callable):
        self.job, self.timeout, self.answer = job, timeout, answer

    def then(self, fn: Callable) -> "Pending":
        """The same wait, its answer passed through ``fn``."""
        answer = self.answer
        return Pending(self.job, self.timeout, lambda status, value: fn(answer(status, value)))

    def wait(self, wake: threading.Event | None = None):
        """The answer, waiting on this thread (until ``wake`` is set: then TIMEOUT's answer)."""
        return self.answer(*outcome_of(self.job, self.timeout, wake))

    def when_ready(self, on_ready: Callable, timers: Timers) -> Callable[[], None]:
        """Call ``on_ready(reply)`` once, where ``reply()`` builds the answer: on the thread that
        ends the job, on ``timers``' thread when the timeout comes first, or on this thread when the
        job has ended already (or the timeout is 0). Returns a cancel for a caller gone away: after
        it, ``on_ready`` is not called (unless it was already)."""
        job, lock = self.job, threading.Lock()
        state = {"fired": False, "cancel_timer": None}

        def settle() -> bool:
            """True for the first caller only (the answer, or the cancel): it unhooks the rest."""
            with lock:
                if state["fired"]:
                    return False
                state["fired"] = True
                cancel_timer = state["cancel_timer"]
            job.remove_waiter(fire)
            if cancel_timer is not None:
                cancel_timer()
            return True

        def fire() -> None:
            if settle():
                status, value = job_outcome(job)
                on_ready(lambda: self.answer(status, value))

        if not job.add_waiter(fire) or self.timeout == 0:
            fire()
        elif self.timeout is not None:
            cancel_timer = timers.call_later(self.timeout, fire)
            with lock:
                if state["fired"]:  # the job ended while the timer was set
                    cancel_timer()
                else:
                    state["cancel_timer"] = cancel_timer
        return settle  # the cancel: unhooks the waiter and the timer unless the answer came first
