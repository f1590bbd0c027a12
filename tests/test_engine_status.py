"""What the Engine reports stays true and available: status() and metrics() count every job from
its submit on, count a delivered job before its future resolves, and keep answering when a key
file is moved away (a submit or load of that circuit then fails with a cuzk.errors exception)."""

import os
import re
import threading
import time

import pytest

import cuzk
from cuzk.circuits.cube import Cube
from cuzk.errors import InputError
from cuzk.groth16 import setup
from pipeline_support import TIMEOUT, no_leaked_threads  # noqa: F401  (autouse)


class Square:
    def synthesize(self, x):
        return x * x


class Echo:
    def __init__(self, gate=None):
        self.gate = gate

    def prove(self, w):
        if self.gate is not None:
            assert self.gate.wait(TIMEOUT)
        return ("proof", w)


def _submitted(e, name):
    return int(re.search(rf'cuzk_jobs_submitted_total\{{circuit="{name}"\}} (\d+)', e.metrics()).group(1))


def test_jobs_count_as_submitted_while_queued_or_running():
    gate = threading.Event()
    with cuzk.Engine(device="cpu", memory_budget=None) as e:
        e.register("sq", Square(), Echo(gate))
        fs = [e.submit("sq", {"x": i}, request_id=f"r{i}") for i in range(5)]
        assert e.submit("sq", {"x": 0}, request_id="r0") is fs[0]  # a deduplicated submit is no new job
        assert _submitted(e, "sq") == 5  # none has ended yet: it was 0
        gate.set()
        for f in fs:
            f.result(timeout=TIMEOUT)
        assert _submitted(e, "sq") == 5
        assert e.status()["circuits"]["sq"]["done"] == 5


def test_a_refused_submit_is_not_counted():
    with cuzk.Engine(device="cpu", memory_budget=None) as e:
        e.register("sq", Square(), Echo())
        with pytest.raises(InputError):
            e.submit("sq", {1: 2})  # input names must be strings
        assert _submitted(e, "sq") == 0


def test_status_right_after_result_counts_the_job():
    """The job leaves the live table when it is delivered; it must already be counted "done" by
    then, not in a done-callback that runs after result() has returned (slowed down here)."""
    with cuzk.Engine(device="cpu", memory_budget=None) as e:
        e.register("sq", Square(), Echo())
        ended = e.stats.job_ended

        def slow(*args, **kw):
            time.sleep(0.2)
            return ended(*args, **kw)

        e.stats.job_ended = slow
        for i in range(3):
            e.submit("sq", {"x": i}).result(timeout=TIMEOUT)
            c = e.status()["circuits"]["sq"]
            live = sum(c[s] for s in ("queued", "synthesizing", "waiting_for_gpu", "proving", "proved"))
            assert (c["done"], live) == (i + 1, 0)


class HeldSquare(Square):
    def __init__(self, gate):
        self.gate = gate

    def synthesize(self, x):
        assert self.gate.wait(TIMEOUT)
        return x * x


def test_failed_and_cancelled_jobs_are_counted_once():
    gate = threading.Event()
    with cuzk.Engine(device="cpu", memory_budget=None) as e:
        e.register("sq", Square(), Echo())
        e.register("held", HeldSquare(gate), Echo())
        running = e.submit("held", {"x": 1})
        queued = e.submit("held", {"x": 2})  # behind it: held's one synthesis slot is taken
        assert queued.cancel()
        with pytest.raises(TypeError):
            e.submit("sq", {"y": 3}).result(timeout=TIMEOUT)  # synthesize() gets an unknown argument
        gate.set()
        running.result(timeout=TIMEOUT)
        counts = {name: {k: c[k] for k in ("done", "failed", "cancelled")}
                  for name, c in e.status()["circuits"].items()}
        assert counts == {"sq": {"done": 0, "failed": 1, "cancelled": 0},
                          "held": {"done": 1, "failed": 0, "cancelled": 1}}
        assert (_submitted(e, "sq"), _submitted(e, "held")) == (1, 2)


@pytest.fixture(scope="module")
def cube():
    synth = cuzk.Synthesizer(Cube())
    pk, _ = setup(synth.r1cs)
    return synth, pk


def test_a_moved_key_file_keeps_status_working_and_fails_its_submit_clearly(cube, tmp_path):
    synth, pk = cube
    path = tmp_path / "cube.params"
    pk.write(path)
    size = path.stat().st_size
    inputs = Cube().sample_inputs(seed=1)
    with cuzk.Engine(device="cpu", memory_budget=1 << 30, key_cache=tmp_path / "cache") as e:
        e.register("other", Square(), Echo())
        e.register("cube", synth, path)
        e.register("never-loaded", synth, path)
        e.submit("cube", inputs).result(timeout=TIMEOUT)
        e.evict("cube")
        os.rename(path, tmp_path / "moved.params")
        st = e.status()  # raised FileNotFoundError for the whole engine
        assert st["keys"]["cube"]["bytes"] == size and st["keys"]["never-loaded"]["bytes"] == size
        assert 'circuit="cube"' in e.metrics()
        assert e.submit("other", {"x": 2}).result(timeout=TIMEOUT) == ("proof", 4)
        for call in (lambda: e.submit("cube", inputs), lambda: e.preload("never-loaded")):
            with pytest.raises(InputError, match=re.escape(repr(str(path))) + ".*moved or deleted"):
                call()
        os.rename(tmp_path / "moved.params", path)
        e.submit("cube", inputs).result(timeout=TIMEOUT)  # back in place: it loads again
