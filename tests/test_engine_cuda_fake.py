"""The Engine on CUDA devices, over the fake CuPy (tests/cuda_host/fake_cupy.py: kernels are the
host build, allocations belong to the current device and count against its memory): proofs
verify, keys are resident on each device that proves and freed on evict/close, prove workers
per device, the device budget, and running out of device memory."""

import gc
import pathlib
import sys
import threading
import weakref

import numpy as np
import pytest

from cuda_host import fake_cupy, host_runtime

pytestmark = pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")


@pytest.fixture
def fake(monkeypatch):
    from cuzk.curves import get as _get_curve
    from cuzk.kernels import cuda, cuda_runtime
    from cuzk.kernels.cuda_staging import PinnedRing

    fake = fake_cupy.make_fake_cupy(host_runtime.get_runtime(), devices=2)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(cuda_runtime, "_compile_cubin", lambda arch, defines=(), curve="bls12_381": pathlib.Path(f"/x/cuzk_sm{arch}_{curve}.cubin"))
    monkeypatch.setattr(cuda_runtime, "_RUNTIMES", {})
    for d in (0, 1):
        rt = cuda.get_runtime(d, _get_curve("bls12_381").cuda)
        rt.ntt_max_stages, rt.ntt_columns = 4, 2  # few std::threads per block on the host
        rt.pinned = PinnedRing(bytearray, chunk=128, count=2)
    yield fake
    gc.collect()
    assert fake.hazards == [], fake.hazards


@pytest.fixture(scope="module")
def cubes(tmp_path_factory):
    """Two Cube keys (different setups) as .params files, with their verifying keys."""
    import cuzk
    from cuzk.circuits import Cube
    from cuzk.groth16 import setup

    synth = cuzk.Synthesizer(Cube())
    out = {}
    for name, seed in (("a", 3), ("b", 4)):
        pk, vk = setup(synth.r1cs, rng=np.random.default_rng(seed))
        path = tmp_path_factory.mktemp("keys") / f"{name}.params"
        pk.write(path)
        out[name] = (str(path), vk)
    from cuzk.engine.devices import key_device_bytes

    return synth, out, key_device_bytes(pk)


def _inputs(x):
    return {"x": x, "out": x**3 + x + 5}


def test_two_devices_two_workers_each_prove_with_their_own_resident_key(fake, cubes, tmp_path, monkeypatch):
    import cuzk
    from cuzk.groth16 import verify

    synth, keys, kbytes = cubes
    used = []
    prove = cuzk.GpuProver.prove

    def spy(self, w, *a, **k):  # each worker proves with the prover of its own device
        used.append((threading.current_thread().device, self.device_id))
        return prove(self, w, *a, **k)

    monkeypatch.setattr(cuzk.GpuProver, "prove", spy)
    base = {d: fake.live_bytes(d) for d in (0, 1)}
    with cuzk.Engine(device="cuda", devices=[0, 1], workers_per_device=2, memory_budget=None,
                     key_cache=tmp_path) as engine:
        assert engine.backend == "cuda" and engine.workers_per_device == 2
        assert sorted(w["device"] for w in engine.status()["workers"] if w["kind"] == "prove") == [0, 0, 1, 1]
        engine.register("a", synth, keys["a"][0], concurrency=2)
        engine.preload("a")  # resident on both devices before any job
        st = engine.status()
        assert st["keys"]["a"]["tier"] == "device" and st["keys"]["a"]["devices"] == ["0", "1"]
        assert {d: v["resident"] for d, v in st["memory"]["devices"].items()} == {"0": {"a": kbytes}, "1": {"a": kbytes}}
        assert all(fake.live_bytes(d) - base[d] >= kbytes for d in (0, 1))  # the bases live on each device
        bases = [weakref.ref(engine._route("a")._provers[d]._bases.a.words) for d in (0, 1)]
        assert [b().device.id for b in bases] == [0, 1]
        futures = [engine.submit("a", _inputs(x)) for x in range(6)]
        proofs = [f.result(timeout=120) for f in futures]
        assert all(verify(keys["a"][1], [x**3 + x + 5], p) for x, p in enumerate(proofs))
        assert not verify(keys["a"][1], [36], proofs[3])
        assert len(used) == 6 and all(dev == pid for dev, pid in used)
        assert all(f.timings.device_s is not None and f.timings.key_load_s == 0 for f in futures)
        freed = engine.evict("a")  # host and device tiers go; the disk cache stays
        gc.collect()
        assert freed > 0 and all(b() is None for b in bases)
        assert engine.status()["keys"]["a"]["tier"] == "disk"
        assert engine.status()["memory"]["devices"]["0"]["keys"] == 0
        again = engine.submit("a", _inputs(7))
        assert verify(keys["a"][1], [7**3 + 12], again.result(timeout=60)) and again.timings.key_load_s > 0
        resident = [weakref.ref(p._bases.h.words) for p in engine._route("a")._provers.values()]
        assert resident
    gc.collect()  # close() released the device tier too
    assert all(r() is None for r in resident) and engine.status()["memory"]["devices"]["0"]["keys"] == 0
    assert all(fake.live_bytes(d) - base[d] < kbytes for d in (0, 1))


