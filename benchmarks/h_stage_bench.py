"""The GPU prover's host work before its first kernel, as it was against as it is, same process.

On the CUDA backend a proof's H span is mostly host work: at 2^20 on an H200 134.7 ms of wall
time held 4.8 ms of kernels, and a 2 KiB PoRep partition (2^22) 334.5 of 16.5 ms
(docs/perf/cuda.md). Before its first NTT the prover padded A·z, B·z, C·z to the domain in new
host arrays, checked every row reduced and copied each array into the pinned chunks on one
thread; it converted z out of Montgomery form and gathered the A and B query scalars on the
host (on every core), then checked and copied the three scalar arrays the same way. Now it
stages the parts (A's rows and the input rows, B's, C's) with ``rows=m`` (the zero rows are a
memset on the device) and z as it is, on every core, and the device converts z and gathers the
scalars (``CudaKernels.query_scalars``).

This times both ways' host steps on the shapes of a 2 KiB PoRep partition (2,687,921 rows in a
domain of 2^22; z of 2,685,695 rows; A and B query rows 2,674,948 / 685,522; reduced random
values: the work does not depend on them). With no GPU here the DMA is left out: the copies go
to a ring of ordinary host chunks of the same size (64 MiB) and nothing is sent, so what is
timed is the host's share only, which is what the device waits for. Alternated round by round;
medians.

    .venv/bin/python benchmarks/h_stage_bench.py [--rounds 5] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from cuzk.curves import get
from cuzk.groth16 import witness_prep
from cuzk.groth16.r1cs_to_qap import witness_evaluations, witness_parts
from cuzk.kernels.checks import check_field_rows
from cuzk.kernels.cpu_threads import resolve_threads
from cuzk.kernels.cuda_staging import PinnedRing, stage_through_ring
from cuzk.kernels.staged_rows import stacked_shape

ROWS, INPUTS, DOMAIN, VARS = 2_687_921, 22, 1 << 22, 2_685_695
QUERY_ROWS = (2_674_948, 685_522)
FR = get("bls12_381").Fr


class _NoDma:
    """A device pointer and copy stream that take the copies and send nothing."""

    def __add__(self, k):
        return self

    def copy_from_host_async(self, src, nbytes, stream=None):
        pass

    def memset_async(self, value, nbytes, stream=None):
        pass

    def record(self):
        return None


class _Witness:
    def __init__(self, rng):
        self.a, self.b, self.c = (_reduced(ROWS, rng) for _ in range(3))
        self.z = _reduced(VARS, rng)


def _reduced(n: int, rng) -> np.ndarray:
    x = rng.integers(0, 1 << 63, size=(n, 4), dtype=np.uint64)
    x[:, 3] &= (1 << 60) - 1  # below r
    return x


def _stage(ring, parts, rows, threads):
    """The host side of CupyRuntime.stage: each part through the ring on ``threads``."""
    nd = _NoDma()
    stacked_shape(parts, rows)
    for p in parts:
        stage_through_ring(ring, np.ascontiguousarray(p).view(np.uint32), nd, nd, threads)


def before(ring, w, rows, threads: int) -> None:
    """Pad on the host, check and copy on one thread; z converted and the scalars gathered on
    the host (on every core, as then), and staged on one thread."""
    for x in witness_evaluations(w, INPUTS, DOMAIN):
        _stage(ring, [check_field_rows(x, "a", (4,), FR.modulus)], None, 1)
    z = witness_prep.canonical(FR, w.z, threads)
    scalars = [witness_prep.gather(z, r, threads) for r in rows] + [z[INPUTS:]]
    for sc in scalars:
        _stage(ring, [check_field_rows(sc, "scalars", (4,), FR.modulus)], None, 1)


def now(ring, w, threads: int) -> None:
    """Stage the parts with rows=m (zeros on the device) and z, checks and copies on ``threads``;
    the conversion and the gathers are the device's."""
    for entry in witness_parts(w, INPUTS, DOMAIN):
        _stage(ring, [check_field_rows(p, "a", (4,), FR.modulus, threads) for p in entry], DOMAIN, threads)
    _stage(ring, [check_field_rows(w.z, "z", (4,), FR.modulus, threads)], None, threads)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="threads of the new way (default: every core)")
    args = ap.parse_args(argv)
    threads = resolve_threads(args.threads)
    rng = np.random.default_rng(1)
    w = _Witness(rng)
    rows = [np.sort(rng.choice(VARS, k, replace=False)).astype(np.int64) for k in QUERY_ROWS]
    ring = PinnedRing(bytearray)  # 4 chunks of 64 MiB, as the CUDA runtime pins
    ways = {"before": lambda: before(ring, w, rows, threads), "now": lambda: now(ring, w, threads)}
    for fn in ways.values():
        fn()  # chunks allocated, kernels loaded
    times = {k: [] for k in ways}
    for i in range(args.rounds):
        for name, fn in (list(ways.items()) if i % 2 == 0 else list(ways.items())[::-1]):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    b, n = (statistics.median(times[k]) for k in ("before", "now"))
    print(f"host work of a 2 KiB PoRep partition's H span before its first kernel (no DMA), {args.rounds} rounds")
    print(f"  before (pad, convert, gather on the host): {b * 1e3:7.1f} ms  ({', '.join(f'{t * 1e3:.0f}' for t in times['before'])})")
    print(f"  now (parts and z staged, {threads} threads): {n * 1e3:7.1f} ms  "
          f"({', '.join(f'{t * 1e3:.0f}' for t in times['now'])})")
    print(f"  ratio {b / n:.2f}x; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
