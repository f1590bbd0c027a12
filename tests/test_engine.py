"""Engine behaviour: real keys through the tiers, priorities and deadlines across circuits,
idempotent requests, timings, status, and clear errors for misuse."""

import json
import threading
import time

import pytest

import cuzk
from cuzk.circuits.cube import Cube
from cuzk.errors import (
    DeadlineExceededError, EngineError, InputError, KeyMismatchError, MemoryBudgetError,
)
from cuzk.groth16 import setup, verify
from cuzk.timeline import EventKind as K
from pipeline_support import (  # noqa: F401  (no_leaked_threads is autouse)
    TIMEOUT, FakeProver, FakeSynthesizer, no_leaked_threads, wait_until,
)


class Square:
    def synthesize(self, x, delay=0.0, fail=False):
        time.sleep(delay)
        if fail:
            raise ValueError(f"synthesis of {x} failed")
        return x * x


class Echo:
    def __init__(self, gate=None):
        self.gate, self.calls = gate, []

    def prove(self, w):
        self.calls.append(w)
        if self.gate is not None:
            assert self.gate.wait(TIMEOUT)
        return ("proof", w)


def engine(**kw):
    kw.setdefault("device", "cpu")
    kw.setdefault("memory_budget", None)
    return cuzk.Engine(**kw)


@pytest.fixture(scope="module")
def cube():
    synth = cuzk.Synthesizer(Cube())
    pk, vk = setup(synth.r1cs)
    return synth, pk, vk


def test_real_proofs_of_two_circuits_verify(cube):
    synth, pk, vk = cube
    with engine() as e:
        e.register("cube", synth, pk)
        e.register("cube-hi", synth, pk, priority="high")
        f1 = e.submit("cube", Cube().sample_inputs(seed=1))
        f2 = e.submit("cube-hi", Cube().sample_inputs(seed=2))
        for f, seed in ((f1, 1), (f2, 2)):
            public = Cube().public_inputs(Cube().sample_inputs(seed=seed))
            assert verify(vk, public, f.result(timeout=60))
            assert not verify(vk, [public[0] + 1], f.result())
        st = e.status()
        json.dumps(st)  # serialisable
        assert st["circuits"]["cube"]["done"] == 1 and st["keys"]["cube"]["tier"] == "host"


def test_key_file_goes_cold_to_host_to_disk_and_a_second_engine_maps_it(cube, tmp_path):
    synth, pk, vk = cube
    path = tmp_path / "cube.params"
    pk.write(path)
    inputs = Cube().sample_inputs(seed=3)
    public = Cube().public_inputs(inputs)
    cache = tmp_path / "cache"
    with engine(key_cache=cache) as e:
        e.register("cube", synth, path)
        assert e.status()["keys"]["cube"]["tier"] == "cold"
        f = e.submit("cube", inputs)
        assert verify(vk, public, f.result(timeout=60))
        assert f.timings.key_load_s > 0 and e.status()["keys"]["cube"]["tier"] == "host"
        loads = [ev for ev in e.timeline.events() if ev.kind is K.KEY_LOAD_END]
        assert len(loads) == 1 and loads[0].job_id == f.job_id
        g = e.submit("cube", inputs)
        assert verify(vk, public, g.result(timeout=60)) and g.timings.key_load_s == 0
        assert e.evict("cube") > 0
        assert e.status()["keys"]["cube"]["tier"] == "disk"
    with engine(key_cache=cache) as e2:
        e2.register("cube", synth, path)
        e2.preload("cube")
        assert e2.key_cache.load(path, r1cs=synth.r1cs)[1].hit
        assert verify(vk, public, e2.submit("cube", inputs).result(timeout=60))


def test_key_of_another_circuit_is_refused_at_register(cube):
    synth, pk, _ = cube

    class Other(cuzk.Circuit):
        def define(self, cs, x, y):
            x, y = cs.private(x), cs.public(y)
            cs.assert_equal(x * x, y)

    with engine() as e:
        with pytest.raises(KeyMismatchError, match="'other'"):
            e.register("other", cuzk.Synthesizer(Other()), pk)


