"""CupyRuntime's own code (per-thread streams, pinned staging with events, timers, module
loading) and gpu_check's device path, on a fake CuPy whose kernels are the host build and whose
host-to-device copies happen only when an event after them is waited on."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from cuda_host import fake_cupy, host_runtime
from cuzk.field import Fr
from cuzk.kernels import cuda, cuda_runtime

pytestmark = pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")


@pytest.fixture
def fake_gpu(monkeypatch):
    fake = fake_cupy.make_fake_cupy(host_runtime.get_runtime())
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(cuda_runtime, "_compile_cubin", lambda arch: pathlib.Path(f"/nonexistent/cuzk_sm{arch}.cubin"))
    monkeypatch.setattr(cuda_runtime, "_RUNTIMES", {})
    rt = cuda.get_runtime(0)
    assert isinstance(rt, cuda_runtime.CupyRuntime) and rt.xp is fake
    rt.ntt_max_stages = 4  # few std::threads per shared-memory block on the host
    return rt


def test_staged_copies_land_only_when_waited_on(fake_gpu):
    from cuzk.kernels import cpu

    x = Fr.random(16, np.random.default_rng(1))
    d, = cuda.stage(x)
    assert not (np.asarray(d.array).view(np.uint64) == x).any()  # in flight: a kernel would read poison
    assert d.event is not None and not d.event.done
    y = cuda.ntt(d, shift=7)  # waits on d's event first
    assert d.event.done
    np.testing.assert_array_equal(np.asarray(y.array).view(np.uint64), cpu.ntt(x, shift=7))
    with fake_gpu.timer() as t:
        cuda.ntt(y, inverse=True, shift=7)
    assert t.ms >= 0


def test_gpu_prover_on_the_cupy_runtime_matches_the_cpu(fake_gpu):
    import cuzk
    from cuzk.circuits import Cube
    from cuzk.groth16 import create_proof, setup, verify

    synth = cuzk.Synthesizer(Cube())
    pk, vk = setup(synth.r1cs, rng=np.random.default_rng(3))
    w = synth.synthesize(x=3, out=35)
    prover = cuzk.GpuProver(pk, device="cuda")
    proof = prover.prove(w, r=5, s=6)
    assert proof == create_proof(pk, w, 5, 6, backend="cpu") and verify(vk, [35], proof)
    assert fake_gpu.pinned.allocated > 0  # a, b, c and the scalars went through pinned buffers
    prover.prove(w, r=5, s=6)  # the second proof reuses them
    assert fake_gpu.pinned.allocated <= 6 << 20


def test_g2_msm_on_the_cpu_runs_beside_the_gpu_and_gives_the_same_proof(fake_gpu):
    import cuzk
    from cuzk.circuits import Cube
    from cuzk.groth16 import create_proof, setup
    from cuzk.timeline import Timeline, stage_context

    synth = cuzk.Synthesizer(Cube())
    pk, _ = setup(synth.r1cs, rng=np.random.default_rng(4))
    w = synth.synthesize(x=3, out=35)
    prover = cuzk.GpuProver(pk, device="cuda", g2_msm="cpu")
    assert isinstance(prover._bases.b_g2, np.ndarray) and "g2_msm='cpu'" in repr(prover)  # G2 points stay home
    tl = Timeline()
    with stage_context(tl, job_id=1):
        proof = prover.prove(w, r=5, s=6)
    assert proof == create_proof(pk, w, 5, 6, backend="cpu")
    spans = {sp.stage: sp for sp in tl.spans()}
    assert set(spans) >= {"H", "MSM_A", "MSM_B1", "MSM_B2", "MSM_L", "MSM_H"}
    # GPU sub-spans carry their CUDA-event time; MSM_B2 ran on the CPU and has none
    assert all(spans[k].device_s is not None and spans[k].device_s >= 0 for k in ("H", "MSM_A", "MSM_L", "MSM_H"))
    assert spans["MSM_B2"].device_s is None
    assert set(tl.summary().device_seconds) == {"H", "MSM_A", "MSM_B1", "MSM_L", "MSM_H"}


def test_gpu_out_of_memory_mid_proof_falls_back_to_the_cpu_or_raises(fake_gpu, monkeypatch, caplog):
    import cuzk
    from cuzk.circuits import Cube
    from cuzk.errors import DeviceOutOfMemoryError
    from cuzk.groth16 import create_proof, setup
    from cuzk.timeline import Timeline, stage_context

    synth = cuzk.Synthesizer(Cube())
    pk, _ = setup(synth.r1cs, rng=np.random.default_rng(5))
    w = synth.synthesize(x=3, out=35)
    prover, strict = cuzk.GpuProver(pk, device="cuda"), cuzk.GpuProver(pk, device="cuda", on_oom="raise")

    def full(*args, **kwargs):
        raise DeviceOutOfMemoryError("GPU out of memory in msm_g1: test")

    monkeypatch.setattr(cuda, "msm_g1", full)
    tl = Timeline()
    with caplog.at_level("WARNING", logger="cuzk.prover"), stage_context(tl, job_id=3):
        proof = prover.prove(w, r=5, s=6)
    assert proof == create_proof(pk, w, 5, 6, backend="cpu")  # the job is not lost
    assert "proving this witness on the CPU backend" in caplog.text
    assert "CPU_FALLBACK" in {sp.stage for sp in tl.spans()}
    with pytest.raises(DeviceOutOfMemoryError, match="test"):
        strict.prove(w, r=5, s=6)
    with pytest.raises(cuzk.errors.InputError, match="on_oom"):
        cuzk.GpuProver(pk, device="cuda", on_oom="retry")


def test_gpu_check_device_path_runs_on_the_fake(fake_gpu, capsys):
    root = pathlib.Path(cuda.CU_DIR).parents[2]
    spec = importlib.util.spec_from_file_location("gpu_check", root / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    assert gpu_check.main(["--toy", "--no-sweep"]) == 0
    out = capsys.readouterr().out
    assert "fake GPU (host build)" in out and "all OK" in out and "FAILED" not in out


def test_fake_kernels_reject_what_cupy_would_misread(fake_gpu):
    # CuPy passes a Python int as int64 and only an array's data pointer: the fake refuses both,
    # so a plan that skipped CupyRuntime.launch's uint32 conversion or passed a view fails here.
    x = fake_gpu.asarray(np.zeros((4, 8), np.uint32))
    one = fake_gpu.asarray(np.ones(8, np.uint32))
    k = fake_gpu.module.get_function("fr_powers")
    with pytest.raises(TypeError, match="argument 4 is int"):
        k((1,), (1,), (x, x, one, one, 4, np.uint32(4), np.uint32(0)))
    with pytest.raises(ValueError, match="strided"):
        k((1,), (1,), (x[::2], x, one, one, np.uint32(2), np.uint32(4), np.uint32(0)))
    fake_gpu.launch("fr_powers", 1, 1, (x, x, one, one, 4, 4, 0))  # the runtime converts the ints


def test_strided_cupy_input_is_copied_before_the_kernels_see_it(fake_gpu, monkeypatch):
    from cuzk.kernels import cpu

    monkeypatch.setattr(cuda, "_is_cupy", lambda a: isinstance(a, fake_cupy.FakeArray))
    x = Fr.random(16, np.random.default_rng(4))
    rows = np.repeat(x.view(np.uint32), 2, axis=0)
    strided = fake_gpu.asarray(rows)[::2]  # every other row: the rows of x, not contiguous
    assert not strided.flags.c_contiguous
    y = cuda.ntt(strided, shift=7)
    np.testing.assert_array_equal(np.asarray(y.array).view(np.uint64), cpu.ntt(x, shift=7))
    assert y.event is not None  # the caller's stream and other threads can order after it
