"""BN254 against BLS12-381 through the same generated kernels: pairing and G1 MSM, ratios in one process.

    python benchmarks/curves_bench.py [--runs 7] [--log-n 16] [--threads 1]

For each case the two curves run in alternation (BN254, BLS12-381, BN254, ...) after a warm-up
call each (compile or cache load), so both see the same machine load; the figures are medians
of wall-clock time and of thread CPU time, and the ratio is BN254 / BLS12-381 of the medians.
``--threads`` sets the MSM's threads (default 1: a per-core figure that a shared machine does
not distort). The pairing target is BN254 pairing <= 1 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from cuzk import curves

__all__ = ["main"]


def _time(fn) -> tuple[float, float]:
    w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    fn()
    return (time.perf_counter_ns() - w0) / 1e6, (time.thread_time_ns() - c0) / 1e6


def _paired(fns: dict, runs: int) -> dict:
    for fn in fns.values():
        fn()  # compile / cache load
    out = {k: ([], []) for k in fns}
    for _ in range(runs):
        for k, fn in fns.items():
            w, c = _time(fn)
            out[k][0].append(w)
            out[k][1].append(c)
    return {k: (statistics.median(w), statistics.median(c)) for k, (w, c) in out.items()}


def _pairing_cases(b):
    G1, G2, pr = b.G1, b.G2, b.pairing
    P, Q = G1.generator(), G2.generator()
    negP, Qp = G1.neg(P), pr.prepare_g2(Q)
    f = pr.multi_miller_loop([(P, Qp)])
    four = [(P, Qp), (negP, Qp), (P, Qp), (negP, Qp)]
    assert pr.pairing_check(four)
    return {
        "pairing(P, Q)": lambda: pr.pairing(P, Q),
        "pairing_check, 4 pairs, G2 prepared": lambda: pr.pairing_check(four),
        "  prepare_g2": lambda: pr.prepare_g2(Q),
        "  multi_miller_loop, 1 pair prepared": lambda: pr.multi_miller_loop([(P, Qp)]),
        "  final_exponentiation": lambda: pr.final_exponentiation(f),
    }


def _msm_case(b, log_n: int, threads: int, seed: int):
    rng = np.random.default_rng(seed)
    n = 1 << log_n
    Fr = b.Fr
    bases = b.kernels.to_canonical(Fr.random(n, rng))
    points = b.kernels.batch_mul_g1(b.G1.generator(), bases)
    scalars = b.kernels.to_canonical(Fr.random(n, rng))
    return lambda: b.kernels.msm_g1(points, scalars, threads)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--log-n", type=int, default=16, help="MSM size 2^k (default 16)")
    ap.add_argument("--threads", type=int, default=1, help="MSM threads (default 1)")
    args = ap.parse_args(argv)
    bn, bls = curves.get("bn254"), curves.get("bls12_381")
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs each, alternating curves; ms (median)")
    print(f"{'case':40s} {'BN254':>9s} {'BLS12-381':>10s} {'ratio':>6s}   {'cpu BN':>7s} {'cpu BLS':>8s}")
    results = {}
    cases_bn, cases_bls = _pairing_cases(bn), _pairing_cases(bls)
    cases_bn[f"G1 MSM 2^{args.log_n}, {args.threads} thread(s)"] = _msm_case(bn, args.log_n, args.threads, 1)
    cases_bls[f"G1 MSM 2^{args.log_n}, {args.threads} thread(s)"] = _msm_case(bls, args.log_n, args.threads, 1)
    for name in cases_bn:
        m = _paired({"bn": cases_bn[name], "bls": cases_bls[name]}, args.runs)
        (wb, cb), (wl, cl) = m["bn"], m["bls"]
        results[name] = {"bn254_ms": wb, "bls12_381_ms": wl, "ratio": wb / wl}
        print(f"{name:40s} {wb:9.3f} {wl:10.3f} {wb / wl:6.2f}   {cb:7.3f} {cl:8.3f}")
    ok = results["pairing(P, Q)"]["bn254_ms"] <= 1.0
    print(f"BN254 pairing target <= 1 ms: {'met' if ok else 'NOT met'}; load average at the end {os.getloadavg()[0]:.1f}")
    return results


if __name__ == "__main__":
    main()
