"""Cluster membership for a RayEngine: GPU nodes that join after the engine started get prover
slots and actors; CPU provers retire once a GPU actor can take their place (docs/cluster.md,
"Nodes that join").

A :class:`NodeWatcher` thread (``cuzk-ray-nodes``) asks Ray for its nodes every ``poll_s``
seconds (one GCS call; ~1 s keeps a joiner's wait short next to its actor's own start, seconds
of imports). For each live node it has not seen with ``GPU`` resources it adds that many pinned
slots and starts their actors in the background, as replacements start: clock samples, every
registered circuit replayed; a slot goes live only when it has caught up with every
registration (:meth:`cuzk.cluster.engine.RayEngine.register` and the start share a lock). While
they start, the other actors keep taking jobs. Defaults that follow the number of provers grow
with it: a circuit's synthesis ``concurrency`` and the channel's ``lookahead`` (when the caller
gave none), and one dispatcher thread per active slot. They never shrink.

Why CPU provers retire: ``cpu_provers`` are the fallback of a cluster with no GPU. A proof on a
CPU takes many times a GPU's, so once a GPU actor is up *with every registered circuit* (no key
it could not read), a job given to a CPU prover would only finish later; and an engine's provers
should depend on the cluster it runs on, not on whether the GPU node came before or after it
started. Idle ones stop at once, busy ones after their proof. They do not come back if every GPU
node leaves later: jobs then fail with "no prover actor is alive" until a GPU node joins.

    >>> NodeWatcher.gpu_nodes([{"NodeID": "a", "Alive": True, "Resources": {"GPU": 2.0}},
    ...                        {"NodeID": "b", "Alive": False, "Resources": {"GPU": 1.0}},
    ...                        {"NodeID": "c", "Alive": True, "Resources": {"CPU": 8.0}}])
    {'a': 2}
"""

from __future__ import annotations

import logging
import threading

from cuzk.cluster.pool import COMING, LIVE

__all__ = ["NodeWatcher"]

_log = logging.getLogger("cuzk.cluster")


class NodeWatcher(threading.Thread):
    """See the module docstring; ``engine`` is the :class:`cuzk.cluster.RayEngine` it serves,
    ``poll_s`` None for no watching (the provers of the start stay all there is)."""

    def __init__(self, engine, poll_s: float | None):
        super().__init__(name="cuzk-ray-nodes", daemon=True)
        self.engine, self.poll_s = engine, poll_s
        self.known: dict[str, int] = {}  #: node -> GPUs it has slots for
        self.joined = 0  #: slots added after the start
        self.polls = 0
        self.error: str | None = None
        self._halt = threading.Event()

    @staticmethod
    def gpu_nodes(nodes: list[dict]) -> dict[str, int]:
        """node id -> whole GPUs, of the live nodes ``ray.nodes()`` lists with any."""
        gpus = {n["NodeID"]: int(n.get("Resources", {}).get("GPU", 0)) for n in nodes if n.get("Alive")}
        return {node: k for node, k in sorted(gpus.items()) if k > 0}

    def add_new(self, nodes: list[dict] | None = None) -> list:
        """Add a pinned slot per GPU of each node not seen yet (or with more GPUs than seen);
        returns the new slots, not started."""
        gpus = self.gpu_nodes(self.engine.ray.nodes() if nodes is None else nodes)
        added = []
        for node, k in gpus.items():
            for _ in range(k - self.known.get(node, 0)):
                added.append(self.engine.pool.add(node))
            self.known[node] = max(k, self.known.get(node, 0))
        return added

    def active(self) -> int:
        """Slots that serve or will: neither dead nor retired."""
        return sum(s.state in LIVE + COMING for s in self.engine.pool.slots)

    # -- the thread ---------------------------------------------------------------------------
    def run(self) -> None:
        while not self._halt.wait(self.poll_s):
            try:
                self.poll()
                self.error = None
            except Exception as exc:  # Ray busy or going away: try again at the next poll
                self.error = f"{type(exc).__name__}: {str(exc)[:200]}"
                _log.warning("cuzk cluster: node poll failed: %s", self.error)

    def stop(self) -> None:
        """No more polls; returns once the thread exited (at most one poll's time)."""
        self._halt.set()
        if self.is_alive() and self is not threading.current_thread():
            self.join()

    def poll(self) -> None:
        e = self.engine
        nodes = e.ray.nodes()
        self.polls += 1
        alive = {n["NodeID"] for n in nodes if n.get("Alive")}
        with e._reg_lock:  # register() sizes its defaults under the same lock
            if e._closed or self._halt.is_set():
                return
            added = self.add_new(nodes)
            if added:
                self.joined += len(added)
                _log.info("cuzk cluster: %d prover slot(s) for joining node(s): %s", len(added),
                          ", ".join(f"{s.name}@{s.node}" for s in added))
                self._grow()
        for s in added:
            e.pool.start(s)
        for node in {s.node for s in e.pool.slots if s.pinned} - alive:  # dead now, not at its next job
            e.pool.node_left(node)
        self._retire_cpu_provers()

    def _grow(self) -> None:
        """Defaults that follow the number of provers, and the dispatchers (under ``_reg_lock``)."""
        e = self.engine
        n = self.active()
        e.devices = [s.name for s in e.pool.slots]
        for route in e._routes.values():
            if route.auto_concurrency and route.concurrency < n:
                more, route.concurrency = n - route.concurrency, n
                route.gate.set_limit(n)
                e.core.start_workers(route, synth_workers=more, gate=route.gate)
        if e._auto_lookahead and e.core.channel.capacity < n:
            e.core.lookahead = n
            e.core.channel.set_capacity(n)
        e.add_dispatchers(n)

    def _retire_cpu_provers(self) -> None:
        slots = self.engine.pool.slots
        cpu = [s for s in slots if not s.pinned and s.state in LIVE + COMING]
        if cpu and any(s.pinned and s.state in LIVE and not s.unavailable for s in slots):
            gone = self.engine.pool.retire(cpu)
            if gone:
                _log.info("cuzk cluster: GPU actors are up: CPU provers %s retire", [s.name for s in gone])

    def status(self) -> dict:
        return {"poll_s": self.poll_s, "polls": self.polls, "gpu_nodes": dict(self.known), "joined": self.joined,
                "error": self.error}
