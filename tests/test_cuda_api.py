"""cuzk.kernels.cuda's Python surface: contract parity with the CPU backend, input errors,
behaviour without a GPU, the compile cache key; GPU-marked tests compare with the CPU backend."""

import inspect
import subprocess
import sys

import numpy as np
import pytest

from cuda_host import pyref
from cuzk.errors import BackendUnavailableError, FieldValueError, InputError
from cuzk.field import FQ, FR, Fr
from cuzk.kernels import cuda, cuda_kernels, cuda_runtime
from cuzk.curves import get as _get_curve
BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

HAVE_GPU, WHY = cuda.is_available()
gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not HAVE_GPU, reason=f"no CUDA GPU: {WHY}")
no_gpu = pytest.mark.skipif(HAVE_GPU, reason="a GPU is present")


def test_import_cuzk_does_not_import_cupy():
    code = "import sys, cuzk, cuzk.kernels.cuda; print('cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("name", ["ntt", "h_pointwise", "msm_g1", "msm_g2", "stage", "to_canonical", "device_timer"])
def test_contract_signatures_match_the_cpu_backend(name):
    def params(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]

    assert params(getattr(BLS_CUDA, name)) == params(getattr(cpu, name))


def test_is_available_explains_itself():
    ok, reason = cuda.is_available()
    assert isinstance(ok, bool) and reason


@no_gpu
def test_valid_calls_without_a_gpu_raise_backend_unavailable():
    x = pyref.to_mont_limbs([1, 2, 3, 4], FR)
    with pytest.raises(BackendUnavailableError):
        BLS_CUDA.ntt(x)
    with pytest.raises(BackendUnavailableError):
        BLS_CUDA.msm_g1(pyref.g1_to_array([pyref.G1_GEN]), pyref.canon_limbs([3]))
    with pytest.raises(BackendUnavailableError):
        cuda.get_runtime(curve=_get_curve("bls12_381").cuda)


def test_bad_inputs_are_rejected_before_touching_a_device():
    x = pyref.to_mont_limbs([1, 2, 3], FR)
    with pytest.raises(FieldValueError, match="power of two"):
        BLS_CUDA.ntt(x)
    with pytest.raises(FieldValueError, match="shift"):
        BLS_CUDA.ntt(x[:2], shift=0)
    bad = pyref.to_mont_limbs([1, 2], FR)
    bad[1] = [0xFFFFFFFFFFFFFFFF] * 4
    with pytest.raises(FieldValueError, match=r"values\[1\]"):
        BLS_CUDA.ntt(bad)
    with pytest.raises(FieldValueError):
        BLS_CUDA.ntt(x.astype(np.int64))
    with pytest.raises(FieldValueError, match="same length"):
        BLS_CUDA.h_pointwise(x, x[:2], x, 1)
    with pytest.raises(FieldValueError):
        BLS_CUDA.h_pointwise(x, x, x, FR.modulus)
    pts = pyref.g1_to_array([pyref.G1_GEN, None])
    with pytest.raises(InputError, match="2 points but 1 scalars"):
        BLS_CUDA.msm_g1(pts, pyref.canon_limbs([1]))
    with pytest.raises(FieldValueError, match="scalars"):
        BLS_CUDA.msm_g1(pts, pyref.canon_limbs([1, FR.modulus]))
    with pytest.raises(InputError):
        BLS_CUDA.msm_g2(pts, pyref.canon_limbs([1, 2]))  # G1 shape given to G2


def test_xyzz_to_affine_round_trip():
    p = pyref.g1_mul(pyref.G1_GEN, 77)
    z = 0x1234567
    words = b"".join(FQ.to_mont_int(v).to_bytes(48, "little") for v in (p[0] * z * z, p[1] * z**3, z * z, z**3))
    got = cuda.xyzz_to_affine(np.frombuffer(words, np.uint32), "g1", BLS_CUDA.curve)
    np.testing.assert_array_equal(got, pyref.g1_to_array([p])[0])
    assert not cuda.xyzz_to_affine(np.zeros(48, np.uint32), "g1", BLS_CUDA.curve).any()
    q = pyref.g2_mul(pyref.G2_GEN, 5)
    zz, zzz = (3, 4), pyref.fq2_mul((3, 4), (2, 9))  # any ZZ, ZZZ: x = X/ZZ, y = Y/ZZZ
    X, Y = pyref.fq2_mul(q[0], zz), pyref.fq2_mul(q[1], zzz)
    words = b"".join(FQ.to_mont_int(v).to_bytes(48, "little") for c in (X, Y, zz, zzz) for v in c)
    np.testing.assert_array_equal(cuda.xyzz_to_affine(np.frombuffer(words, np.uint32), "g2", BLS_CUDA.curve), pyref.g2_to_array([q])[0])