def test_device_budget_evicts_the_idle_key_and_refuses_a_key_that_never_fits(fake, cubes, tmp_path):
    import cuzk
    from cuzk.errors import MemoryBudgetError
    from cuzk.groth16 import verify
    from cuzk.timeline.events import EventKind as K

    synth, keys, kbytes = cubes
    with cuzk.Engine(device="cuda", workers_per_device=1, memory_budget=None, device_budget=kbytes * 3 // 2,
                     key_cache=tmp_path) as engine:
        assert engine.status()["memory"]["devices"]["0"]["budget"] == kbytes * 3 // 2
        for name in ("a", "b"):
            engine.register(name, synth, keys[name][0])
        assert verify(keys["a"][1], [35], engine.submit("a", _inputs(3)).result(timeout=60))
        assert verify(keys["b"][1], [35], engine.submit("b", _inputs(3)).result(timeout=60))
        st = engine.status()
        assert st["memory"]["devices"]["0"]["resident"] == {"b": kbytes}  # a made room for b
        assert st["keys"]["a"]["tier"] == "host" and st["keys"]["b"]["tier"] == "device"
        ev = [e for e in engine.timeline.events() if e.kind == K.KEY_EVICT]
        assert [(e.circuit, e.detail["device"], e.detail["bytes"]) for e in ev] == [("a", 0, kbytes)]
        assert 'cuzk_device_key_bytes{device="0"} %d' % kbytes in engine.metrics()
    with cuzk.Engine(device="cuda", workers_per_device=1, memory_budget=None, device_budget=kbytes - 1,
                     key_cache=tmp_path) as engine:
        engine.register("a", synth, keys["a"][0])
        with pytest.raises(MemoryBudgetError, match=f"{kbytes:,} bytes on a device, over the device budget"):
            engine.submit("a", _inputs(3)).result(timeout=60)


def _full_while_uploading(monkeypatch, fake, limit):
    """The device is full at upload time: an upload that takes it past ``limit`` bytes fails."""
    from cuzk.kernels import cuda
    from cuzk.curves import get as _get_curve
    BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels

    upload = BLS_CUDA.upload_points

    def tight(points, device_id=0):
        old, fake.pool.device_memory = fake.pool.device_memory, limit
        try:
            return upload(points, device_id)
        finally:
            fake.pool.device_memory = old

    monkeypatch.setattr(BLS_CUDA, "upload_points", tight)


def test_out_of_device_memory_drops_idle_keys_and_retries_else_fails_only_that_job(fake, cubes, tmp_path, monkeypatch):
    import cuzk
    from cuzk.errors import DeviceOutOfMemoryError
    from cuzk.groth16 import verify

    synth, keys, kbytes = cubes
    gate = threading.Event()

    class Held:  # a's synthesis waits for the gate: a has a job in flight, its key is in use
        r1cs = synth.r1cs

        def synthesize(self, **inputs):
            assert gate.wait(60)
            return synth.synthesize(**inputs)

    with cuzk.Engine(device="cuda", workers_per_device=1, memory_budget=None, device_budget=None,
                     key_cache=tmp_path) as engine:
        engine.register("a", Held(), keys["a"][0])
        engine.register("b", synth, keys["b"][0])
        engine.preload("a")
        gc.collect()
        _full_while_uploading(monkeypatch, fake, fake.live_bytes(0) + kbytes - 1)  # room for one key only
        held = engine.submit("a", _inputs(2))
        with pytest.raises(DeviceOutOfMemoryError, match=rf"circuit 'b': its key needs {kbytes:,} bytes on CUDA "
                                                         rf"device 0.*keys in use stay: \{{'a': {kbytes}\}}"):
            engine.submit("b", _inputs(3)).result(timeout=60)
        gate.set()
        assert verify(keys["a"][1], [15], held.result(timeout=60))  # only b's job failed
        # a is idle now: b's upload runs out of memory, a is dropped from the device, the retry fits
        assert verify(keys["b"][1], [35], engine.submit("b", _inputs(3)).result(timeout=60))
        st = engine.status()
        assert st["memory"]["devices"]["0"]["resident"] == {"b": kbytes} and st["keys"]["a"]["tier"] == "host"
