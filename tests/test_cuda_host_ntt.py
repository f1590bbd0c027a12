"""ntt.cu and cuzk.kernels.cuda's NTT launch plan on the CPU (host shim) vs a naive DFT and the CPU
backend; BLS12-381 throughout, BN254 (the harness built with -DCUZK_CURVE_BN254) on small sizes."""

import random

import numpy as np
import pytest

from cuda_host import host_runtime, pyref
from cuzk import curves
from cuzk.errors import InputError
from cuzk.field import FR
from cuzk.kernels import cuda, cuda_ntt
from cuzk.curves import get as _get_curve
BLS_CUDA = cuda.kernels_for(_get_curve("bls12_381").cuda)  # BLS12-381's CUDA kernels

pytestmark = pytest.mark.skipif(not host_runtime.shutil.which("g++"), reason="g++ is needed for the host shim")
r = FR.modulus


@pytest.fixture(scope="module")
def rt():
    return host_runtime.get_runtime()


def _dft(coeffs, w, shift=1, r=r):
    n = len(coeffs)
    pts = [shift * pow(w, i, r) % r for i in range(n)]
    out = []
    for x in pts:
        acc = 0
        for c in reversed(coeffs):  # Horner
            acc = (acc * x + c) % r
        out.append(acc)
    return out


def _run(rt, values, log_n, shift=None, inverse=False, gen=7):
    fr = rt.curve.fr
    x = pyref.to_mont_limbs(values, fr)
    w = fr.root_of_unity_for(log_n, gen)
    out = cuda.run_ntt(rt, rt.asarray(x.view(np.uint32)), log_n, w, shift, inverse)
    return pyref.from_mont_limbs(out.view(np.uint64), fr)


@pytest.mark.parametrize("log_n", [0, 1, 2, 4, 5, 7, 8, 10])
@pytest.mark.parametrize("shift", [None, 7, 0x1234567890ABCDEF1234])
def test_forward_matches_naive_dft(rt, log_n, shift):
    rng = random.Random(log_n * 31 + (shift or 0) % 97)
    n = 1 << log_n
    vals = [rng.randrange(r) for _ in range(n)]
    if n > 2:
        vals[0], vals[1], vals[2] = 0, r - 1, 1  # edge values in every transform
    want = _dft(vals, FR.root_of_unity_for(log_n, 7), shift or 1)
    assert _run(rt, vals, log_n, shift) == want


@pytest.mark.parametrize("log_n", [3, 6, 9])
def test_inverse_is_exact_inverse_including_cosets(rt, log_n):
    rng = random.Random(log_n)
    n = 1 << log_n
    evals = [rng.randrange(r) for _ in range(n)]
    for shift in (None, 7, 5):
        coeffs = _run(rt, evals, log_n, shift, inverse=True)
        assert _dft(coeffs, FR.root_of_unity_for(log_n, 7), shift or 1) == evals
        assert _run(rt, coeffs, log_n, shift) == evals


def test_snarkjs_generator(rt):
    vals = list(range(1, 17))
    assert _run(rt, vals, 4, gen=5) == _dft(vals, FR.root_of_unity_for(4, 5))


@pytest.mark.parametrize("max_stages,columns", [(1, 1), (3, 1), (10, 1), (3, 8), (2, 4), (4, 8)])
def test_pass_split_does_not_change_the_result(max_stages, columns):
    # one stage per launch, uneven splits, everything in one shared-memory pass, and blocks of
    # several columns (first pass: bit-reversed column order; later passes: consecutive columns)
    rt = host_runtime.HostRuntime(host_runtime.build(), ntt_max_stages=max_stages, ntt_columns=columns)
    vals = [random.Random(5).randrange(r) for _ in range(64)]
    assert _run(rt, vals, 6, 7) == _dft(vals, FR.root_of_unity_for(6, 7), 7)


