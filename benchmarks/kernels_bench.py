"""Benchmark the Numba CPU kernels: NTT/iNTT and G1/G2 MSM against arkworks in the same process.

The baseline is ``multiexp_unchecked`` of the PyPI package ``py-arkworks-bls12381`` (a
benchmark-only dependency: ``pip install cuzk[bench]``; one thread); its result is also checked
against ours, so the benchmark doubles as a cross-implementation test. NTT times are best-of-N
wall clock ("cpu": process CPU time of the same run). MSM times are medians of N alternating
runs of: the endomorphism-split MSM (``endo=True``; the default splits small MSMs), the unsplit one
(``endo=False``), each on 1 thread and on all, and arkworks.

    python3 benchmarks/kernels_bench.py                       # defaults below
    python3 benchmarks/kernels_bench.py --msm 14 --g2 12 --ntt 16 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import time

import numpy as np

import cuzk
from cuzk.curve import G1, G2
from cuzk.field import FR
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels
from cuzk.kernels.cpu_threads import resolve_threads

__all__ = ["main"]


def _timed(fn, repeat):
    """(best wall seconds, process CPU seconds of that run, last result)."""
    best, best_cpu, out = float("inf"), 0.0, None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        if t < best:
            best, best_cpu = t, c
    return best, best_cpu, out


def _scalars(n):
    ints = [secrets.randbelow(FR.modulus) for _ in range(n)]
    raw = b"".join(k.to_bytes(32, "little") for k in ints)
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(n, 4)


def _ark(group, points, scalars):
    """Points/scalars in arkworks form (None when the package is missing)."""
    try:
        import py_arkworks_bls12381 as ark
    except ImportError:
        return None
    ints = group.to_ints(points)
    if group is G1:
        enc = [x.to_bytes(48, "big") + y.to_bytes(48, "big") for x, y in ints]
        pts = [ark.G1Point.from_xy_bytes_unchecked_be(b) for b in enc]
        cls = ark.G1Point
    else:
        enc = [b"".join(c.to_bytes(48, "big") for c in (*x, *y)) for x, y in ints]
        pts = [ark.G2Point.from_xy_bytes_unchecked_be(b) for b in enc]
        cls = ark.G2Point
    ks = [ark.Scalar.from_le_bytes(row.tobytes()) for row in scalars]
    return cls, pts, ks


def _same(group, ours, ark_point):
    x, y = group.to_ints(ours)
    flat = [x, y] if group is G1 else [*x, *y]
    return ark_point.to_xy_bytes_be() == b"".join(c.to_bytes(48, "big") for c in flat)


def _median_runs(variants, repeat):
    """Median wall seconds of each variant, the variants alternating run by run (a noisy shared
    machine then slows them alike); plus each variant's last result."""
    walls = {k: [] for k in variants}
    out = {}
    for _ in range(repeat):
        for k, fn in variants.items():
            t0 = time.perf_counter()
            out[k] = fn()
            walls[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in walls.items()}, out


def bench_msm(name, group, log_n, repeat, threads):
    """The MSM with the endomorphism split (GLV on G1, GLS on G2; ``endo=True``)
    against the unsplit MSM (``endo=False``, the previous kernel) and arkworks, same points and
    scalars, alternating runs, medians; 1 thread (per core) and ``threads`` threads."""
    n = 1 << log_n
    scalars = _scalars(n)
    mul = cpu.batch_mul_g1 if group is G1 else cpu.batch_mul_g2
    points = mul(group.generator(), _scalars(n))
    g = "g1" if group is G1 else "g2"
    for endo in (True, False):  # compile / load cache outside the timing
        cpu.msm(g, points[:64], scalars[:64], 1, endo=endo)
        cpu.msm(g, points[:4096], scalars[:4096], threads, endo=endo)
    variants = {
        "new1": lambda: cpu.msm(g, points, scalars, 1, endo=True),
        "old1": lambda: cpu.msm(g, points, scalars, 1, endo=False),
        "newT": lambda: cpu.msm(g, points, scalars, threads, endo=True),
        "oldT": lambda: cpu.msm(g, points, scalars, threads, endo=False),
    }
    ark = _ark(group, points, scalars)
    if ark is not None:
        cls, pts, ks = ark
        variants["ark"] = lambda: cls.multiexp_unchecked(pts, ks)
    t, out = _median_runs(variants, repeat)
    assert all(group.eq(out["new1"], out[k]) for k in ("old1", "newT", "oldT")), "MSM variants differ"
    line = (f"{name} MSM 2^{log_n} (median of {repeat}): 1 thread split {t['new1']:.3f} s, unsplit {t['old1']:.3f} s "
            f"(split/unsplit {t['new1'] / t['old1']:.2f}x); {threads} threads split {t['newT']:.3f} s, unsplit "
            f"{t['oldT']:.3f} s ({t['newT'] / t['oldT']:.2f}x)")
    if ark is None:
        return line + "; arkworks: not installed (pip install py-arkworks-bls12381)"
    ok = _same(group, out["new1"], out["ark"])
    return line + (f"; arkworks (1 thread) {t['ark']:.3f} s; per core split {t['new1'] / t['ark']:.2f}x, unsplit "
                   f"{t['old1'] / t['ark']:.2f}x arkworks; {threads} threads split {t['newT'] / t['ark']:.2f}x; "
                   f"results equal: {ok}")


def bench_ntt(log_n, repeat, threads):
    n = 1 << log_n
    v = np.ascontiguousarray(_scalars(n))
    v[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # below r: a valid Montgomery element
    for t in (1, threads):
        cpu.ntt(v[:4096], threads=t)
    t1, c1, y = _timed(lambda: cpu.ntt(v, threads=1), repeat)
    tt, ct, _ = _timed(lambda: cpu.ntt(v, threads=threads), repeat)
    ti, _, back = _timed(lambda: cpu.ntt(y, inverse=True, shift=7, threads=threads), repeat)
    return (
        f"NTT 2^{log_n}: 1 thread {t1 * 1e3:.1f} ms (cpu {c1 * 1e3:.1f}); {threads} threads {tt * 1e3:.1f} ms "
        f"(cpu {ct * 1e3:.1f}); coset iNTT {ti * 1e3:.1f} ms; speed-up {t1 / tt:.2f}x"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--msm", type=int, nargs="*", default=[14, 16], help="log2 sizes of the G1 MSM")
    ap.add_argument("--g2", type=int, nargs="*", default=[14], help="log2 sizes of the G2 MSM")
    ap.add_argument("--ntt", type=int, nargs="*", default=[16, 18], help="log2 sizes of the NTT")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="threads for the parallel runs (default: all)")
    args = ap.parse_args(argv)
    threads = args.threads or resolve_threads(None)
    print(f"cuzk {cuzk.__version__}; cores {os.cpu_count()}; Numba threads {threads}; load {os.getloadavg()[0]:.2f}")
    for k in args.ntt:
        print(bench_ntt(k, args.repeat, threads), flush=True)
    for k in args.msm:
        print(bench_msm("G1", G1, k, args.repeat, threads), flush=True)
    for k in args.g2:
        print(bench_msm("G2", G2, k, args.repeat, threads), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
