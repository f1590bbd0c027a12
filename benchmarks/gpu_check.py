"""Check the CUDA backend against the CPU backend, then time it (one script, <= 8 min on a GPU).

    python3 benchmarks/gpu_check.py                  # checks, timings, sweep, full 2^20 proof
    python3 benchmarks/gpu_check.py --quick          # checks, 2^20 timings, 2^16 proof
    python3 benchmarks/gpu_check.py --prove-log 0    # no full proof
    python3 benchmarks/gpu_check.py --host           # the same script on the host build of the
                                                     # kernels at toy sizes (CI runs this; needs g++)

References: Python ints for Fr/Fq/Fq2 ops, cuzk's CPU curve code for G1/G2, ``cuzk.kernels.cpu``
for NTT and MSM (all three are checked against py_ecc/galois in CI), and a pairing check for
the proofs. Nothing here needs py_ecc or galois, so it runs on an image without them.

Each section runs on its own: a failure prints its traceback and the next section still runs;
the exit status is 1 if any section failed. Timings: the runtime's timer (CUDA events on a GPU)
around launches whose inputs are already on the device (the ICICLE/sppark convention), best of
a few runs after a warm-up; MSM bases are 2^12 distinct points tiled to n (the bucket work
depends on the scalars). Baselines in the same process: the CPU backend.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import platform
import random
import statistics
import sys
import time
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from cuzk.field import Fq, Fr  # noqa: E402
from cuzk.field.params import FQ, FR  # noqa: E402
from cuzk.kernels import cuda  # noqa: E402

ANCHORS = {  # ICICLE v3 on an RTX 4090 (inputs on GPU) and the H200 targets, issue 6; ms
    "Fr NTT 2^20": "0.36 (target <= 0.4)", "G1 MSM 2^20": "24.7 (target <= 20)", "G2 MSM 2^20": "70.3",
    "G1 MSM 2^24": "109 (Yrrid)",
}
SUB_SPANS = ("H", "MSM_A", "MSM_B1", "MSM_B2", "MSM_L", "MSM_H")
POREP_CHALLENGES = {10: 0, 12: 1, 14: 5, 16: 22, 18: 88, 20: 350}  # porep_like(leaves=1024) fits 2^k


class Sizes:
    """What each section runs at: the GPU sizes, or toy sizes for the host build."""

    def __init__(self, host: bool, quick: bool, prove_log: int | None):
        self.field_n = 300 if host else 4099
        self.ntt_check = 8 if host else 12
        self.msm_check = {"g1": 7, "g2": 5} if host else {"g1": 12, "g2": 10}
        self.ntt_bench = (10,) if host else ((20,) if quick else (20, 22, 24))
        self.ntt_stage_sweep = (3, 4) if host else (7, 8, 9, 10)
        self.msm_bench = [("g1", 8), ("g2", 6)] if host else (
            [("g1", 20), ("g2", 20)] if quick else [("g1", 20), ("g2", 20), ("g1", 22), ("g1", 24)])
        self.sweep_log = 8 if host else 20
        self.sweep = ([6, 8], [8, 32]) if host else ([13, 14, 15, 16, 17], [8, 32, 128])
        self.reps = 1 if host else 5
        self.cpu_baseline_log = 8 if host else 16
        default = 10 if host else (16 if quick else 20)
        self.prove_log = default if prove_log is None else prove_log


# ---------------------------------------------------------------- correctness
def check_fields(rt, sz: Sizes) -> str:
    rng = random.Random(1)
    for field, arr in ((FR, Fr), (FQ, Fq)):
        p = field.modulus
        a = [rng.randrange(p) for _ in range(sz.field_n - 3)] + [0, 1, p - 1]
        b = [rng.randrange(p) for _ in range(sz.field_n - 3)] + [p - 1, p - 1, p - 1]
        A, B = arr.from_ints(a), arr.from_ints(b)
        for op, f in ((cuda.ArithOp.ADD, lambda x, y: (x + y) % p), (cuda.ArithOp.SUB, lambda x, y: (x - y) % p),
                      (cuda.ArithOp.MUL, lambda x, y: x * y % p), (cuda.ArithOp.SQR, lambda x, y: x * x % p)):
            got = arr.to_ints(cuda.field_op(rt, field.name, op, A, B))
            assert got == [f(x, y) for x, y in zip(a, b)], f"{field.name} {op.name} mismatch"
    p = FQ.modulus
    pairs = [((rng.randrange(p), rng.randrange(p)), (rng.randrange(p), rng.randrange(p))) for _ in range(256)]
    A = Fq.from_ints([c for x, _ in pairs for c in x]).reshape(-1, 2, 6)
    B = Fq.from_ints([c for _, y in pairs for c in y]).reshape(-1, 2, 6)
    flat = Fq.to_ints(cuda.field_op(rt, "fq2", cuda.ArithOp.MUL, A, B).reshape(-1, 6))
    want = [((x0 * y0 - x1 * y1) % p, (x0 * y1 + x1 * y0) % p) for (x0, x1), (y0, y1) in pairs]
    assert list(zip(flat[0::2], flat[1::2])) == want, "fq2 mul mismatch"
    from cuzk.curve import G1, G2

    for group, G in (("g1", G1), ("g2", G2)):
        ks = [(3, 5), (7, 7), (9, FR.modulus - 9), (0, 4), (11, 0)]
        gen = G.generator()
        P = np.stack([G.mul(gen, x) for x, _ in ks])
        Q = np.stack([G.mul(gen, y) for _, y in ks])
        for op, sign in ((cuda.EcOp.ADD_MIXED, 1), (cuda.EcOp.SUB_MIXED, -1), (cuda.EcOp.ADD, 1)):
            got = np.stack(cuda.ec_op(rt, group, op, P, Q))
            want = np.stack([G.mul(gen, (x + sign * y) % FR.modulus) for x, y in ks])
            np.testing.assert_array_equal(got, want, err_msg=f"{group} {op.name} mismatch")
        got = np.stack(cuda.ec_op(rt, group, cuda.EcOp.DBL, P, Q))
        np.testing.assert_array_equal(got, np.stack([G.mul(gen, 2 * x) for x, _ in ks]), err_msg=f"{group} dbl")
    return f"Fr, Fq add/sub/mul/sqr x {sz.field_n}; Fq2 mul x 256; G1/G2 add/sub/dbl incl. infinity"


def check_ntt(rt, sz: Sizes) -> str:
    from cuzk.kernels import cpu

    x = Fr.random(1 << sz.ntt_check, np.random.default_rng(2))
    for inverse in (False, True):
        for shift in (None, 7):
            want = cpu.ntt(x, inverse=inverse, shift=shift)
            np.testing.assert_array_equal(cuda.ntt(x, inverse=inverse, shift=shift), want,
                                          err_msg=f"NTT inverse={inverse} shift={shift}")
    a, b, c = (Fr.random(1 << sz.ntt_check, np.random.default_rng(s)) for s in (3, 4, 5))
    np.testing.assert_array_equal(cuda.h_pointwise(a, b, c, 12345), cpu.h_pointwise(a, b, c, 12345))
    return f"2^{sz.ntt_check} forward/inverse/coset-7 and fused H pointwise == CPU backend"


def _msm_instance(group: str, log_n: int, seed: int):
    from cuzk.curve import G1, G2

    n = 1 << log_n
    rng = np.random.default_rng(seed)
    pts = (G1 if group == "g1" else G2).random(n, rng)
    sc = Fr.from_mont(Fr.random(n, rng))
    sc[0], sc[1] = 0, 0
    sc[1, 0] = 1
    sc[2] = np.frombuffer((FR.modulus - 1).to_bytes(32, "little"), np.uint64)
    pts[5] = 0  # a point at infinity
    pts[7:7 + n // 8] = pts[6]  # a run of duplicates: one heavy bucket per window
    sc[7:7 + n // 8] = sc[6]
    return pts, sc


def check_msm(rt, sz: Sizes) -> str:
    from cuzk.kernels import cpu

    done = []
    for group, log_n in sz.msm_check.items():
        pts, sc = _msm_instance(group, log_n, seed=3)
        want = getattr(cpu, f"msm_{group}")(pts, sc)
        np.testing.assert_array_equal(getattr(cuda, f"msm_{group}")(pts, sc), want, err_msg=f"{group} MSM")
        dev = cuda.upload_points(pts)
        dsc, = cuda.stage(sc)
        np.testing.assert_array_equal(getattr(cuda, f"msm_{group}")(dev, dsc), want, err_msg=f"{group} resident")
        done.append(f"{group.upper()} 2^{log_n}")
    return " and ".join(done) + " == CPU backend (host and resident/staged inputs; zeros, infinity, duplicates)"


# ---------------------------------------------------------------- timings
def _best_ms(rt, fn, reps: int) -> float:
    fn()  # warm-up: twiddle tables, module load, allocator
    times = []
    for _ in range(reps):
        with rt.timer() as t:
            fn()
        times.append(t.ms)
    return min(times)


def _clocked(fn):
    """(fn(), wall seconds)."""
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _random_fr_device(rt, n: int, seed: int):
    return rt.asarray(Fr.random(n, np.random.default_rng(seed)).view(np.uint32))


def _random_scalars(n: int, seed: int) -> np.ndarray:
    """n canonical Fr integers, (n, 4) uint64 (the MSMs' scalars)."""
    return Fr.from_mont(Fr.random(n, np.random.default_rng(seed)))


def _tiled_points(group: str, n: int):
    from cuzk.curve import G1, G2

    base = (G1 if group == "g1" else G2).random(min(n, 1 << 12), np.random.default_rng(6))
    return np.ascontiguousarray(np.tile(base, (-(-n // len(base)),) + (1,) * (base.ndim - 1))[:n])


def bench_ntt(rt, sz: Sizes) -> list:
    rows = []
    for log_n in sz.ntt_bench:
        x = _random_fr_device(rt, 1 << log_n, log_n)
        w = FR.root_of_unity_for(log_n)
        ms = _best_ms(rt, lambda: cuda.run_ntt(rt, x, log_n, w, None, False), sz.reps)
        coset = _best_ms(rt, lambda: cuda.run_ntt(rt, x, log_n, w, 7, True), sz.reps)
        rows.append((f"Fr NTT 2^{log_n}", ms, f"inverse coset {coset:.3f} ms"))
        if log_n == sz.ntt_bench[0]:  # stages per shared-memory pass: fewer passes vs bigger blocks
            default = getattr(rt, "ntt_max_stages", None)
            for k in sz.ntt_stage_sweep:
                rt.ntt_max_stages = k
                ms_k = _best_ms(rt, lambda: cuda.run_ntt(rt, x, log_n, w, None, False), sz.reps)
                rows.append((f"  Fr NTT 2^{log_n}, {k} stages/pass", ms_k, f"{-(-log_n // k)} passes"))
            if default is None:
                del rt.ntt_max_stages
            else:
                rt.ntt_max_stages = default
        del x
    return rows


def bench_msm(rt, sz: Sizes) -> list:
    rows = []
    for group, log_n in sz.msm_bench:
        n = 1 << log_n
        pts = cuda.upload_points(_tiled_points(group, n))
        sc = rt.asarray(_random_scalars(n, log_n).view(np.uint32))
        ms = _best_ms(rt, lambda: cuda.run_msm(rt, group, pts.words, sc, n), max(1, sz.reps - 2))
        rows.append((f"{group.upper()} MSM 2^{log_n}", ms, f"c={cuda.msm_window_bits(n)}, incl. sort, host combine"))
        if group == "g1" and log_n == sz.msm_bench[0][1]:  # worst case for the counting sort's atomics
            same = rt.asarray(np.ascontiguousarray(np.broadcast_to(rt.asnumpy(sc[:1]), (n, 8))))
            ms = _best_ms(rt, lambda: cuda.run_msm(rt, group, pts.words, same, n), max(1, sz.reps - 2))
            rows.append((f"G1 MSM 2^{log_n}, equal scalars", ms, "every digit in one bucket per window"))
            del same
        del pts, sc
    return rows


def bench_sweep(rt, sz: Sizes) -> list:
    n = 1 << sz.sweep_log
    pts = cuda.upload_points(_tiled_points("g1", n))
    sc = rt.asarray(_random_scalars(n, 9).view(np.uint32))
    rows, cs, segs = [], *sz.sweep
    for c in cs:
        for seg in segs:
            ms = _best_ms(rt, lambda: cuda.run_msm(rt, "g1", pts.words, sc, n, c, seg), max(1, sz.reps - 2))
            rows.append((f"G1 MSM 2^{sz.sweep_log} c={c} seg={seg}", ms, ""))
    best = min(rows, key=lambda r: r[1])
    rows.append(("  best of the sweep", best[1], best[0]))
    return rows


def bench_cpu_baseline(rt, sz: Sizes) -> list:
    from cuzk.kernels import cpu

    n = 1 << sz.cpu_baseline_log
    host_pts = _tiled_points("g1", n)
    sc = _random_scalars(n, 10)
    cpu.msm_g1(host_pts[:64], sc[:64])
    want, cpu_s = _clocked(lambda: cpu.msm_g1(host_pts, sc))
    cpu_ms = cpu_s * 1e3
    pts, dsc = cuda.upload_points(host_pts), rt.asarray(sc.view(np.uint32))
    gpu_ms = _best_ms(rt, lambda: cuda.run_msm(rt, "g1", pts.words, dsc, n), sz.reps)
    np.testing.assert_array_equal(cuda.run_msm(rt, "g1", pts.words, dsc, n), want)
    return [(f"G1 MSM 2^{sz.cpu_baseline_log} CPU backend", cpu_ms,
             f"GPU {gpu_ms:.3f} ms: {cpu_ms / gpu_ms:.1f}x ({os.cpu_count()} cores)")]


# ---------------------------------------------------------------- full proofs
def _porep(log_n: int):
    from cuzk.circuits import Cube
    from cuzk.circuits.porep import porep_like

    k = POREP_CHALLENGES.get(log_n)
    if k is None:
        raise SystemExit(f"--prove-log must be one of {sorted(POREP_CHALLENGES)}")
    if k == 0:
        return Cube(), {"x": 3, "out": 35}, [35]
    circuit = porep_like(leaves=1024, challenges=k)
    inputs = circuit.sample_inputs(seed=1)
    return circuit, inputs, circuit.public_inputs(inputs)


def _warm_cpu_prover() -> None:
    """Compile (or load) the CPU prover's kernels on a toy proof and both MSM methods, so the
    timed CPU proof measures proving, not Numba."""
    import cuzk
    from cuzk.circuits import Cube
    from cuzk.groth16 import create_proof, setup
    from cuzk.kernels import cpu

    synth = cuzk.Synthesizer(Cube())
    pk, _ = setup(synth.r1cs, rng=np.random.default_rng(2))
    create_proof(pk, synth.synthesize(x=3, out=35), 5, 6, backend="cpu")
    for group, log_n in (("g1", 14), ("g2", 12)):
        pts, sc = _msm_instance(group, log_n, seed=4)
        getattr(cpu, f"msm_{group}")(pts, sc)


def full_prove(rt, sz: Sizes, host: bool) -> list:
    import cuzk
    from cuzk.groth16 import create_proof, prepare_verifying_key, setup, verify
    from cuzk.timeline import Timeline, stage_context

    circuit, inputs, public = _porep(sz.prove_log)
    synth, t_trace = _clocked(lambda: cuzk.Synthesizer(circuit))
    (pk, vk), t_setup = _clocked(lambda: setup(synth.r1cs, rng=np.random.default_rng(1)))
    w, t_synth = _clocked(lambda: synth.synthesize(**inputs))
    pvk, t_pvk = _clocked(lambda: prepare_verifying_key(vk))
    size = f"2^{pk.domain_size.bit_length() - 1}"
    print(f"    circuit: {synth.r1cs.n_constraints:,} constraints, domain {size}; trace {t_trace:.1f} s, "
          f"setup {t_setup:.1f} s, synthesize {t_synth:.1f} s, prepare vk {t_pvk:.1f} s (first calls include JIT)")
    prover, t_upload = _clocked(lambda: cuzk.GpuProver(pk, device="cuda", verify=False))

    def timed(fn, job):
        tl = Timeline()
        with stage_context(tl, job_id=job):
            proof, wall = _clocked(fn)
        subs = [s for s in tl.spans() if s.stage in SUB_SPANS]
        return proof, wall, {s.stage: s.seconds for s in subs} | {s.stage + " gpu": s.device_s for s in subs}

    first, t_first, _ = timed(lambda: prover.prove(w, r=5, s=6), -1)
    runs = [timed(lambda: prover.prove(w, r=5, s=6), j) for j in range(1 if host else 3)]
    assert all(p == first for p, _, _ in runs), "the GPU prover is not deterministic for fixed (r, s)"
    assert verify(pvk, public, first), "the GPU proof does not verify"
    bad = list(public)
    bad[0] = (bad[0] + 1) % FR.modulus
    assert not verify(pvk, bad, first), "the GPU proof verifies a wrong public input"
    med = statistics.median(r[1] for r in runs)
    parts = {s: statistics.median(r[2].get(s) or float("nan") for r in runs) for s in SUB_SPANS}
    gpu_parts = {s: statistics.median(r[2].get(s + " gpu") or float("nan") for r in runs) for s in SUB_SPANS}
    rows = [(f"prove {size} GpuProver (first)", t_first * 1e3, f"key upload {t_upload:.2f} s"),
            (f"prove {size} GpuProver", med * 1e3, "median; verifies, rejects a wrong input")]
    rows += [(f"  {s}", parts[s] * 1e3, f"device {gpu_parts[s] * 1e3:.3f} ms (CUDA events on a GPU)") for s in SUB_SPANS]

    # two threads, one stream each: proofs interleave on the GPU (pipeline GPU workers)
    jobs = 2 if host else 4
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        out, t = _clocked(lambda: list(pool.map(lambda _: prover.prove(w, r=5, s=6), range(jobs))))
    two = t / jobs
    assert all(p == first for p in out), "concurrent GPU proofs differ"
    rows.append((f"prove {size}, 2 threads", two * 1e3, f"per proof: {med / two:.2f}x throughput"))

    _, t = _clocked(_warm_cpu_prover)
    print(f"    CPU prover warm-up (Numba JIT or cache load of the paths not used yet): {t:.1f} s")
    cpu_proof, t_cpu = _clocked(lambda: create_proof(pk, w, 5, 6, backend="cpu"))
    assert cpu_proof == first, "the GPU and CPU backends made different proofs"
    rows.append((f"prove {size} CPU backend", t_cpu * 1e3,
                 f"same proof; GPU {t_cpu / med:.1f}x faster ({os.cpu_count()} cores)"))

    # Would MSM_B2 be better on the CPU, concurrently with the GPU's H and G1 MSMs? (issue 6
    # asks) A real proof each way: GpuProver(g2_msm="cpu") runs it on a thread beside the GPU.
    split = cuzk.GpuProver(pk, device="cuda", verify=False, g2_msm="cpu")
    split_runs = [timed(lambda: split.prove(w, r=5, s=6), 100 + j) for j in range(1 if host else 2)]
    assert all(p == first for p, _, _ in split_runs), "the proof with MSM_B2 on the CPU differs"
    med_split = statistics.median(r[1] for r in split_runs)
    b2_cpu = statistics.median(r[2].get("MSM_B2", float("nan")) for r in split_runs)
    g1_gpu = sum(parts[s] for s in ("H", "MSM_A", "MSM_B1", "MSM_L", "MSM_H"))
    rows.append((f"prove {size}, MSM_B2 on the CPU beside the GPU", med_split * 1e3,
                 f"{med / med_split:.2f}x vs all on the GPU; CPU MSM_B2 {b2_cpu * 1e3:.1f} ms vs GPU "
                 f"{parts['MSM_B2'] * 1e3:.1f} ms; the GPU's H + G1 MSMs {g1_gpu * 1e3:.1f} ms"))
    return rows


# ---------------------------------------------------------------- driver
def _host_runtime():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from cuda_host import host_runtime

    rt = host_runtime.get_runtime()
    cuda.get_runtime = lambda device_id=None: rt  # the public wrappers and GpuProver use the host build
    cuda.is_available = lambda device_id=0: (True, "host build of the kernels")
    return rt


def _describe(rt, host: bool) -> str:
    import numba

    from cuzk import _runtime

    base = (f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__} "
            f"({_runtime.threading_layer_choice()}), {os.cpu_count()} CPU cores")
    if host:
        return f"host build of the CUDA sources (g++), {base}"
    dev = rt.xp.cuda.runtime.getDeviceProperties(rt.device_id)
    return (f"{dev['name'].decode()}: {dev['multiProcessorCount']} SMs, {dev['totalGlobalMem'] / 2**30:.0f} GiB, "
            f"sm_{dev['major']}{dev['minor']}, CUDA runtime {rt.xp.cuda.runtime.runtimeGetVersion()}, "
            f"cupy {rt.xp.__version__}; {base}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the 2^20 kernel timings, a 2^16 proof")
    ap.add_argument("--host", action="store_true", help="run on the host build of the kernels (toy sizes)")
    ap.add_argument("--toy", action="store_true", help="toy sizes on the CUDA runtime (tests, with a fake CuPy)")
    ap.add_argument("--prove-log", type=int, default=None, help="full-proof size 2^k (0: none)")
    ap.add_argument("--no-sweep", action="store_true", help="skip the MSM window/segment sweep")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    if args.host:
        rt = _host_runtime()
    else:
        ok, reason = cuda.is_available()
        if not ok:
            # a failure, not a quiet 0: on the lent machine this means the run checked nothing
            print(f"gpu_check: FAILED: no usable GPU ({reason}). Run on a CUDA machine with CuPy, "
                  "or with --host on the host build of the kernels.")
            return 2
        t0 = time.perf_counter()
        rt = cuda.get_runtime()
        print(f"kernel module: NVRTC compile or cached cubin load {time.perf_counter() - t0:.1f} s")
    sz = Sizes(args.host or args.toy, args.quick, args.prove_log)
    print(_describe(rt, args.host))
    t0 = time.perf_counter()
    from cuzk.kernels import cpu

    cpu.msm_g1(_tiled_points("g1", 4), np.ones((4, 4), np.uint64))
    print(f"Numba CPU kernels: first call (JIT or cache load) {time.perf_counter() - t0:.1f} s")

    failures = []
    timings = []
    sections = [("check field/curve ops", check_fields), ("check NTT", check_ntt), ("check MSM", check_msm),
                ("time NTT", bench_ntt), ("time MSM", bench_msm)]
    if not args.no_sweep:
        sections.append(("MSM sweep", bench_sweep))
    sections.append(("CPU baseline", bench_cpu_baseline))
    if sz.prove_log:
        sections.append(("full proof", lambda rt_, sz_: full_prove(rt_, sz_, args.host)))
    for name, fn in sections:
        t0 = time.perf_counter()
        try:
            out = fn(rt, sz)
        except Exception:  # noqa: BLE001 - report and go on: one run must say as much as it can
            failures.append(name)
            print(f"{name}: FAILED after {time.perf_counter() - t0:.1f} s")
            traceback.print_exc(file=sys.stdout)
            continue
        if isinstance(out, str):
            print(f"{name}: OK ({time.perf_counter() - t0:.1f} s) {out}")
        else:
            print(f"{name}: done ({time.perf_counter() - t0:.1f} s)")
            timings += out
            for label, ms, note in out:
                anchor = ANCHORS.get(label, "")
                print(f"    {label:<34}{ms:>11.3f} ms  {anchor:<22} {note}")
        sys.stdout.flush()
    print(f"total {time.perf_counter() - t_start:.0f} s; " + (f"FAILED: {', '.join(failures)}" if failures else "all OK"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
