"""What runs on the cluster's worker processes: the synthesis task and the prover actor.

Both are plain Python here; :mod:`cuzk.cluster.engine` wraps them with ``ray.remote`` at run
time (so this module imports without Ray). Times they report are the node's wall clock
(``time.time_ns()``) plus an optional injected skew (the test hook of docs/cluster.md); the
driver turns them into its own clock with :mod:`cuzk.clock`'s offsets.

A :class:`ProverActor` is a one-device :class:`cuzk.Engine` kept warm: registered circuits
with their keys in the Engine's tiers (loaded once, on the actor's node), and a proof is a
job whose "synthesis" hands over the witness that arrived through the object store. The
local Engine stamps KEY_LOAD_*, GPU_START/GPU_END and prover sub-spans in the actor; they go
back to the driver with each reply, in one batch per call.

    >>> w = Passthrough(object()).synthesize(witness=[1, 2])
    >>> w
    [1, 2]
"""

from __future__ import annotations

import os
import re
import threading
import time

__all__ = ["Passthrough", "ProverActor", "synthesize_task", "node_clock", "node_path", "SHIPPED_KINDS"]

#: the kinds an actor ships: what happens there and nowhere else
SHIPPED_KINDS = frozenset({"KEY_LOAD_START", "KEY_LOAD_END", "GPU_START", "GPU_END", "SPAN_START", "SPAN_END",
                           "KEY_EVICT"})


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def node_clock(skews: dict | None, node: str):
    """This node's clock in ns: wall time plus the skew injected for ``node`` (0 normally)."""
    skew = int((skews or {}).get(node, 0))
    return lambda: time.time_ns() + skew


_VAR = re.compile(r"\$(\w+)|\$\{([^}]*)\}")


def node_path(path: str, environ=None) -> tuple[str, list[str]]:
    """A registered key path as this node sees it: ``$NAME`` / ``${NAME}`` are this node's
    environment variables (nodes that mount keys in different places set, e.g., ``CUZK_KEYS``
    each to their own folder). Returns the path and the names of the variables that are not set
    here (left in the path as written).

        >>> node_path("$CUZK_KEYS/a.params", {"CUZK_KEYS": "/mnt/k"})
        ('/mnt/k/a.params', [])
        >>> node_path("${NOPE}/a.params", {})
        ('${NOPE}/a.params', ['NOPE'])
    """
    env = os.environ if environ is None else environ
    unset = [a or b for a, b in _VAR.findall(path) if (a or b) not in env]
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), path), unset


def synthesize_task(synthesizer, inputs: dict, skews: dict | None):
    """Synthesize one unit; returns ``(witness, meta)`` (two object refs on the driver: the
    witness stays in the object store of this node, the driver reads only ``meta``).

    ``meta`` holds what the driver needs to stamp SYNTH_START/SYNTH_END as this worker saw
    them: the node, the worker's pid, the node-clock times ``r0``/``r1`` of the synthesis and
    the CPU clocks at both ends. The synthesizer's own exception comes back in ``meta["error"]``
    (the witness is then None), so a failed synthesis is stamped too."""
    node = _node_id()
    now = node_clock(skews, node)
    cpu0 = (time.thread_time_ns(), time.process_time_ns())
    r0 = now()
    witness = error = None
    try:
        witness = synthesizer.synthesize(**inputs)
    except Exception as exc:  # the job's own fault: reported, never retried
        error = _portable(exc)
    r1 = now()
    cpu1 = (time.thread_time_ns(), time.process_time_ns())
    return witness, {"node": node, "r0": r0, "r1": r1, "pid": os.getpid(), "cpu": (cpu0, cpu1), "error": error}


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives a pickle round trip (Ray sends it to the driver), else an
    EngineError that names it."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        from cuzk.errors import EngineError

        return EngineError(f"{type(exc).__name__}: {exc}")


class Passthrough:
    """The actor Engine's "synthesizer": hands over a witness made elsewhere. It shows the real
    synthesizer's R1CS and program, which key loading (density, shape checks) and the memory
    budget read."""

    def __init__(self, inner):
        self.inner = inner

    @property
    def r1cs(self):
        return getattr(self.inner, "r1cs", None)

    @property
    def program(self):
        return getattr(self.inner, "program", None)

    def synthesize(self, witness):
        return witness


