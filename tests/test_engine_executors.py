"""Synthesis executors (cuzk/engine/executors.py): threads and worker processes.

Worker processes must return what the synthesizer returns in-process, bring exceptions back as
themselves, survive a worker's death (only its job fails, the worker is replaced), and leave no
shared-memory segment and no process behind.
"""

from __future__ import annotations

import doctest
import functools
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from cuzk.circuits import Cube
from cuzk.engine import executors, shared_arrays, synth_warmup, synth_worker
from cuzk.engine.executors import make_executor
from cuzk.engine.shared_arrays import PREFIX
from cuzk.errors import (ExecutorClosedError, InputError, RemoteSynthesisError, SynthesisWorkerDied,
                         UnsatisfiedConstraint)
from cuzk.pipeline.scheduler import estimate_synthesized_bytes
from cuzk.synth import Synthesizer

from engine_executor_support import GilSynth, Unpicklable, UnpicklableError, broken_factory, gil_factory

WAIT = 120  # seconds: every wait on a job is bounded


def _segments() -> set:
    return {n for n in os.listdir("/dev/shm") if n.startswith(PREFIX)} if os.path.isdir("/dev/shm") else set()


@pytest.fixture(autouse=True)
def no_leaks():
    before = _segments()
    yield
    assert _segments() - before == set(), "a shared-memory segment outlived its job"


@pytest.fixture(scope="module")
def gil_ex():
    ex = make_executor("processes", GilSynth(), workers=2)
    yield ex
    pids = set(ex.pids)
    ex.close()
    assert not pids & _workers()


def _same(w1, w2) -> None:
    for k in ("z", "a", "b", "c"):
        x, y = getattr(w1, k), getattr(w2, k)
        assert x.dtype == y.dtype and np.array_equal(x, y), k
    assert (w1.public_inputs, w1.digest, w1.job_id) == (w2.public_inputs, w2.digest, w2.job_id)


def test_module_doctests():
    for mod in (executors, shared_arrays, synth_worker, synth_warmup):
        assert doctest.testmod(mod).failed == 0, mod.__name__


# ---------------------------------------------------------------------------- results
def test_processes_give_what_the_synthesizer_gives_in_process():
    synth = Synthesizer(Cube(), check=True)
    with make_executor("processes", synth, workers=1) as ex:
        for x in (3, 5, 2**200):
            inputs = Cube().sample_inputs(seed=x)
            got = ex.synthesize(**inputs)
            _same(got, synth.synthesize(**inputs))
            assert got.z.flags.writeable and got.z.flags.c_contiguous  # a plain array, owned here
        assert ex.estimate_bytes() == estimate_synthesized_bytes(synth)
        # an exception keeps its type and attributes, plus the worker's traceback as a note
        with pytest.raises(UnsatisfiedConstraint) as local:
            synth.synthesize(x=3, out=36)
        with pytest.raises(UnsatisfiedConstraint) as info:
            ex.synthesize(x=3, out=36)
        assert (info.value.index, info.value.name, str(info.value)) == (local.value.index, "cube", str(local.value))
        assert any("synthesis worker process" in n and "Traceback" in n for n in info.value.__notes__)
        with pytest.raises(InputError, match="missing"):
            ex.synthesize(x=3)


def test_threads_run_on_the_calling_thread_with_one_instance_per_thread_from_a_factory():
    built = []

    def factory():
        built.append(threading.get_ident())
        return Synthesizer(Cube())

    ex = make_executor("threads", factory=factory, workers=2)
    with ThreadPoolExecutor(2) as pool:
        outs = list(pool.map(lambda s: ex.synthesize(**Cube().sample_inputs(seed=s)), range(6)))
    assert [w.public_inputs for w in outs] == [[(s**3 + s + 5)] for s in range(6)]
    assert len(built) == len(set(built)) and 1 < len(built) <= 3  # constructing thread + pool threads
    assert ex.estimate_bytes() > 0
    ex.close()
    with pytest.raises(ExecutorClosedError):
        ex.synthesize(x=1, out=7)
    shared = make_executor("threads", GilSynth(5))
    assert shared.synthesize(x=4).public_inputs[0] == 4 and shared.estimate_bytes() == 1234


def test_gil_synthesizer_runs_in_parallel_processes(gil_ex):
    assert len(set(gil_ex.pids)) == 2 and os.getpid() not in gil_ex.pids
    with ThreadPoolExecutor(4) as pool:
        futs = [pool.submit(gil_ex.synthesize, x=i) for i in range(8)]
        outs = [f.result(timeout=WAIT) for f in futs]
    ref = GilSynth()
    for i, w in enumerate(outs):
        _same(w, ref.synthesize(x=i))
    assert gil_ex.estimate_bytes() == 1234


