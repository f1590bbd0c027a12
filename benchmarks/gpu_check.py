"""Check the CUDA backend against the CPU/Python references, then time it (one script, <= 8 min).

    python3 benchmarks/gpu_check.py              # checks + timings
    python3 benchmarks/gpu_check.py --quick      # checks + 2^20 timings only
    python3 benchmarks/gpu_check.py --prove      # also one full Groth16 proof through GpuProver

Correctness: Fr/Fq/Fq2 ops and G1/G2 XYZZ ops vs Python ints; NTT 2^12 (forward, inverse,
coset) and G1 MSM 2^12 / G2 MSM 2^10 vs cuzk.kernels.cpu when usable, else vs a naive DFT /
discrete-log reference at 2^8. Timings: CUDA events around the kernels with inputs already on
the device (the ICICLE/sppark convention); MSM bases are 2^12 distinct points tiled to n (the
bucket work depends on the scalars, not on the points being distinct). Baselines in the same
process: the CPU backend at 2^16 when usable. Without a GPU it prints why and exits 0.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0] + "/tests")  # cuda_host.pyref oracles

from cuzk.field.params import FQ, FR  # noqa: E402
from cuzk.kernels import cuda  # noqa: E402

ANCHORS = {  # ICICLE v3 on an RTX 4090 (inputs on GPU), issue 6; ms
    "Fr NTT 2^20": 0.36, "G1 MSM 2^20": 24.7, "G2 MSM 2^20": 70.3, "G1 MSM 2^24": 109.0,
}


def _cpu():
    try:
        from cuzk.kernels import cpu

        return cpu
    except Exception as e:  # noqa: BLE001 - report and fall back to Python references
        print(f"  (cuzk.kernels.cpu not usable: {e}; using Python-int references)")
        return None


def check_fields(rt, pyref) -> None:
    rng = random.Random(1)
    for field in (FR, FQ):
        p = field.modulus
        a = [rng.randrange(p) for _ in range(4096)] + [0, 1, p - 1]
        b = [rng.randrange(p) for _ in range(4096)] + [p - 1, p - 1, p - 1]
        A, B = pyref.to_mont_limbs(a, field), pyref.to_mont_limbs(b, field)
        for op, f in ((cuda.ArithOp.ADD, lambda x, y: (x + y) % p), (cuda.ArithOp.SUB, lambda x, y: (x - y) % p),
                      (cuda.ArithOp.MUL, lambda x, y: x * y % p), (cuda.ArithOp.SQR, lambda x, y: x * x % p)):
            got = pyref.from_mont_limbs(cuda.field_op(rt, field.name, op, A, B), field)
            assert got == [f(x, y) for x, y in zip(a, b)], f"{field.name} {op.name} mismatch"
    p = FQ.modulus
    a = [(rng.randrange(p), rng.randrange(p)) for _ in range(1024)]
    b = [(rng.randrange(p), rng.randrange(p)) for _ in range(1024)]
    A = pyref.to_mont_limbs([c for x in a for c in x], FQ).reshape(-1, 2, 6)
    B = pyref.to_mont_limbs([c for x in b for c in x], FQ).reshape(-1, 2, 6)
    flat = pyref.from_mont_limbs(cuda.field_op(rt, "fq2", cuda.ArithOp.MUL, A, B), FQ)
    assert list(zip(flat[0::2], flat[1::2])) == [pyref.fq2_mul(x, y) for x, y in zip(a, b)], "fq2 mul mismatch"
    for group, gen, mul, to_arr in (("g1", pyref.G1_GEN, pyref.g1_mul, pyref.g1_to_array),
                                    ("g2", pyref.G2_GEN, pyref.g2_mul, pyref.g2_to_array)):
        ks = [(3, 5), (7, 7), (9, FR.modulus - 9), (0, 4)]
        P = to_arr([mul(gen, x) if x else None for x, _ in ks])
        Q = to_arr([mul(gen, y) if y else None for _, y in ks])
        got = np.stack(cuda.ec_op(rt, group, cuda.EcOp.ADD_MIXED, P, Q))
        want = to_arr([mul(gen, (x + y) % FR.modulus) or None for x, y in ks])
        np.testing.assert_array_equal(got, want, err_msg=f"{group} mixed add mismatch")
    print("  field/curve ops: OK (Fr, Fq add/sub/mul/sqr x 4099; Fq2 mul x 1024; G1/G2 add)")


def check_ntt(rt, pyref, cpu) -> None:
    log_n = 12 if cpu else 8
    rng = np.random.default_rng(2)
    x = pyref.to_mont_limbs([int(v) for v in rng.integers(0, 2**63, size=1 << log_n)], FR)
    for inverse in (False, True):
        for shift in (None, 7):
            got = cuda.ntt(x, inverse=inverse, shift=shift)
            if cpu:
                want = cpu.ntt(x, inverse=inverse, shift=shift)
            else:
                r, n = FR.modulus, 1 << log_n
                w = FR.root_of_unity_for(log_n)
                vals = pyref.from_mont_limbs(x, FR)
                if inverse:
                    w, s = pow(w, -1, r), pow(shift or 1, -1, r)
                    ninv = pow(n, -1, r)
                    ref = [sum(v * pow(w, i * j, r) for j, v in enumerate(vals)) * ninv * pow(s, i, r) % r
                           for i in range(n)]
                else:
                    s = shift or 1
                    ref = [sum(v * pow(s * pow(w, i, r), j, r) for j, v in enumerate(vals)) % r for i in range(n)]
                want = pyref.to_mont_limbs(ref, FR)
            np.testing.assert_array_equal(got, want, err_msg=f"NTT inverse={inverse} shift={shift}")
    print(f"  NTT 2^{log_n} (forward/inverse, coset 7): OK vs {'CPU backend' if cpu else 'naive DFT'}")


def _chain(pyref, group: str, n: int, seed: int):
    """n points P_i = (t0 + i*step)*G and their discrete logs."""
    gen, add, mul, to_arr = ((pyref.G1_GEN, pyref.g1_add, pyref.g1_mul, pyref.g1_to_array) if group == "g1"
                             else (pyref.G2_GEN, pyref.g2_add, pyref.g2_mul, pyref.g2_to_array))
    rng = random.Random(seed)
    t0, step = rng.randrange(1, FR.modulus), rng.randrange(1, FR.modulus)
    P, S, pts = mul(gen, t0), mul(gen, step), []
    for _ in range(n):
        pts.append(P)
        P = add(P, S)
    return to_arr(pts), [(t0 + i * step) % FR.modulus for i in range(n)], gen, mul, to_arr


def check_msm(rt, pyref, cpu) -> None:
    for group, log_n in (("g1", 12 if cpu else 8), ("g2", 10 if cpu else 8)):
        pts, logs, gen, mul, to_arr = _chain(pyref, group, 1 << log_n, seed=3)
        rng = random.Random(4)
        ks = [rng.randrange(FR.modulus) for _ in logs]
        ks[0], ks[1], ks[2] = 0, 1, FR.modulus - 1
        pts[5] = 0  # a point at infinity
        sc = pyref.canon_limbs(ks)
        got = getattr(cuda, f"msm_{group}")(pts, sc)
        if cpu:
            want, ref = getattr(cpu, f"msm_{group}")(pts, sc), "CPU backend"
        else:
            k = sum(a * b for i, (a, b) in enumerate(zip(logs, ks)) if i != 5) % FR.modulus
            want, ref = to_arr([mul(gen, k)])[0], "discrete-log reference"
        np.testing.assert_array_equal(got, want, err_msg=f"{group} MSM 2^{log_n}")
        print(f"  {group.upper()} MSM 2^{log_n}: OK vs {ref}")


def _time_ms(xp, fn, reps: int) -> float:
    fn()  # warm-up: twiddle tables, module load, allocator
    start, stop = xp.cuda.Event(), xp.cuda.Event()
    best = float("inf")
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        best = min(best, xp.cuda.get_elapsed_time(start, stop))
    return best


def bench(rt, pyref, cpu, quick: bool) -> list[tuple[str, float, str]]:
    xp, rows = rt.xp, []
    rng = np.random.default_rng(5)
    for log_n in (20,) if quick else (20, 22, 24):
        n = 1 << log_n
        x = xp.asarray(rng.integers(0, 2**63, size=(n, 8), dtype=np.uint64).astype(np.uint32))
        x[:, 7] &= 0x0FFFFFFF  # < r: top limb well under r's 0x73eda753
        w = FR.root_of_unity_for(log_n)
        with rt.stream:
            ms = _time_ms(xp, lambda: cuda.run_ntt(rt, x, log_n, w, None, False), 5)
        rows.append((f"Fr NTT 2^{log_n}", ms, ""))
    base = {g: _chain(pyref, g, 1 << 12, seed=6)[0] for g in ("g1", "g2")}
    jobs = [("g1", 20), ("g2", 20)] + ([] if quick else [("g1", 22), ("g1", 24)])
    for group, log_n in jobs:
        n = 1 << log_n
        tiled = np.tile(base[group], (n >> 12,) + (1,) * (base[group].ndim - 1))
        pts = xp.asarray(np.ascontiguousarray(tiled).view(np.uint32))
        sc = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64)
        sc[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # < r
        dsc = xp.asarray(sc.view(np.uint32))
        with rt.stream:
            ms = _time_ms(xp, lambda: cuda.run_msm(rt, group, pts, dsc, n), 3)
        rows.append((f"{group.upper()} MSM 2^{log_n}", ms, "incl. sort + host sync"))
        del pts, dsc
    if cpu:  # same-process baseline
        n = 1 << 16
        sc = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64)
        sc[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # < r
        pts = np.tile(base["g1"], (n >> 12, 1, 1))
        cpu.msm_g1(pts[:16], sc[:16])
        t = time.perf_counter()
        cpu.msm_g1(pts, sc)
        cpu_ms = (time.perf_counter() - t) * 1e3
        with rt.stream:
            dp, ds = xp.asarray(pts.view(np.uint32)), xp.asarray(sc.view(np.uint32))
            gpu_ms = _time_ms(xp, lambda: cuda.run_msm(rt, "g1", dp, ds, n), 3)
        rows.append(("G1 MSM 2^16 CPU backend", cpu_ms, f"GPU {gpu_ms:.2f} ms, ratio {cpu_ms / gpu_ms:.1f}x"))
    return rows


def full_prove(device: str = "cuda") -> None:
    """Hook for one end-to-end proof through GpuProver (the lead wires larger circuits here)."""
    import cuzk
    from cuzk.circuits.cube import Cube

    synth = cuzk.Synthesizer(Cube())
    pk, vk = cuzk.groth16.setup(synth.r1cs)
    w = synth.synthesize(x=3, out=35)
    prover = cuzk.GpuProver(pk, device=device)
    t = time.perf_counter()
    proof = prover.prove(w)
    ms = (time.perf_counter() - t) * 1e3
    ok = cuzk.groth16.verify(vk, w.public_inputs, proof)
    print(f"  full prove (Cube, {device}): {ms:.1f} ms, verifies: {ok}")
    assert ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the 2^20 timings")
    ap.add_argument("--prove", action="store_true", help="also run one full proof through GpuProver")
    args = ap.parse_args(argv)
    ok, reason = cuda.is_available()
    if not ok:
        print(f"gpu_check: no usable GPU ({reason}); nothing to check. Run on a CUDA machine with CuPy.")
        return 0
    from cuda_host import pyref

    t0 = time.perf_counter()
    rt = cuda.get_runtime()
    dev = rt.xp.cuda.runtime.getDeviceProperties(rt.device_id)
    print(f"device: {dev['name'].decode()}  (module load/compile {time.perf_counter() - t0:.1f} s)")
    cpu = _cpu()
    print("correctness:")
    check_fields(rt, pyref)
    check_ntt(rt, pyref, cpu)
    check_msm(rt, pyref, cpu)
    if args.prove:
        full_prove("cuda")
    print("timings (best of runs, CUDA events, inputs on device):")
    print(f"  {'kernel':<26}{'ms':>10}  {'anchor ms':>10}  note")
    for name, ms, note in bench(rt, pyref, cpu, args.quick):
        anchor = ANCHORS.get(name)
        print(f"  {name:<26}{ms:>10.3f}  {anchor if anchor else '':>10}  {note}")
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
