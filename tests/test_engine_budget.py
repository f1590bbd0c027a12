"""The Engine's memory budget never strands a job (docs/engine.md, "Memory budget").

Idle keys are evicted when a load needs room, and also when a queued job's admission waits on
them; what no eviction frees (every circuit's PCE, registered ProvingKeys) is counted at register
and at submit, so a job that could never be admitted fails with MemoryBudgetError at once, and
one that becomes impossible while queued fails instead of waiting forever.
"""

import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cuzk
from cuzk.circuits.cube import Cube
from cuzk.engine.circuit import pce_bytes
from cuzk.errors import MemoryBudgetError
from cuzk.groth16 import setup
from cuzk.pipeline.scheduler import estimate_synthesized_bytes
from cuzk.timeline import EventKind as K
from pipeline_support import TIMEOUT, no_leaked_threads  # noqa: F401  (autouse)


class Gated:
    """A synthesizer that waits on ``gate`` while ``hold`` is set (``entered`` tells it started)."""

    def __init__(self, synth):
        self._s, self.gate, self.entered, self.hold = synth, threading.Event(), threading.Event(), False

    def __getattr__(self, name):
        return getattr(self._s, name)

    def synthesize(self, **kw):
        if self.hold:
            self.entered.set()
            assert self.gate.wait(TIMEOUT)
        return self._s.synthesize(**kw)


@pytest.fixture(scope="module")
def cube(tmp_path_factory):
    synth = cuzk.Synthesizer(Cube())
    pk, _ = setup(synth.r1cs)
    path = tmp_path_factory.mktemp("keys") / "cube.params"
    pk.write(path)
    return synth, pk, path


INPUTS = Cube().sample_inputs(seed=1)


def _close(e, wait_s=TIMEOUT):
    """close(wait=True) on a thread, bounded: a stranded job made it hang forever."""
    t = threading.Thread(target=e.close, daemon=True)
    t.start()
    t.join(wait_s)
    if t.is_alive():
        e.close(wait=False, cancel_futures=True)
        pytest.fail("close(wait=True) hangs")


def _two_keys_over_budget(cube, tmp_path, budget):
    """a's and b's keys both loaded over ``budget`` (b loaded while a was busy), both idle."""
    synth, _, path = cube
    A, B = Gated(synth), Gated(synth)
    e = cuzk.Engine(device="cpu", memory_budget=budget, key_cache=tmp_path / "cache")
    e.register("a", A, path)
    e.register("b", B, path)
    e.submit("a", INPUTS).result(timeout=TIMEOUT)
    A.hold = True
    held = e.submit("a", INPUTS)
    assert A.entered.wait(TIMEOUT)
    e.submit("b", INPUTS).result(timeout=TIMEOUT)  # a is busy: not evicted, the budget is exceeded
    A.gate.set()
    held.result(timeout=TIMEOUT)
    A.hold = False
    mem = e.status()["memory"]
    assert mem["reserved"] > mem["budget"]
    return e


def test_idle_keys_over_the_budget_are_evicted_for_a_queued_job(cube, tmp_path):
    e = _two_keys_over_budget(cube, tmp_path, budget=6000)
    try:
        e.submit("a", INPUTS).result(timeout=TIMEOUT)  # waited for admission forever
        evicted = [(x.circuit, x.detail["reason"]) for x in e.timeline.events() if x.kind is K.KEY_EVICT]
        assert evicted == [("b", "admission of 'a'")]
        assert e.status()["keys"]["b"]["tier"] == "disk"
        # and b, next, gets its key back by evicting a's, now idle
        e.submit("b", INPUTS).result(timeout=TIMEOUT)
        assert e.status()["memory"]["reserved"] <= 6000
    finally:
        _close(e)


def test_jobs_of_both_circuits_queued_at_once_both_run_and_close_returns(cube, tmp_path):
    """Neither circuit is idle (each has a queued job), yet their keys hold the budget: a key whose
    circuit has only queued jobs is evicted too (it is loaded again for its proof)."""
    e = _two_keys_over_budget(cube, tmp_path, budget=6000)
    fs = [e.submit(name, INPUTS) for name in ("a", "b", "a", "b")]
    try:
        for f in fs:
            f.result(timeout=TIMEOUT)
    finally:
        _close(e)


