"""BLS12-381 no-regression A/B: the same measurements on two commits, alternating, one session.

Two source trees (``git worktree add --detach DIR COMMIT`` for each) are measured in turn by
fresh Python processes (``PYTHONPATH`` = the tree, its own Numba cache), ``--rounds`` rounds of
old, new; each process loads its kernels (an untimed first call), then times, thread CPU and
wall, medians of ``--reps``:

* ``synth``: ``Synthesizer(porep_like(1024 leaves, 5 challenges)).synthesize`` (15,063
  constraints, one thread);
* ``prove``: ``create_proof`` of that witness on the CPU (domain 2^14, all threads);
* ``verify``: ``verify`` of the proof with the plain key (it prepares β, γ, δ's lines each call,
  then one multi-pairing), median of ``--verify-reps`` calls;
* ``verify_prepared``: ``verify`` with a ``prepare_verifying_key`` key (the multi-pairing and the
  per-call Python: input checks, curve look-ups), median of ``--verify-reps`` calls.

The noise between sessions on the shared machine is larger than the 5% the comparison is
about, so only same-session medians are compared; the ratio new / old is printed per figure.
Only calls that exist on both commits are used (the default curve everywhere).

    git worktree add --detach /tmp/ab-old <old commit>; git worktree add --detach /tmp/ab-new <new commit>
    python3 benchmarks/ab_bench.py /tmp/ab-old /tmp/ab-new --rounds 5
    python3 benchmarks/ab_bench.py /tmp/ab-old /tmp/ab-new --rounds 7 --figures verify verify_prepared --verify-reps 40
"""

from __future__ import annotations

import argparse
import statistics
import sys

from tree_ab import alternate, run_probe as _run

PROBE = r'''
import json, statistics, sys, time
import numpy as np
from cuzk.circuits import porep_like
from cuzk.groth16 import create_proof, prepare_verifying_key, setup, verify
from cuzk.synth import Synthesizer
reps, vreps, figures = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
c = porep_like(leaves=1024, challenges=5)
s = Synthesizer(c)
inputs = c.sample_inputs(seed=1)
pk, vk = setup(s.r1cs, np.random.default_rng(14))
w = s.synthesize(**inputs)
p = create_proof(pk, w, 12345, 67890)
assert verify(vk, w.public_inputs, p)
pvk = prepare_verifying_key(vk)
def timed(fn, n):
    walls, cpus = [], []
    for _ in range(n):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0); cpus.append(time.process_time() - c0)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}
cases = {
    "synth": (lambda: s.synthesize(**inputs), reps),
    "prove": (lambda: create_proof(pk, w, 12345, 67890), reps),
    "verify": (lambda: verify(vk, w.public_inputs, p), vreps),
    "verify_prepared": (lambda: verify(pvk, w.public_inputs, p), vreps),
}
print(json.dumps({k: timed(*cases[k]) for k in figures}))
'''


FIGURES = ("synth", "prove", "verify", "verify_prepared")


def run_probe(tree: str, reps: int, vreps: int | None = None, figures=FIGURES) -> dict:
    return _run(tree, PROBE, str(reps), str(vreps or reps), ",".join(figures))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="source tree of the old commit")
    ap.add_argument("new", help="source tree of the new commit")
    ap.add_argument("--rounds", type=int, default=5, help="old/new pairs, alternating")
    ap.add_argument("--reps", type=int, default=3, help="timed calls per figure per process (synth, prove)")
    ap.add_argument("--verify-reps", type=int, default=3, help="timed calls per process of the verify figures")
    ap.add_argument("--figures", nargs="+", choices=FIGURES, default=list(FIGURES))
    a = ap.parse_args(argv)
    rows = alternate(a.old, a.new, a.rounds, lambda tree: run_probe(tree, a.reps, a.verify_reps, a.figures),
                     warm=lambda tree: run_probe(tree, 1, 1, a.figures),
                     show=lambda r: ", ".join(f"{k} {v['wall'] * 1e3:.1f} ms" for k, v in r.items()))
    print("| figure | old (median wall / CPU) | new (median wall / CPU) | new / old wall | new / old CPU |")
    print("|---|---|---|---|---|")
    for k in a.figures:
        ow = statistics.median(r[k]["wall"] for r in rows["old"])
        nw = statistics.median(r[k]["wall"] for r in rows["new"])
        oc = statistics.median(r[k]["cpu"] for r in rows["old"])
        nc = statistics.median(r[k]["cpu"] for r in rows["new"])
        print(f"| {k} | {ow * 1e3:.1f} / {oc * 1e3:.1f} ms | {nw * 1e3:.1f} / {nc * 1e3:.1f} ms | {nw / ow:.3f} | {nc / oc:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
