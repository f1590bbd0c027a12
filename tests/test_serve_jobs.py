"""The daemon's waits on a job (cuzk/serve/jobs.py): AwaitProof's timeouts, a client's wake-up,
and nothing left behind by a client that polls a long job with short timeouts."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.serve.jobs import Job, outcome_of


def _job() -> Job:
    return Job("j", b"d", "WINNING_POST", "winning-2k", "critical", None, 0)


def test_polling_a_running_job_leaves_no_waiter_behind():
    job = _job()
    for _ in range(5000):  # AwaitProof with a 0 ms timeout, again and again
        assert outcome_of(job, 0) == ("TIMEOUT", None)
    # one done callback (the job's own), whatever the number of waits: a callback per wait
    # would hold an Event each until the job ends
    assert len(job.result._done_callbacks) == 1 and not job._waiters
    job.result.set_result(b"proof")
    assert outcome_of(job, 0) == ("COMPLETED", b"proof")


def test_waits_end_with_the_job_or_the_wake_or_the_timeout():
    job = _job()
    got = []
    waiters = [threading.Thread(target=lambda: got.append(outcome_of(job, None))) for _ in range(4)]
    for t in waiters:
        t.start()
    wake = threading.Event()
    gone = threading.Thread(target=lambda: got.append(outcome_of(job, None, wake)))
    gone.start()
    wake.set()  # the client went away: its wait ends, the job goes on
    gone.join(10)
    assert got == [("TIMEOUT", None)] and not gone.is_alive()
    t0 = time.monotonic()
    assert outcome_of(job, 0.05) == ("TIMEOUT", None) and time.monotonic() - t0 >= 0.04
    job.result.set_exception(ValueError("bad witness"))
    for t in waiters:
        t.join(10)
    assert [s for s, _ in got[1:]] == ["FAILED"] * 4 and not job._waiters


@settings(max_examples=60, deadline=None)
@given(delay=st.floats(0, 0.002), waiters=st.integers(1, 6))
def test_a_job_ending_while_waits_begin_wakes_every_one(delay, waiters):
    # the job may end before, during or after a wait adds itself: no wait may miss the end
    job = _job()
    ends = threading.Timer(delay, lambda: job.result.set_result(b"p"))
    got = []
    threads = [threading.Thread(target=lambda: got.append(outcome_of(job, 30))) for _ in range(waiters)]
    ends.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert got == [("COMPLETED", b"p")] * waiters and not job._waiters
