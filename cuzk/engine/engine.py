"""``Engine``: one in-process proving service for many circuits.

It composes :class:`cuzk.pipeline.core.SchedulerCore` (the one scheduling mechanism, shared
with :class:`cuzk.Pipeline`) with a route per registered circuit, synthesis workers per
circuit, prove workers per device, a key cache, one memory budget and operator status. Where
keys sit in memory (``preload``, ``evict``, making room under the budgets) is
:mod:`cuzk.engine.engine_keys`, a mixin of the Engine's.

    >>> import cuzk
    >>> class Square:                                  # any synthesize(**inputs) / prove(w) objects
    ...     def synthesize(self, x): return x * x
    >>> class Echo:
    ...     def prove(self, w): return ("proof", w)
    >>> with cuzk.Engine(device="cpu", memory_budget=None) as engine:
    ...     engine.register("square", Square(), Echo())
    ...     f = engine.submit("square", {"x": 3}, priority="critical", request_id="req-1")
    ...     f.result(timeout=10), f.job_id, engine.submit("square", {"x": 3}, request_id="req-1") is f
    (('proof', 9), 'req-1', True)
"""

from __future__ import annotations

import itertools
import math
import numbers
import threading
from concurrent.futures import Future
from typing import Any, Callable, Hashable, Mapping, Sequence

from cuzk.engine.budget import resolve_budget
from cuzk.engine.circuit import CircuitRoute
from cuzk.engine.devices import DeviceTier
from cuzk.engine.engine_keys import EngineKeys
from cuzk.engine.requests import DEFAULT_RETENTION_S, RequestTable
from cuzk.engine.status import EngineStats, engine_metrics, engine_status
from cuzk.engine.timings import timings_of
from cuzk.errors import BackendUnavailableError, EngineError, InputError, MemoryBudgetError, PipelineClosedError
from cuzk.pipeline.core import ProofFuture, SchedulerCore
from cuzk.pipeline.jobs import AutoJobId
from cuzk.pipeline.scheduler import Priority, check_int
from cuzk.timeline.recorder import Timeline

__all__ = ["Engine"]

_DEVICES = ("auto", "cpu", "cuda")
_SYNTHESIS = ("threads", "processes")


