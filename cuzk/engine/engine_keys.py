"""The half of :class:`cuzk.engine.engine.Engine` that places proving keys in memory.

Keys live in tiers (docs/engine.md): the disk cache, the host's memory under the engine's one
memory budget, and each CUDA device's memory under that device's budget. These methods load a
key ahead of its first proof, drop one, and make room for one by evicting idle keys least
recently used first; the routes (:mod:`cuzk.engine.circuit`) call them while loading. They are
the Engine's methods (``engine.preload``, ``engine.evict``, ...), kept in a mixin of their own:
what they share with the rest of the Engine is its lock, its routes and its scheduling core.
"""

from __future__ import annotations

import logging

from cuzk.engine.circuit import CircuitRoute
from cuzk.errors import EngineError, InputError, MemoryBudgetError
from cuzk.pipeline.core import TERMINAL_STATES
from cuzk.timeline.events import EventKind as K

__all__ = ["EngineKeys"]

_log = logging.getLogger("cuzk.engine")


class EngineKeys:
    """Key placement for :class:`cuzk.engine.engine.Engine`, which provides ``_lock``,
    ``_routes``, ``core``, ``memory_budget``, ``device_tier``, ``timeline``, ``_route`` and
    ``_check_open``. Lock order: a route's key lock before the engine's (docs/engine.md, "Locking")."""

    def preload(self, name: str) -> None:
        """Load ``name``'s key now (host tier, and resident on every device of the engine) instead
        of at its first proof. Raises the load's error (format, mismatch, device memory) here."""
        with self._lock:
            self._check_open()
            route = self._route(name)
        route.preload()

    def evict(self, name: str) -> int:
        """Drop ``name``'s key from memory (host and device tiers; the disk cache stays).
        Returns the bytes freed from the budget.

        Raises:
            cuzk.errors.EngineError: the circuit has queued or running jobs.
        """
        with self._lock:
            route = self._route(name)
        # The key lock first, then the engine's (docs/engine.md, "Locking"): a load of this key in
        # progress finishes (it needs the engine's lock to do so), then its key is dropped.
        with route.key_lock, self._lock:
            if self.core.busy(route):
                raise EngineError(f"circuit {name!r} has queued or running work: its key is in use")
            return self._evict(route, "evict()")

    def _evict(self, route: CircuitRoute, reason: str, *, blocking: bool = True) -> int | None:
        """Drop ``route``'s key and release its bytes; None (nothing done) when ``blocking`` is
        False and its key lock is taken."""
        freed = route.evict(blocking=blocking)
        if freed is None:
            return None
        self.core.queue.release(freed)
        self.timeline.record(K.KEY_EVICT, circuit=route.name, bytes=freed, reason=reason)
        return freed

    def make_room(self, route: CircuitRoute, nbytes: int) -> None:
        """Make ``route``'s reservation ``nbytes`` (key and tables), evicting idle keys LRU first.
        Over the budget after that, the reservation is still made: admission of new syntheses
        then waits until witnesses in flight finish (they hold the rest).

        Called with ``route``'s key lock held. Another key is evicted only if its key lock can be
        taken without waiting: one that is taken belongs to a key being loaded (or evicted by
        another thread), which is not idle; waiting for it here, under the engine's lock, while
        that load waits for the engine's lock to reserve or resize its bytes, was a deadlock."""
        with self._lock:
            delta = nbytes - route.key_bytes_reserved  # what it holds counts (tables come after the key)
            if self.memory_budget is not None and delta > 0:
                # a route whose eviction frees no host bytes (a registered ProvingKey without
                # tables) is not a candidate: dropping its provers would only cost a re-upload
                idle = sorted((r for r in self._routes.values() if r is not route and not self.core.busy(r)
                               and r.evictable_bytes()), key=lambda r: r.last_use or 0.0)
                for other in idle:
                    if self.core.queue.reserved_bytes + delta <= self.memory_budget:
                        break
                    if self._evict(other, f"room for {route.name!r}", blocking=False) is None:
                        _log.debug("room for %r: %r is loading or being evicted, left in place", route.name, other.name)
            self.resize_reservation(route, nbytes)

    def fixed_bytes(self, excluding: CircuitRoute | None = None) -> int:
        """Budget bytes no eviction frees: every registered circuit's PCE and ProvingKey (but
        ``excluding``'s)."""
        with self._lock:
            return sum(r.fixed_bytes() for r in self._routes.values() if r is not excluding)

    def never_fits(self, route: CircuitRoute) -> str | None:
        """Why a job of ``route`` can never be admitted under the budget (None: it can). What
        it needs at once: a witness, its own key, and everything no eviction frees.

        Raises:
            cuzk.errors.InputError: ``route``'s key file is gone (its size is unknown).
        """
        if self.memory_budget is None:
            return None
        key = route.estimated_key_bytes(strict=True)
        others = self.fixed_bytes(excluding=route)
        own_pce = route.pce_bytes
        need = route.unit_bytes + key + own_pce + others  # key counts a ProvingKey's own bytes
        if need <= self.memory_budget:
            return None
        return (f"circuit {route.name!r} can never fit the memory budget of {self.memory_budget} bytes: one "
                f"witness {route.unit_bytes} + key {key} + PCE {own_pce} + the other circuits' PCEs and "
                f"registered keys {others} = {need} bytes")

    def relieve_admission(self, unit) -> None:
        """The queue's ``on_blocked``: ``unit`` waits for admission because the budget is full.
        Keys of routes not proving (idle ones first, then those whose jobs are all still queued),
        least recently used first, are evicted until it fits; it fails with MemoryBudgetError
        when it never can. Otherwise it waits for the witnesses and keys in use to drain.

        Keys are otherwise evicted only when another key loads, so keys loaded over the budget
        while their circuits were busy would hold it forever once idle, and every later job
        would wait for admission that never comes."""
        route, queue = unit.route, self.core.queue
        try:
            why = self.never_fits(route)
        except InputError as e:  # the key file went away: the job fails as its load would
            why, exc = None, e
        else:
            exc = None if why is None else MemoryBudgetError(why)
        if exc is not None:
            self.core.fail_unit(unit, exc, "admission (memory budget)", queued=True)
            return
        with self._lock:
            active = {}  # route -> whether a unit of it is past the queue (holds or needs its key now)
            for job in self.core.jobs_snapshot():
                for u in job.units:
                    if u.state not in TERMINAL_STATES:
                        active[u.route] = active.get(u.route, False) or u.state != "queued"
            candidates = sorted((r for r in self._routes.values() if r is not route and not active.get(r, False)
                                 and r.evictable_bytes()),
                                key=lambda r: (r in active, r.last_use or 0.0))
            for other in candidates:
                if queue.reserved_bytes + unit.nbytes <= self.memory_budget:
                    break
                self._evict(other, f"admission of {route.name!r}", blocking=False)

    def make_device_room(self, route: CircuitRoute, device, nbytes: int, *, every_idle: bool = False) -> int:
        """Evict other idle keys from CUDA ``device``, least recently used first, until ``nbytes``
        more fit its budget (``every_idle``: all of them, after an out-of-memory); returns the
        bytes dropped there. The host tier keeps them.

        Raises:
            cuzk.errors.MemoryBudgetError: the key alone is over the device's whole budget.
        """
        tier = self.device_tier
        budget = tier.budgets[device]
        if budget is not None and nbytes > budget:
            raise MemoryBudgetError(f"circuit {route.name!r}: its key takes {nbytes:,} bytes on a device, over the "
                                    f"device budget of {budget:,} bytes of CUDA device {device}")
        freed = 0
        with self._lock:
            idle = sorted((r for r in self._routes.values() if r is not route and device in r.resident_devices()
                           and not self.core.busy(r)), key=lambda r: r.last_use or 0.0)
            for other in idle:
                if not every_idle and tier.fits(device, nbytes):
                    break
                n = other.drop_device(device, blocking=False)  # a taken key lock: loading, not idle (make_room)
                if n is None:
                    continue
                freed += n
                self.timeline.record(K.KEY_EVICT, circuit=other.name, bytes=n, device=device,
                                     reason=f"device room for {route.name!r}")
        return freed

    def resize_reservation(self, route: CircuitRoute, nbytes: int) -> None:
        with self._lock:
            delta = nbytes - route.key_bytes_reserved
            if delta > 0:
                self.core.queue.reserve(delta)
            elif delta < 0:
                self.core.queue.release(-delta)
            route.key_bytes_reserved = nbytes

    def _release_keys(self) -> None:
        """Drop every key from the device and host tiers (the disk cache stays), once closed and idle."""
        with self._lock:
            routes = list(self._routes.values())
        for route in routes:
            # each key lock before the engine's lock (docs/engine.md, "Locking"): a preload still
            # running finishes its load, then its key is dropped
            with route.key_lock, self._lock:
                if route.kind in ("params", "zkey") and (route.key_bytes_reserved or route.resident_devices()):
                    self._evict(route, "close()")
                elif route.kind == "object":
                    route.evict()  # its provers only: the host's own ProvingKey stays the host's

