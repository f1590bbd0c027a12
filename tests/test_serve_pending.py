"""cuzk/serve/pending.py: a waiting call's answer comes exactly once (the job's end, the timeout,
or never for a caller gone away), on the thread that ends the job, and leaves no waiter or timer
behind; the timer thread runs callbacks in time order."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.serve.jobs import Job
from cuzk.serve.pending import Pending, Timers


def _job() -> Job:
    return Job("j", b"d", "WINNING_POST", "winning-2k", "critical", None, 0)


@pytest.fixture
def timers():
    t = Timers()
    yield t
    t.close()


def _collect(pending, timers):
    got, where, done = [], [], threading.Event()

    def on_ready(build):
        got.append(build())
        where.append(threading.current_thread().name)
        done.set()

    cancel = pending.when_ready(on_ready, timers)
    return got, where, done, cancel


def test_the_thread_that_ends_the_job_answers(timers):
    job = _job()
    got, where, _done, _ = _collect(Pending(job, 30.0, lambda s, v: (s, v)), timers)
    assert got == []
    ender = threading.Thread(target=lambda: job.result.set_result(b"proof"), name="the-prover")
    ender.start()
    ender.join()
    assert got == [("COMPLETED", b"proof")] and where == ["the-prover"]
    assert not job._waiters and len(timers) == 0


def test_the_timeout_answers_from_the_timer_thread_and_the_job_goes_on(timers):
    job = _job()
    t0 = time.monotonic()
    got, where, done, _ = _collect(Pending(job, 0.05, lambda s, v: s), timers)
    assert done.wait(10) and got == ["TIMEOUT"] and where == ["cuzk-serve-timers"]
    assert time.monotonic() - t0 >= 0.045 and job.live and not job._waiters
    job.result.set_result(b"p")
    assert got == ["TIMEOUT"]  # once


def test_an_ended_job_or_a_zero_timeout_answers_at_once_on_the_calling_thread(timers):
    job = _job()
    got, where, _, _ = _collect(Pending(job, 0, lambda s, v: s), timers)
    assert got == ["TIMEOUT"] and where == [threading.current_thread().name] and not job._waiters
    job.result.set_exception(ValueError("bad witness"))
    got, where, _, _ = _collect(Pending(job, None, lambda s, v: (s, str(v))), timers)
    assert got == [("FAILED", "bad witness")]


def test_a_caller_gone_away_is_never_answered_and_leaves_nothing_behind(timers):
    job = _job()
    for _ in range(500):  # a client that polls with long timeouts and disconnects each time
        got, _, _, cancel = _collect(Pending(job, 600.0, lambda s, v: s), timers)
        cancel()
    assert not job._waiters and len(timers) == 0 and len(timers._heap) <= 65
    job.result.cancel()
    assert got == []


def test_then_chains_the_answer(timers):
    job = _job()
    job.result.set_result(b"p")
    p = Pending(job, None, lambda s, v: {"status": s, "proof": v}).then(lambda f: f["proof"] * 2)
    assert p.wait() == b"pp"
    got, _, _, _ = _collect(p, timers)
    assert got == [b"pp"]


@settings(max_examples=80, deadline=None)
@given(end_after=st.floats(0, 0.003), timeout=st.sampled_from([None, 0.0, 0.001, 0.002, 5.0]),
       gone_after=st.one_of(st.none(), st.floats(0, 0.003)))
def test_exactly_one_answer_or_none_whatever_the_race(end_after, timeout, gone_after):
    timers = Timers()
    try:
        job = _job()
        ender = threading.Timer(end_after, lambda: job.result.set_result(b"p"))
        ender.start()
        got, _, _, cancel = _collect(Pending(job, timeout, lambda s, v: s), timers)
        if gone_after is not None:
            time.sleep(gone_after)
            cancel()
        ender.join()
        time.sleep(0.01 if timeout in (0.001, 0.002) else 0)
        deadline = time.monotonic() + 5
        while gone_after is None and not got and time.monotonic() < deadline:
            time.sleep(0.001)
        assert len(got) <= 1 and (gone_after is not None or len(got) == 1)
        assert set(got) <= {"COMPLETED", "TIMEOUT"} and not job._waiters
        if gone_after is None and timeout is None:
            assert got == ["COMPLETED"]
    finally:
        timers.close()


def test_timers_run_in_time_order_and_cancelled_ones_do_not_run(timers):
    ran = []
    done = threading.Event()
    for delay, name in [(0.03, "c"), (0.01, "a"), (0.02, "b")]:
        timers.call_later(delay, lambda name=name: ran.append(name))
    cancel = timers.call_later(0.015, lambda: ran.append("cancelled"))
    timers.call_later(0.04, done.set)
    cancel()
    assert done.wait(10) and ran == ["a", "b", "c"]


def test_a_failing_timer_does_not_stop_the_others(timers):
    done = threading.Event()
    timers.call_later(0.0, lambda: 1 / 0)
    timers.call_later(0.01, done.set)
    assert done.wait(10)


def test_closed_timers_refuse_new_ones():
    t = Timers()
    t.call_later(60, lambda: None)
    t.close()
    with pytest.raises(RuntimeError):
        t.call_later(0, lambda: None)
