"""CupyRuntime's own code (per-thread streams, pinned staging with events, timers, module
loading) and gpu_check's device path, on a fake CuPy whose kernels are the host build and whose
host-to-device copies happen only when an event after them is waited on."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from cuda_host import fake_cupy, host_runtime
from cuzk.errors import FieldValueError, InputError
from cuzk.field import Fr
from cuzk.kernels import cuda, cuda_kernels, cuda_ntt, cuda_runtime
from cuzk.curves import get as _get_curve
BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

pytestmark = pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")


@pytest.fixture
def fake_gpu(monkeypatch):
    from cuzk.kernels.cuda_staging import PinnedRing

    fake = fake_cupy.make_fake_cupy(host_runtime.get_runtime())
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(cuda_runtime, "_compile_cubin", lambda arch, defines=(), curve="bls12_381": pathlib.Path(f"/nonexistent/cuzk_sm{arch}_{curve}.cubin"))
    monkeypatch.setattr(cuda_runtime, "_RUNTIMES", {})
    rt = cuda.get_runtime(0, _get_curve("bls12_381").cuda)
    assert isinstance(rt, cuda_runtime.CupyRuntime) and rt.xp is fake
    rt.ntt_max_stages, rt.ntt_columns = 4, 2  # few std::threads per shared-memory block on the host
    rt.pinned = PinnedRing(bytearray, chunk=128, count=2)  # arrays of a few rows already take several chunks
    yield rt
    import gc

    gc.collect()  # free what the test dropped, so a reuse of its blocks is checked too
    assert fake.hazards == [], fake.hazards  # no block reused while another stream may still read it


def test_staged_copies_land_only_when_waited_on(fake_gpu):

    x = Fr.random(16, np.random.default_rng(1))
    d, = BLS_CUDA.stage(x)
    # 512 bytes through a ring of two 128-byte chunks: chunks 3 and 4 wait for the copies of 1 and 2
    # (never refilled while on the wire), so only the last two are still in flight on return
    landed = (np.asarray(d.array).view(np.uint64) == x).all(axis=1)
    assert landed[:8].all() and not landed[8:].any()  # in flight: a kernel would read poison
    assert d.event is not None and not d.event.done
    y = BLS_CUDA.ntt(d, shift=7)  # waits on d's event first
    assert d.event.done
    np.testing.assert_array_equal(np.asarray(y.array).view(np.uint64), cpu.ntt(x, shift=7))
    with fake_gpu.timer() as t:
        BLS_CUDA.ntt(y, inverse=True, shift=7)
    assert t.ms >= 0


def test_staged_parts_are_padded_with_zeros_on_the_device(fake_gpu):
    from cuzk.kernels.staged_rows import stack_rows

    rng = np.random.default_rng(2)
    x, y, z = Fr.random(5, rng), Fr.random(2, rng), Fr.random(7, rng)
    a, c = BLS_CUDA.stage((x, y), z, rows=16, threads=2)
    # the device memory starts as poison (0xA5): the tail is zero only if the memset ran
    for d, parts in ((a, [x, y]), (c, [z])):
        got = np.asarray(fake_gpu.wait(d)).view(np.uint64)
        np.testing.assert_array_equal(got, stack_rows(parts, 16))
        assert not got[sum(len(p) for p in parts):].any()
    empty, = BLS_CUDA.stage((x[:0], y[:0]), rows=4)  # no host bytes at all: the memset alone
    assert not np.asarray(fake_gpu.wait(empty)).any() and empty.shape == (4, 8)
    with pytest.raises(InputError, match=r"rows must be an int >= the parts' 7 rows"):
        BLS_CUDA.stage((x, y), rows=6)
    bad = y.copy()
    bad[1] = [0xFFFFFFFFFFFFFFFF] * 4
    with pytest.raises(FieldValueError, match=r"arrays\[0\]\[1\]\[1\]"):
        BLS_CUDA.stage((x, bad), rows=8)


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
    assert fake_gpu.pinned.allocated > 0  # a, b, c and the scalars went through the pinned ring
    prover.prove(w, r=5, s=6)  # the second proof reuses its chunks: nothing more is pinned
    assert fake_gpu.pinned.allocated == 2 * 128


def test_gpu_prover_proves_a_bn254_key_through_the_cupy_runtime(monkeypatch):
    # device="cuda" for a BN254 key: a CupyRuntime built for BN254 (rt.curve) over a fake CuPy
    # whose kernels are the harness built with -DCUZK_CURVE_BN254; the proof must verify
    import cuzk
    from cuzk import curves
    from cuzk.circuits import Cube
    from cuzk.groth16 import create_proof, setup, verify

    fake = fake_cupy.make_fake_cupy(host_runtime.get_runtime(curve="bn254"))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(cuda_runtime, "_compile_cubin", lambda arch, defines=(), curve="bls12_381": pathlib.Path(f"/nonexistent/cuzk_sm{arch}_{curve}.cubin"))
    monkeypatch.setattr(cuda_runtime, "_RUNTIMES", {})
    synth = cuzk.Synthesizer(Cube(), curve="bn254")
    pk, vk = setup(synth.r1cs, rng=np.random.default_rng(3))
    w = synth.synthesize(x=3, out=35)
    prover = cuzk.GpuProver(pk, device="cuda")
    bn = curves.get("bn254").cuda
    assert prover._backend is cuda.kernels_for(bn) and set(cuda_runtime._RUNTIMES) == {(0, "bn254")}
    rt = cuda_runtime._RUNTIMES[(0, "bn254")]
    assert rt.curve is bn and rt.xp is fake and prover._bases.a.curve == "bn254"
    proof = prover.prove(w, r=5, s=6)
    assert proof.curve == "bn254" and proof == create_proof(pk, w, 5, 6, backend="cpu")
    assert verify(vk, [35], proof) and not verify(vk, [36], proof)
    assert rt.pinned.allocated > 0  # the witness's arrays went through the pinned ring
    x = curves.get("bn254").Fr.random(8, np.random.default_rng(5))  # a host array: converted on the device
    np.testing.assert_array_equal(prover._backend.to_canonical(x), curves.get("bn254").kernels.to_canonical(x))
    with pytest.raises(InputError, match="bn254's, the MSM is over bls12_381"):
        BLS_CUDA.msm_g1(prover._bases.a, np.zeros((len(prover._bases.a), 4), np.uint64))  # BN254 points, BLS12-381 MSM
    import gc

    gc.collect()
    assert fake.hazards == [], fake.hazards


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

    monkeypatch.setattr(BLS_CUDA, "msm_g1", full)
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


def test_gpu_check_device_path_runs_on_the_fake(fake_gpu, capsys, tmp_path):
    root = pathlib.Path(cuda.CU_DIR).parents[2]
    spec = importlib.util.spec_from_file_location("gpu_check", root / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    argv = ["--toy", "--skip", "sweep,phases", "--out", str(tmp_path), "--work", str(tmp_path / "work")]
    assert gpu_check.main(argv) == 0
    out = capsys.readouterr().out
    assert "fake GPU (host build)" in out and "all OK" in out and "FAILED" not in out
    assert "kernel g1_msm_bucket_acc" in out  # the build section reads RawKernel.attributes


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

    monkeypatch.setattr(cuda_kernels, "_is_cupy", lambda a: isinstance(a, fake_cupy.FakeArray))
    x = Fr.random(16, np.random.default_rng(4))
    rows = np.repeat(x.view(np.uint32), 2, axis=0)
    strided = fake_gpu.asarray(rows)[::2]  # every other row: the rows of x, not contiguous
    assert not strided.flags.c_contiguous
    y = BLS_CUDA.ntt(strided, shift=7)
    np.testing.assert_array_equal(np.asarray(y.array).view(np.uint64), cpu.ntt(x, shift=7))
    assert y.event is not None  # the caller's stream and other threads can order after it


def test_twiddle_tables_are_per_stream_so_eviction_never_frees_a_table_another_stream_reads(fake_gpu, monkeypatch):
    # Thread B transforms with a table and returns without synchronising (its kernels may still
    # be queued on a GPU); thread A then evicts tables and allocates blocks of the same size on
    # its own stream. Had B used A's table, A's pool would hand the freed table's block straight
    # back to A: the fake records that as a hazard (checked when the fixture ends).
    import threading

    monkeypatch.setattr(cuda_ntt, "_TWIDDLE_TABLES", 2)
    x = Fr.random(32, np.random.default_rng(7))
    a = BLS_CUDA.ntt(x)  # thread A (this one) makes the 2^5 table
    b_ready, a_done = threading.Event(), threading.Event()

    def thread_b():
        d, = BLS_CUDA.stage(x)
        BLS_CUDA.ntt(d)  # a DeviceArray in: no synchronisation at the end
        keys = {k[1] for k in fake_gpu.cache if k[0] == "twiddles"}
        assert len(keys) == 2  # its own table, not A's
        b_ready.set()
        a_done.wait(10)

    t = threading.Thread(target=thread_b)
    t.start()
    assert b_ready.wait(10)
    for log_n in (3, 4, 5, 3, 4, 5):  # evicts both 2^5 tables, then reallocates blocks of their size
        BLS_CUDA.ntt(Fr.random(1 << log_n, np.random.default_rng(log_n)), inverse=True)
    a_done.set()
    t.join(10)
    np.testing.assert_array_equal(a, BLS_CUDA.ntt(x))
    assert sum(1 for k in fake_gpu.cache if k[0] == "twiddles") <= 2


def test_sync_mode_names_the_failing_kernel_and_a_sticky_error_stops_every_later_call(fake_gpu, monkeypatch):
    from cuzk.errors import BackendUnavailableError

    monkeypatch.setenv("CUZK_CUDA_SYNC", "1")
    assert cuda_runtime.sync_mode()
    fake_gpu.sync_launches = True  # what CupyRuntime reads from CUZK_CUDA_SYNC at creation
    x = Fr.random(16, np.random.default_rng(2))
    fake_gpu.xp.fault = "ntt_stages"
    with pytest.raises(BackendUnavailableError, match=r"kernel ntt_stages \(grid .*cudaErrorIllegalAddress.*sticky"):
        BLS_CUDA.ntt(x)
    with pytest.raises(BackendUnavailableError, match="unusable: kernel ntt_stages"):
        BLS_CUDA.msm_g1(np.zeros((1, 2, 6), np.uint64), np.zeros((1, 4), np.uint64))  # fails at once, names the culprit
    fake_gpu.xp.hazards.clear()


def test_without_sync_mode_a_fault_surfaces_at_the_next_sync_with_a_hint(fake_gpu):
    from cuzk.errors import BackendUnavailableError

    assert not fake_gpu.sync_launches
    fake_gpu.xp.fault = "fr_powers"
    # the fault surfaces at the next CUDA call (here the next launch, as on a GPU), which can only
    # say "this kernel or one before it" and how to find out
    with pytest.raises(BackendUnavailableError, match="or a kernel launched before it.*CUZK_CUDA_SYNC=1.*sticky"):
        BLS_CUDA.ntt(Fr.random(8, np.random.default_rng(3)), shift=7)
    assert "unusable" in str(pytest.raises(BackendUnavailableError, fake_gpu.synchronize).value)
    fake_gpu.xp.hazards.clear()


def test_warm_up_loads_every_kernel_and_runs_the_plans(fake_gpu):
    BLS_CUDA.warm_up(0)
    assert set(fake_gpu._kernels) == set(cuda_runtime.launch_bounds())
    attrs = fake_gpu.kernel_attributes()
    assert set(attrs) == set(cuda_runtime.launch_bounds()) and all("num_regs" in a for a in attrs.values())


def test_raw_cupy_scalars_are_checked_by_a_module_kernel(fake_gpu, monkeypatch):
    from cuzk.errors import FieldValueError

    monkeypatch.setattr(cuda_kernels, "_is_cupy", lambda a: isinstance(a, fake_cupy.FakeArray))
    bad = np.zeros((3, 8), np.uint32)
    bad[1] = np.frombuffer(Fr.modulus.to_bytes(32, "little"), np.uint32)  # exactly r
    bad[2, 7] = 0xFFFFFFFF
    with pytest.raises(FieldValueError, match="2 device rows are not canonical"):
        BLS_CUDA.msm_g1(np.zeros((3, 2, 6), np.uint64), fake_gpu.asarray(bad))



def test_an_msm_waits_on_the_host_once_and_runs_only_module_kernels(fake_gpu, monkeypatch):
    # The whole plan (sort, scan, accumulation, merge, window sums) is kernels of the module: the
    # fake offers no CuPy element-wise op (cumsum, searchsorted, astype ...), so one would fail
    # here, and on a fresh GPU machine CuPy would compile it during the first proof. The host
    # waits once, for the window sums.
    from cuzk.curve import G1

    assert not hasattr(fake_gpu.xp, "cumsum") and not hasattr(fake_gpu.xp, "searchsorted")
    pts = G1.random(64, np.random.default_rng(1))
    sc = Fr.from_mont(Fr.random(64, np.random.default_rng(2)))
    dev, (dsc,) = BLS_CUDA.upload_points(pts), BLS_CUDA.stage(sc)
    want = BLS_CUDA.msm_g1(pts, sc)
    waits, launches = [], []
    stream_sync, event_sync, launch = type(fake_gpu.stream).synchronize, fake_cupy._Event.synchronize, fake_gpu.launch
    monkeypatch.setattr(type(fake_gpu.stream), "synchronize", lambda self: (waits.append("stream"), stream_sync(self))[1])
    monkeypatch.setattr(fake_cupy._Event, "synchronize", lambda self: (waits.append("event"), event_sync(self))[1])
    monkeypatch.setattr(fake_gpu, "launch", lambda name, *a, **k: (launches.append(name), launch(name, *a, **k))[1])
    np.testing.assert_array_equal(BLS_CUDA.msm_g1(dev, dsc), want)
    assert waits == ["stream"]  # the read-back of the window sums
    assert launches == ["msm_digit_count", "msm_scan_blocks", "msm_scan_add", "msm_digit_scatter", "g1_msm_bucket_acc",
                        "g1_msm_bucket_fixup", "g1_msm_window_segments"]  # 64 points: no heavy tree, one segment
