"""The prover actors of a RayEngine: slots with stable names, picking one for a witness
(locality first), and replacing the ones that die.

A *slot* is one place a prover actor lives: a GPU of a node (pinned there), or one of
``cpu_provers`` CPU provers on a cluster without GPUs. Its name (``prover-0``...) stays when
its actor is replaced, so the timeline keeps one row per slot. The pool knows nothing of Ray:
the engine passes ``spawn(slot)``, which starts an actor and returns its handle once ready, and
``node_alive(node)``.

    >>> pool = ProverPool(spawn=lambda slot: object(), node_alive=lambda node: True)
    >>> a, b = pool.add("n1"), pool.add("n2")
    >>> pool.start_all()
    >>> pool.acquire(prefer="n2").name, pool.acquire(prefer="n2").name
    ('prover-1', 'prover-0')
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

__all__ = ["Slot", "ProverPool"]

_log = logging.getLogger("cuzk.cluster")


class Slot:
    """One prover actor's place; fields change under the pool's lock."""

    __slots__ = ("name", "node", "pinned", "actor", "state", "restarts", "proofs", "local", "current", "error",
                 "busy_ns", "info")

    def __init__(self, name: str, node: str | None):
        self.name, self.node, self.pinned = name, node, node is not None
        self.actor: Any = None
        self.state = "starting"  #: starting | idle | busy | replacing | dead
        self.restarts = self.proofs = self.local = 0
        self.current = None  #: (job id, partition) being proved
        self.error: str | None = None
        self.busy_ns = 0
        self.info: dict = {}

    def status(self) -> dict:
        return {"name": self.name, "node": self.node, "state": self.state, "restarts": self.restarts,
                "proofs": self.proofs, "local_witnesses": self.local,
                "job": None if self.current is None else str(self.current), "error": self.error,
                "pid": self.info.get("pid"), "backend": self.info.get("backend")}


class ProverPool:
    """See the module docstring. ``acquire`` blocks until a live actor is free and returns None
    when none is alive or coming (the job then fails instead of waiting forever)."""

    def __init__(self, spawn: Callable[[Slot], Any], node_alive: Callable[[str], bool]):
        self._spawn, self._node_alive = spawn, node_alive
        self._cond = threading.Condition()
        self.slots: list[Slot] = []
        self._closed = False
        self.replacements: list[threading.Thread] = []

    def add(self, node: str | None) -> Slot:
        slot = Slot(f"prover-{len(self.slots)}", node)
        self.slots.append(slot)
        return slot

    def start_all(self) -> None:
        """Start every slot's actor, in parallel; a slot whose actor fails to start is dead
        (its ``error`` says why)."""
        def start(slot: Slot) -> None:
            try:
                actor = self._spawn(slot)
            except BaseException as exc:
                with self._cond:
                    slot.state, slot.error = "dead", f"{type(exc).__name__}: {str(exc)[:300]}"
                return
            self._started(slot, actor)

        threads = [threading.Thread(target=start, args=(s,), daemon=True, name=f"cuzk-start-{s.name}")
                   for s in self.slots]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _started(self, slot: Slot, actor) -> None:
        with self._cond:
            slot.actor, slot.state, slot.error = actor, "idle", None
            self._cond.notify_all()

    def acquire(self, prefer: str | None = None, timeout: float | None = None) -> Slot | None:
        """A free slot, on node ``prefer`` if one there is free; None if no slot is alive or
        being replaced (or on timeout)."""
        with self._cond:
            while True:
                if self._closed:
                    return None
                free = [s for s in self.slots if s.state == "idle"]
                if free:
                    slot = next((s for s in free if s.node == prefer), free[0])
                    slot.state = "busy"
                    return slot
                if not any(s.state in ("busy", "starting", "replacing") for s in self.slots):
                    return None
                if not self._cond.wait(timeout):
                    return None

    def release(self, slot: Slot) -> None:
        with self._cond:
            if slot.state == "busy":
                slot.state = "idle"
            slot.current = None
            self._cond.notify_all()

    def failed(self, slot: Slot, actor, exc: BaseException) -> None:
        """``actor`` of ``slot`` died: replace it on the same node if that node is alive (in a
        background thread: a replacement that cannot be placed holds back no other slot)."""
        with self._cond:
            if slot.actor is not actor or slot.state in ("replacing", "dead"):
                return  # another thread already handles this death
            slot.error = f"{type(exc).__name__}: {str(exc)[:200]}"
            slot.current = None
            if self._closed or (slot.pinned and not self._node_alive(slot.node)):
                slot.state = "dead"
                self._cond.notify_all()
                return
            slot.state = "replacing"
            t = threading.Thread(target=self._replace, args=(slot,), daemon=True, name=f"cuzk-replace-{slot.name}")
            self.replacements.append(t)
        t.start()

    def _replace(self, slot: Slot) -> None:
        try:
            actor = self._spawn(slot)
        except BaseException as exc:
            _log.warning("cuzk cluster: could not replace %s on node %s: %r", slot.name, slot.node, exc)
            with self._cond:
                slot.state, slot.error = "dead", f"replacement failed: {type(exc).__name__}: {str(exc)[:200]}"
                self._cond.notify_all()
            return
        with self._cond:
            slot.restarts += 1
        self._started(slot, actor)

    def live(self) -> list[Slot]:
        with self._cond:
            return [s for s in self.slots if s.state in ("idle", "busy")]

    def close(self) -> list:
        """No more acquires; returns the actors to stop."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            return [s.actor for s in self.slots if s.actor is not None]
