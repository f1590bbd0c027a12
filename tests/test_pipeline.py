"""Pipeline behaviour with fake sleeping stages: overlap, bounds, errors, shutdown, status."""

import logging
import threading
import time

import pytest

from cuzk.errors import InputError, PipelineClosedError
from cuzk.pipeline import Pipeline, ProofFuture
from cuzk.timeline import EventKind as K, Timeline
from pipeline_support import (  # noqa: F401  (no_leaked_threads is autouse)
    TIMEOUT, FakeProver, FakeSynthesizer, cuzk_threads, no_leaked_threads, wait_until,
)

SYNTH_S, PROVE_S = 0.04, 0.02  # synth = 2 x prove, as in the issue


def run_jobs(concurrency, n, **kw):
    synth, prover = FakeSynthesizer(SYNTH_S), FakeProver(PROVE_S)
    with Pipeline(synth, prover, concurrency=concurrency, **kw) as pipe:
        futures = [pipe.submit({"i": i}) for i in range(n)]
        proofs = [f.result(timeout=TIMEOUT) for f in futures]
    assert proofs == [("proof", i) for i in range(n)]
    return pipe


def test_concurrency_1_leaves_gpu_half_idle():
    s = run_jobs(1, 6).timeline.summary()
    # GPU busy 6 x 20 ms in a window of ~ 5 x 40 + 20 ms: ~55 %; idle gap ~ synth - prove = 20 ms
    assert 0.40 <= s.gpu_utilization <= 0.65
    assert len(s.idle_gaps) == 5
    assert 0.010 <= sorted(s.idle_gaps)[2] <= 0.035
    assert s.synth_seconds.p50 >= SYNTH_S and s.gpu_seconds.p50 >= PROVE_S


def test_concurrency_2_keeps_gpu_busy():
    s = run_jobs(2, 10).timeline.summary()
    assert s.gpu_utilization >= 0.95, str(s)
    assert s.jobs_done == 10


def test_stage_context_and_cpu_clocks_reach_the_timeline():
    pipe = run_jobs(1, 2)
    evs = pipe.timeline.events()
    subs = [e for e in evs if e.kind is K.SPAN_START]
    assert [(e.job_id, e.detail["name"], e.worker) for e in subs] == [(1, "MSM_A", "cuzk-gpu-0"),
                                                                         (2, "MSM_A", "cuzk-gpu-0")]
    for e in evs:
        if e.kind in (K.SYNTH_START, K.SYNTH_END, K.GPU_START, K.GPU_END):
            assert {"thread_cpu_ns", "process_cpu_ns"} <= set(e.detail)
    assert pipe.timeline.summary().kernel_utilization["MSM_A"] > 0.5
    order = [e.kind for e in evs if e.job_id == 1 and e.kind not in (K.SPAN_START, K.SPAN_END)]
    assert order == [K.JOB_SUBMIT, K.SYNTH_START, K.SYNTH_END, K.CHAN_SEND, K.GPU_PICKUP, K.GPU_START,
                     K.GPU_END, K.JOB_DONE]


@pytest.mark.parametrize("concurrency, lookahead, gpu_workers", [(2, 1, 1), (1, 0, 2), (3, 2, 1)])
def test_at_most_c_plus_l_plus_g_synthesized_jobs_alive(concurrency, lookahead, gpu_workers):
    bound = concurrency + lookahead + gpu_workers
    gate = threading.Event()
    synth, prover = FakeSynthesizer(0.001), FakeProver(gate=gate)
    with Pipeline(synth, prover, concurrency=concurrency, lookahead=lookahead, gpu_workers=gpu_workers) as pipe:
        futures = [pipe.submit({"i": i}) for i in range(bound + 4)]
        wait_until(lambda: synth.tracker.alive == bound)
        time.sleep(0.05)  # give a bound violation the chance to show
        assert synth.tracker.alive == bound
        assert len(synth.calls) == bound
        gate.set()
        for f in futures:
            f.result(timeout=TIMEOUT)
    assert synth.tracker.max_alive == bound
    assert synth.tracker.alive == 0  # the pipeline keeps no reference after proving


