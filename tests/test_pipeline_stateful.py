"""Hypothesis state machine over submits, partitioned submits, cancels, failures and closes.

Invariants: every future resolves exactly once, to the right proof, the original exception, or
cancelled; the timeline is consistent (one terminal event per unit, spans start before they end,
one GPU_END per GPU_START).
"""

import collections
import logging

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from cuzk.errors import PipelineClosedError
from cuzk.pipeline import Pipeline, Priority
from cuzk.timeline import EventKind as K
from cuzk.timeline.analysis import spans
from pipeline_support import TIMEOUT, FakeProver, FakeSynthesizer, no_leaked_threads  # noqa: F401

FAIL_PROVE_BASE = 10_000  # ids at or above this fail in the prover


class ErrorLog(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record)


class PipelineMachine(RuleBasedStateMachine):
    @initialize(concurrency=st.integers(1, 3), lookahead=st.integers(0, 2), gpu_workers=st.integers(1, 2))
    def start(self, concurrency, lookahead, gpu_workers):
        self.synth = FakeSynthesizer(0.001)
        self.prover = FakeProver(0.001, fail_ids=range(FAIL_PROVE_BASE, FAIL_PROVE_BASE + 1000))
        self.pipe = Pipeline(self.synth, self.prover, concurrency=concurrency, lookahead=lookahead,
                             gpu_workers=gpu_workers)
        self.log = ErrorLog()
        logging.getLogger("cuzk").addHandler(self.log)
        self.jobs = []  # (future, expected: list of (i, mode) per partition or a single one, partitioned)
        self.resolutions = collections.Counter()
        self.next_i = 0
        self.closed = False

    def _inputs(self, mode):
        self.next_i += 1
        i = self.next_i + (FAIL_PROVE_BASE if mode == "prove" else 0)
        return {"i": i, "fail": mode == "synth"}, (i, mode)

    def _track(self, future, expected, partitioned):
        future.add_done_callback(lambda f: self.resolutions.update([id(f)]))
        self.jobs.append((future, expected, partitioned))

    @rule(mode=st.sampled_from(["ok", "ok", "synth", "prove"]), priority=st.sampled_from(list(Priority)))
    def submit(self, mode, priority):
        inputs, expected = self._inputs(mode)
        try:
            f = self.pipe.submit(inputs, priority=priority)
        except PipelineClosedError:
            assert self.closed
            return
        assert not self.closed
        self._track(f, [expected], False)

    @rule(modes=st.lists(st.sampled_from(["ok", "ok", "synth", "prove"]), min_size=1, max_size=4))
    def submit_partitioned(self, modes):
        pairs = [self._inputs(m) for m in modes]
        try:
            f = self.pipe.submit_partitioned([p[0] for p in pairs])
        except PipelineClosedError:
            assert self.closed
            return
        self._track(f, [p[1] for p in pairs], True)

    @rule(index=st.integers(0, 50))
    def cancel(self, index):
        if self.jobs:
            future = self.jobs[index % len(self.jobs)][0]
            was_done = future.done()
            ok = future.cancel()
            assert not (ok and was_done and not future.cancelled())

    @rule(cancel_futures=st.booleans())
    def close(self, cancel_futures):
        self.pipe.close(wait=False, cancel_futures=cancel_futures)
        self.closed = True

    @invariant()
    def never_resolved_twice(self):
        assert all(n == 1 for n in self.resolutions.values())

    def teardown(self):
        self.pipe.close(wait=True)
        logging.getLogger("cuzk").removeHandler(self.log)
        for future, expected, partitioned in self.jobs:
            assert future.done()
            assert self.resolutions[id(future)] == 1
            if future.cancelled():
                continue
            exc = future.exception(timeout=TIMEOUT)
            failing = [(i, m) for i, m in expected if m != "ok"]
            if exc is None:
                assert not failing
                proofs = [("proof", i) for i, _ in expected]
                assert future.result() == (proofs if partitioned else proofs[0])
            else:
                assert failing, exc
                raised = {**self.synth.raised, **self.prover.raised}
                assert any(exc is raised.get(i) for i, _ in failing)
        assert not self.log.records, [r.getMessage() for r in self.log.records]
        check_timeline(self.pipe.timeline.events())


def check_timeline(events):
    terminal = collections.Counter(e.unit for e in events if e.kind in (K.JOB_DONE, K.JOB_FAILED, K.JOB_CANCELLED))
    submitted = [e.unit for e in events if e.kind is K.JOB_SUBMIT]
    assert sorted(terminal, key=repr) == sorted(submitted, key=repr) and set(terminal.values()) <= {1}
    counts = collections.Counter(e.kind for e in events)
    assert counts[K.GPU_START] == counts[K.GPU_END]
    assert counts[K.SYNTH_START] == counts[K.SYNTH_END]
    assert counts[K.SPAN_START] == counts[K.SPAN_END]
    closed = spans(events)
    assert len([s for s in closed if s.stage == "GPU"]) == counts[K.GPU_START]
    assert all(s.start_ns <= s.end_ns for s in closed)
    first = {}
    for e in events:
        first.setdefault(e.unit, e.kind)
    assert all(kind is K.JOB_SUBMIT for unit, kind in first.items() if unit != (None, None))


PipelineMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=12, deadline=None)
TestPipelineMachine = PipelineMachine.TestCase