def test_source_hash_tracks_sources_and_options(tmp_path, monkeypatch):
    h0 = cuda.source_hash("sm_90")
    assert h0 == cuda.source_hash("sm_90") != cuda.source_hash("sm_80")
    for f in cuda.CU_DIR.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    monkeypatch.setattr(cuda_runtime, "CU_DIR", tmp_path)
    assert cuda.source_hash("sm_90") == h0
    (tmp_path / "ntt.cu").write_text((tmp_path / "ntt.cu").read_text() + "\n// edit\n")
    assert cuda.source_hash("sm_90") != h0


def test_window_bits_stay_in_range():
    assert [cuda.msm_window_bits(1 << k) for k in (0, 6, 10, 20, 24)] == [4, 4, 7, 16, 16]


# ---------------------------------------------------------------- on a GPU
@gpu
@needs_gpu
@pytest.mark.parametrize("inverse,shift", [(False, None), (False, 7), (True, None), (True, 7)])
def test_gpu_ntt_matches_cpu(inverse, shift):
    rng = np.random.default_rng(1)
    x = pyref.to_mont_limbs([int(v) for v in rng.integers(0, 2**63, size=1 << 12)], FR)
    np.testing.assert_array_equal(BLS_CUDA.ntt(x, inverse=inverse, shift=shift), cpu.ntt(x, inverse=inverse, shift=shift))


@gpu
@needs_gpu
def test_gpu_h_pointwise_matches_cpu():
    rng = np.random.default_rng(2)
    a, b, c = (pyref.to_mont_limbs([int(v) for v in rng.integers(0, 2**63, size=1000)], FR) for _ in range(3))
    np.testing.assert_array_equal(BLS_CUDA.h_pointwise(a, b, c, 12345), cpu.h_pointwise(a, b, c, 12345))


@gpu
@needs_gpu
@pytest.mark.parametrize("group,log_n", [("g1", 12), ("g2", 8)])
def test_gpu_msm_matches_cpu(group, log_n):
    g1 = (pyref.G1_GEN, pyref.g1_add, pyref.g1_to_array)
    gen, add, to_arr = g1 if group == "g1" else (pyref.G2_GEN, pyref.g2_add, pyref.g2_to_array)
    pts, P = [], gen
    for _ in range(1 << log_n):
        pts.append(P)
        P = add(P, gen)
    pts[3] = None
    arr = to_arr(pts)
    rng = np.random.default_rng(3)
    sc = rng.integers(0, 2**63, size=(1 << log_n, 4), dtype=np.uint64)
    sc[0] = 0
    want = getattr(cpu, f"msm_{group}")(arr, sc)
    np.testing.assert_array_equal(getattr(BLS_CUDA, f"msm_{group}")(arr, sc), want)


# ---------------------------------------------------------------- public wrappers on the host shim
@pytest.fixture
def host_as_device(monkeypatch):
    """Route the public functions to the host-shim runtime, as if it were a GPU."""
    from cuda_host import host_runtime

    if not host_runtime.shutil.which("g++"):
        pytest.skip("g++ is needed for the host shim")
    rt = host_runtime.get_runtime()
    monkeypatch.setattr(cuda, "get_runtime", lambda device_id=None, curve=None: rt)
    return rt


def test_public_wrappers_on_the_host_runtime(host_as_device):
    r = FR.modulus
    vals = list(range(1, 9))
    x = pyref.to_mont_limbs(vals, FR)
    y = BLS_CUDA.ntt(x, shift=7)
    w = FR.root_of_unity_for(3)
    assert pyref.from_mont_limbs(y, FR) == [sum(v * pow(7 * pow(w, i, r), j, r) for j, v in enumerate(vals)) % r
                                            for i in range(8)]
    np.testing.assert_array_equal(BLS_CUDA.ntt(y, inverse=True, shift=7), x)
    h = BLS_CUDA.h_pointwise(x, x, x, 3)
    assert pyref.from_mont_limbs(h, FR) == [(v * v - v) * 3 % r for v in vals]
    g = pyref.G1_GEN
    got = BLS_CUDA.msm_g1(pyref.g1_to_array([g, pyref.g1_mul(g, 2), None]), pyref.canon_limbs([5, 7, 9]))
    np.testing.assert_array_equal(got, pyref.g1_to_array([pyref.g1_mul(g, 19)])[0])
    got2 = BLS_CUDA.msm_g2(pyref.g2_to_array([pyref.G2_GEN]), pyref.canon_limbs([r - 1]))
    neg = (pyref.G2_GEN[0], tuple(-c % pyref.P for c in pyref.G2_GEN[1]))
    np.testing.assert_array_equal(got2, pyref.g2_to_array([neg])[0])
    assert not BLS_CUDA.msm_g1(pyref.g1_to_array([]).reshape(0, 2, 6), pyref.canon_limbs([])).any()


