"""A tiny circuit's CPU proof: its fixed per-proof costs, with the MSM plans cached (as shipped)
against modelled on every call, same process, alternated.

A proof of a one-constraint circuit (Cube) runs ten small MSMs; what it costs is mostly Python
and per-call overhead, not arithmetic. ``cuzk.kernels.msm_cost.choose_msm`` and
``choose_window_for`` are pure functions of small ints and are cached; the baseline calls their
unwrapped functions (the cost model evaluated for every method and window on every MSM).
Prints each way's median ``create_proof`` time and the ratio.

    .venv/bin/python benchmarks/tiny_prove_bench.py [--proofs 400]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import cuzk
from cuzk.circuits import Cube
from cuzk.kernels import msm_cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--proofs", type=int, default=400, help="proofs per way")
    args = ap.parse_args(argv)
    synth = cuzk.Synthesizer(Cube())
    pk, vk = cuzk.groth16.setup(synth.r1cs, rng=np.random.default_rng(1))
    w = synth.synthesize(x=3, out=35)
    cached = (msm_cpu.choose_msm, msm_cpu.choose_window_for)
    ways = {"plans cached": cached, "plans modelled each call": tuple(f.__wrapped__ for f in cached)}
    proofs = {}
    try:
        for name, fns in ways.items():
            msm_cpu.choose_msm, msm_cpu.choose_window_for = fns
            for _ in range(10):  # kernels loaded, caches filled
                proofs[name] = cuzk.groth16.create_proof(pk, w, 5, 6)
        times = {name: [] for name in ways}
        order = list(ways.items())
        for i in range(args.proofs):
            for name, fns in (order if i % 2 == 0 else order[::-1]):
                msm_cpu.choose_msm, msm_cpu.choose_window_for = fns
                t0 = time.perf_counter()
                proofs[name] = cuzk.groth16.create_proof(pk, w, 5, 6)
                times[name].append(time.perf_counter() - t0)
    finally:
        msm_cpu.choose_msm, msm_cpu.choose_window_for = cached
    same = len(set(proofs.values())) == 1 and cuzk.groth16.verify(vk, [35], proofs["plans cached"])
    base, new = (statistics.median(times[k]) for k in ("plans modelled each call", "plans cached"))
    print(f"Cube create_proof (CPU backend), {args.proofs} per way, alternated; proofs equal and verify: {same}")
    for name, ts in times.items():
        print(f"  {name:<26} median {statistics.median(ts) * 1e3:.3f} ms")
    print(f"  ratio {base / new:.3f}x; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
