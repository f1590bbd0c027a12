"""Scheduling: priorities, FIFO, the scheduler pieces, and the concurrency="auto" controller."""

import threading

import pytest

from cuzk.errors import PipelineClosedError
from cuzk.pipeline import CRITICAL, HIGH, LOW, NORMAL, AutoController, Observation, Pipeline
from cuzk.pipeline.channel import BoundedChannel
from cuzk.pipeline.scheduler import ConcurrencyGate, JobQueue, WorkUnit, estimate_synthesized_bytes
from cuzk.timeline import EventKind as K
from pipeline_support import (  # noqa: F401  (no_leaked_threads is autouse)
    TIMEOUT, FakeProver, FakeSynthesizer, no_leaked_threads, wait_until,
)


def test_priorities_reorder_queued_work_then_fifo():
    gate = threading.Event()
    synth = FakeSynthesizer(gate=gate)
    with Pipeline(synth, FakeProver(), concurrency=1) as pipe:
        first = pipe.submit({"i": "first"})
        wait_until(lambda: synth.calls == ["first"])
        fs = [pipe.submit({"i": name}, priority=prio) for name, prio in
              [("low", LOW), ("normal-1", NORMAL), ("high", HIGH), ("critical", CRITICAL), ("normal-2", NORMAL)]]
        fs.append(pipe.submit_partitioned([{"i": "crit-p0"}, {"i": "crit-p1"}], priority="CRITICAL"))
        gate.set()
        for f in [first] + fs:
            f.result(timeout=TIMEOUT)
    assert synth.calls == ["first", "critical", "crit-p0", "crit-p1", "high", "normal-1", "normal-2", "low"]


def test_job_queue_orders_by_priority_sequence_partition():
    q = JobQueue()
    units = [WorkUnit(None, p, {}, seq, prio) for seq, p, prio in
             [(1, None, NORMAL), (2, 1, HIGH), (2, 0, HIGH), (3, None, LOW), (4, None, HIGH)]]
    for u in units:
        q.put(u)
    assert [(u.seq, u.partition) for u in iter(lambda: q.take(timeout=0), None)] == \
        [(2, 0), (2, 1), (4, None), (1, None), (3, None)]
    q.close()
    with pytest.raises(PipelineClosedError):
        q.put(units[0])


def test_job_queue_memory_admission():
    q = JobQueue(memory_budget=100)
    for seq in range(3):
        q.put(WorkUnit(None, None, {}, seq, NORMAL, nbytes=60))
    a = q.take(timeout=0)
    assert a is not None and q.take(timeout=0.01) is None and q.blocked_by_memory
    q.release(60)
    assert q.take(timeout=0) is not None
    big = JobQueue(memory_budget=10)  # a job bigger than the whole budget runs alone
    big.put(WorkUnit(None, None, {}, 0, NORMAL, nbytes=50))
    assert big.take(timeout=0) is not None


def test_gate_limit_changes_while_held():
    g = ConcurrencyGate(2)
    assert g.acquire(timeout=0) and g.acquire(timeout=0)
    g.set_limit(1)
    g.release()
    assert not g.acquire(timeout=0.01)  # 1 active, limit 1
    g.set_limit(3)
    assert g.acquire(timeout=0)
    g.shutdown()
    assert not g.acquire(timeout=0)


def test_channel_is_bounded_and_fifo():
    ch = BoundedChannel(2)
    ch.put(1)
    ch.put(2)
    blocked = threading.Event()

    def producer():
        ch.put(3)
        blocked.set()

    t = threading.Thread(target=producer, name="cuzk-test-producer")
    t.start()
    assert not blocked.wait(0.05)  # full: put blocks, nothing is dropped
    assert ch.get() == 1
    assert blocked.wait(TIMEOUT)
    t.join(TIMEOUT)
    ch.close()
    assert [ch.get(), ch.get(), ch.get()] == [2, 3, None]
    with pytest.raises(PipelineClosedError):
        ch.put(4)


def test_rendezvous_channel_waits_for_consumer():
    ch = BoundedChannel(0)
    got = []
    t = threading.Thread(target=lambda: got.append(ch.get(timeout=TIMEOUT)), name="cuzk-test-consumer")
    t.start()
    ch.put("x")  # returns only once the consumer holds it
    t.join(TIMEOUT)
    assert got == ["x"]


def test_estimate_from_r1cs_counts_and_method():
    class R1cs:
        n_constraints = 10

        def num_variables(self):
            return 7

    class WithR1cs:
        r1cs = R1cs()

    assert estimate_synthesized_bytes(WithR1cs()) == 3 * 10 * 32 + 7 * 32
    assert estimate_synthesized_bytes(FakeSynthesizer(estimate=5)) == 5
    assert estimate_synthesized_bytes(FakeSynthesizer()) is None


def obs(**kw):
    base = dict(concurrency=1, jobs=2, period_s=1.0, gpu_idle_s=0.5, synth_mean_s=0.4, cores_busy=0.5,
                queued=5, memory_blocked=False)
    base.update(kw)
    return Observation(**base)


def test_controller_raises_while_prove_stage_starves():
    c = AutoController(max_concurrency=3, cpu_count=4)
    assert c.decide(obs())[0] == 2
    assert c.decide(obs(concurrency=2, synth_mean_s=0.4))[0] == 3  # throughput doubled: keep going
    assert c.decide(obs(concurrency=3, synth_mean_s=0.4)) is None  # at max_concurrency


@pytest.mark.parametrize("change", [dict(gpu_idle_s=0.01), dict(queued=0), dict(cores_busy=3.8)])
def test_controller_holds_when_no_reason_to_raise(change):
    assert AutoController(max_concurrency=4, cpu_count=4).decide(obs(**change)) is None


def test_controller_steps_back_on_contention_and_remembers():
    c = AutoController(max_concurrency=4, cpu_count=4)
    assert c.decide(obs(synth_mean_s=1.0))[0] == 2
    value, reason = c.decide(obs(concurrency=2, synth_mean_s=1.9))  # 2 jobs at once, each ~2x slower
    assert value == 1 and "contention" in reason and c.ceiling == 1
    assert c.decide(obs(synth_mean_s=1.0)) is None  # never raises past the ceiling again


def test_controller_steps_back_when_memory_is_short():
    value, reason = AutoController(max_concurrency=4, cpu_count=4).decide(obs(concurrency=3, memory_blocked=True))
    assert value == 2 and "memory" in reason


def test_auto_pipeline_raises_concurrency_and_records_it():
    synth, prover = FakeSynthesizer(0.03), FakeProver(0.015)
    with Pipeline(synth, prover, concurrency="auto", max_concurrency=3) as pipe:
        assert pipe.concurrency == 1
        fs = [pipe.submit({"i": i}) for i in range(14)]
        assert [f.result(timeout=TIMEOUT) for f in fs] == [("proof", i) for i in range(14)]
    changes = pipe.timeline.summary().concurrency_changes
    assert changes[0][1:] == (1, "auto: start")
    assert any(value >= 2 for _, value, _ in changes), changes
    assert pipe.concurrency >= 2
    recorded = [e for e in pipe.timeline.events() if e.kind is K.CONCURRENCY]
    assert len(recorded) == len(changes)
