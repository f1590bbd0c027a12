"""Deterministic fake stages for pipeline tests (they sleep or wait on events; no CPU work).

``FakeSynthesizer.synthesize(i, fail=False)`` returns a :class:`FakeSynthesized` (counted
while alive through ``weakref.finalize``), ``FakeProver.prove(s)`` returns ``("proof", i)``.
"""

from __future__ import annotations

import threading
import time
import weakref

import pytest

from cuzk.timeline import span

__all__ = ["AliveTracker", "FakeSynthesized", "FakeSynthesizer", "FakeProver", "wait_until",
           "no_leaked_threads", "cuzk_threads"]

TIMEOUT = 20.0  # every wait in the pipeline tests is bounded by this


def cuzk_threads():
    return [t for t in threading.enumerate() if t.name.startswith("cuzk-") and t.is_alive()]


@pytest.fixture(autouse=True)
def no_leaked_threads():
    """Fail a test that leaves a ``cuzk-*`` thread running (a pipeline not closed, a hung worker)."""
    yield
    deadline = time.monotonic() + 5.0
    while cuzk_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    leaked = [t.name for t in cuzk_threads()]
    assert not leaked, f"threads survived the test: {leaked}"


def wait_until(predicate, timeout=TIMEOUT, interval=0.002):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before timeout")
        time.sleep(interval)


class AliveTracker:
    """Counts synthesized objects that still exist, and the most that ever existed at once."""

    def __init__(self):
        self._lock = threading.Lock()
        self.alive = 0
        self.max_alive = 0

    def track(self, obj):
        with self._lock:
            self.alive += 1
            self.max_alive = max(self.max_alive, self.alive)
        weakref.finalize(obj, self._gone)

    def _gone(self):
        with self._lock:
            self.alive -= 1


class FakeSynthesized:
    def __init__(self, i):
        self.i = i


class FakeSynthesizer:
    """Sleeps ``seconds`` (or waits for ``gate``), then returns a tracked FakeSynthesized."""

    def __init__(self, seconds=0.0, gate: threading.Event | None = None, estimate=None):
        self.seconds, self.gate = seconds, gate
        self.tracker = AliveTracker()
        self.calls: list = []
        self.raised: dict = {}
        self._lock = threading.Lock()
        if estimate is not None:
            self.estimate_bytes = lambda: estimate

    def synthesize(self, i, fail=False, delay=None):
        with self._lock:
            self.calls.append(i)
        if self.gate is not None:
            assert self.gate.wait(TIMEOUT), "test gate never opened"
        time.sleep(self.seconds if delay is None else delay)
        if fail:
            exc = ValueError(f"synthesis of {i} failed")
            self.raised[i] = exc
            raise exc
        obj = FakeSynthesized(i)
        self.tracker.track(obj)
        return obj


class FakeProver:
    """Sleeps ``seconds`` inside an ``MSM_A`` sub-span; fails for ids in ``fail_ids``."""

    def __init__(self, seconds=0.0, gate: threading.Event | None = None, fail_ids=()):
        self.seconds, self.gate, self.fail_ids = seconds, gate, set(fail_ids)
        self.calls: list = []
        self.raised: dict = {}
        self._lock = threading.Lock()

    def prove(self, synthesized):
        with self._lock:
            self.calls.append(synthesized.i)
        if self.gate is not None:
            assert self.gate.wait(TIMEOUT), "test gate never opened"
        with span("MSM_A"):
            time.sleep(self.seconds)
        if synthesized.i in self.fail_ids:
            exc = KeyError(f"prove of {synthesized.i} failed")
            self.raised[synthesized.i] = exc
            raise exc
        return ("proof", synthesized.i)
