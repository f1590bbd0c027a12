"""Fault injection through ``cuzk.Pipeline`` (issue 12): a short run of the harness that
``benchmarks/fault_run.py`` runs long, checks that its oracle can fail, and minimal
reproducers of the defects it found (fixed in cuzk/pipeline/core.py; now regression tests)."""

import concurrent.futures
import threading

import pytest

from cuzk.errors import InputError
from cuzk.pipeline import Pipeline
from pipeline_support import (  # noqa: F401  (no_leaked_threads is autouse)
    FakeProver, FakeSynthesizer, cuzk_threads, no_leaked_threads, wait_until,
)
from reliability.kinds import ERROR_KINDS
from reliability.run import fault_run
from reliability.stages import FaultProver
from reliability.tally import KNOWN_DEFECTS
from reliability.target import PipelineTarget

CI_JOBS = 2000
CI_SEED = 12


@pytest.fixture(scope="module")
def ci_run():
    return fault_run(CI_JOBS, CI_SEED)


def test_fault_run_has_no_violations_beyond_known_defects(ci_run):
    # Known defects (each with a strict-xfail reproducer below) are tolerated; nothing else is.
    assert ci_run.jobs >= CI_JOBS
    assert not ci_run.new_violations, ci_run.table("fault run")


def test_fault_run_covers_every_fault_and_outcome(ci_run):
    t = ci_run
    synth = {k for (s, k), n in t.faults.items() if s == "synth" and n}
    prove = {k for (s, k), n in t.faults.items() if s == "prove" and n}
    assert set(ERROR_KINDS) <= synth and set(ERROR_KINDS) <= prove, (synth, prove)
    assert {"odd_witness", "none_witness", "slow"} <= synth
    assert {"return_none", "return_odd", "error_in_span"} <= prove
    assert all(t.outcomes[k] > 50 for k in ("done", "failed", "cancelled")), t.outcomes
    settings = {k: {v for (kk, v) in t.configs if kk == k} for k in ("concurrency", "lookahead", "gpu_workers")}
    assert settings == {"concurrency": {1, 2, 3, "auto"}, "lookahead": {0, 1, 2}, "gpu_workers": {1, 2, 3}}
    acts = " ".join(t.actions)
    for what in ("close (driver, mid-run", "close (done-callback", "cancel (listener)",
                 "cancel (driver, later) refused", "job id reused", "submit (ls)", "submit (cb)", "callback raise_base"):
        assert what in acts, what
    assert t.notes["worker caught a done-callback's BaseException (logged as internal error)"] > 0


# -- the oracle can fail: plant a defect in the target and expect the matching violation ----
class _SwappingProver(FaultProver):
    """Delivers the previous unit's proof now and then: results land on the wrong job."""

    def __init__(self, registry):
        super().__init__(registry)
        self._last = None

    def prove(self, w):
        proof = super().prove(w)
        last, self._last = self._last, proof
        if type(proof) is tuple and type(last) is tuple and proof[3] % 5 == 0:
            return last
        return proof


class _SharedErrorProver(FaultProver):
    """Raises one shared exception object for every ordinary error fault."""

    shared = ValueError("one error object for every job")

    def prove(self, w):
        try:
            return super().prove(w)
        except Exception:
            raise self.shared from None


class _LosingTarget(PipelineTarget):
    """Hands the caller a future that is never resolved for every 7th job."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._n = 0

    def submit(self, inputs, priority, job_id=None):
        f = super().submit(inputs, priority, job_id)
        self._n += 1
        if self._n % 7:
            return f
        lost = concurrent.futures.Future()
        lost.job_id = f.job_id
        return lost


def _planted(prover_cls=None, target_cls=PipelineTarget):
    def make(cfg, synth, prover, timeline):
        if prover_cls is not None:
            prover = prover_cls(prover.registry)
        return target_cls(synth, prover, concurrency=cfg.concurrency, lookahead=cfg.lookahead,
                          gpu_workers=cfg.gpu_workers, memory_budget=cfg.memory_budget, timeline=timeline)
    return make


@pytest.mark.parametrize("make_target, violation", [
    (_planted(_SwappingProver), "wrong-result"),
    (_planted(_SharedErrorProver), "wrong-exception"),
    (_planted(target_cls=_LosingTarget), "lost"),
], ids=["swapped-results", "shared-exception", "lost-future"])
def test_the_oracle_catches_a_planted_defect(make_target, violation):
    tally = fault_run(80, seed=4, make_target=make_target, episode_jobs=(80, 80))
    assert tally.violations[violation] > 0, tally.table("planted")


# -- minimal reproducers of the four defects the first long run found, now regression tests ----
def _blocked_pipeline():
    """A pipeline whose one synthesis worker is stuck on job 0 until ``gate`` is set."""
    gate = threading.Event()
    pipe = Pipeline(FakeSynthesizer(gate=gate), FakeProver(), concurrency=1)
    pipe.submit({"i": 0})
    wait_until(lambda: pipe.status().counts["synthesizing"] == 1)
    return pipe, gate


# was a strict xfail ("wait-blind") until the fix in cuzk/pipeline/core.py
def test_concurrent_futures_wait_sees_a_cancelled_job():
    pipe, gate = _blocked_pipeline()
    try:
        f = pipe.submit({"i": 1})
        assert f.cancel()
        done, _ = concurrent.futures.wait([f], timeout=0.5)
        assert f in done  # as_completed([f]) likewise never yields it
    finally:
        gate.set()
        pipe.close()


# was a strict xfail ("close-interrupted") until the fix in cuzk/pipeline/core.py
def test_close_cancel_futures_completes_whatever_a_callback_raises():
    pipe, gate = _blocked_pipeline()
    try:
        f1, f2 = pipe.submit({"i": 1}), pipe.submit({"i": 2})
        f1.add_done_callback(lambda f: (_ for _ in ()).throw(SystemExit("callback")))
        with pytest.raises(SystemExit):
            pipe.close(wait=False, cancel_futures=True)
        gate.set()
        assert f2.cancelled()  # it was queued: close(cancel_futures=True) must cancel it
        wait_until(lambda: not cuzk_threads(), timeout=5)  # and the workers must exit without a 2nd close
    finally:
        gate.set()
        pipe.close()


# was a strict xfail ("auto-id-refused") until the fix in cuzk/pipeline/core.py
def test_submit_without_job_id_never_collides_with_an_explicit_int_id():
    pipe, gate = _blocked_pipeline()  # job 0 took auto id 1
    try:
        pipe.submit({"i": 1}, job_id=3)  # the user's own numbering
        f = pipe.submit({"i": 2})  # took auto id 3 -> InputError "job id 3 is already in use"
        assert f.job_id != 3
    finally:
        gate.set()
        pipe.close()


# was a strict xfail ("reuse-refused") until the fix in cuzk/pipeline/core.py
def test_a_cancelled_jobs_id_is_free_in_its_done_callback():
    pipe, gate = _blocked_pipeline()
    seen = {}

    def resubmit(f):
        seen["states"] = pipe.status().jobs.get("x")  # ('queued',) though the future is cancelled
        try:
            seen["again"] = pipe.submit({"i": 5}, job_id="x")
        except InputError as e:
            seen["error"] = e

    try:
        f = pipe.submit({"i": 1}, job_id="x")
        f.add_done_callback(resubmit)
        assert f.cancel()
        assert "error" not in seen, seen
        assert seen["states"] is None
    finally:
        gate.set()
        pipe.close()
