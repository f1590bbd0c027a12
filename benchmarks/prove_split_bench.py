"""A proof's MSM steps with the GLV/GLS split (the default) vs without, same process.

    python3 benchmarks/prove_split_bench.py [--sizes 14,16] [--runs 5] [--threads 1]

Per size: ``porep_like`` as in ``prove_bench.py``, then ``--runs`` alternating proofs with the
MSMs' default (``endo=None``: split while the split points fit, ``cuzk.kernels.msm_cpu``) and
with the split off (``_SPLIT_MAX_BYTES`` set to -1 for the run), same r and s; the proofs must be
byte-identical. Prints the medians of each step (timeline sub-spans), the whole prove, and
MSM_B2's share of the prove.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import prove_bench as pb  # noqa: E402  (the same circuit sizes and timed prove)
from cuzk.kernels import msm_cpu  # noqa: E402


def run(log_n: int, runs: int, threads) -> str:
    circuit = pb.porep_like(leaves=pb.LEAVES, challenges=pb.CHALLENGES[log_n])
    synth = pb.Synthesizer(circuit)
    pk, _ = pb.setup(synth.r1cs, pb.np.random.default_rng(log_n))
    w = synth.synthesize(**circuit.sample_inputs(seed=1))
    limit = msm_cpu._SPLIT_MAX_BYTES
    rows = {"split": [], "unsplit": []}
    for j in range(runs + 1):
        for label, cap in (("split", limit), ("unsplit", -1)):
            msm_cpu._SPLIT_MAX_BYTES = cap
            try:
                rows[label].append(pb._prove_once(pk, w, threads, 7))  # same job: same r, s
            finally:
                msm_cpu._SPLIT_MAX_BYTES = limit
    assert rows["split"][0][0] == rows["unsplit"][0][0], "split and unsplit proofs differ"
    out = [f"== 2^{log_n} ({synth.r1cs.n_constraints:,} constraints), threads={threads or 'all'}, "
           f"medians of {runs} (first proof of each dropped)",
           f"{'step':8} {'unsplit':>9} {'split':>9} {'ratio':>6}"]
    med = {k: {s: statistics.median(r[3][s] for r in v[1:]) for s in pb.SUB_SPANS} for k, v in rows.items()}
    tot = {k: statistics.median(r[1] for r in v[1:]) for k, v in rows.items()}
    for s in pb.SUB_SPANS:
        out.append(f"{s:8} {med['unsplit'][s]:8.3f}s {med['split'][s]:8.3f}s {med['split'][s] / med['unsplit'][s]:6.2f}")
    out.append(f"{'prove':8} {tot['unsplit']:8.3f}s {tot['split']:8.3f}s {tot['split'] / tot['unsplit']:6.2f}")
    out.append("MSM_B2 share of the prove: unsplit {:.0%}, split {:.0%}".format(
        med["unsplit"]["MSM_B2"] / tot["unsplit"], med["split"]["MSM_B2"] / tot["split"]))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="14,16")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="kernel threads (0: all cores)")
    args = ap.parse_args(argv)
    print(f"load {os.getloadavg()[0]:.2f}")
    for k in (int(x) for x in args.sizes.split(",")):
        print(run(k, args.runs, args.threads or None), flush=True)
    print(f"load at end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