def test_request_ids_make_submits_idempotent():
    prover = Echo()
    with engine() as e:
        e.register("sq", Square(), prover)
        f = e.submit("sq", {"x": 3}, request_id="r1")
        assert f.job_id == "r1" and f.result(timeout=TIMEOUT) == ("proof", 9)
        assert e.submit("sq", {"x": 3}, request_id="r1") is f  # finished, still retained
        with pytest.raises(InputError, match="r1"):
            e.submit("sq", {"x": 4}, request_id="r1")
        assert prover.calls == [9]
        assert e.status()["circuits"]["sq"]["deduplicated"] == 1


def test_resolved_request_ids_are_forgotten_after_the_retention_window():
    with engine(request_retention_s=0) as e:
        e.register("sq", Square(), Echo())
        f = e.submit("sq", {"x": 2}, request_id="r")
        f.result(timeout=TIMEOUT)
        time.sleep(0.01)
        g = e.submit("sq", {"x": 2}, request_id="r")
        assert g is not f and g.result(timeout=TIMEOUT) == ("proof", 4)


def test_int_request_ids_never_collide_with_anonymous_jobs():
    gate = threading.Event()
    with engine() as e:
        e.register("sq", Square(), Echo(gate))
        anon = [e.submit("sq", {"x": i}) for i in range(3)]
        assert [str(f.job_id) for f in anon] == ["#1", "#2", "#3"]  # readable in status and timelines
        assert len({f.job_id for f in anon}) == 3 and not {f.job_id for f in anon} & {1, 2, 3, "#1"}
        mine = e.submit("sq", {"x": 7}, request_id=2)  # was refused: "job id 2 is already in use"
        assert mine.job_id == 2 and mine is not anon[1]
        assert not e.cancel(3) and not anon[2].cancelled()  # cancelled the third anonymous job
        assert e.cancel(anon[2].job_id) and anon[2].cancelled()
        gate.set()
        assert mine.result(timeout=TIMEOUT) == ("proof", 49)
        assert {ev.job_id for ev in e.timeline.events() if ev.job_id is not None} >= {anon[0].job_id, 2}
        assert json.dumps(e.status())


class Blob:
    def synthesize(self, data, fail=False):
        return None if fail else int(data[:4].sum())


class BlobProver(Echo):
    def prove(self, w):
        if w is None:  # fails here: a synthesizer's traceback would hold its own arguments
            raise ValueError("no proof of this blob")
        return super().prove(w)


@pytest.mark.parametrize("how", ["done", "partitioned", "failed", "cancelled"])
def test_an_ended_job_keeps_no_reference_to_its_inputs(how):
    """Resolved futures are retained (request ids); their jobs' inputs must not be."""
    import gc
    import weakref

    import numpy as np

    gate = threading.Event()
    with engine() as e:
        e.register("blob", Blob(), BlobProver(gate))
        data = np.arange(1 << 16, dtype=np.uint8)
        ref = weakref.ref(data)
        if how == "cancelled":
            blocker = e.submit("blob", {"data": np.zeros(4)})
            wait_until(lambda: e.status()["circuits"]["blob"]["proving"] == 1)
            e.submit("blob", {"data": np.ones(4)})  # waits in the channel for the prover
            wait_until(lambda: e.status()["circuits"]["blob"]["waiting_for_gpu"] == 1)
            e.submit("blob", {"data": np.ones(4)})  # synthesized, waits for room in the channel
            wait_until(lambda: e.status()["circuits"]["blob"]["queued"] == 0)
            f = e.submit("blob", {"data": data}, request_id="r")
            assert f.cancel()
            gate.set()
            blocker.result(timeout=TIMEOUT)
        else:
            gate.set()
            f = submit(e, how, data)
            try:
                f.result(timeout=TIMEOUT)
            except ValueError:
                assert how == "failed"
        del data
        gc.collect()
        assert ref() is None, gc.get_referrers(ref())
        if how != "cancelled":  # the future itself is still known by its request id
            assert submit(e, how, np.arange(1 << 16, dtype=np.uint8)) is f