def _deadline(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InputError(f"deadline must be a time.time() timestamp (a finite number) or None, got {value!r}")
    return float(value)


def _close_after(threads, executors, release) -> None:
    for t in threads:
        if t is not threading.current_thread():
            t.join()
    for ex in executors:
        ex.close()
    release()


class Engine(EngineKeys):
    """Prove many circuits on shared workers, with keys cached in tiers under one memory budget.

    Args:
        device: ``"auto"`` (CUDA if usable, else the CPU), ``"cpu"`` or ``"cuda"``, as in
            :class:`cuzk.GpuProver`.
        devices: CUDA device ids to prove on (default ``[0]``); each key is made resident once
            per device that proves it. Not allowed with the CPU backend.
        workers_per_device: prove workers per device (default 2 on CUDA, so one job's CPU tail
            overlaps the next job's kernels; 1 on the CPU, where workers share the cores).
        memory_budget: bytes for host-tier keys + registered PCEs + synthesized witnesses in
            flight; ``"auto"`` (available memory minus a safety margin, see
            :mod:`cuzk.engine.budget`) or None for no budget.
        device_budget: bytes of keys each CUDA device may hold resident; ``"auto"`` (the
            device's memory minus a margin for proofs, see :mod:`cuzk.engine.devices`) or None.
        timeline: where events go (a fresh :class:`cuzk.Timeline` by default).
        lookahead: synthesized jobs that may wait for a prove worker.
        request_retention_s: how long a resolved request id still returns its future.
        key_cache: a :class:`cuzk.engine.keycache.KeyCache` or its directory (default:
            ``$CUZK_CACHE_DIR``, else the user's cache directory).
        key_cache_max_bytes: the cache's size cap when the engine makes the KeyCache (bytes, a
            size such as ``"100G"``, ``"unlimited"``; None: ``$CUZK_CACHE_MAX_BYTES``, else half
            the filesystem: :mod:`cuzk.engine.keycache_cap`).
        progress: ``progress(circuit, stage, done, total)`` during a key's first (checked) read.

    Raises:
        cuzk.errors.InputError: an argument out of range; BackendUnavailableError: ``"cuda"``
            asked for where it cannot run.
    """

    _auto_ids = None  #: numbers of jobs submitted without a request_id (AutoJobId)

    def __init__(self, device: str = "auto", *, devices: Sequence[int] | None = None,
                 workers_per_device: int | None = None, memory_budget: int | str | None = "auto",
                 timeline: Timeline | None = None, lookahead: int = 1,
                 request_retention_s: float = DEFAULT_RETENTION_S, key_cache=None,
                 progress: Callable | None = None, device_budget: int | str | None = "auto",
                 key_cache_max_bytes: int | str | None = None):
        if device not in _DEVICES:
            raise InputError(f"device must be one of {_DEVICES}, got {device!r}")
        if timeline is not None and not isinstance(timeline, Timeline):
            raise InputError(f"timeline must be a cuzk.Timeline or None, got {type(timeline).__name__}")
        if progress is not None and not callable(progress):
            raise InputError(f"progress must be callable, got {progress!r}")
        if isinstance(request_retention_s, bool) or not isinstance(request_retention_s, numbers.Real) \
                or not 0 <= request_retention_s < math.inf:
            raise InputError(f"request_retention_s must be a number of seconds >= 0, got {request_retention_s!r}")
        self.backend = self._backend(device)
        self.devices = self._devices(devices)
        workers = workers_per_device if workers_per_device is not None else (2 if self.backend == "cuda" else 1)
        self.workers_per_device = check_int("workers_per_device", workers)
        self.memory_budget = resolve_budget(memory_budget)
        self.device_tier = DeviceTier(self.devices, device_budget) if self.backend == "cuda" else None
        self._key_cache = key_cache
        self._key_cache_max_bytes = key_cache_max_bytes
        if key_cache_max_bytes is not None:
            from cuzk.engine.keycache_cap import resolve_cap

            resolve_cap(key_cache_max_bytes, ".")  # InputError now, not at the first key load
        self._progress = progress
        self._lock = threading.RLock()
        self._routes: dict[str, CircuitRoute] = {}
        self._requests = RequestTable(request_retention_s)
        self._closed = False
        self.stats = EngineStats()
        self.core = SchedulerCore(check_int("lookahead", lookahead, 0), timeline, self.memory_budget,
                                  before_resolve=self._before_resolve)
        if self.memory_budget is not None:
            self.core.queue.on_blocked = self.relieve_admission
        self._server = None
        for dev in self.devices:
            self.core.start_workers(None, prove_workers=self.workers_per_device, device=dev)

    @staticmethod
    def _backend(device: str) -> str:
        from cuzk.prover import cuda_status

        if device == "cpu":
            return "cpu"
        usable, reason = cuda_status()
        if device == "cuda" and not usable:
            raise BackendUnavailableError(f"device='cuda' but CUDA cannot be used here: {reason}")
        return "cuda" if usable else "cpu"

    def _devices(self, devices) -> list:
        if devices is None:
            return [0] if self.backend == "cuda" else [None]
        if self.backend != "cuda":
            raise InputError("devices= lists CUDA device ids; the CPU backend has none")
        try:
            ids = list(devices)
        except TypeError:
            raise InputError(f"devices must be a list of CUDA device ids, got {devices!r}") from None
        if not ids or len(set(ids)) != len(ids):
            raise InputError(f"devices must be a non-empty list of distinct ids, got {devices!r}")
        return [check_int("device id", d, 0) for d in ids]

    # -- properties ---------------------------------------------------------------------------
    @property
    def timeline(self) -> Timeline:
        """The engine's :class:`cuzk.Timeline` (every circuit's events, with their circuit)."""
        return self.core.timeline

    @property
    def key_cache(self):
        """The :class:`cuzk.engine.keycache.KeyCache` key files are loaded through (made on first use)."""
        from cuzk.engine.keycache import KeyCache

        with self._lock:
            if not isinstance(self._key_cache, KeyCache):
                self._key_cache = KeyCache(self._key_cache, max_bytes=self._key_cache_max_bytes)
            return self._key_cache

    def progress_for(self, name: str):
        if self._progress is None:
            return None
        fn = self._progress
        return lambda stage, done, total: fn(name, stage, done, total)

    def circuits(self) -> tuple[str, ...]:
        """Registered circuit names."""
        return tuple(self._routes)

    # -- registering --------------------------------------------------------------------------
    def register(self, name: str, synthesizer, key, *, priority: Priority | int | str = "normal",
                 synthesis: str = "threads", concurrency: int = 1, precompute: int | str | None = None,
                 ones_blocks: int | None = None) -> None:
        """Register a circuit: its synthesizer and its key (loads nothing).

        Args:
            name: the circuit's name in submits, status, metrics and the timeline.
            synthesizer: any object with ``synthesize(**inputs)`` (a :class:`cuzk.Synthesizer`).
            key: a :class:`cuzk.groth16.ProvingKey`, a path to a bellperson ``.params`` file
                (density from the synthesizer's R1CS) or a snarkjs ``.zkey``, or any object
                with ``prove(synthesized)`` (a custom prover).
            priority: the default priority of this circuit's jobs.
            synthesis: ``"threads"`` (the Numba synthesizer releases the GIL) or
                ``"processes"`` (for synthesizers that hold it; see
                :mod:`cuzk.engine.executors`).
            concurrency: syntheses of this circuit at once.
            precompute: fixed-base tables for the key's MSMs, CPU backend only: None, ``"auto"``
                or an int of bytes; counted in the budget and evicted with the key, stored
                beside its cache entry (docs/engine.md, "Fixed-base tables").
            ones_blocks: CPU backend only: block sums of the key's A, B and L query points in
                blocks of this many rows (2, 4 or 8), for the bit-aware MSMs of witnesses of
                bits (PoRep, SnapDeals): 1/``ones_blocks`` of those queries' bytes, counted in
                the budget, built when the key loads and evicted with it
                (:class:`cuzk.GpuProver`'s ``ones_blocks``). None (default): none.

        Raises:
            cuzk.errors.InputError: a bad argument or a name already registered;
            cuzk.errors.KeyMismatchError: a ProvingKey of another circuit;
            cuzk.errors.MemoryBudgetError: the PCE alone exceeds the budget;
            cuzk.errors.EngineError: the engine is closed.
        """
        if not isinstance(name, str) or not name or len(name) > 200:
            raise InputError(f"circuit name must be a non-empty str (at most 200 chars), got {name!r}")
        if not callable(getattr(synthesizer, "synthesize", None)):
            raise InputError(f"circuit {name!r}: synthesizer {synthesizer!r} has no synthesize(**inputs) method")
        if synthesis not in _SYNTHESIS:
            raise InputError(f"circuit {name!r}: synthesis must be one of {_SYNTHESIS}, got {synthesis!r}")
        priority = Priority.coerce(priority)
        concurrency = check_int("concurrency", concurrency)
        with self._lock:
            self._check_open()
            if name in self._routes:
                raise InputError(f"circuit {name!r} is already registered")
            route = CircuitRoute(self, name, synthesizer, synthesizer, key, priority=priority,
                                 synthesis=synthesis, concurrency=concurrency, precompute=precompute,
                                 ones_blocks=ones_blocks)
            if self.memory_budget is not None and route.pce_bytes > self.memory_budget:
                raise MemoryBudgetError(f"circuit {name!r}: its PCE takes {route.pce_bytes} bytes, over the "
                                        f"whole memory budget of {self.memory_budget} bytes")
            if self.memory_budget is not None:  # what no eviction frees: with it no job could ever run
                fixed, held = route.fixed_bytes(), self.fixed_bytes()
                if fixed + held > self.memory_budget:
                    raise MemoryBudgetError(
                        f"circuit {name!r}: its PCE and registered key take {fixed} bytes, with the {held} bytes "
                        f"of the circuits registered before (PCEs and registered keys, never evicted) "
                        f"{fixed + held} bytes, over the memory budget of {self.memory_budget} bytes")
            if synthesis == "processes":
                from cuzk.engine.executors import make_executor

                route.executor = make_executor("processes", synthesizer, workers=concurrency)
            self._routes[name] = route
            self.core.queue.reserve(route.pce_bytes)
            if route.kind == "object":  # the host's ProvingKey is in memory already: count it
                self.resize_reservation(route, route.estimated_key_bytes())
            self.stats.add_circuit(name)
        self.core.start_workers(route, synth_workers=concurrency)

    def _route(self, name) -> CircuitRoute:
        route = self._routes.get(name) if isinstance(name, str) else None
        if route is None:
            raise InputError(f"unknown circuit {name!r}; registered: {sorted(self._routes)}")
        return route

    def _check_open(self) -> None:
        if self._closed:
            raise EngineError("the engine is closed")

    # -- submitting -----------------------------------------------------------------------------
    def submit(self, name: str, inputs: Mapping[str, Any], *, priority: Priority | int | str | None = None,
               request_id: Hashable = None, deadline: float | None = None) -> ProofFuture:
        """Queue one proof of circuit ``name``; returns its future (``job_id`` = ``request_id``
        when given, else an :class:`cuzk.pipeline.jobs.AutoJobId` ``#<n>`` equal to no caller's
        id; ``timings`` set before it resolves).

        Args:
            priority: LOW/NORMAL/HIGH/CRITICAL (name, int or :class:`Priority`); default the
                circuit's.
            request_id: makes the submit idempotent: an id the engine still knows returns the
                same future and proves once.
            deadline: a ``time.time()`` timestamp; a job still queued after it fails with
                :class:`cuzk.errors.DeadlineExceededError` (a job already proving finishes).

        Raises:
            cuzk.errors.InputError: unknown circuit, bad inputs/priority/deadline, or a request
                id known for another circuit or other inputs.
            cuzk.errors.MemoryBudgetError: the job can never fit the memory budget.
            cuzk.errors.EngineError: the engine is closed.
        """
        if not isinstance(inputs, Mapping):
            raise InputError(f"inputs must be a mapping of synthesize() keyword arguments, got {type(inputs).__name__}")
        return self._submit(name, [dict(inputs)], False, priority, request_id, deadline)

    def submit_partitioned(self, name: str, partitions: Sequence[Mapping[str, Any]], *,
                           priority: Priority | int | str | None = None, request_id: Hashable = None,
                           deadline: float | None = None) -> ProofFuture:
        """Queue a job of several partitions of circuit ``name``; the result is the list of
        partition proofs in order (one failing partition fails the job). Arguments and errors
        as :meth:`submit`."""
        try:
            parts = list(partitions) if not isinstance(partitions, Mapping) else None
        except TypeError:
            parts = None
        if not parts or not all(isinstance(p, Mapping) for p in parts):
            raise InputError("submit_partitioned needs a non-empty sequence of input mappings")
        return self._submit(name, [dict(p) for p in parts], True, priority, request_id, deadline)

    def _submit(self, name, inputs_list, partitioned, priority, request_id, deadline) -> ProofFuture:
        deadline = _deadline(deadline)
        # Listeners hear of the submit only once the engine's own bookkeeping (the request id,
        # the stats callback) is done: one that submits or cancels from JOB_SUBMIT saw a request
        # table without this job, and its own entry was then overwritten by this one.
        hold = self.timeline.deferred_listeners()
        hold.__enter__()
        try:
            future, new = self._submit_held(name, inputs_list, partitioned, priority, request_id, deadline)
        except BaseException:
            hold.__exit__(None, None, None)
            raise
        try:
            hold.__exit__(None, None, None)
        except BaseException:  # a listener's Ctrl-C on the caller's thread: it never gets the future
            if new:
                future.cancel()
            raise
        return future

    def _submit_held(self, name, inputs_list, partitioned, priority, request_id, deadline):
        with self._lock:
            self._check_open()
            route = self._route(name)
            priority = route.priority if priority is None else Priority.coerce(priority)
            key = inputs_list if partitioned else inputs_list[0]
            if request_id is not None:
                known = self._requests.lookup(request_id, name, key)
                if known is not None:
                    self.stats.deduplicated(name)
                    return known, False
            why = self.never_fits(route)
            if why is not None:
                raise MemoryBudgetError(why)
            if request_id is not None:
                job_id = request_id
            else:
                if self._auto_ids is None:  # a subclass may set up its own attributes (cuzk/cluster/engine.py)
                    self._auto_ids = itertools.count(1)
                job_id = AutoJobId(next(self._auto_ids))
            self.stats.submitted(name)  # before its workers can count it ended
            try:
                future = self.core.submit_units(route, inputs_list, priority, job_id,
                                                partitioned=partitioned, deadline=deadline, nbytes=route.unit_bytes)
            except BaseException as e:
                self.stats.submitted(name, -1)
                if isinstance(e, PipelineClosedError):
                    raise EngineError("the engine is closed") from e
                raise
            if request_id is not None:
                self._requests.add(request_id, name, key, future)
            future.add_done_callback(lambda f, route=route: self._job_ended(route, f))
        return future, True

    def _job_ended(self, route: CircuitRoute, future: Future) -> None:
        if future.cancelled():  # a delivered or failed job was counted before it resolved
            self.stats.job_ended(route.name, "cancelled")

    def _before_resolve(self, job) -> None:
        # Counted here, before the future resolves, not in a done-callback: the job has left the
        # core's table already, and a status() right after result() must still count it.
        outcome = "failed" if any(u.state == "failed" for u in job.units) else "done"
        timings = None
        try:
            timings = job.future.timings = timings_of(job, self.timeline.now_ns())
        finally:
            self.stats.job_ended(job.route.name, outcome, timings)

    def cancel(self, job: ProofFuture | Hashable) -> bool:
        """Cancel a queued job (its future, or its request/job id); False once it started."""
        return self.core.cancel(job)

    # -- status ---------------------------------------------------------------------------------
    def status(self) -> dict:
        """A JSON-serialisable snapshot for operators: per circuit (queued, synthesizing,
        waiting_for_gpu, proving, done, failed, cancelled, deduplicated), keys (tier, bytes, last
        use), the memory budget's use, and per prove worker its state and current job."""
        return engine_status(self)

    def metrics(self) -> str:
        """Prometheus text: ``cuzk_`` counters and latency histograms per circuit, gauges."""
        return engine_metrics(self)

    def serve_status(self, port: int = 0, host: str = "127.0.0.1", *, status: Callable[[], dict] | None = None,
                     metrics: Callable[[], str] | None = None, **limits) -> tuple[str, int]:
        """Serve ``/status`` (JSON) and ``/metrics`` (Prometheus) on a background thread until
        :meth:`close`; returns the bound ``(host, port)``. ``status``/``metrics``: what to serve
        instead of :meth:`status`/:meth:`metrics` (a host that wraps the engine, such as
        ``cuzk serve``, adds its own figures to the engine's). ``limits``: ``timeout``,
        ``max_connections``, ``request_timeout`` of :func:`cuzk.engine.status_http.serve_status`."""
        from cuzk.engine.status_http import serve_status

        for name, fn in (("status", status), ("metrics", metrics)):
            if fn is not None and not callable(fn):
                raise InputError(f"{name} must be callable or None, got {fn!r}")
        with self._lock:
            self._check_open()
            if self._server is not None:
                return self._server.address
            self._server = serve_status(status or self.status, metrics or self.metrics, port=port, host=host, **limits)
            return self._server.address

    # -- shutting down --------------------------------------------------------------------------
    def close(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop accepting jobs; queued jobs are drained (or cancelled with ``cancel_futures``),
        running ones finish. Stops the status server and synthesis processes. Idempotent."""
        with self._lock:
            self._closed = True
            server, self._server = self._server, None
        try:
            self.core.close(wait, cancel_futures=cancel_futures)
        finally:
            if server is not None:
                server.close()
            self._release_after_close(wait)

    def _release_after_close(self, wait: bool) -> None:
        """What close() frees once intake has stopped (a subclass with other resources overrides it)."""
        executors = [r.executor for r in self._routes.values() if r.executor is not r.synthesizer]
        workers = self.core.threads()
        if not wait or threading.current_thread() in workers:
            # running jobs still use their keys and synthesis processes: release them once the workers are done
            threading.Thread(target=_close_after, args=(workers, executors, self._release_keys), daemon=True,
                             name="cuzk-engine-closer").start()
        else:
            _close_after([], executors, self._release_keys)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close(wait=True)

    def __repr__(self) -> str:
        return f"<Engine {self.backend} devices={self.devices} circuits={sorted(self._routes)}>"
