"""ms per BLS12-381 pairing and per 4-pair pairing_check, against py_ecc's pairing measured in the
same process (the baseline ratio).

    python3 benchmarks/pairing_bench.py [--runs 7] [--no-py-ecc]

Every cuzk figure is the median of ``--runs`` calls after a warm-up call (compile or cache
load), one thread, wall clock and thread CPU time (the CPU figure excludes time-slicing when
other jobs share the cores). py_ecc's ``optimized_bls12_381.pairing`` runs once (it is slow).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from cuzk.curves.bls12_381 import pairing as pr
from cuzk.curve.coords import mont_array
from cuzk.curve import G1_PARAMS, G2_PARAMS
from cuzk.field import FQ

__all__ = ["main"]


def _median_ms(fn, runs):
    fn()  # compile / load from cache
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        fn()
        cpu.append((time.thread_time_ns() - c0) / 1e6)
        wall.append((time.perf_counter_ns() - w0) / 1e6)
    return statistics.median(wall), statistics.median(cpu)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-py-ecc", action="store_true", help="skip the py_ecc baseline")
    args = ap.parse_args(argv)

    P = mont_array(G1_PARAMS.generator, 1)
    Q = mont_array(G2_PARAMS.generator, 2)
    x, y = G1_PARAMS.generator
    negP = mont_array([x, tuple(-c % FQ.modulus for c in y)], 1)
    t0 = time.perf_counter()
    pr.pairing(P, Q)
    first = time.perf_counter() - t0
    Qp = pr.prepare_g2(Q)
    pairs = [(P, Q), (negP, Q), (P, Q), (negP, Q)]
    pairs_prepared = [(P, Qp), (negP, Qp), (P, Qp), (negP, Qp)]
    assert pr.pairing_check(pairs) and pr.pairing_check(pairs_prepared)
    f = pr.multi_miller_loop([(P, Qp)])
    print(f"load average {os.getloadavg()[0]:.1f}; first pairing call (compile or cache load) {first:.2f} s")
    rows = [
        ("pairing(P, Q)", lambda: pr.pairing(P, Q)),
        ("pairing_check, 4 pairs", lambda: pr.pairing_check(pairs)),
        ("pairing_check, 4 pairs, G2 prepared", lambda: pr.pairing_check(pairs_prepared)),
        ("  prepare_g2", lambda: pr.prepare_g2(Q)),
        ("  multi_miller_loop, 1 pair prepared", lambda: pr.multi_miller_loop([(P, Qp)])),
        ("  final_exponentiation", lambda: pr.final_exponentiation(f)),
    ]
    results = {}
    print(f"{'case':40s} {'median ms':>10s} {'cpu ms':>8s}")
    for name, fn in rows:
        wall, cpu = _median_ms(fn, args.runs)
        results[name] = wall
        print(f"{name:40s} {wall:10.3f} {cpu:8.3f}")

    if not args.no_py_ecc:
        from py_ecc import optimized_bls12_381 as pe

        t0 = time.perf_counter()
        pe.pairing(pe.G2, pe.G1)
        base = (time.perf_counter() - t0) * 1e3
        print(f"{'py_ecc optimized pairing (1 run)':40s} {base:10.1f}")
        print(f"speed-up of pairing over py_ecc: {base / results['pairing(P, Q)']:.0f}x")


if __name__ == "__main__":
    main()