def submit(e, how, data):
    if how == "partitioned":
        return e.submit_partitioned("blob", [{"data": data}, {"data": data}], request_id="r")
    return e.submit("blob", {"data": data, "fail": how == "failed"}, request_id="r")


def test_critical_job_overtakes_a_normal_backlog_at_both_stages():
    gate = threading.Event()
    prover = Echo(gate)
    with engine() as e:
        e.register("normal", Square(), prover)
        e.register("post", Square(), prover)
        backlog = [e.submit("normal", {"x": i, "delay": 0.002}) for i in range(1, 22)]
        wait_until(lambda: len(prover.calls) == 1)  # one prove in flight, the rest queued
        wait_until(lambda: e.status()["circuits"]["normal"]["waiting_for_gpu"] >= 1)
        crit = e.submit("post", {"x": 100}, priority="critical")
        wait_until(lambda: e.status()["circuits"]["post"]["waiting_for_gpu"] == 1)
        gate.set()
        assert crit.result(timeout=TIMEOUT) == ("proof", 10000)
        [f.result(timeout=TIMEOUT) for f in backlog]
    assert prover.calls[1] == 10000  # proved right after the job already in flight


def test_deadlines_fail_queued_jobs_and_record_no_gpu_events():
    gate = threading.Event()
    with engine() as e:
        e.register("sq", Square(), Echo(gate))
        late = e.submit("sq", {"x": 1}, deadline=time.time() - 1)
        assert isinstance(late.exception(timeout=TIMEOUT), DeadlineExceededError)
        assert isinstance(late.exception(), TimeoutError)
        busy = e.submit("sq", {"x": 2}, priority="high")  # first: it holds the one prove worker
        soon = e.submit("sq", {"x": 3}, deadline=time.time() + 0.05)
        time.sleep(0.1)
        gate.set()
        assert busy.result(timeout=TIMEOUT) == ("proof", 4)
        assert isinstance(soon.exception(timeout=TIMEOUT), DeadlineExceededError)
    gpu = {ev.job_id for ev in e.timeline.events() if ev.kind in (K.GPU_START, K.GPU_END)}
    assert late.job_id not in gpu and soon.job_id not in gpu


def test_an_earlier_deadline_goes_first_within_a_priority():
    gate = threading.Event()
    prover = Echo(gate)
    with engine() as e:
        e.register("sq", Square(), prover)
        first = e.submit("sq", {"x": 1})
        wait_until(lambda: prover.calls == [1])
        later = e.submit("sq", {"x": 2}, deadline=time.time() + 60)
        sooner = e.submit("sq", {"x": 3}, deadline=time.time() + 30)
        none = e.submit("sq", {"x": 4})
        gate.set()
        [f.result(timeout=TIMEOUT) for f in (first, later, sooner, none)]
    assert prover.calls == [1, 9, 4, 16]


def test_timings_match_the_timeline():
    with engine() as e:
        e.register("sq", Square(), Echo())
        f = e.submit("sq", {"x": 5, "delay": 0.02})
        f.result(timeout=TIMEOUT)
        t = f.timings
    ev = {x.kind: x.t_ns for x in e.timeline.events() if x.job_id == f.job_id}
    assert t.synth_s == pytest.approx((ev[K.SYNTH_END] - ev[K.SYNTH_START]) / 1e9, abs=1e-4)
    assert t.prove_s == pytest.approx((ev[K.GPU_END] - ev[K.GPU_START]) / 1e9, abs=1e-4)
    assert t.queue_wait_s == pytest.approx((ev[K.SYNTH_START] - ev[K.JOB_SUBMIT]) / 1e9, abs=1e-3)
    assert t.device_s is None and t.key_load_s == 0
    assert t.total_s >= t.queue_wait_s + t.synth_s + t.prove_s


def test_partitioned_jobs_and_cancel():
    gate = threading.Event()
    with engine() as e:
        e.register("sq", Square(), Echo(gate))
        f = e.submit_partitioned("sq", [{"x": i} for i in range(3)])
        queued = e.submit("sq", {"x": 9}, request_id="q")
        wait_until(lambda: e.status()["circuits"]["sq"]["proving"] == 1)
        assert e.cancel("q") and queued.cancelled()
        gate.set()
        assert f.result(timeout=TIMEOUT) == [("proof", 0), ("proof", 1), ("proof", 4)]
        assert f.timings is not None