def test_gpu_check_script_runs_whole_on_the_host_build(capsys, tmp_path):
    # The script a GPU session runs once, with minutes of device time: every section (smoke,
    # verified timings, phases, sweep, build, proofs, the optional ones) must work as is, and
    # every row must reach gpu_check.jsonl as it is measured.
    import importlib.util
    import json

    from cuda_host import host_runtime

    if not host_runtime.shutil.which("g++"):
        pytest.skip("g++ is needed for the host shim")
    spec = importlib.util.spec_from_file_location("gpu_check", cuda.CU_DIR.parents[2] / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    saved = cuda.get_runtime, cuda.is_available
    try:
        argv = ["--host", "--all-optional", "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")]
        assert gpu_check.main(argv) == 0
    finally:
        cuda.get_runtime, cuda.is_available = saved
    out = capsys.readouterr().out
    assert "all OK" in out and "MISMATCH" not in out and "FAILED" not in out
    rows = [json.loads(line) for line in (tmp_path / "out" / "gpu_check.jsonl").read_text().splitlines()]
    done = [r for r in rows if "label" in r]
    assert {r["section"] for r in done} >= {"smoke", "timed", "phases", "sweep", "glv", "proof", "optional"}
    assert all(r["verified"] is not False for r in done) and sum(r["verified"] is True for r in done) >= 30
    for label in ("G1 MSM 2^8, equal scalars", "G1 MSM 2^8, zero-heavy", "Fr NTT 2^10", "prove 2^10 GpuProver",
                  "G1 MSM 2^8: accumulate", "prove 2^10, MSM_B2 on the CPU beside the GPU",
                  "  2^10 H host: stage a, b, c as parts, zero rows on the device (copies included)",
                  "  2^10 H host: former way: pad a, b, c on the host, stage on one thread",
                  "  2^10 H host: stage z, query scalars made on the device (copy and kernels included)",
                  "G2 MSM 2^6 c=6 seg=4", "G2 MSM 2^6 c=6 seg=8", "  G1 MSM 2x2^7 points, 128-bit scalars, c=8",
                  "  G2 MSM 4x2^5 points, 65-bit scalars, c=6"):
        assert label in {r["label"] for r in done}, label
    assert any(r["label"].startswith("  best G2 MSM segments at c=6: seg=") for r in done)
    assert any("dmon skipped" in r.get("note", "") for r in rows) and rows[-1]["summary"] == "all OK"