def test_threads_are_named_and_gone_after_close():
    with Pipeline(FakeSynthesizer(), FakeProver(), concurrency=2, gpu_workers=2) as pipe:
        names = sorted(t.name for t in cuzk_threads())
        pipe.submit({"i": 0}).result(timeout=TIMEOUT)
    assert names == ["cuzk-gpu-0", "cuzk-gpu-1", "cuzk-synth-0", "cuzk-synth-1"]
    assert cuzk_threads() == []


def test_failures_fail_only_their_own_future_with_the_original_exception():
    synth, prover = FakeSynthesizer(0.001), FakeProver(0.001, fail_ids={3})
    with Pipeline(synth, prover, concurrency=2) as pipe:
        futures = [pipe.submit({"i": i, "fail": i == 1}) for i in range(5)]
        for i, f in enumerate(futures):
            if i in (1, 3):
                exc = f.exception(timeout=TIMEOUT)
                assert exc is (synth.raised[1] if i == 1 else prover.raised[3])
                stage = "synthesis" if i == 1 else "proving"
                assert any(f"{stage} of job {i + 1}" in note for note in exc.__notes__)
            else:
                assert f.result(timeout=TIMEOUT) == ("proof", i)
        # still serving after failures
        assert pipe.submit({"i": 9}).result(timeout=TIMEOUT) == ("proof", 9)
    with pytest.raises(ValueError):
        futures[1].result(timeout=TIMEOUT)
    s = pipe.timeline.summary()
    assert (s.jobs_done, s.jobs_failed) == (4, 2)
    assert pipe.metrics().counters == {"submitted": 6, "done": 4, "failed": 2, "cancelled": 0}


def test_partitions_assemble_in_order():
    synth, prover = FakeSynthesizer(), FakeProver(0.001)
    with Pipeline(synth, prover, concurrency=3) as pipe:
        # partition 0 is slowest, so partitions finish out of order
        f = pipe.submit_partitioned([{"i": i, "delay": 0.03 - 0.01 * i} for i in range(4)])
        assert isinstance(f, ProofFuture) and f.partitions == 4
        assert f.result(timeout=TIMEOUT) == [("proof", i) for i in range(4)]
    parts = {e.partition for e in pipe.timeline.events() if e.kind is K.JOB_DONE}
    assert parts == {0, 1, 2, 3}


def test_partitioned_job_fails_as_a_whole_and_skips_the_rest():
    synth, prover = FakeSynthesizer(0.005), FakeProver()
    with Pipeline(synth, prover, concurrency=1) as pipe:
        f = pipe.submit_partitioned([{"i": 0}, {"i": 1, "fail": True}, {"i": 2}, {"i": 3}])
        other = pipe.submit({"i": 7})
        assert f.exception(timeout=TIMEOUT) is synth.raised[1]
        assert other.result(timeout=TIMEOUT) == ("proof", 7)
    assert synth.calls == [0, 1, 7]  # partitions 2 and 3 never synthesized
    ends = {e.partition: e for e in pipe.timeline.events() if e.job_id == 1 and
            e.kind in (K.JOB_DONE, K.JOB_FAILED, K.JOB_CANCELLED)}
    # JOB_DONE counts delivered proofs: partition 0 was proved but never delivered
    assert {p: e.kind for p, e in ends.items()} == \
        {0: K.JOB_CANCELLED, 1: K.JOB_FAILED, 2: K.JOB_CANCELLED, 3: K.JOB_CANCELLED}
    assert ends[0].detail["reason"].startswith("discarded")


def test_cancel_queued_job_only():
    gate = threading.Event()
    synth = FakeSynthesizer(gate=gate)
    with Pipeline(synth, FakeProver(), concurrency=1) as pipe:
        running = pipe.submit({"i": 0})
        queued = pipe.submit({"i": 1})
        by_id = pipe.submit({"i": 2}, job_id="sector-2")
        wait_until(lambda: synth.calls == [0])
        assert not running.cancel()
        assert queued.cancel() and queued.cancelled()
        assert pipe.cancel("sector-2") and by_id.cancelled()
        assert not pipe.cancel("no-such-job")
        gate.set()
        assert running.result(timeout=TIMEOUT) == ("proof", 0)
    assert synth.calls == [0]
    assert pipe.status().counts["cancelled"] == 2