class ProverActor:
    """One prover per GPU (or a CPU prover): see the module docstring.

    Args:
        name: the actor's stable name (``Event.worker`` of its events; kept by a replacement).
        backend: ``"auto"``, ``"cpu"`` or ``"cuda"`` for its Engine.
        memory_budget: the actor Engine's budget (keys in memory on this node), None for none.
        skews: node id -> injected clock skew in ns (test hook).
    """

    def __init__(self, name: str, backend: str = "auto", memory_budget=None, skews: dict | None = None):
        from cuzk.engine.engine import Engine
        from cuzk.timeline.recorder import Timeline

        self.name, self.node = name, _node_id()
        self.now = node_clock(skews, self.node)
        self.timeline = Timeline(clock=self.now)
        self.engine = Engine(device=backend, memory_budget=memory_budget, timeline=self.timeline, lookahead=0,
                             request_retention_s=0)
        self._lock = threading.Lock()
        self._loose: list = []  # events of no call (evictions): shipped with the next reply
        self._by_token: dict = {}
        self.timeline.add_listener(self._collect)

    def _collect(self, e) -> None:
        if e.kind.value not in SHIPPED_KINDS:
            return
        entry = (e.t_ns + self.timeline.epoch_ns, e.kind.value, e.job_id, e.partition, dict(e.detail), e.circuit)
        with self._lock:
            bucket = self._by_token.get(e.job_id)
            (bucket if bucket is not None else self._loose).append(entry)

    def _take(self, token) -> list:
        with self._lock:
            events = self._by_token.pop(token, [])
            events, self._loose = self._loose + events, []
        return events

    # -- calls from the driver --------------------------------------------------------------------
    def info(self) -> dict:
        return {"name": self.name, "node": self.node, "pid": os.getpid(), "backend": self.engine.backend,
                "clock_ns": self.now()}

    def clock(self) -> int:
        return self.now()

    def check_key(self, path: str) -> str | None:
        """None when this node can read ``path`` (its variables expanded here: :func:`node_path`),
        else why not, naming the path and this node."""
        local, unset = node_path(path)
        shown = repr(local) if local == path else f"{local!r} (from {path!r})"
        if unset:
            return f"{path!r}: ${', $'.join(unset)} not set on node {self.node}"
        if not os.path.isfile(local):
            return f"{shown} does not exist on node {self.node}"
        if not os.access(local, os.R_OK):
            return f"{shown} is not readable on node {self.node}"
        return None

    def register(self, name: str, synthesizer, key) -> None:
        if isinstance(key, str):
            key = node_path(key)[0]
        self.engine.register(name, Passthrough(synthesizer), key)

    def preload(self, name: str) -> dict:
        r0 = self.now()
        self.engine.preload(name)
        return {"events": self._take(None), "r0": r0, "r1": self.now(), "keys": self.keys()}

    def evict(self, name: str) -> int:
        return self.engine.evict(name)

    def keys(self) -> dict:
        return {n: self.engine._route(n).status()["tier"] for n in self.engine.circuits()}

    def prove(self, name: str, token: int, witness) -> dict:
        """Prove ``witness`` (resolved from the object store by Ray) with circuit ``name``'s key.
        A failure is returned, not raised, so its events still reach the driver."""
        r0 = self.now()
        with self._lock:
            self._by_token[token] = []
        error = proof = timings = None
        try:
            future = self.engine.submit(name, {"witness": witness}, request_id=token)
            del witness
            proof = future.result()
            timings = future.timings.as_dict() if future.timings is not None else None
        except BaseException as exc:  # the job's own fault (unsatisfied, key mismatch): not retried
            error = _portable(exc)
        return {"proof": proof, "error": error, "timings": timings, "events": self._take(token), "r0": r0,
                "r1": self.now(), "keys": self.keys()}

    def close(self) -> None:
        self.engine.close(wait=False, cancel_futures=True)
