"""ns per point addition: G1 mixed add (Jacobian, XYZZ), G1 full Jacobian add, G2 mixed add,
G1/G2 XYZZ doubling, against py_ecc's G1 add measured in the same process (the baseline ratio).

    python3 benchmarks/curve_bench.py [--adds 20000] [--runs 7]

Each figure is the median of ``--runs`` interleaved runs of a chain acc = acc + P_i over 1024
distinct random affine points, one thread (the kernels are sequential).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit

from cuzk.curve import G1, G2
from cuzk.curves.bls12_381 import g1, g2
from cuzk.curve.encoding import points_from_bytes, points_to_bytes


def _chains(K):
    @njit(nogil=True)  # closure over the kernel module: not cacheable, compiled per run
    def jac_madd_chain(points, adds):
        acc = K.jac_from_affine(K.load_affine(points, 0))
        n = points.shape[0]
        for i in range(adds):
            acc = K.jac_madd(acc, K.load_affine(points, i % n))
        return K.jac_is_identity(acc)

    @njit(nogil=True)  # closure over the kernel module: not cacheable, compiled per run
    def xyzz_madd_chain(points, adds):
        acc = K.xyzz_from_affine(K.load_affine(points, 0))
        n = points.shape[0]
        for i in range(adds):
            acc = K.xyzz_madd(acc, K.load_affine(points, i % n))
        return K.xyzz_is_identity(acc)

    @njit(nogil=True)  # closure over the kernel module: not cacheable, compiled per run
    def jac_add_chain(jac, adds):
        acc = K.load_jac(jac, 0)
        n = jac.shape[0]
        for i in range(adds):
            acc = K.jac_add(acc, K.load_jac(jac, i % n))
        return K.jac_is_identity(acc)

    @njit(nogil=True)  # closure over the kernel module: not cacheable, compiled per run
    def xyzz_dbl_chain(points, dbls):
        # repeated doubling (2M + 5S in Fq for G1): the row that a faster square shows up in
        acc = K.xyzz_from_affine(K.load_affine(points, 0))
        for _ in range(dbls):
            acc = K.xyzz_dbl(acc)
        return K.xyzz_is_identity(acc)

    return jac_madd_chain, xyzz_madd_chain, jac_add_chain, xyzz_dbl_chain


def _median_call_us(fn, count, runs):
    fn()  # compile / load from cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t0) / count / 1e3)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adds", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    p1 = G1.random(1024, rng)
    p2 = G2.random(1024, rng)
    j1 = np.empty((1024, 3, 6), dtype=np.uint64)
    g1.mul_many(p1, np.full((1024, 1), 3, dtype=np.uint64), j1)  # Z != 1 Jacobian inputs
    c1, c2 = _chains(g1), _chains(g2)
    import py_ecc.optimized_bls12_381 as ref

    pa, pb = ref.multiply(ref.G1, 12345), ref.multiply(ref.G1, 67890)

    def py_ecc_add(_, adds):
        for _ in range(adds):
            ref.add(pa, pb)

    cases = {
        "G1 mixed add, Jacobian (madd-2007-bl)": (c1[0], p1, args.adds),
        "G1 mixed add, XYZZ (madd-2008-s)": (c1[1], p1, args.adds),
        "G1 full add, Jacobian (add-2007-bl)": (c1[2], j1, args.adds),
        "G2 mixed add, Jacobian": (c2[0], p2, args.adds // 4),
        "G2 mixed add, XYZZ": (c2[1], p2, args.adds // 4),
        "G1 doubling, XYZZ (dbl-2008-s-1)": (c1[3], p1, args.adds),
        "G2 doubling, XYZZ (dbl-2008-s-1)": (c2[3], p2, args.adds // 4),
        "py_ecc G1 add (optimized_bls12_381.add)": (py_ecc_add, None, 500),
    }
    for fn, arg, _ in cases.values():
        fn(arg, 10)  # compile / load from cache
    # runs interleave all cases, so load changes on a shared machine hit every column alike
    samples = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, (fn, arg, adds) in cases.items():
            t0 = time.perf_counter_ns()
            fn(arg, adds)
            samples[name].append((time.perf_counter_ns() - t0) / adds)
    results = {name: statistics.median(v) for name, v in samples.items()}
    py_ns = results.pop("py_ecc G1 add (optimized_bls12_381.add)")
    print(f"{'operation':44s} {'ns/add':>9s} {'vs py_ecc G1 add':>17s}")
    for name, ns in results.items():
        print(f"{name:44s} {ns:9.0f} {py_ns / ns:16.1f}x")
    print(f"{'py_ecc G1 add (optimized_bls12_381.add)':44s} {py_ns:9.0f} {1.0:16.1f}x")
    print()
    print(f"{'per point (numba, one thread unless noted)':44s} {'us/point':>9s}")
    for group, pts in ((G1, p1[:256]), (G2, p2[:256])):
        for method in ("endomorphism", "order"):
            us = _median_call_us(lambda: group.is_in_subgroup(pts, method=method), len(pts), args.runs)
            print(f"{group.name + ' subgroup check, ' + method + ' (prange)':44s} {us:9.2f}")
    big = np.concatenate([p1] * 64)  # 2^16 points
    data = points_to_bytes(G1, big)
    us = _median_call_us(lambda: points_from_bytes(G1, data, checked=False), len(big), args.runs)
    print(f"{'G1 decompress 2^16, unchecked (prange)':44s} {us:9.2f}")
    us = _median_call_us(lambda: points_to_bytes(G1, big), len(big), args.runs)
    print(f"{'G1 compress 2^16':44s} {us:9.2f}")


if __name__ == "__main__":
    main()
