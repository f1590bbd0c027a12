"""Drive one episode: a target built from an :class:`~reliability.plan.EpisodeConfig`, jobs
submitted by the driver, done-callbacks and listeners, faults, cancels and closes.

The driver records what it asked for (``JobRecord.cancel_requested``, ``Episode.cancel_close``)
*before* asking, so the oracle can tell an allowed outcome from a forbidden one. Every close is
bounded (:func:`bounded_close`): a close that hangs is a violation, never a hung run.
"""

from __future__ import annotations

import random
import sys
import time
import zlib
import threading
import traceback
from concurrent.futures import CancelledError

from cuzk.errors import InputError, PipelineClosedError
from cuzk.timeline import EventKind as K, Timeline
from reliability.kinds import callback_base_exception, callback_error, is_injected
from reliability.plan import JobPlan
from reliability.stages import FaultProver, FaultSynthesizer, Registry

__all__ = ["JobRecord", "Episode", "bounded_close", "outcome_of", "wait_resolved", "CLOSE_TIMEOUT", "RESOLVE_TIMEOUT"]

CLOSE_TIMEOUT = 30.0  # seconds a close(wait=True) may take before it counts as a hang
# seconds the futures get after close(wait=True) before they count as lost: that close joined
# every worker, so nothing can resolve them later; the margin only absorbs scheduling
RESOLVE_TIMEOUT = 2.0
CLOSE_GRACE = 2.0  # seconds the workers get to exit after a close that a callback interrupted
PACE_TIMEOUT = 2.0  # the driver's occasional wait for a recent job (not a check)
FOLLOWUP_BUDGET = 0.25  # follow-up jobs (from callbacks and listeners) per planned job, at most


# event kind -> listener kinds that act on it (the listener returns at once for the rest)
_LISTENER_EVENTS = {
    K.JOB_DONE: frozenset({"status", "submit"}), K.JOB_FAILED: frozenset({"status"}),
    K.GPU_END: frozenset({"status"}), K.JOB_SUBMIT: frozenset({"metrics"}),
    K.SYNTH_START: frozenset({"cancel"}), K.SYNTH_END: frozenset({"raise"}), K.GPU_START: frozenset({"raise_base"}),
}


class JobRecord:
    """One successfully submitted job, as the driver saw it."""

    __slots__ = ("plan", "job_id", "future", "resolutions", "cancel_requested", "origin", "explicit_id",
                 "deadline", "resolved_at", "callback_raised_base", "submit_window")

    def __init__(self, plan: JobPlan, future, origin: str, explicit_id: bool = True, deadline: float | None = None):
        self.plan, self.future, self.origin = plan, future, origin
        self.job_id = future.job_id
        self.resolutions: list = []  # one entry per call of the counting done-callback
        self.cancel_requested = False
        self.explicit_id = explicit_id  # the submit named the id (else the target numbered the job)
        self.deadline = deadline  # the time.time() deadline it was submitted with (Engine targets), or None
        self.resolved_at: float | None = None  # time.time() when the counting done-callback ran
        self.callback_raised_base = False  # a done-callback of its future let a BaseException out
        self.submit_window = None  # (start, end) of the submit call that made it, on the episode timeline's clock

    def count_resolution(self) -> None:
        """The counting done-callback (always the driver's first one on the future)."""
        self.resolved_at = time.time()
        self.resolutions.append(threading.current_thread().name)


def _thread_stacks() -> str:
    frames = sys._current_frames()
    parts = []
    for t in threading.enumerate():
        if t.name.startswith("cuzk-") or t.name.startswith("fault-"):
            stack = "".join(traceback.format_stack(frames.get(t.ident))) if t.ident in frames else "?"
            parts.append(f"--- {t.name}\n{stack}")
    return "\n".join(parts)


