"""Pipeline defects found by an outside probe: listeners that call back, exceptions
that cannot take notes, done-callbacks that raise BaseException, bad size estimates, and proofs
of a failed job counted as delivered."""

import logging
import threading

import pytest

from cuzk.errors import InputError
from cuzk.pipeline import Pipeline
from cuzk.timeline import EventKind as K, Timeline
from pipeline_support import (  # noqa: F401  (no_leaked_threads is autouse)
    TIMEOUT, FakeProver, FakeSynthesizer, no_leaked_threads, wait_until,
)


@pytest.mark.parametrize("kind", [K.JOB_SUBMIT, K.SYNTH_START, K.GPU_END, K.JOB_DONE, K.JOB_FAILED])
def test_a_listener_may_call_back_into_the_pipeline(kind):
    # listeners ran while the pipeline's lock was held: status() on JOB_DONE deadlocked the prove
    # worker, and on JOB_SUBMIT submit() itself hung
    tl = Timeline()
    seen = []
    box = {}

    def listener(e):
        if e.kind is kind:
            seen.append(box["pipe"].status().counts)

    tl.add_listener(listener)
    pipe = Pipeline(FakeSynthesizer(), FakeProver(fail_ids={1}), timeline=tl)
    box["pipe"] = pipe
    try:
        done = {}

        def submit():
            done["futures"] = [pipe.submit({"i": i}) for i in range(3)]

        t = threading.Thread(target=submit, name="test-submitter", daemon=True)
        t.start()
        t.join(TIMEOUT)
        assert not t.is_alive(), "submit() hung in a listener"
        f0, f1, f2 = done["futures"]
        assert f0.result(timeout=TIMEOUT) == ("proof", 0)
        assert isinstance(f1.exception(timeout=TIMEOUT), KeyError)
        assert f2.result(timeout=TIMEOUT) == ("proof", 2)
    finally:
        pipe.close()
    assert seen, "the listener never saw its event"


def test_a_listener_may_submit_from_job_done():
    tl = Timeline()
    box, chained = {}, []

    def listener(e):
        if e.kind is K.JOB_DONE and e.job_id == "first":
            chained.append(box["pipe"].submit({"i": 9}, job_id="second"))

    tl.add_listener(listener)
    with Pipeline(FakeSynthesizer(), FakeProver(), timeline=tl) as pipe:
        box["pipe"] = pipe
        assert pipe.submit({"i": 1}, job_id="first").result(timeout=TIMEOUT) == ("proof", 1)
        wait_until(lambda: chained)
        assert chained[0].result(timeout=TIMEOUT) == ("proof", 9)


def test_listener_base_exception_on_a_worker_is_logged_and_the_pipeline_serves_on(caplog):
    tl = Timeline()

    def listener(e):
        if e.kind is K.GPU_START and threading.current_thread().name.startswith("cuzk-"):
            raise SystemExit("dashboard quit")

    tl.add_listener(listener)
    with caplog.at_level(logging.ERROR, logger="cuzk.timeline"):
        with Pipeline(FakeSynthesizer(), FakeProver(), timeline=tl) as pipe:
            assert [pipe.submit({"i": i}).result(timeout=TIMEOUT) for i in range(3)] == \
                [("proof", i) for i in range(3)]
    assert "SystemExit" in caplog.text


class _NotesStages:
    """Raises an exception whose ``__notes__`` is a tuple: ``add_note`` on it raises TypeError."""

    def synthesize(self, i, where="synth"):
        if where == "synth":
            e = ValueError("synth")
            e.__notes__ = ("n",)
            raise e
        return (i, where)

    def prove(self, s):
        i, where = s
        e = ValueError("prove")
        e.__notes__ = ("n",)
        raise e


@pytest.mark.parametrize("where", ["synth", "prove"])
def test_an_exception_that_cannot_take_notes_still_fails_its_future(where):
    stages = _NotesStages()
    with Pipeline(stages, stages) as pipe:
        f = pipe.submit({"i": 0, "where": where})
        exc = f.exception(timeout=TIMEOUT)
        assert isinstance(exc, ValueError) and str(exc) == where
        assert pipe.status().counts["failed"] == 1


@pytest.mark.parametrize("exc_type", [SystemExit, KeyboardInterrupt])
def test_done_callback_raising_base_exception_does_not_kill_the_worker(exc_type):
    def boom(f):
        raise exc_type()

    with Pipeline(FakeSynthesizer(), FakeProver(), concurrency=1) as pipe:
        first = pipe.submit({"i": 0})
        first.add_done_callback(boom)  # may run here (already done) or on the prove worker
        assert first.result(timeout=TIMEOUT) == ("proof", 0)
        assert [pipe.submit({"i": i}).result(timeout=TIMEOUT) for i in (1, 2)] == [("proof", 1), ("proof", 2)]


def test_cancel_removes_queued_units_even_if_a_done_callback_raises():
    gate = threading.Event()
    with Pipeline(FakeSynthesizer(gate=gate), FakeProver(), concurrency=1) as pipe:
        pipe.submit({"i": 0})
        f = pipe.submit({"i": 1})
        wait_until(lambda: pipe.status().counts["synthesizing"] == 1)
        f.add_done_callback(lambda _: (_ for _ in ()).throw(SystemExit()))
        with pytest.raises(SystemExit):
            f.cancel()
        assert f.cancelled() and pipe.status().counts["queued"] == 0
        gate.set()


@pytest.mark.parametrize("estimate", [-1, 1.5, "10", True, None])
def test_bad_size_estimates_are_refused(estimate):
    synth = FakeSynthesizer()
    synth.estimate_bytes = lambda: estimate
    with pytest.raises(InputError, match="estimate_bytes"):
        Pipeline(synth, FakeProver())


def test_partitions_proved_after_their_job_failed_are_not_counted_as_done():
    gate = threading.Event()
    prover = FakeProver(gate=gate)
    with Pipeline(FakeSynthesizer(), prover, concurrency=2, gpu_workers=2) as pipe:
        f = pipe.submit_partitioned([{"i": 0}, {"i": 1, "fail": True, "delay": 0.2}])
        wait_until(lambda: prover.calls == [0])  # partition 0 is proving when partition 1 fails
        assert isinstance(f.exception(timeout=TIMEOUT), ValueError)
        gate.set()
    ev = pipe.timeline.events()
    assert not [e for e in ev if e.kind is K.JOB_DONE]
    (discarded,) = [e for e in ev if e.kind is K.JOB_CANCELLED and e.partition == 0]
    assert discarded.detail["reason"].startswith("discarded")
    assert pipe.status().counts["done"] == 0
