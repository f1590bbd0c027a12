"""GLV/GLS-split MSM vs the unsplit MSM, one thread, same process, thread CPU time.

    python3 benchmarks/msm_split_bench.py [--g1 10 12 14 15 16] [--g2 10 11 12 13 14] [--runs 7]

For each size the two variants (``cuzk.kernels.cpu.msm(group, ..., threads=1, endo=True)`` and
``endo=False``) alternate over the same points and scalars; the figure is the median of the
runs' thread CPU time (``time.thread_time``: with ``threads=1`` the kernels run on the calling
thread, and CPU time is less disturbed than wall time by other processes on a shared machine).
Also prints what the default (``endo=None``) picks and that all variants agree.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from cuzk.curve import G1, G2
from cuzk.kernels import msm_cpu
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels


def _scalars(rng, n):
    a = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    a[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # < 2^252 < r
    return a


def run(group: str, log_n: int, runs: int) -> str:
    rng = np.random.default_rng(log_n)
    n = 1 << log_n
    G = G1 if group == "g1" else G2
    mul = cpu.batch_mul_g1 if group == "g1" else cpu.batch_mul_g2
    pts, ks = mul(G.generator(), _scalars(rng, n)), _scalars(rng, n)
    out = {e: cpu.msm(group, pts, ks, 1, endo=e) for e in (False, True, None)}  # also compiles
    assert G.eq(out[False], out[True]) and G.eq(out[False], out[None]), "split and unsplit MSMs differ"
    times = {False: [], True: []}
    for _ in range(runs):
        for e in (False, True):
            t0 = time.thread_time()
            cpu.msm(group, pts, ks, 1, endo=e)
            times[e].append(time.thread_time() - t0)
    old, new = statistics.median(times[False]), statistics.median(times[True])
    plan = cpu.group(group).plan()
    default = "split" if plan.dim * n * pts[:1].nbytes <= msm_cpu._SPLIT_MAX_BYTES else "unsplit"
    return (f"{group.upper()} 2^{log_n}: unsplit {old * 1e3:8.1f} ms, {plan.dim}-way split {new * 1e3:8.1f} ms, "
            f"split/unsplit {new / old:.3f}; default: {default}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--g1", type=int, nargs="*", default=[10, 12, 14, 15, 16])
    ap.add_argument("--g2", type=int, nargs="*", default=[10, 11, 12, 13, 14])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    for group, logs in (("g1", args.g1), ("g2", args.g2)):
        for k in logs:
            print(run(group, k, args.runs), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