# ---------------------------------------------------------------------------- failures
def test_exceptions_come_back_as_themselves(gil_ex):
    with pytest.raises(ValueError, match="bad x 5") as info:
        gil_ex.synthesize(x=5, mode="raise")
    assert "remote traceback" in info.value.__notes__[0] and "engine_executor_support" in info.value.__notes__[0]
    with pytest.raises(RemoteSynthesisError, match="UnpicklableError: a/b") as info:
        gil_ex.synthesize(x=5, mode="unpicklable")
    assert not isinstance(info.value, UnpicklableError)
    with pytest.raises(SystemExit):  # fails the job; the worker lives on
        gil_ex.synthesize(x=5, mode="exit_system")
    pids = gil_ex.pids
    assert gil_ex.synthesize(x=6).public_inputs[0] == 6 and gil_ex.pids == pids
    with pytest.raises(InputError, match="cannot be sent"):
        gil_ex.synthesize(x=lambda: 1)
    with pytest.raises(Exception, match="pickle"):  # its arrays were in shared memory: no_leaks checks them
        gil_ex.synthesize(x=1, mode="unsendable")
    assert gil_ex.pids == pids


def test_segments_left_by_a_dead_worker_are_removed_by_name():
    name = shared_arrays.segment_name("t")
    shared_arrays.put_arrays(name, {"z": np.ones((3, 4), np.uint64), "e": np.zeros((0, 4), np.uint64)})
    assert shared_arrays.segment_exists(name)
    assert shared_arrays.unlink_segment(name) and not shared_arrays.segment_exists(name)
    assert not shared_arrays.unlink_segment(name)
    import _posixshmem  # created but never sized: a worker killed between shm_open and ftruncate

    os.close(_posixshmem.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600))
    assert shared_arrays.segment_exists(name)
    assert shared_arrays.unlink_segment(name) and not shared_arrays.segment_exists(name)


@pytest.mark.parametrize("mode, how", [("exit", "exit code 7"), ("segv", "signal SIGSEGV")])
def test_a_dying_worker_fails_only_its_job_and_is_replaced(gil_ex, mode, how):
    before = gil_ex.pids
    with pytest.raises(SynthesisWorkerDied, match=how):
        gil_ex.synthesize(x=1, mode=mode)
    after = gil_ex.pids
    assert len(after) == 2 and len(set(before) & set(after)) == 1
    with ThreadPoolExecutor(2) as pool:  # both workers (one brand new) serve jobs
        outs = [f.result(timeout=WAIT) for f in [pool.submit(gil_ex.synthesize, x=i) for i in (10, 11)]]
    assert [w.public_inputs[0] for w in outs] == [10, 11]


def _wait_for_pid(path) -> int:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read()
            if text:
                return int(text)
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise AssertionError("the worker never started the job")


def test_a_killed_worker_fails_its_job_while_another_job_completes(gil_ex, tmp_path):
    pidfile = str(tmp_path / "pid")
    with ThreadPoolExecutor(2) as pool:
        doomed = pool.submit(gil_ex.synthesize, x=1, mode="sleep", pidfile=pidfile)
        pid = _wait_for_pid(pidfile)
        fine = pool.submit(gil_ex.synthesize, x=2)
        assert fine.result(timeout=WAIT).public_inputs[0] == 2
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(SynthesisWorkerDied, match="SIGKILL"):
            doomed.result(timeout=WAIT)
    assert pid not in gil_ex.pids and len(gil_ex.pids) == 2


def test_close_without_waiting_fails_the_running_job(tmp_path):
    ex = make_executor("processes", factory=functools.partial(gil_factory, 100), workers=1)
    pidfile = str(tmp_path / "pid")
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(ex.synthesize, x=1, mode="sleep", pidfile=pidfile)
        _wait_for_pid(pidfile)
        ex.close(wait=False)
        with pytest.raises(ExecutorClosedError):
            running.result(timeout=WAIT)
    ex.close()  # idempotent
    with pytest.raises(ExecutorClosedError):
        ex.synthesize(x=1)
    assert int(open(pidfile).read()) not in _workers()


# ---------------------------------------------------------------------------- construction errors
def _workers() -> set:
    return {p.pid for p in multiprocessing.active_children() if p.name.startswith("cuzk-synthproc-")}