def bounded_close(target, wait: bool, cancel_futures: bool, timeout: float = CLOSE_TIMEOUT):
    """Call ``target.close`` on a helper thread; returns ``(finished, raised)``: whether it
    returned (or raised) within ``timeout``, and what it raised (a callback's BaseException
    travels out of ``close(cancel_futures=True)``)."""
    box: dict = {}

    def run():
        try:
            target.close(wait=wait, cancel_futures=cancel_futures)
        except BaseException as e:  # noqa: B902  (reported to the caller, who checks it was injected)
            box["raised"] = e

    t = threading.Thread(target=run, name="fault-closer", daemon=True)
    t.start()
    t.join(timeout)
    return not t.is_alive(), box.get("raised")


class Episode:
    """One target from creation to its final close, with everything the oracle needs."""

    def __init__(self, cfg, planner, make_target, tally):
        self.cfg, self.planner, self.tally = cfg, planner, tally
        self.rng = random.Random(f"{planner.seed}:{cfg.index}:driver")
        self.registry = Registry()
        self.timeline = Timeline()
        synth, prover = FaultSynthesizer(self.registry, cfg.unit_bytes), FaultProver(self.registry)
        self.target = make_target(cfg, synth, prover, self.timeline)
        self.records: list[JobRecord] = []
        self.by_id: dict = {}  # job id -> records in the order their submits succeeded
        self._lock = threading.Lock()
        self.close_requested = False
        self.cancel_close = False  # a close(cancel_futures=True) was asked for
        self.followups_left = max(2, int(cfg.n_jobs * FOLLOWUP_BUDGET))
        self.hung = False
        self._reusing: set = set()  # job ids claimed by a reuse in progress
        self._windows: dict = {}  # future -> (start, end) of the _submit call that returned it
        if cfg.listeners:
            self.timeline.add_listener(self._listener)

    # -- submitting -----------------------------------------------------------------------
    def _claim_reuse(self, rec: JobRecord | None = None):
        """Claim a job id for reuse: ``rec``'s, or one whose latest job has resolved (as the
        target's ``id_reusable`` tells). Returns the record whose id is reused, or None. One
        reuse per id at a time, so a refusal can only mean the pipeline still holds the previous job."""
        with self._lock:
            candidates = [rec] if rec is not None else reversed(self.records[-50:])
            for r in candidates:
                latest = self.by_id[r.job_id][-1]
                if r.job_id not in self._reusing and self.target.id_reusable(latest):
                    self._reusing.add(r.job_id)
                    return latest
        return None

    def submit(self, plan: JobPlan, origin: str, reuse_of: JobRecord | None = None):
        """Submit ``plan``; returns its record, or None when the target refused (closed)."""
        reused = self._claim_reuse(reuse_of) if (plan.id_mode == "reuse" or reuse_of is not None) else None
        if reused is not None:
            job_id = reused.job_id
        elif plan.id_mode == "auto":
            job_id = None
        elif plan.id_mode == "int":  # the pipeline numbers jobs 1, 2, ...: land near its next number
            job_id = len(self.records) + 1 + zlib.crc32(plan.key.encode()) % 5
        else:
            job_id = plan.key
        inputs = [{"u": u} for u in plan.units]
        deadline = None if plan.deadline is None else time.time() + plan.deadline
        try:
            future = self._submit_or_fresh(plan, inputs, job_id, reused, origin, deadline)
            if future is None:
                return None
            # explicit unless the target numbered it (a refused auto id falls back to the plan's key)
            rec = self.record(plan, future, origin, job_id is not None or future.job_id == plan.key, deadline)
        finally:
            if reused is not None:  # only now: the new record is the id's latest
                with self._lock:
                    self._reusing.discard(reused.job_id)
        self.tally.act(f"submit ({origin})")
        if reused is not None and rec.job_id == reused.job_id:
            self.tally.act("job id reused")
        return self.wire(rec)

    def record(self, plan: JobPlan, future, origin: str, explicit_id: bool, deadline) -> JobRecord:
        """Track a job the target accepted (the oracle checks every record)."""
        rec = JobRecord(plan, future, origin, explicit_id, deadline)
        with self._lock:
            rec.submit_window = self._windows.get(future)
            self.records.append(rec)
            self.by_id.setdefault(rec.job_id, []).append(rec)
        return rec

    def wire(self, rec: JobRecord) -> JobRecord:
        """The counting done-callback, the plan's own callbacks and its cancel-at-once."""
        plan, future = rec.plan, rec.future
        if plan.partitioned:
            self.tally.act("partitioned job")
        future.add_done_callback(lambda f, rec=rec: rec.count_resolution())
        for kind in plan.callbacks:
            self._guard(future.add_done_callback, lambda f, kind=kind, rec=rec: self._run_callback(kind, rec))
            self.tally.act(f"callback {kind}")
        if plan.cancel == "now":
            self.cancel(rec, "driver, at once")
        return rec

    def _submit_or_fresh(self, plan, inputs, job_id, reused, origin, deadline=None):
        """The target's future for ``plan``, or None when the target is closed. When the id is
        refused as in use, judge the refusal and submit again under the plan's own key."""
        try:
            try:
                return self._submit(plan, inputs, job_id, deadline)
            except InputError as e:
                if job_id == plan.key:
                    raise
                self._judge_refusal(plan, job_id, reused, origin, e)
                return self._submit(plan, inputs, plan.key, deadline)
        except PipelineClosedError:
            if not self.close_requested:
                self.tally.violation("submit-refused", f"{plan.key}: PipelineClosedError before any close")
            self.tally.act("submit refused after close")
            return None
        except InputError as e:
            self.tally.violation("submit-refused", f"{plan.key} (id {plan.key!r}, {origin}): InputError {e}")
            return None

    def _judge_refusal(self, plan, job_id, reused, origin, e) -> None:
        if job_id is None:  # the caller gave no id: nothing it did can make the id "in use"
            self.tally.violation("auto-id-refused", f"{plan.key} ({origin}): submit without a job id "
                                                    f"raised InputError: {e}")
        elif reused is None:  # an explicit int: the pipeline's own numbering may hold it
            self.tally.note("explicit int id refused: in use")
        else:
            outcome = outcome_of(reused.future)
            if outcome == "failed":  # partitions of the failed job may still be in flight
                self.tally.note("id reuse refused: the previous job failed, some of its units still open")
            else:  # a done job's units all ended before it resolved; a cancelled one never started
                self.tally.violation("cancel-id-held" if outcome == "cancelled" else "reuse-refused",
                                     f"{plan.key} ({origin}): the id {job_id!r} of a {outcome} job refused as in use")

    def _submit(self, plan, inputs, job_id, deadline=None):
        """The target's submit; the window around the call (on the timeline's clock) is kept for
        the record, which the oracle needs to tell apart jobs that shared an id (oracle.py, _pair)."""
        extra = {} if deadline is None else {"deadline": deadline}  # only Engine targets take one
        start = self.timeline.now_ns()
        if plan.partitioned:
            future = self.target.submit_partitioned(inputs, priority=plan.priority, job_id=job_id, **extra)
        else:
            future = self.target.submit(inputs[0], priority=plan.priority, job_id=job_id, **extra)
        window = (start, self.timeline.now_ns())
        with self._lock:
            self._windows.setdefault(future, window)  # a repeated request's future keeps its first window
        return future

    def followup(self, origin: str, reuse_of: JobRecord | None = None):
        with self._lock:
            if self.followups_left <= 0:
                return None
            self.followups_left -= 1
            n = self.followups_left
        plan = self.planner.job(self.cfg, 0, key=f"e{self.cfg.index}.{origin}{n}")
        rec = self.submit(plan, origin, reuse_of=reuse_of)
        if rec is not None:
            self.tally.followup_jobs += 1
        return rec

    def cancel(self, rec: JobRecord, who: str) -> None:
        rec.cancel_requested = True  # before asking: the future may be cancelled at once
        ok = self._guard(self.target.cancel, rec.future)
        self.tally.act(f"cancel ({who}) {'accepted' if ok else 'refused'}")

    def _guard(self, fn, *args):
        """Call ``fn``; an injected BaseException from a callback it triggers is swallowed."""
        try:
            return fn(*args)
        except BaseException as e:  # noqa: B902
            if not is_injected(e):
                raise
            self.tally.note("driver got a callback's injected exception")
            return None

    def close(self, wait: bool, cancel_futures: bool, who: str) -> None:
        self.close_requested = True
        self.cancel_close |= cancel_futures
        self.tally.act(f"close ({who}, wait={wait}, cancel_futures={cancel_futures})")
        if threading.current_thread().name.startswith(self.target.thread_prefix):
            self.target.close(wait=wait, cancel_futures=cancel_futures)  # returns at once there
            return
        finished, raised = bounded_close(self.target, wait, cancel_futures)
        if not finished:
            if not self.recover_hang(f"close(wait={wait}, cancel_futures={cancel_futures}) from {who}"):
                self.hung = True
                self.tally.violation("hang", f"episode {self.cfg.index}: close(wait={wait}, cancel_futures="
                                             f"{cancel_futures}) from {who} did not return in {CLOSE_TIMEOUT} s\n"
                                             + _thread_stacks())
        elif raised is not None:
            if not is_injected(raised):
                self.tally.violation("harness-error", f"close raised {type(raised).__name__}: {raised}")
            self.tally.note("close() raised a done-callback's injected exception")
            self._check_closed_anyway(wait, cancel_futures)

    def _check_closed_anyway(self, wait: bool, cancel_futures: bool) -> None:
        """A close that a callback's exception interrupted must still have closed the target:
        its workers drain what is left and exit without a second close."""
        deadline = time.monotonic() + CLOSE_GRACE
        while self.target.live_threads() and time.monotonic() < deadline:
            time.sleep(0.01)
        left = self.target.live_threads()
        if left:
            self.tally.violation("close-interrupted", f"episode {self.cfg.index}: close(wait={wait}, cancel_futures="
                                                      f"{cancel_futures}) raised a done-callback's exception; "
                                                      f"{left} still alive {CLOSE_GRACE} s later")

    # -- callbacks and listeners (any thread) -----------------------------------------------
    def _random_live(self):
        with self._lock:
            recent = self.records[-20:]
        live = [r for r in recent if not r.future.done()]
        return self.rng.choice(live) if live else None

    def _run_callback(self, kind: str, rec: JobRecord) -> None:
        try:
            self._callback(kind, rec)
        except Exception:
            raise  # concurrent.futures logs it and runs the next callback
        except BaseException:  # it travels out of set_result/set_exception/cancel to the resolver
            rec.callback_raised_base = True
            raise

    def _callback(self, kind: str, rec: JobRecord) -> None:
        if kind == "raise":
            raise callback_error(f"done-callback of {rec.plan.key}")
        if kind == "raise_base":
            raise callback_base_exception(len(rec.plan.key), f"done-callback of {rec.plan.key}")
        if kind == "submit":
            self.followup("cb")
        elif kind == "reuse_self":
            self.followup("reuse_self", reuse_of=rec)
        elif kind == "cancel_other":
            other = self._random_live()
            if other is not None:
                self.cancel(other, "done-callback")
        elif kind == "close":
            r = random.Random(rec.plan.key)
            self.close(r.random() < 0.5, r.random() < 0.5, "done-callback")

    def _listener(self, e) -> None:
        kinds, k = self.cfg.listeners, e.kind
        if not kinds & _LISTENER_EVENTS.get(k, frozenset()):
            return
        pick = zlib.crc32(f"{e.job_id}|{e.partition}".encode())  # deterministic, unlike hash(str)
        if "status" in kinds and k in (K.JOB_DONE, K.JOB_FAILED, K.GPU_END):
            self._check_live_status(self.target.status())
        if "metrics" in kinds and k is K.JOB_SUBMIT:
            self.target.metrics()
        if "submit" in kinds and k is K.JOB_DONE and pick % 8 == 0:
            self.followup("ls")
        if "cancel" in kinds and k is K.SYNTH_START and pick % 8 == 1:
            other = self._random_live()
            if other is not None:
                self.cancel(other, "listener")
        if "raise" in kinds and k is K.SYNTH_END and pick % 4 == 0:
            raise callback_error(f"listener on {k.value}")
        if ("raise_base" in kinds and k is K.GPU_START and pick % 4 == 0
                and threading.current_thread() is not threading.main_thread()):
            # on the main thread the timeline re-raises it by design (Ctrl-C stays Ctrl-C), and
            # submit() would raise after queueing the job; the driver could not track that job
            raise callback_base_exception(pick, f"listener on {k.value}")

    def _check_live_status(self, s) -> None:
        budget = s.memory_budget  # the target's own (an Engine may run without the episode's budget)
        if s.memory_reserved_bytes < 0 or (budget is not None and
                                           s.memory_reserved_bytes > max(budget, self.cfg.unit_bytes)):
            self.tally.violation("status", f"episode {self.cfg.index}: {s.memory_reserved_bytes} bytes reserved, "
                                           f"budget {budget}, unit {self.cfg.unit_bytes}")

    # -- the driver -------------------------------------------------------------------------
    def run(self) -> None:
        cfg, rng = self.cfg, self.rng
        pending_cancels: list = []  # [countdown, record]
        closed_tries = 0
        for n in range(cfg.n_jobs):
            if self.close_requested:
                closed_tries += 1
                if closed_tries > 3:  # a few refused submits are enough to check the refusal
                    break
            plan = self.planner.job(cfg, n)
            rec = self.submit(plan, "driver")
            if rec is not None:
                self.after_driver_submit(rec)
            if rec is not None and plan.cancel == "later":
                pending_cancels.append([rng.randint(1, 6), rec])
            for item in pending_cancels:
                item[0] -= 1
                if item[0] == 0:
                    self.cancel(item[1], "driver, later")
            pending_cancels = [p for p in pending_cancels if p[0] > 0]
            if rec is not None and rng.random() < cfg.pace:
                wait_resolved([rec.future], PACE_TIMEOUT)
            if n == cfg.close_at:
                self.close(cfg.close_wait, cfg.close_cancel, "driver, mid-run")
        for _, rec in pending_cancels:
            self.cancel(rec, "driver, later")
        self.finish()

    def after_driver_submit(self, rec: JobRecord) -> None:
        """A hook for targets' own driver actions on a job it just submitted (none here)."""

    def recover_hang(self, what: str) -> bool:
        """A close did not return in time: True when a known defect explains it and the episode
        could be closed anyway (reported as that defect), else False (reported as a hang)."""
        return False

    def finish(self) -> None:
        """The final close(wait=True) (again if a callback's exception interrupted it), then a
        bounded wait for every future."""
        if self.hung:
            return
        for _ in range(2):
            self.close_requested = True
            finished, raised = bounded_close(self.target, True, False)
            if not finished:
                if self.recover_hang("final close(wait=True)"):
                    break
                self.hung = True
                self.tally.violation("hang", f"episode {self.cfg.index}: final close(wait=True) did not "
                                             f"return in {CLOSE_TIMEOUT} s\n" + _thread_stacks())
                return
            if raised is None:
                break
            self.tally.note("final close() raised a done-callback's injected exception")
        wait_resolved([r.future for r in self.records], RESOLVE_TIMEOUT)


def wait_resolved(futures, timeout: float) -> None:
    """Wait until every future is resolved or ``timeout`` seconds passed.

    Not ``concurrent.futures.wait``: it only counts a cancelled future once
    ``set_running_or_notify_cancel`` ran on it, and the oracle checks that separately.
    """
    deadline = time.monotonic() + timeout
    for f in futures:
        try:
            f.exception(max(0.0, deadline - time.monotonic()))
        except (CancelledError, TimeoutError):
            pass


def outcome_of(future) -> str:
    """``pending``, ``cancelled``, ``failed`` or ``done``."""
    if not future.done():
        return "pending"
    if future.cancelled():
        return "cancelled"
    return "failed" if future.exception(timeout=0) is not None else "done"