def test_pass_plan_is_balanced_and_strided_passes_take_256_thread_blocks():
    for log_n in range(1, 29):
        plan = cuda.ntt_plan(log_n)
        ks = [k for _, k, _ in plan]
        assert sum(ks) == log_n and max(ks) - min(ks) <= 1  # even split: no pass of a few stages
        assert [s0 for s0, _, _ in plan] == [sum(ks[:i]) for i in range(len(ks))]
        if log_n <= 10:
            assert plan == [(0, log_n, 1)]  # one pass, every element of a block in shared memory
        else:
            # 8 columns, or 4 for a 7-stage pass: 256 threads per block (the H200 sweep's best)
            assert len(plan) == -(-log_n // 7) and all(c == min(8, 256 >> (k - 1)) for _, k, c in plan)
        for _, k, c in plan:  # a block's threads and tile fit the launch bound and 32 KiB
            assert c << (k - 1) <= cuda.BLOCK["BLOCK_NTT"] and (c << k) * 32 <= 32 << 10
    assert cuda.ntt_plan(21) == [(0, 7, 4), (7, 7, 4), (14, 7, 4)]  # was 10 + 10 + 1 stage(s)
    assert cuda.ntt_plan(20, 7, 8) == [(0, 7, 8), (7, 7, 8), (14, 6, 8)]  # an explicit width is kept
    assert cuda.ntt_plan(24, 10, 1) == [(0, 8, 1), (8, 8, 1), (16, 8, 1)]


def test_strided_passes_read_and_write_runs_of_consecutive_elements(monkeypatch):
    # the element indices one block touches, from the kernel's own launch on the host: with 8
    # columns every pass moves runs of 8 consecutive elements (a warp's 256-byte loads)
    rt = host_runtime.HostRuntime(host_runtime.build(), ntt_max_stages=3, ntt_columns=8)
    vals = [random.Random(6).randrange(r) for _ in range(1 << 9)]
    plan = cuda.ntt_plan(9, 3, 8)
    assert plan == [(0, 3, 8), (3, 3, 8), (6, 3, 8)]
    for s0, k, c in plan[1:]:  # row j of column ci: (ci mod 2^s0) + (j << s0) + (ci >> s0 << s0 + k)
        block0 = sorted((ci % (1 << s0)) + (j << s0) + ((ci >> s0) << (s0 + k)) for ci in range(c) for j in range(1 << k))
        runs = [block0[i : i + c] for i in range(0, len(block0), c)]
        assert all(run == list(range(run[0], run[0] + c)) for run in runs)
    assert _run(rt, vals, 9, 7) == _dft(vals, FR.root_of_unity_for(9, 7), 7)


def test_matches_cpu_backend_when_present(rt):
    cpu = pytest.importorskip("cuzk.curves").get("bls12_381").kernels
    rng = np.random.default_rng(3)
    vals = [int(v) for v in rng.integers(0, 2**62, size=1 << 10)]
    x = pyref.to_mont_limbs(vals, FR)
    for inverse in (False, True):
        for shift in (None, 7):
            try:
                want = cpu.ntt(x, inverse=inverse, shift=shift)
            except Exception as e:  # the CPU backend is someone else's work in progress
                pytest.skip(f"cuzk.kernels.cpu.ntt is not usable here: {type(e).__name__}: {str(e)[:200]}")
            got = cuda.run_ntt(rt, x.view(np.uint32).copy(), 10, FR.root_of_unity_for(10, 7), shift, inverse)
            np.testing.assert_array_equal(got.view(np.uint64), want)


def test_h_pointwise(rt):
    rng = random.Random(8)
    n = 300
    a, b, c = ([rng.randrange(r) for _ in range(n)] for _ in range(3))
    z_inv = rng.randrange(r)
    dev = [pyref.to_mont_limbs(v, FR).view(np.uint32) for v in (a, b, c)]
    got = pyref.from_mont_limbs(cuda.run_h_pointwise(rt, *dev, z_inv).view(np.uint64), FR)
    assert got == [(x * y - z) * z_inv % r for x, y, z in zip(a, b, c)]


def test_runtime_caches_stay_bounded_per_kind_and_results_stay_right(rt, monkeypatch):
    # Twiddle tables and the small Fr constants (shifts, 1/n, z^-1) share the runtime's cache;
    # evicting one kind must never throw out the other, and each kind stays bounded.
    monkeypatch.setattr(cuda_ntt, "_CONSTANTS", 5)
    rng = random.Random(5)
    for log_n in range(1, 10):
        vals = [rng.randrange(r) for _ in range(1 << log_n)]
        shift = 3 + log_n
        assert _run(rt, _run(rt, vals, log_n, shift), log_n, shift, inverse=True) == vals
        kinds = [k[0] for k in rt.cache]
        assert kinds.count("twiddles") <= cuda_ntt._TWIDDLE_TABLES and kinds.count("fr_const") <= 5
    x = rt.asarray(pyref.to_mont_limbs(vals, FR).view(np.uint32))
    before = x.copy()
    canon = BLS_CUDA.to_canonical(cuda.DeviceArray(x, rt))
    assert (x == before).all() and pyref.canon_limbs(vals).view(np.uint32).tolist() == np.asarray(canon.array).tolist()


# ---------------------------------------------------------------- BN254 (its own harness build)
@pytest.fixture(scope="module")
def bn_rt():
    return host_runtime.get_runtime(curve="bn254")


def test_bn254_forward_and_inverse_match_naive_dft(bn_rt):
    # BN254's Fr (2-adicity 28, generator 5: snarkjs' roots), one and several shared-memory passes
    fr = bn_rt.curve.fr
    rng = random.Random(254)
    for log_n, shift in ((0, None), (1, 7), (3, None), (6, 0x1234567890ABCDEF1234)):
        vals = [rng.randrange(fr.modulus) for _ in range(1 << log_n)]
        if log_n >= 2:
            vals[0], vals[1], vals[2] = 0, fr.modulus - 1, 1
        w = fr.root_of_unity_for(log_n, fr.generator)
        fwd = _run(bn_rt, vals, log_n, shift, gen=fr.generator)
        assert fwd == _dft(vals, w, shift or 1, r=fr.modulus)
        assert _run(bn_rt, fwd, log_n, shift, inverse=True, gen=fr.generator) == vals


def test_bn254_matches_its_cpu_backend(bn_rt):
    bn = curves.get("bn254")
    x = bn.Fr.random(1 << 7, np.random.default_rng(4))
    w = bn.spec.fr.root_of_unity_for(7)  # the CPU backend's default: the curve's Fr generator
    for inverse in (False, True):
        for shift in (None, 5):
            got = cuda.run_ntt(bn_rt, x.view(np.uint32).copy(), 7, w, shift, inverse)
            np.testing.assert_array_equal(got.view(np.uint64), bn.kernels.ntt(x, inverse=inverse, shift=shift))
    a, b, c = (bn.Fr.random(33, np.random.default_rng(s)) for s in (5, 6, 7))
    got = cuda.run_h_pointwise(bn_rt, *(v.view(np.uint32).copy() for v in (a, b, c)), 12345)
    np.testing.assert_array_equal(got.view(np.uint64), bn.kernels.h_pointwise(a, b, c, 12345))
    kern = cuda.kernels_for(bn.cuda)  # the public functions for BN254 (host arrays through the device)
    canon = kern.to_canonical(cuda.DeviceArray(bn_rt.asarray(x.view(np.uint32)), bn_rt))
    np.testing.assert_array_equal(np.asarray(canon.array).view(np.uint64), bn.kernels.to_canonical(x))
    with pytest.raises(InputError, match="bn254 device array, these kernels are bls12_381's"):
        BLS_CUDA.to_canonical(canon)
