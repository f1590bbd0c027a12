"""Kernel A/B between two source trees: fresh processes alternating, one thread, thread CPU time.

For a change to the field or MSM kernels, measured where the machine is shared: thread CPU
time (``time.thread_time``) leaves out the time other processes take the core, and the two
trees alternate (old, new, old, new, ...) so that a change of load hits both. Each tree runs in
its own Python process with ``PYTHONPATH`` = the tree and its own Numba cache
(``<tree>/.numba-cache``); one untimed process per tree first fills (or loads) that cache.
Figures, per curve (``--curves``):

* ``fq2_mul`` / ``fq2_sqr``: ns per operation in a dependent chain inside one loop (as
  ``field_bench.py``), min of ``--chain-reps`` chains of 100,000;
* ``g2_msm``: ``cpu.msm`` of 2^``--log-msm`` G2 points, one thread, default split policy,
  median of ``--reps``;
* ``prove``: a one-thread ``GpuProver(pk, device="cpu", threads=1).prove`` of the circom chain
  at 2^16 (65,000 constraints; benchmarks/snarkjs_bench.py's artifacts under
  ~/.cache/cuzk/snarkjs, built with ``--cuzk-setup`` there), median of ``--prove-reps``.

    git worktree add --detach /tmp/ab-old HEAD       # the tree before the change
    python3 benchmarks/tree_ab_bench.py /tmp/ab-old . --rounds 5
    python3 benchmarks/tree_ab_bench.py /tmp/ab-old . --figures fq2_mul fq2_sqr g2_msm --rounds 7
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from tree_ab import alternate, load_average, run_probe

PROBE = r'''
import glob, json, os, statistics, sys, time
import numpy as np
from numba import njit
from cuzk import curves
args = json.loads(sys.argv[1])
out = {}

@njit(nogil=True)
def _mul_chain(mul, load, store, a, n):
    x, y = load(a, 0), load(a, 1)
    for _ in range(n):
        x = mul(x, y)
    store(a, 0, x)

@njit(nogil=True)
def _sqr_chain(sqr, load, store, a, n):
    x = load(a, 0)
    for _ in range(n):
        x = sqr(x)
    store(a, 0, x)

def thread_cpu(fn):
    t = time.thread_time()
    fn()
    return time.thread_time() - t

for name in args["curves"]:
    b = curves.get(name)
    fq2, kern = b.module("fq2"), b.kernels
    rng = np.random.default_rng(5)
    a = b.Fq.random(4, rng).reshape(2, 2, -1)
    for fig, chain, op in (("fq2_mul", _mul_chain, fq2.mul), ("fq2_sqr", _sqr_chain, fq2.sqr)):
        if fig not in args["figures"]:
            continue
        chain(op, fq2.load, fq2.store, a, 10)
        n = 100_000
        out[f"{fig}_{name}"] = min(thread_cpu(lambda: chain(op, fq2.load, fq2.store, a, n)) for _ in range(args["chain_reps"])) / n * 1e9
    if "g2_msm" in args["figures"]:
        k = 1 << args["log_msm"]
        sc = np.zeros((k, 4), np.uint64)
        sc[:, :3] = rng.integers(0, 2**63, (k, 3), dtype=np.uint64)
        sc[:, 3] = rng.integers(0, 2**60, k, dtype=np.uint64)  # < 2^252 < r on both curves
        pts = kern.batch_mul_g2(b.G2.generator(), sc)
        kern.msm_g2(pts, sc, 1)
        out[f"g2_msm_{name}"] = statistics.median(thread_cpu(lambda: kern.msm_g2(pts, sc, 1)) for _ in range(args["reps"]))
    if "prove" in args["figures"]:
        from cuzk.formats import snarkjs as sj
        from cuzk.prover import GpuProver
        tag = "chain65000-cuzksetup-*" if name == "bls12_381" else "chain65000-bn128-cuzksetup-*"
        d = sorted(glob.glob(os.path.expanduser(f"~/.cache/cuzk/snarkjs/{tag}")))[0]
        pk = sj.read_zkey(os.path.join(d, "circuit.zkey"), checked=False)
        w = pk.witness(os.path.join(d, "witness.wtns"))
        prover = GpuProver(pk, device="cpu", threads=1)
        prover.prove(w)
        out[f"prove_{name}"] = statistics.median(thread_cpu(lambda: prover.prove(w)) for _ in range(args["prove_reps"]))
print(json.dumps(out))
'''

FIGURES = ("fq2_mul", "fq2_sqr", "g2_msm", "prove")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="source tree before the change")
    ap.add_argument("new", help="source tree with the change")
    ap.add_argument("--rounds", type=int, default=5, help="old/new pairs, alternating")
    ap.add_argument("--figures", nargs="+", choices=FIGURES, default=list(FIGURES))
    ap.add_argument("--curves", nargs="+", default=["bls12_381", "bn254"])
    ap.add_argument("--reps", type=int, default=3, help="MSMs per process (median)")
    ap.add_argument("--prove-reps", type=int, default=2, help="proofs per process (median)")
    ap.add_argument("--chain-reps", type=int, default=7, help="chains per process (min)")
    ap.add_argument("--log-msm", type=int, default=14)
    a = ap.parse_args(argv)
    args = {"figures": a.figures, "curves": a.curves, "reps": a.reps, "prove_reps": a.prove_reps,
            "chain_reps": a.chain_reps, "log_msm": a.log_msm}
    rows = alternate(a.old, a.new, a.rounds, lambda tree: run_probe(tree, PROBE, json.dumps(args)),
                     show=lambda r: json.dumps({k: round(v, 4) for k, v in r.items()}))
    print(f"load average at the end: {load_average()}")
    print("| figure | old (median of rounds) | new | new / old | per-round new / old |")
    print("|---|---|---|---|---|")
    for k in rows["old"][0]:
        o = statistics.median(r[k] for r in rows["old"])
        n = statistics.median(r[k] for r in rows["new"])
        per = ", ".join(f"{rn[k] / ro[k]:.2f}" for ro, rn in zip(rows["old"], rows["new"]))
        unit = "ns" if k.startswith("fq2") else "s"
        print(f"| {k} | {o:.3f} {unit} | {n:.3f} {unit} | {n / o:.3f} | {per} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
