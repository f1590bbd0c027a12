"""The Engine's locks never wait on each other in a cycle (docs/engine.md, "Locking").

A circuit's key lock is held for the whole load of its key, and a load makes room in the engine's
memory budget by evicting other circuits' idle keys. Making room once waited for another circuit's
key lock while holding the engine's lock, and that circuit's own load, finishing, waited for the
engine's lock: two threads, opposite orders, a deadlock. Each test here holds circuit ``b``'s key
load open (a key cache that waits) until another call has reached ``b``'s key lock, then lets the
load finish; every call must return within a bound instead of hanging the suite.
"""

import threading

import numpy as np
import pytest

import cuzk
from cuzk.circuits import Cube
from cuzk.engine.circuit import pce_bytes
from cuzk.engine.keycache import KeyCache
from cuzk.groth16 import setup
from cuzk.timeline import EventKind as K
from pipeline_support import no_leaked_threads  # noqa: F401  (autouse)

BOUND = 120.0  # seconds any racing call may take here (under a second once Numba's cache is warm)


class WatchedLock:
    """An ``RLock`` that notes an attempt to take it while another thread holds it."""

    def __init__(self):
        self._lock = threading.RLock()
        self._owner = None
        self.contended = threading.Event()

    def acquire(self, blocking=True, timeout=-1):
        owner = self._owner
        if owner is not None and owner is not threading.current_thread():
            self.contended.set()
        got = self._lock.acquire(blocking, timeout)
        if got:
            self._owner = threading.current_thread()
        return got

    def release(self):
        # the RLock may still be held by this thread (a nested take): only its last release frees it
        self._lock.release()
        if not self._lock._is_owned():
            self._owner = None

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()


class HeldOpenCache(KeyCache):
    """Loads of the source ending with ``hold`` wait until ``until`` is set (at most ``BOUND``)."""

    def __init__(self, directory, hold):
        super().__init__(directory)
        self.hold, self.until, self.holding = hold, None, threading.Event()

    def load(self, source, **kw):
        if str(source).endswith(self.hold):
            self.holding.set()
            self.until.wait(BOUND)
        return super().load(source, **kw)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    synth = cuzk.Synthesizer(Cube())
    folder = tmp_path_factory.mktemp("keys")
    paths = {}
    for name, seed in (("a", 5), ("b", 6)):
        pk, _ = setup(synth.r1cs, rng=np.random.default_rng(seed))
        paths[name] = folder / f"{name}.params"
        pk.write(paths[name])
    return synth, paths


def _run(name, fn, results):
    def body():
        try:
            results[name] = ("ok", fn())
        except BaseException as exc:  # reported by the test, not lost on this thread
            results[name] = ("error", exc)

    t = threading.Thread(target=body, name=f"test-{name}", daemon=True)  # a hung one never blocks exit
    t.start()
    return t


def _join_or_fail(engine, threads, what):
    for t in threads:
        t.join(BOUND)
    hung = [t.name for t in threads if t.is_alive()]
    if hung:
        # close() itself would wait for the locks the hung threads hold: stop the workers only
        engine.core.close(wait=False, cancel_futures=True)
        pytest.fail(f"deadlock: {hung} still waiting after {BOUND:.0f} s ({what})")


@pytest.mark.parametrize("racer", ["preload-a", "submit-a", "evict-b", "close"])
def test_a_call_racing_a_key_load_never_deadlocks(keys, tmp_path, racer):
    """While ``b``'s key loads (its lock held, its bytes reserved, the budget full with it):
    preload or submit of ``a`` (whose room-making would evict ``b``), ``evict("b")``, or
    ``close()``. All return; the budget's books balance afterwards."""
    synth, paths = keys
    size = paths["a"].stat().st_size
    cache = HeldOpenCache(tmp_path / "cache", hold="b.params")
    # the PCEs and one key fit; a second key does not: a's load must make room, and b is the only candidate
    budget = 2 * pce_bytes(synth) + size + size // 2
    engine = cuzk.Engine(device="cpu", memory_budget=budget, key_cache=cache)
    engine.register("a", synth, paths["a"])
    engine.register("b", synth, paths["b"])
    lock = WatchedLock()
    engine._routes["b"].key_lock = lock
    cache.until = lock.contended  # b's load finishes once someone has come for b's lock
    results = {}
    loader = _run("preload-b", lambda: engine.preload("b"), results)
    assert cache.holding.wait(BOUND), "b's key load never started"
    racers = {
        "preload-a": lambda: engine.preload("a"),
        "submit-a": lambda: engine.submit("a", {"x": 2, "out": 15}).result(BOUND),
        "evict-b": lambda: engine.evict("b"),
        "close": lambda: engine.close(wait=True),
    }
    other = _run(racer, racers[racer], results)
    _join_or_fail(engine, [loader, other], f"{racer} racing preload('b')")
    try:
        _check_outcome(engine, racer, lock, results)
    finally:
        engine.close(wait=True)
    reserved = engine.core.queue.reserved_bytes
    assert reserved == 2 * engine._routes["a"].pce_bytes, f"{reserved} bytes still reserved after close"


def _check_outcome(engine, racer, lock, results):
    assert lock.contended.is_set(), f"{racer} never came for b's key lock: the race was not exercised"
    for name, (how, value) in results.items():
        assert how == "ok", f"{name} failed: {value!r}"
    keys_status = engine.status()["keys"]
    if racer == "evict-b":
        # evict waited for the load, then dropped it: the load is not lost halfway
        assert results["evict-b"][1] > 0 and keys_status["b"]["tier"] == "disk"
    elif racer == "close":
        assert keys_status["b"]["tier"] == "disk" and engine.closed
    else:
        # b was loading (its lock busy), so a's room-making skipped it: both keys are in, over budget
        assert keys_status["a"]["tier"] == "host" and keys_status["b"]["tier"] == "host"
        assert not [e for e in engine.timeline.events() if e.kind is K.KEY_EVICT]