def test_close_drains_or_cancels():
    gate = threading.Event()
    synth = FakeSynthesizer(gate=gate)
    pipe = Pipeline(synth, FakeProver(), concurrency=1)
    fs = [pipe.submit({"i": i}) for i in range(4)]
    wait_until(lambda: synth.calls == [0])
    pipe.close(wait=False, cancel_futures=True)
    with pytest.raises(PipelineClosedError):
        pipe.submit({"i": 9})
    gate.set()
    pipe.close(wait=True)
    assert fs[0].result(timeout=TIMEOUT) == ("proof", 0)
    assert all(f.cancelled() for f in fs[1:])

    pipe = Pipeline(FakeSynthesizer(0.002), FakeProver(), concurrency=1)
    fs = [pipe.submit({"i": i}) for i in range(4)]
    pipe.close()  # drain
    assert [f.result(timeout=0) for f in fs] == [("proof", i) for i in range(4)]
    with pytest.raises(PipelineClosedError):
        pipe.submit_partitioned([{"i": 1}])


def test_status_and_metrics_while_running():
    s_gate, p_gate = threading.Event(), threading.Event()
    synth, prover = FakeSynthesizer(gate=s_gate), FakeProver(gate=p_gate)
    with Pipeline(synth, prover, concurrency=1, lookahead=1) as pipe:
        f0 = pipe.submit({"i": 0}, job_id="a")
        pipe.submit({"i": 1}, job_id="b")
        wait_until(lambda: synth.calls == [0])
        st = pipe.status()
        assert st.jobs == {"a": ("synthesizing",), "b": ("queued",)}
        assert (st.counts["synthesizing"], st.counts["queued"]) == (1, 1)
        with pytest.raises(InputError, match="already in use"):
            pipe.submit({"i": 2}, job_id="a")
        s_gate.set()
        wait_until(lambda: prover.calls == [0])
        wait_until(lambda: pipe.status().jobs == {"a": ("proving",), "b": ("waiting_for_gpu",)})
        assert "proving 1" in str(pipe.status())
        p_gate.set()
        f0.result(timeout=TIMEOUT)
    m = pipe.metrics()
    assert m.counters["done"] == 2 and m.stage_seconds["gpu"][0] == 2
    text = m.to_prometheus()
    assert "cuzk_pipeline_done_total 2" in text
    assert 'cuzk_pipeline_stage_seconds_count{stage="synth"} 2' in text
    assert pipe.status().jobs == {} and pipe.status().closed


def test_map_and_priority_names():
    with Pipeline(FakeSynthesizer(), FakeProver(), concurrency=2) as pipe:
        assert list(pipe.map([{"i": i} for i in range(5)], priority="high", timeout=TIMEOUT)) == \
            [("proof", i) for i in range(5)]
        with pytest.raises(InputError, match="priority"):
            pipe.submit({"i": 0}, priority="urgent")
        with pytest.raises(InputError, match="mapping"):
            pipe.submit([1, 2])
        with pytest.raises(InputError, match="non-empty"):
            pipe.submit_partitioned([])
        # these failed the job's future (or submit) with TypeError, not at submit with InputError
        with pytest.raises(InputError, match="non-empty"):
            pipe.submit_partitioned(5)
        with pytest.raises(InputError, match="input names must be strings"):
            pipe.submit({1: 2})
        with pytest.raises(InputError, match="hashable"):
            pipe.submit({"i": 0}, job_id=[1])
        assert pipe.submit({"i": 7}).result(timeout=TIMEOUT) == ("proof", 7)  # still serving