def test_gpu_check_background_prepare_task_round_trips_key_and_witness(tmp_path):
    # what the GPU run's background process hands over: trace + setup + witness saved as npz and
    # JSON (no pickle), loaded back into a key and witness that prove and verify
    import importlib.util

    from cuzk.groth16 import create_proof, verify

    spec = importlib.util.spec_from_file_location("gpu_check", cuda.CU_DIR.parents[2] / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    assert gpu_check.main(["--task", "prepare", "--prove-logs", "10", "--work", str(tmp_path)]) == 0
    assert (tmp_path / "proof_10.done").exists()
    pk, w, public = gpu_check.load_proof(10, str(tmp_path))
    proof = create_proof(pk, w, 5, 6, backend="cpu")
    assert public == [35] and verify(pk.vk, public, proof) and not verify(pk.vk, [36], proof)


def test_gpu_check_dry_run_prints_a_budget_per_section(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", cuda.CU_DIR.parents[2] / "benchmarks" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    assert gpu_check.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "smoke" in out and "proofs" in out and "(skipped: --cpu-proof)" in out and "total" in out


def test_resident_points_give_the_same_msm(host_as_device):
    g = pyref.G1_GEN
    pts = pyref.g1_to_array([g, pyref.g1_mul(g, 2), None, pyref.g1_mul(g, 5)])
    sc = pyref.canon_limbs([5, 7, 9, 11])
    dev = BLS_CUDA.upload_points(pts)
    assert len(dev) == 4 and "g1" in repr(dev)
    np.testing.assert_array_equal(BLS_CUDA.msm_g1(dev, sc), BLS_CUDA.msm_g1(pts, sc))
    with pytest.raises(InputError, match="g1"):
        BLS_CUDA.msm_g2(dev, sc)
    with pytest.raises(InputError, match="4 points but 3 scalars"):
        BLS_CUDA.msm_g1(dev, sc[:3])


def test_full_groth16_proof_through_the_cuda_launch_plans(host_as_device):
    # The CUDA backend's NTT/MSM plans, run on the host build of the same kernels, make a proof
    # that verifies and equals the CPU backend's proof for the same (r, s). The prover stages
    # a, b, c and z, makes the three MSM scalar arrays from z on the "device" (with the key's
    # query rows resident or taken per proof), H and the MSMs run on "device" arrays (no host
    # round trip between NTTs), and each pending copy is waited on before its first use. With
    # MSM_B2 on the CPU the scalars are made on the host and staged instead: the same proof.
    from cuzk import Synthesizer
    from cuzk.circuits import Cube
    from cuzk.groth16 import Bases, create_proof, setup, verify
    from cuzk.groth16.witness_prep import query_rows

    synth = Synthesizer(Cube())
    pk, vk = setup(synth.r1cs, rng=np.random.default_rng(11))
    w = synth.synthesize(x=3, out=35)
    up = BLS_CUDA.upload_points
    bases = Bases(a=up(pk.a), b_g1=up(pk.b_g1), b_g2=up(pk.b_g2), l=up(pk.l), h=up(pk.h))
    host_as_device.staged.clear()
    on_gpu_plan = create_proof(pk, w, 5, 6, backend=BLS_CUDA, bases=bases)
    assert len(host_as_device.staged) == 4 and all(ev.waited for ev in host_as_device.staged)
    assert verify(vk, [35], on_gpu_plan) and not verify(vk, [36], on_gpu_plan)
    assert on_gpu_plan == create_proof(pk, w, 5, 6, backend=cpu)
    rows = tuple(BLS_CUDA.upload_rows(r, pk.n_vars) for r in query_rows(pk.resolved_density(), pk.n_inputs))
    resident = Bases(a=bases.a, b_g1=bases.b_g1, b_g2=bases.b_g2, l=bases.l, h=bases.h, rows=rows)
    assert create_proof(pk, w, 5, 6, backend=BLS_CUDA, bases=resident) == on_gpu_plan
    host_as_device.staged.clear()
    assert create_proof(pk, w, 5, 6, backend=BLS_CUDA, bases=bases, g2_backend="cpu") == on_gpu_plan
    assert len(host_as_device.staged) == 6 and all(ev.waited for ev in host_as_device.staged)


def test_device_arrays_flow_between_kernels_without_the_host(host_as_device):
    r = FR.modulus
    vals = [3, 1, 4, 1, 5, 9, 2, 6]
    a, = BLS_CUDA.stage(pyref.to_mont_limbs(vals, FR))
    y = BLS_CUDA.ntt(a, shift=7)
    assert isinstance(y, cuda.DeviceArray) and y.shape == (8, 8)
    back = BLS_CUDA.to_canonical(BLS_CUDA.ntt(y, inverse=True, shift=7))
    assert pyref.from_mont_limbs(np.asarray(back.array).view(np.uint64), FR) == [v * pow(FR.r, -1, r) % r for v in vals]
    assert np.asarray(back.array).view(np.uint64).reshape(8, 4)[:, 0].tolist() == vals  # canonical limbs
    h = BLS_CUDA.h_pointwise(y, y, y, 1)
    assert isinstance(h, cuda.DeviceArray) and h[:7].shape == (7, 8)
    with pytest.raises(FieldValueError, match="all be on the device"):
        BLS_CUDA.h_pointwise(y, pyref.to_mont_limbs(vals, FR), y, 1)
    g = pyref.G1_GEN
    pts = pyref.g1_to_array([pyref.g1_mul(g, k) for k in (1, 2, 3)])
    sc, = BLS_CUDA.stage(pyref.canon_limbs([4, 5, 6]))
    np.testing.assert_array_equal(BLS_CUDA.msm_g1(pts, sc), pyref.g1_to_array([pyref.g1_mul(g, 32)])[0])
    with pytest.raises(InputError, match="3 points but 2 scalars"):
        BLS_CUDA.msm_g1(pts, sc[:2])


def test_raw_device_scalars_are_checked_on_the_device(host_as_device, monkeypatch):
    bad = np.zeros((2, 8), np.uint32)
    bad[1] = np.frombuffer(FR.modulus.to_bytes(32, "little"), np.uint32)  # exactly r
    monkeypatch.setattr(cuda_kernels, "_is_cupy", lambda a: isinstance(a, np.ndarray) and a.dtype == np.uint32)
    monkeypatch.setattr(cuda_kernels.CudaKernels, "_device_rows", lambda self, a, what: (host_as_device, a))
    pts = pyref.g1_to_array([pyref.G1_GEN, pyref.G1_GEN])
    with pytest.raises(FieldValueError, match="1 device rows are not canonical"):
        BLS_CUDA.msm_g1(pts, bad)


class _Ev:
    """A copy's event: ``done`` once the test says so, or when waited on."""

    def __init__(self):
        self.done, self.waited = False, 0

    def synchronize(self):
        self.waited += 1
        self.done = True


def test_pinned_ring_reuses_chunks_only_after_their_copy_is_done():
    from cuzk.kernels.cuda_staging import PinnedRing

    made = []

    def alloc(n):
        made.append(n)
        return bytearray(n)

    ring = PinnedRing(alloc, chunk=1 << 20, count=2)
    m1, buf = ring.acquire()
    assert buf.size == 1 << 20 and made == [1 << 20]
    e1 = _Ev()
    ring.release(m1, e1)
    m2, _ = ring.acquire()  # the first chunk's copy is in flight: a second chunk is pinned
    e2 = _Ev()
    ring.release(m2, e2)
    assert len(made) == 2 and m2 is not m1
    e2.done = True
    assert ring.acquire()[0] is m2 and e1.waited == 0  # a finished chunk first, no waiting
    ring.release(m2, None)
    assert ring.acquire()[0] is m2
    m3, _ = ring.acquire()  # both chunks exist, m1's copy still runs: wait for it, never pin a third
    assert m3 is m1 and e1.waited == 1 and len(made) == 2 and ring.allocated == 2 << 20


@pytest.mark.parametrize("threads", [1, 3])
def test_staging_goes_through_the_ring_in_chunks_that_overlap_the_copies(threads, monkeypatch):
    from cuzk.kernels import cuda_staging
    from cuzk.kernels.cuda_staging import PinnedRing, stage_through_ring

    # with several threads each 64-byte chunk is filled in three pieces, on more than one thread
    monkeypatch.setattr(cuda_staging, "_MIN_FILL_BYTES", 16)
    fillers, copyto = set(), np.copyto
    monkeypatch.setattr(cuda_staging.np, "copyto",
                        lambda dst, src: (fillers.add(cuda_staging.threading.get_ident()), copyto(dst, src)))

    class Stream:
        """Copies happen when their event is waited on (a copy engine behind the host)."""

        def __init__(self):
            self.pending, self.done = [], 0

        def record(self):
            ev, n = _Ev(), len(self.pending)
            ev.synchronize = lambda: self.run(n)
            return ev

        def run(self, upto):
            while self.done < upto:
                self.pending[self.done]()
                self.done += 1

    class Ptr:
        def __init__(self, dst, off=0):
            self.dst, self.off = dst, off

        def __add__(self, k):
            return Ptr(self.dst, self.off + k)

        def copy_from_host_async(self, src, nbytes, stream):
            import ctypes

            dst, off = self.dst, self.off
            stream.pending.append(lambda: ctypes.memmove(dst.ctypes.data + off, src, nbytes))

    ring = PinnedRing(bytearray, chunk=64, count=2)
    src = np.arange(1000, dtype=np.uint8)
    dst, stream = np.zeros(1000, np.uint8), Stream()
    last = stage_through_ring(ring, src, Ptr(dst), stream, threads)
    assert ring.allocated == 128  # 16 chunks through 2 pinned ones: each refilled only after its copy
    last.synchronize()
    np.testing.assert_array_equal(dst, src)
    assert (len(fillers) > 1) == (threads > 1)


def test_pinned_ring_out_of_host_memory_makes_do_or_names_the_problem():
    from cuzk.errors import DeviceOutOfMemoryError
    from cuzk.kernels.cuda_staging import PinnedRing

    class CUDARuntimeError(RuntimeError):  # what CuPy raises when cudaHostAlloc fails
        pass

    budget = [1]

    def alloc(n):
        if not budget[0]:
            raise CUDARuntimeError("cudaErrorMemoryAllocation: out of memory")
        budget[0] -= 1
        return bytearray(n)

    ring = PinnedRing(alloc, chunk=1 << 20, count=4)
    mem, _ = ring.acquire()
    ev = _Ev()
    ring.release(mem, ev)
    assert ring.acquire()[0] is mem and ev.waited == 1  # no second chunk to be had: wait for the first
    assert ring.count == 1
    with pytest.raises(DeviceOutOfMemoryError, match="cannot pin 1,048,576 bytes"):
        PinnedRing(lambda n: alloc(n), chunk=1 << 20).acquire()

    def broken(n):
        raise CUDARuntimeError("cudaErrorInvalidValue")

    with pytest.raises(CUDARuntimeError):  # not a memory problem: not relabelled
        PinnedRing(broken).acquire()


def test_msm_size_limit_is_the_documented_one(host_as_device):
    # the kernels index nw*n (bucket, point) pairs in 32 bits: 2^28 - 1 points at c = 16
    assert cuda.MSM_MAX_POINTS == (1 << 28) - 1
    big = cuda.MSM_MAX_POINTS + 1
    pts = cuda.DevicePoints(None, big, "g1", 0)
    sc = cuda.DeviceArray(np.broadcast_to(np.zeros(8, np.uint32), (big, 8)), host_as_device)  # no memory
    with pytest.raises(InputError, match="268,435,456 points x 16 windows.*at most 268,435,455 points"):
        BLS_CUDA.msm_g1(pts, sc)
    assert "2^28 - 1" in BLS_CUDA.msm_g1.__doc__


def test_query_scalars_on_the_device_equal_the_hosts(host_as_device):
    # z staged in Montgomery form, converted and gathered by the launch plans: the same rows as
    # the host's canonical conversion and gathers, for host or uploaded row numbers
    rng = np.random.default_rng(5)
    z = Fr.random(40, rng)
    a_rows = np.sort(rng.choice(40, 25, replace=False))
    b_rows = np.array([0, 3, 3, 39], np.int64)  # repeats are fine: a gather
    zd, = BLS_CUDA.stage(z)
    want = Fr.from_mont(z)
    for rows in ((a_rows, b_rows), tuple(BLS_CUDA.upload_rows(r, 40) for r in (a_rows, b_rows))):
        got = [np.asarray(host_as_device.wait(d)).view(np.uint64) for d in BLS_CUDA.query_scalars(zd, rows, 3)]
        for g, w in zip(got, (want[a_rows], want[b_rows], want[3:])):
            np.testing.assert_array_equal(g, w)
    with pytest.raises(InputError, match="on the device"):
        BLS_CUDA.query_scalars(z, (a_rows, b_rows), 3)
    with pytest.raises(InputError, match="below 40"):
        BLS_CUDA.query_scalars(zd, (a_rows, np.array([40])), 3)
    with pytest.raises(InputError, match="below 40"):
        BLS_CUDA.upload_rows(np.array([-1]), 40)
    with pytest.raises(InputError, match="n_inputs"):
        BLS_CUDA.query_scalars(zd, (a_rows, b_rows), 41)


def test_staging_and_device_arrays_reject_bad_input(host_as_device):
    with pytest.raises(FieldValueError, match=r"arrays\[1\]"):
        BLS_CUDA.stage(pyref.to_mont_limbs([1, 2], FR), np.zeros((2, 3), np.uint64))
    bad = pyref.to_mont_limbs([1, 2], FR)
    bad[0] = [0xFFFFFFFFFFFFFFFF] * 4
    with pytest.raises(FieldValueError):
        BLS_CUDA.stage(bad)
    d, = BLS_CUDA.stage(pyref.to_mont_limbs([1, 2, 3, 4], FR))
    with pytest.raises(InputError, match="row slices"):
        d[::2]
    with pytest.raises(FieldValueError, match="power of two"):
        BLS_CUDA.ntt(d[:3])
    with pytest.raises(FieldValueError):
        BLS_CUDA.to_canonical(np.zeros((2, 5), np.uint64))