def test_evicting_a_key_in_use_is_refused(cube):
    synth, pk, _ = cube
    gate = threading.Event()
    with engine() as e:
        e.register("sq", FakeSynthesizer(gate=gate), FakeProver())
        f = e.submit("sq", {"i": 1})
        with pytest.raises(EngineError, match="in use"):
            e.evict("sq")
        gate.set()
        f.result(timeout=TIMEOUT)
        wait_until(lambda: e.evict("sq") == 0 or True)


@pytest.mark.parametrize("call, error, match", [
    (lambda e: e.submit("nope", {}), InputError, "unknown circuit 'nope'"),
    (lambda e: e.register("sq", Square(), Echo()), InputError, "already registered"),
    (lambda e: e.submit("sq", {"x": 1}, deadline="soon"), InputError, "deadline"),
    (lambda e: e.submit("sq", {"x": 1}, deadline=float("nan")), InputError, "deadline"),
    (lambda e: e.submit("sq", {"x": 1}, priority="urgent"), InputError, "priority"),
    (lambda e: e.submit("sq", [1]), InputError, "mapping"),
    (lambda e: e.register("k", Square(), 42), InputError, "key must be"),
    (lambda e: e.register("k", Square(), "/nonexistent/x.params"), InputError, "does not exist"),
    (lambda e: e.register("k", Square(), Echo(), synthesis="fibers"), InputError, "synthesis"),
    (lambda e: e.register("", Square(), Echo()), InputError, "name"),
])
def test_misuse_gets_a_clear_error(call, error, match):
    with engine() as e:
        e.register("sq", Square(), Echo())
        with pytest.raises(error, match=match):
            call(e)


@pytest.mark.parametrize("budget", [-1, 0, 1.5, "lots", 10**30])
def test_bad_budgets_are_refused(budget):
    with pytest.raises(InputError, match="memory_budget"):
        cuzk.Engine(device="cpu", memory_budget=budget)


def test_a_job_that_can_never_fit_fails_at_submit():
    synth = FakeSynthesizer(estimate=10_000)
    with engine(memory_budget=5_000) as e:
        e.register("big", synth, FakeProver())
        with pytest.raises(MemoryBudgetError, match="10000"):
            e.submit("big", {"i": 1})


def test_closed_engine_refuses_work():
    e = engine()
    e.register("sq", Square(), Echo())
    e.close()
    with pytest.raises(EngineError, match="closed"):
        e.submit("sq", {"x": 1})
    with pytest.raises(EngineError, match="closed"):
        e.register("sq2", Square(), Echo())
    e.close()  # idempotent


def test_events_carry_their_circuit_and_the_summary_breaks_down_per_circuit(tmp_path):
    with engine() as e:
        e.register("seal", Square(), Echo())
        e.register("post", Square(), Echo())
        seal = [e.submit("seal", {"x": i, "delay": 0.005}) for i in range(3)]
        post = e.submit_partitioned("post", [{"x": 1}, {"x": 2}], priority="critical")
        [f.result(timeout=TIMEOUT) for f in seal + [post]]
    events = e.timeline.events()
    by_job = {}
    for ev in events:
        if ev.job_id is not None:
            by_job.setdefault(ev.job_id, set()).add(ev.circuit)
    assert by_job[post.job_id] == {"post"} and all(by_job[f.job_id] == {"seal"} for f in seal)
    assert all(ev.detail.get("circuit") is None for ev in events)  # a field, not a detail key
    s = e.timeline.summary()
    assert s.circuits["seal"].jobs_done == 3 and s.circuits["post"].jobs_done == 2
    assert 0 < s.circuits["post"].gpu_utilization <= s.gpu_utilization + 1e-9
    assert "circuit post" in str(s)
    assert "post:" in e.timeline.waterfall() and "seal:" in e.timeline.waterfall()
    path = tmp_path / "run.jsonl"
    e.timeline.save(path)
    loaded = cuzk.Timeline.load(path).events()
    assert [ev.circuit for ev in loaded] == [ev.circuit for ev in events]
    # a version-1 file (before circuits) still loads
    v1 = tmp_path / "v1.jsonl"
    v1.write_text('{"format": "cuzk-timeline", "version": 1}\n{"t_ns": 5, "kind": "JOB_SUBMIT", "job": 1}\n')
    assert cuzk.Timeline.load(v1).events()[0].circuit is None


