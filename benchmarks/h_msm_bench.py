"""The two big pieces of a large proof on the CPU, each against its former way in the same process:
the H computation (seven NTTs of the domain) and the H query's MSM.

    python benchmarks/h_msm_bench.py                 # 2^22 (a 2 KiB or 8 MiB PoRep partition), 2 threads
    python benchmarks/h_msm_bench.py --log 20 --runs 5

Rows (medians of ``--runs``, the two ways alternated so drift hits both):

- ``compute_h`` with the NTT table cache at its former 256 MiB against the current budget: at
  2^22 the four tables of an H (forward and inverse twiddles, both coset tables) take 512 MiB, so
  under 256 MiB every transform rebuilt its tables;
- the coset NTT's scaled gather, the table read at rev(i) (the former layout, written out here
  as a Numba loop) against the bit-reversed table read in order (the generated kernel);
- the same gather with a product after each scattered load (the former loop, written out here)
  against the generated kernel's products after each block of loads;
- one MSM window of 2^log points at c = 16 (2^15 buckets): counting-sorted buckets summed in
  rounds (``window_affine``) against points streamed into affine buckets (``window_stream``),
  one thread; then the whole ``msm_g1`` at that size on ``--threads`` for scale.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit

from cuzk.curves import get
from cuzk.curves.bls12_381 import msm_kernels_g1 as K
from cuzk.curves.bls12_381 import ntt_kernels as NK
from cuzk.groth16.r1cs_to_qap import compute_h
from cuzk.kernels import ntt_cpu
from cuzk.kernels.scalar_digits import signed_digits

F = NK.F


@njit(cache=True, nogil=True)
def gather_table_at_rev(src, dst, log_n, scale):
    """The former scaled gather: dst[i] = src[rev(i)]·scale[rev(i)] (the table in natural order)."""
    for i in range(dst.shape[0]):
        j = NK._rev(i, log_n)
        F.store(dst, i, F.mul(F.load(src, j), F.load(scale, j)))


@njit(cache=True, nogil=True)
def gather_table_in_order(src, dst, log_n, scale):
    NK.gather(src, dst, log_n, 0, dst.shape[0], scale, True)


@njit(cache=True, nogil=True)
def gather_product_per_load(src, dst, log_n, scale):
    """The former fused gather: each scattered load multiplied at once (the table in order)."""
    for i in range(dst.shape[0]):
        F.store(dst, i, F.mul(F.load(src, NK._rev(i, log_n)), F.load(scale, i)))


@njit(cache=True, nogil=True)
def sorted_window(points, digits, nb):
    return K.window_affine(points, digits, nb, 0, points.shape[0])


@njit(cache=True, nogil=True)
def streamed_window(points, digits, nb):
    return K.window_stream(points, digits, nb, 0, points.shape[0])


def alternate(ways: dict, runs: int, setup=None) -> dict:
    """Median seconds of each way, alternated; ``setup[way]()`` runs untimed before each call."""
    times = {k: [] for k in ways}
    for _ in range(runs):
        for k, fn in ways.items():
            if setup:
                setup[k]()
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def row(label: str, old: str, new: str, med: dict) -> None:
    print(f"{label}: {old} {med[old]:.3f} s, {new} {med[new]:.3f} s -> {med[old] / med[new]:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", type=int, default=22, help="log2 of the domain / MSM size")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    bls = get("bls12_381")
    k, n = bls.kernels, 1 << args.log
    rng = np.random.default_rng(7)
    ints = [int(v) for v in rng.integers(1, 2**62, 4096)]
    x = np.tile(bls.Fr.from_ints(ints), (n // 4096, 1))

    budget, old, new = ntt_cpu.TABLE_BUDGET_BYTES, "256 MiB", f"{ntt_cpu.TABLE_BUDGET_BYTES >> 20} MiB"

    def cache_of(b):  # the cache evicts only when a table is added: start each way in its steady state
        def setup():
            ntt_cpu._TABLES._budget = b
            ntt_cpu.clear_tables()
            compute_h(x, x, x, k, threads=args.threads)
        return setup

    def h():
        compute_h(x, x, x, k, threads=args.threads)

    med = alternate({old: h, new: h}, args.runs, setup={old: cache_of(256 << 20), new: cache_of(budget)})
    ntt_cpu._TABLES._budget = budget
    row(f"compute_h 2^{args.log}, {args.threads} threads, NTT table cache", old, new, med)

    natural = k._ntt.powers(7, n)
    in_order = k._ntt._coset_table(args.log, 7, False)
    out = np.empty_like(x)
    gather_table_at_rev(x[:8], out[:8], 3, natural), gather_table_in_order(x[:8], out[:8], 3, in_order)
    med = alternate({"at rev(i)": lambda: gather_table_at_rev(x, out, args.log, natural),
                     "in order": lambda: gather_table_in_order(x, out, args.log, in_order)}, args.runs)
    row(f"coset gather 2^{args.log}, one thread, table read", "at rev(i)", "in order", med)
    gather_product_per_load(x[:8], out[:8], 3, in_order)
    blocked = np.empty_like(x)
    med = alternate({"a product per load": lambda: gather_product_per_load(x, out, args.log, in_order),
                     "products per block": lambda: gather_table_in_order(x, blocked, args.log, in_order)}, args.runs)
    assert np.array_equal(out, blocked)
    row(f"coset gather 2^{args.log}, one thread, table in order", "a product per load", "products per block", med)

    scalars = rng.integers(0, 2**64, size=(n, 4), dtype=np.uint64)  # full-size and below r, as H's are
    scalars[:, 3] &= np.uint64((1 << 60) - 1)
    t = time.perf_counter()
    points = k.batch_mul_g1(bls.G1.generator(), scalars[::-1].copy(), threads=args.threads)
    print(f"(2^{args.log} points made in {time.perf_counter() - t:.1f} s)")
    c = 16
    digits = signed_digits(scalars, c, -(-256 // c), np.zeros(n, np.bool_))[3].copy()
    nb = 1 << (c - 1)
    a = sorted_window(points[:64], digits[:64], nb), streamed_window(points[:64], digits[:64], nb)
    med = alternate({"sorted + rounds": lambda: sorted_window(points, digits, nb),
                     "streamed": lambda: streamed_window(points, digits, nb)}, args.runs)
    row(f"one MSM window, 2^{args.log} points, c = {c}, one thread", "sorted + rounds", "streamed", med)
    def as_point(xyzz):
        return K.combine(np.array([xyzz], dtype=np.uint64), 1)

    assert bls.G1.eq(as_point(sorted_window(points, digits, nb)), as_point(streamed_window(points, digits, nb))), a
    t = time.perf_counter()
    k.msm_g1(points, scalars, threads=args.threads)
    print(f"msm_g1 2^{args.log}, {args.threads} threads: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
