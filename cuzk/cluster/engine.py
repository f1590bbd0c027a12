"""``RayEngine``: the Engine's API on a Ray cluster (docs/cluster.md).

The driver owns the queue: a :class:`cuzk.pipeline.core.SchedulerCore` with the Engine's
submit, request-id, deadline and priority logic (inherited from :class:`cuzk.Engine`).
Syntheses run as Ray tasks on the cluster's CPUs and leave their witnesses in the object store;
prover actors (one per GPU, ``num_gpus=1``; ``cpu_provers`` CPU ones on a cluster without GPUs)
keep keys resident in their own one-device Engine and prove; their events come back with each
reply and are merged into ``timeline`` with per-node clock offsets (:mod:`cuzk.cluster.clock`).

    >>> from cuzk.cluster import RayEngine
    >>> RayEngine.__mro__[1].__name__
    'Engine'
"""

from __future__ import annotations

import logging
import math
import numbers
import os
import threading
import time

from cuzk.cluster.clock import ClockOffset
from cuzk.cluster.actors import ActorStarter
from cuzk.cluster.dispatch import ClusterRoute, ProveWorker
from cuzk.cluster.nodes import NodeWatcher
from cuzk.cluster.pool import ProverPool
from cuzk.cluster.raylib import connect, require_ray, unwrap
from cuzk.cluster.remote import ProverActor, synthesize_task
from cuzk.cluster.timeline import ClusterTimeline
from cuzk.engine.circuit import key_kind
from cuzk.engine.engine import Engine
from cuzk.engine.requests import DEFAULT_RETENTION_S, RequestTable
from cuzk.engine.status import EngineStats, engine_metrics, engine_status
from cuzk.errors import ClusterError, EngineError, InputError
from cuzk.pipeline.core import SchedulerCore
from cuzk.pipeline.scheduler import ConcurrencyGate, Priority, check_int
from cuzk.prometheus import MetricsText
from cuzk.timeline.events import EventKind as K

__all__ = ["RayEngine"]

_log = logging.getLogger("cuzk.cluster")
_BACKENDS = ("auto", "cpu", "cuda")


class _Counters:
    def __init__(self):
        self._lock = threading.Lock()
        self.values = {"retries": 0, "resynthesized": 0}

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.values[name] = self.values.get(name, 0) + n


