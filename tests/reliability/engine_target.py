""":class:`cuzk.Engine` as a fault-injection target, with the Engine's own actions and checks.

The same episodes as the Pipeline run (plans, faults, callbacks, listeners, cancels, closes)
go through an Engine with 2 or 3 registered circuits; a job's circuit follows from its plan key
(:meth:`EngineTarget.circuit_for`), so jobs spread over the circuits and every follow-up lands
on a known one. What the adapter translates (see also :mod:`reliability.target`):

* the episode's ``concurrency`` is each circuit's ``concurrency`` ("auto", a Pipeline feature,
  becomes 2); ``gpu_workers`` is ``workers_per_device`` on ``device="cpu"``; ``lookahead`` is
  ``lookahead``; a memory budget of at least one unit is ``memory_budget`` (a smaller one has
  no Engine equivalent, the Engine refuses a job that can never fit: no budget then);
* ``job_id`` is ``request_id`` with ``request_retention_s=0``, so a resolved id is forgotten at
  once and may name a new job (the Pipeline's meaning); the Engine forgets it in a done-callback,
  so the driver reuses an id only after its own counting callback ran (:meth:`id_reusable`);
* ``EngineError`` on a closed engine is ``PipelineClosedError``; ``status()`` (a dict per
  circuit, with *job* counts) becomes a :class:`~reliability.target.StatusView` whose unit
  counts come from the scheduling core, like the Pipeline's.

Engine-only actions (:class:`EnginePlanner`, :class:`EngineEpisode`), each with its check:

* deadlines: already past at submit (5% of jobs: the job must expire, or be cancelled when
  asked, and run no stage), 0-4 ms ahead (10%: expires while queued, or completes if picked
  in time), 60 s ahead (3%). The oracle (:mod:`reliability.oracle`) checks any
  ``DeadlineExceededError`` came after the deadline and the expired unit has no GPU_START;
* repeated request ids, from a SYNTH_START listener (so the job is certainly unresolved): the
  same inputs must return the *same* future (and count as ``deduplicated``), other inputs or
  another circuit must raise InputError; from the driver, other inputs under the id of a job
  just submitted: InputError while that job is unresolved;
* ``evict(circuit)``: EngineError "in use" or the bytes freed (0: the fake prover is a custom
  key); from a SYNTH_START listener on the job's own circuit it must be refused, and from the
  driver it must be refused while a job of that circuit is unresolved before and after.

After the final close, the per-circuit job counts of ``status()`` must equal the outcomes of
the jobs the driver submitted, ``deduplicated`` the repeated submits answered with a known
future, and every event of a job must carry its circuit.

    >>> from reliability.stages import Registry, FaultSynthesizer, FaultProver
    >>> from reliability.plan import UnitSpec
    >>> reg = Registry()
    >>> t = EngineTarget(FaultSynthesizer(reg), FaultProver(reg), concurrency=1)
    >>> f = t.submit({"u": UnitSpec(("k", None), 1, "ok", "ok", 0.0)}, priority=1, job_id="k")
    >>> f.result(timeout=10)[:3], t.close(wait=True), t.live_threads(), t.status().circuits[t.circuit_for("k")]["done"]
    (('proof', 'k', None), None, [], 1)
"""

from __future__ import annotations

import collections
import random
import time
import zlib
from typing import Any, Mapping, Sequence

from cuzk.engine.engine import Engine
from cuzk.errors import EngineError, InputError, MemoryBudgetError, PipelineClosedError
from cuzk.pipeline.scheduler import LIVE_STATES
from cuzk.timeline import EventKind as K, Timeline
from reliability.driver import Episode, bounded_close, outcome_of
from reliability.oracle import expiry_leak_bytes
from reliability.plan import Planner
from reliability.target import StatusView

__all__ = ["EngineTarget", "engine_target", "EnginePlanner", "EngineEpisode", "CIRCUITS", "ENGINE_LISTENER_KINDS"]

CIRCUITS = ("alpha", "beta", "gamma")
#: Listener kinds of an Engine episode, on top of reliability.plan.LISTENER_KINDS.
ENGINE_LISTENER_KINDS = ("dup_id", "evict")
_OUTCOMES = ("done", "failed", "cancelled")
_RECOVER_ROUNDS = 30  # seconds recover_hang gives a leak-blocked close, releasing leaked bytes each second