def test_construction_errors_are_clear():
    before = _workers()
    with pytest.raises(InputError, match="factory="):
        make_executor("processes", Unpicklable())
    with pytest.raises(ImportError, match="simulated") as info:
        make_executor("processes", factory=broken_factory)
    assert "while building the synthesizer" in info.value.__notes__[0]
    for bad in (dict(kind="gpu"), dict(workers=0), dict(workers=True), dict(start_method="fork")):
        kw = {"kind": "processes", "workers": 1, **bad}
        with pytest.raises(InputError):
            make_executor(kw.pop("kind"), GilSynth(), **kw)
    with pytest.raises(InputError, match="exactly one"):
        make_executor("threads")
    with pytest.raises(InputError, match="exactly one"):
        make_executor("threads", GilSynth(), factory=gil_factory)
    with pytest.raises(InputError, match="synthesize"):
        make_executor("processes", object())
    with pytest.raises(InputError, match="synthesize"):
        make_executor("processes", factory=functools.partial(dict, a=1))
    assert _workers() <= before  # workers of failed constructions are gone


# ---------------------------------------------------------------------------- circom (GIL-bound WASM)
def _circom_chain(n: int):
    """(.r1cs, .wasm) of circom's Chain(n), compiled once under tests/circom/build (no ceremony)."""
    import hashlib
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "snarkjs_ceremony.py"
    spec = importlib.util.spec_from_file_location("snarkjs_ceremony", path)
    ceremony = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ceremony)
    ok, why = ceremony.toolchain_status()
    if not ok:
        pytest.skip(why)
    ceremony.ensure_toolchain()
    source = ceremony.chain_source(n)
    build = ceremony.CIRCOM_DIR / "build" / f"exec-chain{n}-{hashlib.sha256(source.encode()).hexdigest()[:12]}"
    r1cs, wasm = build / "circuit.r1cs", build / "circuit_js" / "circuit.wasm"
    if not wasm.exists():
        build.mkdir(parents=True, exist_ok=True)
        (build / "circuit.circom").write_text(source)
        rel = build.relative_to(ceremony.CIRCOM_DIR)
        ceremony._run([ceremony._BIN / "circom2", rel / "circuit.circom", "--r1cs", "--wasm", "--prime", "bls12381",
                       "-l", "node_modules", "-o", rel], ceremony.CIRCOM_DIR, sys.stderr)
    return r1cs, wasm


def test_circom_synthesizer_goes_to_workers_as_is_and_gives_the_in_process_witness():
    pytest.importorskip("wasmtime", reason="the optional wasmtime extra is not installed")
    from cuzk.formats.snarkjs_wasm import synthesizer_from_circom

    r1cs, wasm = _circom_chain(40)
    local = synthesizer_from_circom(r1cs, wasm, check=True)
    with make_executor("processes", local, workers=2) as ex:  # rebuilt from its R1CS and .wasm path
        with ThreadPoolExecutor(2) as pool:
            outs = [f.result(timeout=WAIT) for f in [pool.submit(ex.synthesize, x=x, k=7) for x in (3, 4, 5)]]
        for x, w in zip((3, 4, 5), outs):
            _same(w, local.synthesize(x=x, k=7))
        with pytest.raises(InputError, match="no input signal 'nope'"):
            ex.synthesize(x=3, k=7, nope=1)
        assert ex.estimate_bytes() == estimate_synthesized_bytes(local)


def test_close_waits_for_the_running_job_then_stops_every_worker(tmp_path):
    ex = make_executor("processes", GilSynth(3_000_000), workers=2)
    pids = set(ex.pids)
    pidfile = str(tmp_path / "pid")
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(ex.synthesize, x=9, pidfile=pidfile)
        _wait_for_pid(pidfile)
        ex.close(wait=True)
        assert running.result(timeout=WAIT).public_inputs[0] == 9  # finished, not failed
    assert not pids & _workers()


def test_workers_run_the_warm_up_hook_and_the_warm_up_loads_cached_code_without_compiling(gil_ex):
    import numba

    from cuzk.synth.kernels import csr_matvec

    assert gil_ex.synthesize(x=1, mode="warm").public_inputs[1] == 1  # the worker ran warm_up() before its job
    z = np.zeros((2, 4), np.uint64)
    csr_matvec(np.array([0, 1], np.int64), np.array([0], np.int32), z[:1].copy(), z)  # on disk in Numba's cache
    fresh = numba.njit(cache=True, nogil=True)(csr_matvec.py_func)  # as a new worker process sees it
    assert synth_warmup._load_cached(fresh, stop=lambda: True) == 0  # a waiting job stops it at once
    assert synth_warmup._load_cached(fresh, stop=lambda: False) >= 1 and len(fresh.signatures) >= 1
    assert not fresh.stats.cache_misses  # loaded, never compiled
    assert synth_warmup.warm_up(GilSynth()) >= 0  # in-process: loads what is missing, never raises
