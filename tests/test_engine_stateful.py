"""Hypothesis state machine over an Engine with several circuits: submits with priorities,
deadlines and repeated request ids, cancels, evicts, preloads and closes. Every future resolves
exactly once, to the right proof or the right error; the timeline has one terminal event per
unit and no GPU span for an expired job. A property test checks the queue's pick order."""

import collections
import time

import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import cuzk
from cuzk.errors import DeadlineExceededError, EngineError, InputError
from cuzk.pipeline.scheduler import JobQueue, Priority, WorkUnit
from cuzk.timeline import EventKind as K
from pipeline_support import TIMEOUT, FakeProver, FakeSynthesizer, no_leaked_threads  # noqa: F401
from test_pipeline_stateful import check_timeline

FAIL_PROVE_BASE = 10_000
CIRCUITS = ("seal", "window", "winning")


class EngineMachine(RuleBasedStateMachine):
    @initialize(workers=st.integers(1, 2), lookahead=st.integers(0, 2), concurrency=st.integers(1, 2))
    def start(self, workers, lookahead, concurrency):
        self.engine = cuzk.Engine(device="cpu", memory_budget=None, workers_per_device=workers, lookahead=lookahead)
        self.stages = {}
        for name in CIRCUITS:
            synth = FakeSynthesizer(0.001)
            prover = FakeProver(0.001, fail_ids=range(FAIL_PROVE_BASE, FAIL_PROVE_BASE + 1000))
            self.engine.register(name, synth, prover, concurrency=concurrency)
            self.stages[name] = (synth, prover)
        self.jobs = []  # (future, circuit, expected [(i, mode)], partitioned)
        self.requests = {}  # request id -> (future, circuit, inputs)
        self.resolutions = collections.Counter()
        self.next_i = 0
        self.closed = False

    def _inputs(self, mode):
        self.next_i += 1
        i = self.next_i + (FAIL_PROVE_BASE if mode == "prove" else 0)
        return {"i": i, "fail": mode == "synth"}, (i, mode)

    @rule(circuit=st.sampled_from(CIRCUITS), mode=st.sampled_from(["ok", "ok", "synth", "prove", "expired"]),
          priority=st.sampled_from(list(Priority)), request=st.sampled_from([None, None, "a", "b"]),
          parts=st.integers(0, 3))
    def submit(self, circuit, mode, priority, request, parts):
        if request in self.requests:  # same id: same future for the same inputs, InputError otherwise
            future, c, inputs = self.requests[request]
            if self.closed:
                return
            again = (self.engine.submit_partitioned(c, inputs, request_id=request) if isinstance(inputs, list)
                     else self.engine.submit(c, inputs, request_id=request))
            assert again is future
            other = {"i": -1}
            with pytest.raises((InputError, EngineError)):
                self.engine.submit(c, other, request_id=request)
            return
        pairs = [self._inputs("ok" if mode == "expired" else mode) for _ in range(max(1, parts))]
        deadline = time.time() - 1 if mode == "expired" else None
        inputs = [p[0] for p in pairs] if parts else pairs[0][0]
        try:
            if parts:
                f = self.engine.submit_partitioned(circuit, inputs, priority=priority, request_id=request,
                                                   deadline=deadline)
            else:
                f = self.engine.submit(circuit, inputs, priority=priority, request_id=request, deadline=deadline)
        except EngineError:
            assert self.closed
            return
        assert not self.closed
        f.add_done_callback(lambda fut: self.resolutions.update([id(fut)]))
        self.jobs.append((f, circuit, [(i, "expired" if mode == "expired" else m) for i, m in (p[1] for p in pairs)],
                          bool(parts)))
        if request is not None:
            self.requests[request] = (f, circuit, inputs)

    @rule(index=st.integers(0, 50))
    def cancel(self, index):
        if self.jobs:
            future = self.jobs[index % len(self.jobs)][0]
            by_id = index % 2 == 0
            (self.engine.cancel(future.job_id) if by_id else future.cancel())

    @rule(circuit=st.sampled_from(CIRCUITS))
    def evict(self, circuit):
        try:
            self.engine.evict(circuit)
        except EngineError as e:
            assert "in use" in str(e)

    @rule(circuit=st.sampled_from(CIRCUITS))
    def preload(self, circuit):
        try:
            self.engine.preload(circuit)
        except EngineError:
            assert self.closed

    @rule(cancel_futures=st.booleans())
    def close(self, cancel_futures):
        self.engine.close(wait=False, cancel_futures=cancel_futures)
        self.closed = True

    @invariant()
    def never_resolved_twice(self):
        assert all(n == 1 for n in self.resolutions.values())

    def teardown(self):
        self.engine.close(wait=True)
        for future, circuit, expected, partitioned in self.jobs:
            assert future.done()
            assert self.resolutions[id(future)] == 1
            if future.cancelled():
                continue
            assert future.timings is not None and future.timings.total_s >= 0
            exc = future.exception(timeout=TIMEOUT)
            if any(m == "expired" for _, m in expected):
                assert isinstance(exc, DeadlineExceededError)
                continue
            failing = [(i, m) for i, m in expected if m != "ok"]
            if exc is None:
                assert not failing
                proofs = [("proof", i) for i, _ in expected]
                assert future.result() == (proofs if partitioned else proofs[0])
            else:
                synth, prover = self.stages[circuit]
                raised = {**synth.raised, **prover.raised}
                assert failing and any(exc is raised.get(i) for i, _ in failing), exc
        events = self.engine.timeline.events()
        check_timeline(events)
        expired = {f.job_id for f, _, exp, _ in self.jobs if any(m == "expired" for _, m in exp)}
        assert not [e for e in events if e.kind in (K.GPU_START, K.SYNTH_START) and e.job_id in expired]


EngineMachine.TestCase.settings = settings(max_examples=20, stateful_step_count=12, deadline=None)
TestEngineMachine = EngineMachine.TestCase


_unit = st.tuples(st.sampled_from(list(Priority)), st.one_of(st.none(), st.floats(0, 100)), st.integers(0, 3))


@settings(max_examples=200, deadline=None)
@given(st.lists(_unit, min_size=1, max_size=30), st.data())
def test_queue_picks_by_priority_then_deadline_then_submission(units, data):
    q = JobQueue()
    made = []
    for seq, (prio, deadline, part) in enumerate(units):
        u = WorkUnit(job=None, partition=part, inputs={}, seq=seq, priority=prio, deadline=deadline)
        made.append(u)
        q.put(u)
    taken = []
    while len(q):
        accept = data.draw(st.sampled_from([None, lambda u: u.seq % 2 == 0]))
        u = q.take(timeout=0, accept=accept)
        if u is None:
            u = q.take(timeout=0)
        taken.append(u)
        rest = q.units() + [u]
        pool = [x for x in rest if accept is None or accept(x)] if accept is not None and accept(u) else rest
        assert u.order == min(x.order for x in pool)
    assert sorted(map(id, taken)) == sorted(map(id, made))
