"""The AVX-512 IFMA MSM ("ifma") against the scalar batch-affine MSM ("affine"), same process.

    python3 benchmarks/msm_ifma_bench.py [--curves bn254 bls12_381] [--sizes 12 14 16] [--runs 5] [--threads 1]

For each curve, group and size the two methods alternate over the same points and scalars,
each with its own modelled window and the default GLV/GLS choice; the figure is the median of
the runs' wall time and (``--threads 1``) thread CPU time, and the ratio is scalar / ifma of the
medians. The first call of each method (compile or cache load) is timed apart and shown as
``first``. Needs a CPU with AVX-512 IFMA (``cuzk.field.ifma.HAVE_IFMA``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from cuzk import curves
from cuzk.field import ifma
from cuzk.kernels import msm_cpu

__all__ = ["main"]


def _canonical(rng, n, r):
    raw = b"".join((int.from_bytes(rng.bytes(40), "little") % r).to_bytes(32, "little") for _ in range(n))
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(n, 4)


def _time(fn) -> tuple[float, float]:
    w, c = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - w, time.thread_time() - c


def run(name: str, group: str, log_n: int, runs: int, threads: int) -> str:
    cv = curves.get(name)
    G = cv.G1 if group == "g1" else cv.G2
    rng = np.random.default_rng(log_n)
    n = 1 << log_n
    pts = getattr(cv.kernels, f"batch_mul_{group}")(G.generator(), _canonical(rng, n, cv.Fr.modulus))
    ks = _canonical(rng, n, cv.Fr.modulus)
    first, out = {}, {}
    for m in ("affine", "ifma"):
        t0 = time.perf_counter()
        out[m] = cv.kernels.msm(group, pts, ks, threads, method=m)
        first[m] = time.perf_counter() - t0
    assert G.eq(out["affine"], out["ifma"]), "the two methods disagree"
    wall, cpu = {m: [] for m in out}, {m: [] for m in out}
    for _ in range(runs):
        for m in ("affine", "ifma"):
            w, c = _time(lambda: cv.kernels.msm(group, pts, ks, threads, method=m))
            wall[m].append(w)
            cpu[m].append(c)
    med = {m: (statistics.median(wall[m]), statistics.median(cpu[m])) for m in out}
    ratio = med["affine"][0] / med["ifma"][0]
    cpu_part = f", thread CPU {med['affine'][1] * 1e3:7.1f} / {med['ifma'][1] * 1e3:7.1f} ms" if threads == 1 else ""
    return (f"{name:9s} {group.upper()} 2^{log_n} {threads} thr: affine {med['affine'][0] * 1e3:7.1f} ms, "
            f"ifma {med['ifma'][0] * 1e3:7.1f} ms -> {ratio:.2f}x{cpu_part} (first call {first['affine']:.2f} / "
            f"{first['ifma']:.2f} s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--curves", nargs="*", default=["bn254", "bls12_381"])
    ap.add_argument("--groups", nargs="*", default=["g1", "g2"])
    ap.add_argument("--sizes", type=int, nargs="*", default=[12, 14, 16])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if not ifma.HAVE_IFMA:
        print("this CPU has no AVX-512 IFMA: nothing to compare", file=sys.stderr)
        return 1
    for name in args.curves:
        for group in args.groups:
            for k in args.sizes:
                print(run(name, group, k, args.runs, args.threads), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