def test_a_queued_job_that_can_no_longer_ever_fit_fails_instead_of_waiting(cube, tmp_path):
    """A ProvingKey registered while a job waits takes for good what the job needed."""
    synth, pk, path = cube
    witness = estimate_synthesized_bytes(synth)
    pce = pce_bytes(synth)
    A = Gated(synth)
    # a's job fits on its own (witness + key file + PCE); with a ProvingKey and a second PCE
    # registered, and a's key loaded, its next witness does not, and no eviction can help
    budget = 2 * pce + 2 * sum(a.nbytes for a in _arrays(pk)) + witness - 1
    e = cuzk.Engine(device="cpu", memory_budget=budget, key_cache=tmp_path / "cache")
    try:
        e.register("a", A, path)
        e.preload("a")
        A.hold = True
        first = e.submit("a", INPUTS)
        assert A.entered.wait(TIMEOUT)
        second = e.submit("a", INPUTS)
        e.register("resident", synth, pk)
        A.gate.set()
        first.result(timeout=TIMEOUT)
        with pytest.raises(MemoryBudgetError, match="circuit 'a' can never fit the memory budget"):
            second.result(timeout=TIMEOUT)
        assert e.status()["circuits"]["a"]["failed"] == 1
    finally:
        _close(e)


def _arrays(pk):
    from cuzk.engine.keyarrays import key_to_arrays

    return key_to_arrays(pk)[0].values()


def test_make_room_never_evicts_a_registered_proving_key(cube, tmp_path):
    """Dropping a registered ProvingKey's provers frees no host bytes (the key is the host's):
    it is not evicted to make room, its prover stays ready."""
    synth, pk, path = cube
    with cuzk.Engine(device="cpu", memory_budget=7000, key_cache=tmp_path / "cache") as e:
        e.register("obj", synth, pk)
        e.submit("obj", INPUTS).result(timeout=TIMEOUT)
        e.register("file", synth, path)
        e.preload("file")  # needs room; 'obj' is idle but frees nothing
        assert not [x for x in e.timeline.events() if x.kind is K.KEY_EVICT]
        assert e._route("obj").resident_devices() == (None,)


def test_other_circuits_pces_count_at_submit(cube, tmp_path):
    """b's PCE stays reserved though b never runs: a's job, which fits only without it, fails
    at submit naming the sizes (it used to be accepted, then a second one waited forever)."""
    synth, _, path = cube
    with cuzk.Engine(device="cpu", memory_budget=4500, key_cache=tmp_path / "cache") as e:
        e.register("a", synth, path)
        e.register("b", synth, path)
        with pytest.raises(MemoryBudgetError, match=r"other circuits' PCEs and registered keys 856 = \d+ bytes"):
            e.submit("a", INPUTS)


def test_registered_proving_keys_over_the_budget_are_refused_at_register(cube):
    synth, pk, _ = cube
    with cuzk.Engine(device="cpu", memory_budget=6000) as e:
        e.register("a", synth, pk)
        with pytest.raises(MemoryBudgetError, match="circuit 'b'.* over the memory budget of 6000 bytes"):
            e.register("b", synth, pk)
        assert e.circuits() == ("a",)
        e.submit("a", INPUTS).result(timeout=TIMEOUT)


class Pce:
    """A synthesizer with a PCE of ``nbytes`` (the arrays the budget counts) and a witness estimate."""

    def __init__(self, nbytes, witness):
        self.program = np.zeros(nbytes, dtype=np.uint8)
        self.witness = witness

    def estimate_bytes(self):
        return self.witness

    def synthesize(self, x):
        return x


class Echo:
    def prove(self, w):
        return ("proof", w)


@settings(max_examples=25)
@given(pces=st.lists(st.integers(0, 400), min_size=1, max_size=4), witness=st.integers(1, 400),
       budget=st.integers(100, 1200), runs=st.integers(1, 3))
def test_every_job_either_fails_at_submit_or_is_proved(pces, witness, budget, runs):
    """Whatever the circuits' PCEs, a job the engine accepts is proved (never waits forever)."""
    e = cuzk.Engine(device="cpu", memory_budget=budget)
    try:
        names, fixed = [], 0
        for i, n in enumerate(pces):
            try:
                e.register(f"c{i}", Pce(n, witness), Echo())
            except MemoryBudgetError:
                assert fixed + n > budget
            else:
                names.append(f"c{i}")
                fixed += n
        fs = []
        for name in names * runs:
            try:
                fs.append(e.submit(name, {"x": 1}))
            except MemoryBudgetError as exc:
                assert fixed + witness > budget and str(budget) in str(exc)
            else:
                assert fixed + witness <= budget
        for f in fs:
            assert f.result(timeout=TIMEOUT) == ("proof", 1)
    finally:
        _close(e)
