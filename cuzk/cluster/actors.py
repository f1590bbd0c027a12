"""Starting a RayEngine's prover actors: placement, clock samples, the registered circuits.

:class:`ActorStarter` gives the :class:`cuzk.cluster.pool.ProverPool` its ``spawn``, ``ready``
and ``stop``. An actor for a slot is pinned to the slot's node (``num_gpus=1``; a CPU prover
goes anywhere), pinged three times for its node's clock offset, then sent every registered
circuit. A circuit registered while it starts is sent inside ``ready``, under the engine's
registration lock, just before the pool marks the slot live: a slot is live only with every
circuit (or with the reason it has not got one), whether it started before a registration, at
the same time, or after (a replacement, a node that joined). Lock order: the engine's
registration lock, then its engine lock, then the pool's.

A key file is read on the actor's node (``$NAME`` expanded there:
:func:`cuzk.cluster.remote.node_path`). At :meth:`RayEngine.register` every live actor must read
it, or the call fails naming the nodes that cannot. An actor that starts later on a node that
cannot read it (it joined, or the file went away) still starts: that circuit is left out of it
(``slot.unavailable`` names the path and node, ``status()`` shows it) and its jobs go to the
other actors, so no job fails for that node.
"""

from __future__ import annotations

import contextlib
import logging
import time

from cuzk.cluster.raylib import unwrap
from cuzk.errors import ClusterError

__all__ = ["ActorStarter"]

_log = logging.getLogger("cuzk.cluster")


class ActorStarter:
    """See the module docstring; ``actor_cls`` is ``ray.remote(ProverActor)``."""

    def __init__(self, engine, actor_cls):
        self.engine, self.actor_cls = engine, actor_cls

    def spawn(self, slot):
        """Start ``slot``'s actor and return its handle once it answers and has the circuits
        registered so far.

        Raises:
            cuzk.errors.ClusterError: it did not start within ``start_timeout_s`` (naming it).
        """
        e = self.engine
        ray = e.ray
        opts = {"max_restarts": 0, "max_concurrency": 4}
        if slot.pinned:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            opts.update(num_gpus=1, num_cpus=0,
                        scheduling_strategy=NodeAffinitySchedulingStrategy(slot.node, soft=False))
        else:
            opts.update(num_cpus=0)
        actor = self.actor_cls.options(**opts).remote(slot.name, e._backend_arg, e._prover_budget, e.skews)
        slot.pending, slot.unavailable = actor, {}
        try:
            info = ray.get(actor.info.remote(), timeout=e.start_timeout_s)
            for _ in range(3):
                t0 = time.time_ns()
                r = ray.get(actor.clock.remote(), timeout=e.start_timeout_s)
                e.clock_sample(info["node"], t0, r, r, time.time_ns())
            slot.info, slot.node = info, info["node"]
            for reg in list(e._registrations):  # any registered meanwhile: ready()
                self.replay(slot, actor, reg)
        except BaseException as exc:
            self.stop(actor)
            raise ClusterError(f"prover actor {slot.name} did not start on node {slot.node}: "
                               f"{type(exc).__name__}: {str(exc)[:300]}") from exc
        return actor

    @contextlib.contextmanager
    def ready(self, slot, actor):
        """The pool marks ``slot`` live inside this block: no register() runs in between, and
        the circuits registered since :meth:`spawn` read the list are sent first."""
        e = self.engine
        with e._reg_lock:
            have = set(e.ray.get(actor.keys.remote(), timeout=e.start_timeout_s))
            for reg in list(e._registrations):
                if reg[0] not in have and reg[0] not in slot.unavailable:
                    self.replay(slot, actor, reg)
            yield

    def replay(self, slot, actor, reg) -> None:
        """Register ``reg`` on a starting actor; a key its node cannot read (or a registration
        its Engine refuses) leaves that circuit out of this actor only."""
        e = self.engine
        name, _, key = reg
        why = e.ray.get(actor.check_key.remote(key), timeout=e.start_timeout_s) if isinstance(key, str) else None
        if why is None:
            try:
                e.ray.get(actor.register.remote(*reg), timeout=e.start_timeout_s)
                return
            except e.ray.exceptions.RayTaskError as exc:  # the actor lives; its Engine said no
                err = unwrap(exc)
                why = f"{type(err).__name__}: {str(err)[:300]}"
        slot.unavailable[name] = why
        _log.warning("cuzk cluster: %s on node %s does not prove circuit %r: %s", slot.name, slot.node, name, why)

    def stop(self, actor) -> None:
        try:
            self.engine.ray.kill(actor)
        except Exception:
            _log.debug("cuzk cluster: kill of an actor failed", exc_info=True)

    def check_key_everywhere(self, name: str, path: str, live) -> None:
        """Every actor of ``live`` reads ``path`` on its node, or ClusterError naming those
        nodes and why (one line per node, not per actor)."""
        e = self.engine
        try:
            replies = e.ray.get([s.actor.check_key.remote(path) for s in live], timeout=e.start_timeout_s)
        except e.ray.exceptions.GetTimeoutError:
            raise ClusterError(f"circuit {name!r}: the prover actors did not check its key {path!r} within "
                               f"{e.start_timeout_s:g} s") from None
        why = list(dict.fromkeys(w for w in replies if w))
        if why:
            nodes = sorted({s.node for s, w in zip(live, replies) if w})
            raise ClusterError(f"circuit {name!r}: {len(nodes)} node(s) cannot read its key ({', '.join(nodes)}): "
                               f"{'; '.join(why)}")