def _seconds(what: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < math.inf:
        raise InputError(f"{what} must be a number of seconds > 0, got {value!r}")
    return float(value)


class RayEngine(Engine):
    """:class:`cuzk.Engine` on a Ray cluster: same calls, proofs made by prover actors.

    Args:
        address: a Ray address (``"host:port"``, ``"ray://host:port"``, ``"auto"``), or None to
            start a local Ray; an already initialised Ray is reused either way.
        cpu_provers: prover actors on a cluster with no GPU (default 1).
        max_retries: retries of a unit whose worker, node or witness was lost (default 2).
        lookahead: witnesses that may wait for a prover (default: the number of prover actors).
        backend: the prover actors' backend, as ``cuzk.Engine(device=...)``: ``"auto"`` uses
            CUDA where the actor's GPU has it, the CPU elsewhere.
        prover_memory_budget: each actor Engine's memory budget (bytes, ``"auto"`` or None).
        timeline: a :class:`cuzk.cluster.ClusterTimeline` (a fresh one by default).
        request_retention_s: as in :class:`cuzk.Engine`.
        connect_timeout_s: how long an address may stay silent before ``ClusterError``.
        start_timeout_s: how long a prover actor may take to start (placement, imports).
        clock_skew: test hook: node id -> seconds added to that node's clock (docs/cluster.md).
        init_kwargs: extra ``ray.init`` arguments when this engine starts or joins Ray.
        node_poll_s: how often to look for GPU nodes that joined (seconds; None: never, the
            provers of the start are all there is). See :mod:`cuzk.cluster.nodes`.

    Raises:
        cuzk.errors.ClusterError: Ray missing, the address silent, no prover actor started.
        cuzk.errors.InputError: an argument out of range.
    """

    def __init__(self, address: str | None = None, *, cpu_provers: int = 1, max_retries: int = 2,
                 lookahead: int | None = None, backend: str = "auto", prover_memory_budget=None,
                 timeline: ClusterTimeline | None = None, request_retention_s: float = DEFAULT_RETENTION_S,
                 connect_timeout_s: float = 10.0, start_timeout_s: float = 120.0,
                 clock_skew: dict | None = None, init_kwargs: dict | None = None,
                 node_poll_s: float | None = 1.0):
        if address is not None and not isinstance(address, str):
            raise InputError(f"address must be a Ray address string or None, got {address!r}")
        if backend not in _BACKENDS:
            raise InputError(f"backend must be one of {_BACKENDS}, got {backend!r}")
        if timeline is not None and not isinstance(timeline, ClusterTimeline):
            raise InputError(f"timeline must be a cuzk.cluster.ClusterTimeline or None, got {type(timeline).__name__}")
        if isinstance(request_retention_s, bool) or not isinstance(request_retention_s, numbers.Real) \
                or not 0 <= request_retention_s < math.inf:
            raise InputError(f"request_retention_s must be a number of seconds >= 0, got {request_retention_s!r}")
        self.cpu_provers = check_int("cpu_provers", cpu_provers)
        self.max_retries = check_int("max_retries", max_retries, 0)
        self.connect_timeout_s = _seconds("connect_timeout_s", connect_timeout_s)
        self.start_timeout_s = _seconds("start_timeout_s", start_timeout_s)
        self.node_poll_s = None if node_poll_s is None else _seconds("node_poll_s", node_poll_s)
        self.skews = {str(k): int(round(float(v) * 1e9)) for k, v in (clock_skew or {}).items()}
        self.ray = require_ray()
        self._owns_ray = connect(address, self.connect_timeout_s, init_kwargs)
        # Engine's attributes its inherited submit/cancel/serve_status use
        self.backend, self.memory_budget, self.workers_per_device = "ray", None, 1
        self.device_tier = None  # device tiers live in each actor's own Engine
        self._key_cache, self._progress = None, None
        self._lock = threading.RLock()
        self._routes: dict[str, ClusterRoute] = {}
        self._requests = RequestTable(request_retention_s)
        self._closed = False
        self._server = None
        self.stats = EngineStats()
        self.counters = _Counters()
        self._backend_arg, self._prover_budget = backend, prover_memory_budget
        self._registrations: list[tuple] = []  # replayed on replacement and joining actors
        # held by register() across its fan-out and by an actor going live: a circuit reaches
        # every actor, started before it or after (cuzk/cluster/nodes.py)
        self._reg_lock = threading.RLock()
        self._provers: list[ProveWorker] = []
        self._clocks: dict[str, ClockOffset] = {}
        self._clock_lock = threading.Lock()
        self._nodes_at = 0.0
        self._alive: set[str] = set()
        try:
            self._start(lookahead, timeline)
        except BaseException:
            self._shutdown_ray()
            raise

    def _start(self, lookahead, timeline) -> None:
        ray = self.ray
        self.synth_task = ray.remote(num_returns=2, max_retries=0)(synthesize_task)
        self.starter = ActorStarter(self, ray.remote(ProverActor))
        self.pool = ProverPool(self.starter.spawn, self.node_alive, ready=self.starter.ready, stop=self.starter.stop)
        self.nodes = NodeWatcher(self, self.node_poll_s)
        self.nodes.add_new()
        if not self.pool.slots:
            for _ in range(self.cpu_provers):
                self.pool.add(None)
        self.devices = [s.name for s in self.pool.slots]
        tl = timeline if timeline is not None else ClusterTimeline()
        self._wall0, self._tl0 = time.time_ns(), tl.now_ns()  # the driver's wall clock on its timeline
        self._auto_lookahead = lookahead is None  # then it grows with the provers
        self.core = SchedulerCore(check_int("lookahead", len(self.pool.slots) if lookahead is None else lookahead, 0),
                                  tl, None, before_resolve=self._before_resolve)
        self.pool.start_all()
        if not self.pool.live():
            errors = "; ".join(f"{s.name}: {s.error}" for s in self.pool.slots)
            raise ClusterError(f"no prover actor started: {errors}")
        self.add_dispatchers(len(self.pool.slots))
        if self.node_poll_s is not None:
            self.nodes.start()

    def add_dispatchers(self, n: int) -> None:
        """Start ``cuzk-ray-N`` dispatcher threads until there are ``n`` (one per active slot)."""
        while len(self._provers) < n:
            t = ProveWorker(self, len(self._provers))
            self._provers = self._provers + [t]
            t.start()

    # -- actors -----------------------------------------------------------------------------------
    def node_alive(self, node: str | None) -> bool:
        """Whether Ray reports ``node`` alive (cached for half a second)."""
        if node is None:
            return True
        now = time.monotonic()
        if now - self._nodes_at > 0.5:
            self._alive = {n["NodeID"] for n in self.ray.nodes() if n.get("Alive")}
            self._nodes_at = now
        return node in self._alive

    # -- clocks and events -------------------------------------------------------------------------
    def clock_sample(self, node: str, t0: int, r0: int, r1: int, t1: int) -> ClockOffset:
        with self._clock_lock:
            c = self._clocks.get(node)
            if c is None:
                c = self._clocks[node] = ClockOffset.first(t0, r0, r1, t1)
            else:
                c.add(t0, r0, r1, t1)
            return ClockOffset(c.lo, c.hi, c.samples, c.resets)

    @property
    def timeline_base_ns(self) -> int:
        """Add to a driver wall-clock time (ns) to get the driver timeline's clock."""
        return self._tl0 - self._wall0

    def merge(self, slot, reply: dict, t0: int, t1: int, unit=None) -> None:
        """Put an actor's shipped events on the driver's timeline, offset-corrected."""
        clock = self.clock_sample(slot.node, t0, reply["r0"], reply["r1"], t1)
        tl = self.timeline
        base = self.timeline_base_ns
        for wall_ns, kind, _token, partition, detail, circuit in reply["events"]:
            job, part = (unit.job.id, unit.partition) if unit is not None and _token is not None else (None, partition)
            tl.record_at(clock.to_driver(wall_ns) + base, K(kind), job, part, slot.name, node=slot.node,
                         circuit=circuit, **detail)

    # -- registering -----------------------------------------------------------------------------
    def register(self, name: str, synthesizer, key, *, priority: Priority | int | str = "normal",
                 synthesis: str = "ray", concurrency: int | None = None) -> None:
        """Register a circuit on every prover actor (arguments as :meth:`cuzk.Engine.register`;
        ``synthesis`` is always Ray tasks, ``concurrency`` defaults to the number of provers and
        then grows with it). A key path is read on each node, with ``$NAME`` / ``${NAME}`` that
        node's environment variables (:func:`cuzk.cluster.remote.node_path`).

        Raises:
            cuzk.errors.ClusterError: the synthesizer or key cannot be serialised, or a live
                actor's node cannot read the key file (naming each such node and the path).
            cuzk.errors.InputError / KeyMismatchError: as the local Engine.
        """
        if not isinstance(name, str) or not name or len(name) > 200:
            raise InputError(f"circuit name must be a non-empty str (at most 200 chars), got {name!r}")
        if not callable(getattr(synthesizer, "synthesize", None)):
            raise InputError(f"circuit {name!r}: synthesizer {synthesizer!r} has no synthesize(**inputs) method")
        if synthesis not in ("ray", "threads", "processes"):
            raise InputError(f"circuit {name!r}: synthesis must be 'ray', got {synthesis!r}")
        priority = Priority.coerce(priority)
        auto = concurrency is None
        if not auto:
            concurrency = check_int("concurrency", concurrency)
        kind = self._key_kind(name, key)
        with self._lock:
            self._check_open()
            if name in self._routes:
                raise InputError(f"circuit {name!r} is already registered")
        synth_ref = self._put(name, "synthesizer", synthesizer)
        key_arg = os.fspath(key) if kind in ("params", "zkey") else self._put(name, "key", key)
        reg = (name, synth_ref, key_arg)
        with self._reg_lock:  # no actor goes live (nor do the defaults grow) until this is done
            live = self.pool.live()
            if kind in ("params", "zkey"):
                self.starter.check_key_everywhere(name, key_arg, live)
            try:
                self.ray.get([s.actor.register.remote(*reg) for s in live], timeout=self.start_timeout_s)
            except self.ray.exceptions.GetTimeoutError:
                raise ClusterError(f"circuit {name!r}: the prover actors did not register it within "
                                   f"{self.start_timeout_s:g} s") from None
            except Exception as exc:
                raise unwrap(exc) from None
            with self._lock:
                self._check_open()
                if auto:
                    concurrency = max(1, self.nodes.active())
                self._registrations.append(reg)
                route = ClusterRoute(self, name, synthesizer, synth_ref, key, kind=kind, priority=priority,
                                     concurrency=concurrency)
                route.auto_concurrency, route.gate = auto, ConcurrencyGate(concurrency)
                self._routes[name] = route
                self.stats.add_circuit(name)
            self.core.start_workers(route, synth_workers=concurrency, gate=route.gate)

    @staticmethod
    def _key_kind(name, key) -> str:
        # the key file need not exist on the driver: each prover actor checks its own node
        try:
            return key_kind(key, must_exist=False)
        except InputError as e:
            raise InputError(f"circuit {name!r}: {e}") from None

    def _put(self, name, what, obj):
        try:
            return self.ray.put(obj)
        except Exception as exc:  # pickling: TypeError, PicklingError, Ray's own wrappers
            raise ClusterError(f"circuit {name!r}: its {what} {type(obj).__name__} cannot be serialised for the "
                               f"cluster: {type(exc).__name__}: {str(exc)[:300]}") from exc

    def preload(self, name: str) -> None:
        """Load ``name``'s key on every live prover actor now (its load's error is raised here)."""
        with self._lock:
            self._check_open()
            route = self._route(name)
        for slot in [s for s in self.pool.live() if s.serves(name)]:
            t0 = time.time_ns()
            try:
                reply = self.ray.get(slot.actor.preload.remote(name))
            except Exception as exc:
                raise unwrap(exc) from None
            self.merge(slot, reply, t0, time.time_ns())
            route.tiers[slot.name] = reply["keys"].get(name, "cold")

    def evict(self, name: str) -> int:
        """Drop ``name``'s key on every prover actor; refused while it has queued or running work."""
        with self._lock:
            route = self._route(name)
            if self.core.busy(route):
                raise EngineError(f"circuit {name!r} has queued or running work: its key is in use")
        freed = sum(self.ray.get([s.actor.evict.remote(name) for s in self.pool.live() if s.serves(name)]))
        route.tiers.clear()
        return freed

    # -- status ---------------------------------------------------------------------------------
    def cluster_status(self) -> dict:
        slots = [s.status() for s in self.pool.slots]
        with self._clock_lock:
            clocks = {n: c.as_dict() for n, c in self._clocks.items()}
        return {"actors": slots, "restarts": sum(s["restarts"] for s in slots),
                "alive": sum(s["state"] in ("idle", "busy") for s in slots),
                **dict(self.counters.values), "max_retries": self.max_retries,
                "clock_offsets": clocks, "owns_ray": self._owns_ray, "nodes": self.nodes.status()}

    def status(self) -> dict:
        """:meth:`cuzk.Engine.status` plus ``cluster``: per actor its node, state, restarts,
        proofs, witnesses proved where they were made and circuits it cannot prove
        (``unavailable``); retries, re-syntheses, each node's clock offset (seconds, node minus
        driver) with its uncertainty, and ``nodes`` (the GPU nodes seen, slots that joined)."""
        st = engine_status(self)
        st["workers"] += [{"name": t.name, "kind": "prove", "device": None, "alive": t.is_alive(),
                           "state": "idle" if t.current is None else t.current.state,
                           "job": None if t.current is None else str(t.current.job.id),
                           "circuit": None if t.current is None else t.current.route.name} for t in self._provers]
        st["cluster"] = self.cluster_status()
        return st

    def metrics(self) -> str:
        """:meth:`cuzk.Engine.metrics` plus actor, restart, retry and clock-offset series."""
        c = self.cluster_status()
        out = MetricsText()
        out.gauge("cluster_actors_alive", "Prover actors alive.", c["alive"])
        states = {}
        for a in c["actors"]:
            states[a["state"]] = states.get(a["state"], 0) + 1
        for state, n in sorted(states.items()):
            out.gauge("cluster_actors", "Prover actor slots by state.", n, labels={"state": state})
        out.counter("cluster_actors_joined", "Prover slots added for nodes that joined after the start.",
                    c["nodes"]["joined"])
        out.counter("cluster_actor_restarts", "Prover actors replaced after they died.", c["restarts"])
        out.counter("cluster_retries", "Units retried after a worker, node or witness was lost.", c["retries"])
        out.counter("cluster_resynthesized", "Witnesses synthesized again after their node was lost.",
                    c["resynthesized"])
        for node, clk in c["clock_offsets"].items():
            out.gauge("cluster_clock_offset_seconds", "Node clock minus driver clock.", clk["offset_s"],
                      labels={"node": node})
        return engine_metrics(self) + out.render()

    # -- shutting down --------------------------------------------------------------------------
    def close(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """As :meth:`cuzk.Engine.close`, then stop the prover actors (and Ray, if this engine started it)."""
        with self._lock:
            if self._closed and not hasattr(self, "pool"):
                return
        if hasattr(self, "nodes"):
            self.nodes.stop()  # no slot joins a closing engine
        super().close(wait, cancel_futures=cancel_futures)

    def _release_after_close(self, wait: bool) -> None:
        # the actors hold this engine's keys; no local executors or key tiers to release
        if wait:
            self._stop_actors()
        else:
            threading.Thread(target=self._stop_actors, daemon=True, name="cuzk-ray-closer").start()

    def _stop_actors(self) -> None:
        for t in self._provers:
            if t is not threading.current_thread():
                t.join()
        for actor in self.pool.close():  # those still starting too: their start then fails at once
            self.starter.stop(actor)
        for t in list(self.pool.replacements):
            t.join(timeout=10)  # bounded: a start stuck in Ray gives up by itself (start_timeout_s)
        self._shutdown_ray()

    def _shutdown_ray(self) -> None:
        if getattr(self, "_owns_ray", False) and self.ray.is_initialized():
            self._owns_ray = False
            self.ray.shutdown()

    def __repr__(self) -> str:
        return f"<RayEngine actors={[s.name for s in self.pool.slots]} circuits={sorted(self._routes)}>"