class EngineTarget:
    """A :class:`cuzk.Engine` (CPU device, custom key = the fake prover) as a fault target."""

    thread_prefix = "cuzk-"

    def __init__(self, synthesizer, prover, *, circuits: Sequence[str] = CIRCUITS[:2], concurrency: int = 2,
                 lookahead: int = 1, gpu_workers: int = 1, memory_budget: int | None = None,
                 timeline: Timeline | None = None):
        self.engine = Engine("cpu", workers_per_device=gpu_workers, memory_budget=memory_budget,
                             timeline=timeline, lookahead=lookahead, request_retention_s=0)
        self.circuits = tuple(circuits)
        try:
            for name in self.circuits:
                self.engine.register(name, synthesizer, prover, concurrency=concurrency)
        except BaseException:
            self.engine.close()
            raise
        self.timeline = self.engine.timeline
        self._metrics_calls = 0

    def circuit_for(self, key: str) -> str:
        """The circuit a job of plan key ``key`` goes to."""
        return self.circuits[zlib.crc32(key.encode()) % len(self.circuits)]

    def submit(self, inputs: Mapping[str, Any], priority, job_id=None, deadline=None):
        return self._call(self.engine.submit, self.circuit_for(inputs["u"].token[0]), inputs, priority, job_id,
                          deadline)

    def submit_partitioned(self, parts: Sequence[Mapping[str, Any]], priority, job_id=None, deadline=None):
        return self._call(self.engine.submit_partitioned, self.circuit_for(parts[0]["u"].token[0]), parts,
                          priority, job_id, deadline)

    @staticmethod
    def _call(fn, name, inputs, priority, job_id, deadline):
        try:
            return fn(name, inputs, priority=priority, request_id=job_id, deadline=deadline)
        except MemoryBudgetError:  # an EngineError too, but never "closed": the driver reports it
            raise
        except EngineError as e:
            raise PipelineClosedError(f"engine refused the submit: {e}") from e

    def cancel(self, future) -> bool:
        return self.engine.cancel(future)

    def close(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self.engine.close(wait, cancel_futures=cancel_futures)

    def evict(self, name: str) -> int:
        return self.engine.evict(name)

    def status(self) -> StatusView:
        st = self.engine.status()
        core = self.engine.core
        counts = {s: sum(c[s] for c in st["circuits"].values()) for s in LIVE_STATES}
        terminal = core.metrics_registry.snapshot({}).counters  # per unit, as Pipeline.status()
        counts.update({s: terminal.get(s, 0) for s in _OUTCOMES})
        return StatusView(st["closed"], counts, core.unit_states(), st["memory"]["reserved"], st["memory"]["budget"],
                          circuits=st["circuits"])

    def metrics(self):
        """``engine.metrics()`` on every 8th call (None otherwise; the count is racy, harmlessly):
        it renders Prometheus text with a histogram per circuit and stage (2.3 ms for 3 circuits
        on an idle core, much more among busy workers), and the "metrics" listener calls it on
        every JOB_SUBMIT: on every call, one 177-job episode took 3.5 s instead of 1.0 s."""
        self._metrics_calls += 1
        return self.engine.metrics() if self._metrics_calls % 8 == 1 else None

    def id_reusable(self, rec) -> bool:
        """The Engine forgets a resolved request id in a done-callback added before the driver's
        counting one: once that ran, the id may name a new job."""
        return rec.future.done() and bool(rec.resolutions)

    def live_threads(self) -> list[str]:
        return [t.name for t in self.engine.core.threads() if t.is_alive()]


def engine_target(cfg, synthesizer, prover, timeline: Timeline) -> EngineTarget:
    """Build the Engine an :class:`~reliability.plan.EpisodeConfig` describes (module docstring)."""
    budget = cfg.memory_budget
    if budget is not None and cfg.unit_bytes is not None and budget < cfg.unit_bytes:
        budget = None  # the Engine refuses a job bigger than its budget; the Pipeline runs it alone
    return EngineTarget(synthesizer, prover, circuits=CIRCUITS[:2 + cfg.index % 2],
                        concurrency=2 if cfg.concurrency == "auto" else cfg.concurrency, lookahead=cfg.lookahead,
                        gpu_workers=cfg.gpu_workers, memory_budget=budget, timeline=timeline)


class EnginePlanner(Planner):
    """The Pipeline's plans (identical for a seed) plus deadlines and the Engine listener kinds,
    drawn from rngs of their own."""

    def episode(self, index: int, n_jobs: int):
        cfg = super().episode(index, n_jobs)
        rng = random.Random(f"{self.seed}:{index}:engine")
        cfg.listeners = set(cfg.listeners) | {k for k in ENGINE_LISTENER_KINDS if rng.random() < 0.4}
        return cfg

    def job(self, cfg, n: int, key: str | None = None):
        plan = super().job(cfg, n, key)
        rng = random.Random(f"{self.seed}:{plan.key}:engine")
        r = rng.random()
        plan.deadline = (-rng.uniform(0.0, 1.0) if r < 0.05 else rng.uniform(0.0, 0.004) if r < 0.15
                         else 60.0 if r < 0.18 else None)
        return plan


class EngineEpisode(Episode):
    """An episode against an :class:`EngineTarget`, with the Engine's own actions and checks."""

    def __init__(self, cfg, planner, make_target, tally):
        super().__init__(cfg, planner, make_target, tally)
        self.erng = random.Random(f"{planner.seed}:{cfg.index}:engine-driver")
        self.dedups = collections.Counter()  # circuit -> repeated submits answered with the known future
        self._extra = 0
        self.leak_compensated = 0  # leaked bytes recover_hang gave back to the budget
        tally.configs[("circuits", len(self.target.circuits))] += 1
        tally.configs[("engine budget", self.target.engine.memory_budget is not None)] += 1

    def _extra_plan(self, tag: str):
        with self._lock:
            self._extra += 1
            n = self._extra
        return self.planner.job(self.cfg, 0, key=f"e{self.cfg.index}.{tag}{n}")

    def recover_hang(self, what: str) -> bool:
        """A close that hangs because the known expiry defect leaked so much of the budget that no
        unit fits any more (queued units then wait forever, cancel_futures or not: a started
        job's queued partitions cannot be cancelled): report it as that defect, give the leaked
        bytes back to the budget so the workers drain and exit, and check the episode as usual."""
        leak, unit = expiry_leak_bytes(self), self.cfg.unit_bytes or 0
        budget = self.target.engine.memory_budget
        if not leak or budget is None or leak + unit <= budget:
            return False
        self.tally.violation("expiry-leak", f"episode {self.cfg.index}: {what} hung: {leak} bytes leaked by expired "
                                            f"jobs leave no room for a unit of {unit} bytes in the budget of {budget}; "
                                            f"the harness released them to go on")
        for _ in range(_RECOVER_ROUNDS):  # the jobs admitted then may expire and leak again
            leak = expiry_leak_bytes(self)
            if leak > 0:
                self.leak_compensated += leak
                self.target.engine.core.queue.release(leak)
            finished, _ = bounded_close(self.target, True, False, timeout=1.0)  # the hung close's workers too
            if finished:
                return True
        return False

    # -- driver actions -----------------------------------------------------------------------
    def after_driver_submit(self, rec) -> None:
        r = self.erng.random()
        if r < 0.04 and rec.explicit_id:
            self._conflict(rec)
        elif r < 0.08:
            self._evict(self.erng.choice(self.target.circuits), "driver")

    def _closed_refusal(self, what: str) -> None:
        if not self.close_requested:
            self.tally.violation("submit-refused", f"{what}: refused as closed before any close")
        self.tally.act("submit refused after close")

    def _conflict(self, rec) -> None:
        """Other inputs under the id of ``rec``: InputError while ``rec`` is unresolved. The id
        is claimed like a reuse's while this runs: once ``rec`` resolved the submit may be
        accepted, and until its job is recorded a reuse on another thread would still take
        ``rec`` for the id's latest job and judge the id free."""
        with self._lock:
            if rec.job_id in self._reusing:  # a reuse of this id is in progress: not now
                return
            self._reusing.add(rec.job_id)
        try:
            self._conflict_claimed(rec)
        finally:
            with self._lock:
                self._reusing.discard(rec.job_id)

    def _conflict_claimed(self, rec) -> None:
        plan = self._extra_plan("x")
        inputs = [{"u": u} for u in plan.units]
        deadline = None if plan.deadline is None else time.time() + plan.deadline
        try:
            f = self._submit(plan, inputs, rec.job_id, deadline)
        except InputError:
            self.tally.act("request id conflict (driver) refused")
            return
        except PipelineClosedError:
            self._closed_refusal(f"{plan.key} under {rec.job_id!r}")
            return
        if not rec.future.done():  # unresolved all along: the engine knew the id at its lookup
            self.tally.violation("request-id", f"{plan.key}: other inputs under the id {rec.job_id!r} of the "
                                               f"unresolved job {rec.plan.key} were accepted")
        else:
            self.tally.act("request id conflict (driver) accepted: the job had resolved")
        self.wire(self.record(plan, f, "conflict", True, deadline))

    def _evict(self, name: str, who: str, in_use: bool = False) -> None:
        """``evict(name)``; ``in_use``: the caller knows a job of ``name`` is unresolved."""
        with self._lock:
            live = [r for r in self.records[-30:] if not r.future.done()
                    and self.target.circuit_for(r.plan.key) == name]
        try:
            freed = self.target.evict(name)
        except EngineError as e:
            if "in use" not in str(e):
                self.tally.violation("evict", f"evict({name!r}) from {who}: EngineError without 'in use': {e}")
            self.tally.act(f"evict ({who}) refused: in use")
            return
        except Exception as e:  # noqa: BLE001  (anything else is the finding)
            self.tally.violation("evict", f"evict({name!r}) from {who} raised {type(e).__name__}: {e}")
            return
        busy = [r for r in live if not r.future.done()]
        if in_use or busy:
            what = "during a SYNTH_START of one of its jobs" if in_use else f"while job {busy[0].plan.key} was unresolved"
            self.tally.violation("evict", f"evict({name!r}) from {who} succeeded {what}")
        if freed != 0:
            self.tally.violation("evict", f"evict({name!r}) freed {freed!r} bytes of a custom key (expected 0)")
        self.tally.act(f"evict ({who}) done")

    # -- listener actions (on the synthesis worker, before the unit is synthesized) -------------
    def _listener(self, e) -> None:
        kinds = self.cfg.listeners
        if e.kind is K.SYNTH_START and e.partition is None and kinds & {"dup_id", "evict"}:
            # unpartitioned: the job cannot resolve before this unit's synthesis, which waits for us
            pick = zlib.crc32(f"{e.job_id}|engine".encode())
            if "evict" in kinds and pick % 4 == 0:
                self._evict(e.circuit, "listener", in_use=True)
            if "dup_id" in kinds and pick % 3 == 0:
                self._repeat_id(e, (pick >> 4) % 3)
        super()._listener(e)

    def _repeat_id(self, e, mode: int) -> None:
        with self._lock:
            recs = self.by_id.get(e.job_id)
            rec = recs[-1] if recs else None
        # the latest record under the id, unresolved: this very job (an id names one live job);
        # none yet when the worker started it before the driver recorded it
        if rec is None or rec.future.done() or rec.plan.partitioned or not rec.explicit_id:
            return
        name = self.target.circuit_for(rec.plan.key)
        inputs = {"u": rec.plan.units[0]}
        label = f"{rec.plan.key} (id {rec.job_id!r}, {name})"
        what = ("the same inputs", "other inputs", "the same inputs for another circuit")[mode]
        try:
            if mode == 0:  # the same submit again: the same future, counted as deduplicated
                f = self.target.submit(inputs, priority=rec.plan.priority, job_id=rec.job_id)
                if f is rec.future:
                    with self._lock:
                        self.dedups[name] += 1
                    self.tally.act("request id repeated: same future")
                    return
            elif mode == 1:  # another plan (maybe partitioned, maybe of another circuit)
                plan = self._extra_plan("dup")
                deadline = None if plan.deadline is None else time.time() + plan.deadline
                f = self._submit(plan, [{"u": u} for u in plan.units], rec.job_id, deadline)
                self.wire(self.record(plan, f, "dup", True, deadline))  # tracked: the other checks stay exact
            else:
                other = self.target.circuits[(self.target.circuits.index(name) + 1) % len(self.target.circuits)]
                f = self.target.engine.submit(other, inputs, request_id=rec.job_id)
                f.cancel()
        except InputError as e:
            if mode == 0:
                self.tally.violation("request-id", f"{label}: {what} under its id, while it was synthesizing, "
                                                   f"raised InputError: {e}")
            else:
                self.tally.act(f"request id repeated with {('other inputs', 'another circuit')[mode - 1]}: InputError")
            return
        except (PipelineClosedError, EngineError):
            self._closed_refusal(f"repeat of {label}")
            return
        self.tally.violation("request-id", f"{label}: {what} under its id, while it was synthesizing, gave "
                                           f"{'another' if mode == 0 else 'a new'} future {f!r}")

    # -- checks after the final close (called by reliability.oracle.check_episode) --------------
    def extra_checks(self) -> None:
        t = self.tally
        s = self.target.status()
        want = {name: collections.Counter() for name in self.target.circuits}
        for rec in self.records:
            want[self.target.circuit_for(rec.plan.key)][outcome_of(rec.future)] += 1
        problems = []
        for name, c in s.circuits.items():
            for k in _OUTCOMES:
                if c[k] != want[name][k]:
                    problems.append(f"{name} {k} {c[k]} != {want[name][k]} submitted jobs")
            if c["deduplicated"] != self.dedups[name]:
                problems.append(f"{name} deduplicated {c['deduplicated']} != {self.dedups[name]} repeated submits")
        if problems:
            t.violation("status", f"episode {self.cfg.index} engine job counts: " + "; ".join(problems))
        if self.timeline.dropped:
            return
        seen = collections.defaultdict(set)
        for ev in self.timeline.events():
            if ev.job_id is not None:
                seen[ev.job_id].add(ev.circuit)
        for job_id, recs in self.by_id.items():
            expected = {self.target.circuit_for(r.plan.key) for r in recs}
            if seen[job_id] - expected:
                t.violation("timeline", f"id {job_id!r}: events of circuits {sorted(map(str, seen[job_id]))}, "
                                        f"its jobs went to {sorted(expected)}")
