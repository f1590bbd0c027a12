"""The bounded hand-off between synthesis and prove workers.

``put`` blocks while ``capacity`` items are waiting and never drops; ``capacity=0`` is a
rendezvous (``put`` returns once a consumer has the item). ``get`` hands out the waiting item
with the smallest ``order`` (the scheduling key of :class:`cuzk.pipeline.scheduler.WorkUnit`:
priority, deadline, submission), puts without an order in arrival order. Consumer idle time
is accumulated so the concurrency controller can see the prove stage starving.

    >>> ch = BoundedChannel(2)
    >>> ch.put("normal", order=(-1, 5)); ch.put("critical", order=(-3, 9)); ch.close()
    >>> ch.get(), ch.get(), ch.get()
    ('critical', 'normal', None)
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Any

from cuzk.errors import PipelineClosedError

__all__ = ["BoundedChannel"]


class BoundedChannel:
    """At most ``capacity`` items between producer and consumer threads, best ``order`` first."""

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self._items: list = []  # heap of (order, arrival, item)
        self._arrival = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._present: set[int] = set()  # arrival numbers of the items not yet taken
        self.consumer_wait_ns = 0  #: total time consumers spent waiting on an empty channel

    def put(self, item: Any, order: tuple = ()) -> None:
        """Add ``item``, blocking while the channel is over capacity; smaller ``order`` is taken first.

        A blocked put's item is already visible to ``get``: a CRITICAL item whose producer waits
        for room is handed out before the NORMAL items that filled the channel. The producer
        returns once its item was taken or the channel is back within ``capacity`` (so it still
        holds at most one item beyond the bound, exactly as a producer waiting outside would).

        Raises:
            cuzk.errors.PipelineClosedError: the channel was closed.
        """
        with self._cond:
            if self._closed:
                raise PipelineClosedError("channel closed")
            arrival = next(self._arrival)
            heapq.heappush(self._items, (order, arrival, item))
            self._present.add(arrival)
            self._cond.notify_all()
            self._cond.wait_for(lambda: arrival not in self._present or len(self._items) <= self.capacity)

    def get(self, timeout: float | None = None) -> Any:
        """Next item; None when the channel is closed and empty (or on timeout)."""
        with self._cond:
            if not self._items and not self._closed:
                t0 = time.perf_counter_ns()
                self._cond.wait_for(lambda: self._items or self._closed, timeout)
                self.consumer_wait_ns += time.perf_counter_ns() - t0
            if not self._items:
                return None
            _, arrival, item = heapq.heappop(self._items)
            self._present.discard(arrival)
            self._cond.notify_all()
            return item

    def set_capacity(self, capacity: int) -> None:
        """Change the bound (a cluster grows it when prover actors join); producers blocked
        on the old bound re-check the new one."""
        with self._cond:
            self.capacity = int(capacity)
            self._cond.notify_all()

    def close(self) -> None:
        """No more puts; consumers drain what is left, then get None."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        return len(self._items)
