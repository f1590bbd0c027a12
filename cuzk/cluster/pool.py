"""The prover actors of a RayEngine: slots with stable names, picking one for a witness
(locality first, and only a slot that serves the witness's circuit), starting, replacing and
retiring them.

A *slot* is one place a prover actor lives: a GPU of a node (pinned there), or one of
``cpu_provers`` CPU provers on a cluster without GPUs. Its name (``prover-0``...) stays when
its actor is replaced, so the timeline keeps one row per slot. The pool knows nothing of Ray:
the engine passes ``spawn(slot)``, which starts an actor and returns its handle once ready,
``node_alive(node)``, ``ready(slot, actor)`` (a context manager the slot goes live inside: the
engine replays circuits registered meanwhile there) and ``stop(actor)``.

    >>> pool = ProverPool(spawn=lambda slot: object(), node_alive=lambda node: True)
    >>> a, b = pool.add("n1"), pool.add("n2")
    >>> pool.start_all()
    >>> pool.acquire(prefer="n2").name, pool.acquire(prefer="n2").name
    ('prover-1', 'prover-0')
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Callable

__all__ = ["Slot", "ProverPool"]

_log = logging.getLogger("cuzk.cluster")

#: states in which a slot's actor may take a job now, or soon
LIVE, COMING = ("idle", "busy"), ("starting", "replacing")


class Slot:
    """One prover actor's place; fields change under the pool's lock."""

    __slots__ = ("name", "node", "pinned", "actor", "pending", "state", "restarts", "proofs", "local", "current",
                 "error", "busy_ns", "info", "unavailable")

    def __init__(self, name: str, node: str | None):
        self.name, self.node, self.pinned = name, node, node is not None
        self.actor: Any = None
        self.pending: Any = None  #: an actor still starting (close() stops it too)
        self.state = "starting"  #: starting | idle | busy | replacing | retiring | retired | dead
        self.restarts = self.proofs = self.local = 0
        self.current = None  #: (job id, partition) being proved
        self.error: str | None = None
        self.busy_ns = 0
        self.info: dict = {}
        self.unavailable: dict[str, str] = {}  #: circuit -> why this actor cannot prove it (its key)

    def serves(self, circuit: str | None) -> bool:
        return circuit is None or circuit not in self.unavailable

    def status(self) -> dict:
        return {"name": self.name, "node": self.node, "state": self.state, "restarts": self.restarts,
                "proofs": self.proofs, "local_witnesses": self.local,
                "job": None if self.current is None else str(self.current), "error": self.error,
                "pid": self.info.get("pid"), "backend": self.info.get("backend"), "pinned": self.pinned,
                "unavailable": dict(self.unavailable)}


class ProverPool:
    """See the module docstring. ``acquire`` blocks until a live actor that serves the circuit
    is free and returns None when none is alive or coming (the job then fails instead of
    waiting forever)."""

    def __init__(self, spawn: Callable[[Slot], Any], node_alive: Callable[[str], bool], *,
                 ready: Callable[[Slot, Any], Any] | None = None, stop: Callable[[Any], None] | None = None):
        self._spawn, self._node_alive = spawn, node_alive
        self._ready = ready or (lambda slot, actor: contextlib.nullcontext())
        self._stop = stop or (lambda actor: None)
        self._cond = threading.Condition()
        self.slots: list[Slot] = []
        self._closed = False
        self.replacements: list[threading.Thread] = []  #: background starts (replacements, joiners)

    def add(self, node: str | None) -> Slot:
        with self._cond:
            slot = Slot(f"prover-{len(self.slots)}", node)
            self.slots = self.slots + [slot]  # a new list: readers iterate without the lock
            return slot

    def start_all(self) -> None:
        """Start every slot's actor, in parallel; a slot whose actor fails to start is dead
        (its ``error`` says why)."""
        threads = [threading.Thread(target=self._bring_up, args=(s, False), daemon=True, name=f"cuzk-start-{s.name}")
                   for s in self.slots]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def start(self, slot: Slot) -> None:
        """Start ``slot``'s actor in the background (a node that joined): other slots keep serving."""
        self._background(slot, False, f"cuzk-start-{slot.name}")

    def _background(self, slot: Slot, replacing: bool, name: str) -> None:
        t = threading.Thread(target=self._bring_up, args=(slot, replacing), daemon=True, name=name)
        with self._cond:
            self.replacements = [r for r in self.replacements if r.is_alive()] + [t]
        t.start()

    def _bring_up(self, slot: Slot, replacing: bool) -> None:
        actor, late = None, False
        try:
            actor = self._spawn(slot)
            with self._ready(slot, actor):  # the slot goes live inside it (see the module docstring)
                with self._cond:
                    slot.pending = None
                    late = self._closed or slot.state == "retiring"
                    if late:  # retired while it started, or the engine closed: stop it, never use it
                        slot.state = "retired" if slot.state == "retiring" else "dead"
                    else:
                        slot.actor, slot.state, slot.error = actor, "idle", None
                        slot.restarts += replacing
                    self._cond.notify_all()
        except BaseException as exc:
            if replacing:
                _log.warning("cuzk cluster: could not replace %s on node %s: %r", slot.name, slot.node, exc)
            with self._cond:
                slot.pending = None
                slot.state = "dead" if slot.state != "retiring" else "retired"
                slot.error = ("replacement failed: " if replacing else "") + f"{type(exc).__name__}: {str(exc)[:300]}"
                self._cond.notify_all()
            late = actor is not None
        if late:
            self._stop(actor)

    def acquire(self, prefer: str | None = None, timeout: float | None = None,
                circuit: str | None = None) -> Slot | None:
        """A free slot serving ``circuit`` (any circuit: None), on node ``prefer`` if one there
        is free; None if no slot serving it is alive or being (re)started (or on timeout)."""
        with self._cond:
            while True:
                if self._closed:
                    return None
                free = [s for s in self.slots if s.state == "idle" and s.serves(circuit)]
                if free:
                    slot = next((s for s in free if s.node == prefer), free[0])
                    slot.state = "busy"
                    return slot
                if not any(s.state in ("busy",) + COMING and s.serves(circuit) for s in self.slots):
                    return None
                if not self._cond.wait(timeout):
                    return None

    def release(self, slot: Slot) -> None:
        stop = None
        with self._cond:
            if slot.state == "busy":
                slot.state = "idle"
            elif slot.state == "retiring":  # its last proof is done
                slot.state, stop, slot.actor = "retired", slot.actor, None
            slot.current = None
            self._cond.notify_all()
        if stop is not None:
            self._stop(stop)

    def failed(self, slot: Slot, actor, exc: BaseException) -> None:
        """``actor`` of ``slot`` died: replace it on the same node if that node is alive (in a
        background thread: a replacement that cannot be placed holds back no other slot)."""
        with self._cond:
            if slot.actor is not actor or slot.state in ("replacing", "dead", "retired"):
                return  # another thread already handles this death
            slot.error = f"{type(exc).__name__}: {str(exc)[:200]}"
            slot.current = None
            if slot.state == "retiring":
                slot.state, slot.actor = "retired", None
                self._cond.notify_all()
                return
            if self._closed or (slot.pinned and not self._node_alive(slot.node)):
                slot.state = "dead"
                self._cond.notify_all()
                return
            slot.state = "replacing"
        self._background(slot, True, f"cuzk-replace-{slot.name}")

    def node_left(self, node: str) -> list[Slot]:
        """``node`` left the cluster: its idle slots are dead now (a busy one learns it from its
        call, through :meth:`failed`). Returns those marked."""
        with self._cond:
            gone = [s for s in self.slots if s.pinned and s.node == node and s.state == "idle"]
            for s in gone:
                s.state, s.error = "dead", f"node {node} left the cluster"
            self._cond.notify_all()
            return gone

    def retire(self, slots: list[Slot]) -> list[Slot]:
        """Take ``slots`` out of service for good: an idle one stops now, a busy one after its
        proof, one still starting once it is up. Returns those that were retired or retiring."""
        stop, done = [], []
        with self._cond:
            for s in slots:
                if s.state == "idle":
                    stop.append(s.actor)
                    s.state, s.actor = "retired", None
                elif s.state in ("busy",) + COMING:
                    s.state = "retiring"
                else:
                    continue
                done.append(s)
            self._cond.notify_all()
        for actor in stop:
            self._stop(actor)
        return done

    def live(self) -> list[Slot]:
        with self._cond:
            return [s for s in self.slots if s.state in LIVE]

    def close(self) -> list:
        """No more acquires; returns the actors to stop (those still starting included)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            return [a for s in self.slots for a in (s.actor, s.pending) if a is not None]