@pytest.mark.parametrize("kwargs, match", [
    ({"concurrency": 0}, "concurrency"), ({"concurrency": "fast"}, "concurrency"),
    ({"lookahead": -1}, "lookahead"), ({"gpu_workers": 0}, "gpu_workers"),
    ({"memory_budget": 1 << 20}, "estimate"), ({"timeline": 5}, "timeline"), ({"concurrency": "auto", "max_concurrency": 0}, "max_concurrency"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(InputError, match=match):
        Pipeline(FakeSynthesizer(), FakeProver(), **kwargs)
    with pytest.raises(InputError, match="synthesize"):
        Pipeline(object(), FakeProver())


def test_memory_budget_limits_jobs_in_flight():
    gate = threading.Event()
    synth = FakeSynthesizer(estimate=1000)
    with Pipeline(synth, FakeProver(gate=gate), concurrency=4, lookahead=2, memory_budget=2500) as pipe:
        fs = [pipe.submit({"i": i}) for i in range(6)]
        wait_until(lambda: len(synth.calls) == 2)
        time.sleep(0.05)
        assert len(synth.calls) == 2  # a third job would exceed the 2500-byte budget
        st = pipe.status()
        assert st.memory_reserved_bytes == 2000 and st.counts["queued"] == 4
        gate.set()
        assert [f.result(timeout=TIMEOUT) for f in fs] == [("proof", i) for i in range(6)]
    assert synth.tracker.max_alive <= 2 and pipe.status().memory_reserved_bytes == 0


def test_shared_timeline_and_listener_errors_do_not_break_jobs(caplog):
    tl = Timeline()
    tl.add_listener(lambda e: 1 / 0)
    with caplog.at_level(logging.ERROR, logger="cuzk.timeline"):
        with Pipeline(FakeSynthesizer(), FakeProver(), timeline=tl) as pipe:
            assert pipe.submit({"i": 1}).result(timeout=TIMEOUT) == ("proof", 1)
    assert pipe.timeline is tl and tl.summary().jobs_done == 1
    assert "ZeroDivisionError" in caplog.text


def test_done_callback_may_submit_more_work():
    results = []
    with Pipeline(FakeSynthesizer(), FakeProver()) as pipe:
        done = threading.Event()

        def chain(f):  # runs on a prove worker; must not deadlock on the pipeline's lock
            results.append(f.result())
            if len(results) < 3:
                pipe.submit({"i": len(results)}).add_done_callback(chain)
            else:
                done.set()

        pipe.submit({"i": 0}).add_done_callback(chain)
        assert done.wait(TIMEOUT)
    assert results == [("proof", 0), ("proof", 1), ("proof", 2)]


def test_two_partitions_failing_at_once_resolve_the_future_once(caplog):
    gate = threading.Event()
    synth = FakeSynthesizer(gate=gate)
    with caplog.at_level(logging.ERROR, logger="cuzk"):
        with Pipeline(synth, FakeProver(), concurrency=2) as pipe:
            f = pipe.submit_partitioned([{"i": 0, "fail": True}, {"i": 1, "fail": True}])
            wait_until(lambda: len(synth.calls) == 2)
            gate.set()
            exc = f.exception(timeout=TIMEOUT)
    assert exc is synth.raised[0] or exc is synth.raised[1]
    assert len(exc.__notes__) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    failed = [e.partition for e in pipe.timeline.events() if e.kind is K.JOB_FAILED]
    assert sorted(failed) == [0, 1]


class _RaisingStages:
    """synthesize(exc=...) / prove raise the BaseException they are handed (``None``: succeed)."""

    def synthesize(self, i, exc=None, prove_exc=None):
        if exc is not None:
            raise exc
        return (i, prove_exc)

    def prove(self, synthesized):
        i, exc = synthesized
        if exc is not None:
            raise exc
        return ("proof", i)


@pytest.mark.parametrize("stage", ["exc", "prove_exc"])
@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_base_exception_in_a_stage_fails_its_job_and_the_worker_keeps_serving(stage, exc_type):
    # a BaseException used to end the (only) worker thread: its job and every later one never resolved
    stages = _RaisingStages()
    with Pipeline(stages, stages, concurrency=1) as pipe:
        bad = pipe.submit({"i": 0, stage: exc_type()})
        good = pipe.submit({"i": 1})
        assert isinstance(bad.exception(timeout=TIMEOUT), exc_type)
        assert good.result(timeout=TIMEOUT) == ("proof", 1)
        assert pipe.submit({"i": 2}).result(timeout=TIMEOUT) == ("proof", 2)


def test_close_from_a_done_callback_does_not_deadlock():
    # the callback runs on the prove worker; close(wait=True) there joined a synthesis worker that
    # was blocked handing its result to that very prove worker
    gate = threading.Event()
    with Pipeline(FakeSynthesizer(0.01), FakeProver(), concurrency=1, lookahead=0) as pipe:
        first = pipe.submit({"i": 0})
        first.add_done_callback(lambda f: (pipe.close(wait=True), gate.set()))
        rest = [pipe.submit({"i": i}) for i in range(1, 4)]
        assert gate.wait(TIMEOUT)
        assert [f.result(timeout=TIMEOUT) for f in rest] == [("proof", i) for i in range(1, 4)]