def _parse_prometheus(text):
    """Strict enough for the text format: HELP/TYPE before samples, names, labels, values."""
    import re

    sample = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? '
                        r'(-?[0-9.eE+-]+|NaN|[+-]Inf)$')
    typed, samples = {}, []
    for line in text.strip().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            typed[name] = kind
        elif line.startswith("# HELP "):
            continue
        else:
            m = sample.match(line)
            assert m, line
            base = re.sub(r"_(bucket|sum|count)$", "", m.group(1))
            assert m.group(1) in typed or base in typed, line
            samples.append((m.group(1), line))
    return typed, samples


def test_status_endpoint_serves_json_and_prometheus_metrics():
    import urllib.request

    with engine() as e:
        e.register("sq", Square(), Echo())
        [e.submit("sq", {"x": i}).result(timeout=TIMEOUT) for i in range(3)]
        host, port = e.serve_status()
        assert host == "127.0.0.1" and port > 0
        with urllib.request.urlopen(f"http://{host}:{port}/status", timeout=10) as r:
            st = json.loads(r.read())
        assert st["circuits"]["sq"]["done"] == 3 and st["workers"]
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
        typed, samples = _parse_prometheus(text)
        assert typed["cuzk_jobs_done_total"] == "counter"
        assert typed["cuzk_job_total_seconds"] == "histogram"
        assert 'cuzk_jobs_done_total{circuit="sq"} 3' in text
        assert 'cuzk_job_total_seconds_count{circuit="sq"} 3' in text
    with pytest.raises(OSError):  # stopped on close()
        urllib.request.urlopen(f"http://{host}:{port}/status", timeout=2)


def test_process_synthesis_for_a_synthesizer_that_holds_the_gil():
    from engine_executor_support import GilSynth

    class Publics:
        def prove(self, w):
            return tuple(w.public_inputs)

    with engine() as e:
        e.register("gil", GilSynth(2000), Publics(), synthesis="processes", concurrency=2)
        ok = [e.submit("gil", {"x": x}) for x in range(4)]
        died = e.submit("gil", {"x": 9, "mode": "exit"})
        bad = e.submit("gil", {"x": 9, "mode": "raise"})
        assert [f.result(timeout=60)[0] for f in ok] == [0, 1, 2, 3]
        assert type(died.exception(timeout=60)).__name__ == "SynthesisWorkerDied"
        assert isinstance(bad.exception(timeout=60), ValueError)
        assert e.submit("gil", {"x": 5}).result(timeout=60)[0] == 5  # the dead worker was replaced
        assert e.status()["circuits"]["gil"]["synthesis"] == "processes"


def test_budget_accounting_counts_pce_key_and_witnesses(cube, tmp_path):
    synth, pk, vk = cube
    from cuzk.engine.circuit import pce_bytes

    assert pce_bytes(synth) > 0
    with engine(memory_budget=1 << 30) as e:
        e.register("cube", synth, pk)
        mem = e.status()["memory"]
        assert mem["pce"] == pce_bytes(synth) and mem["keys"] > 0 and mem["reserved"] == mem["pce"] + mem["keys"]
        e.submit("cube", Cube().sample_inputs(seed=4)).result(timeout=60)
        after = e.status()["memory"]
        assert after["witnesses"] == 0  # released when the proof was done


def test_close_without_waiting_still_stops_the_synthesis_processes():
    from engine_executor_support import GilSynth

    e = engine()
    e.register("gil", GilSynth(100), Echo(), synthesis="processes", concurrency=1)
    ex = e._route("gil").executor
    f = e.submit("gil", {"x": 1})
    e.close(wait=False)
    assert f.result(timeout=60)[0] == "proof"  # the queued job still finishes
    wait_until(lambda: not ex.pids, timeout=60)
