"""Print the PoRep StackedCircuit's counts and R1CS structure digest (sha256 over the rows).

    python scripts/porep_digest.py 2048                       # production 2 KiB partition
    python scripts/porep_digest.py --nodes 8 --shape 8,0,0    # rust-fil-proofs' test shape
    python scripts/porep_digest.py 34359738368 --count-only   # 32 GiB: trace + pce_sizes only

The digest is :func:`cuzk.synth.r1cs.r1cs_digest` of the compiled R1CS (counts, then the A, B
and C matrices' row pointers, columns and coefficients), so two builds with equal digests have
the same rows, in the same order, with the same orientation.
"""

from __future__ import annotations

import argparse
import resource
import time

from cuzk.circuits.filecoin.porep.circuit import StackedCircuit
from cuzk.synth import Synthesizer
from cuzk.synth.placement import pce_sizes
from cuzk.synth.program import trace


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sector_size", nargs="?", type=int)
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--layers", type=int)
    ap.add_argument("--challenges", type=int)
    ap.add_argument("--shape", type=lambda s: tuple(int(x) for x in s.split(",")))
    ap.add_argument("--count-only", action="store_true", help="trace and count (pce_sizes); build no PCE")
    a = ap.parse_args(argv)
    if a.sector_size is None:
        a.layers = 2 if a.layers is None else a.layers
        a.challenges = 1 if a.challenges is None else a.challenges
    circuit = StackedCircuit(a.sector_size, nodes=a.nodes, layers=a.layers, challenge_count=a.challenges, shape=a.shape)
    print(circuit)
    t0 = time.perf_counter()
    if a.count_only:
        cs, _ = trace(circuit)
        t1 = time.perf_counter()
        sizes = pce_sizes(cs)
        t2 = time.perf_counter()
        print(f"constraints {cs.n_constraints:,}  inputs {cs.n_public + 1} (ONE included)  private {cs.n_private:,}")
        print(f"pce_sizes {sizes}")
        print(f"trace {t1 - t0:.1f} s, pce_sizes {t2 - t1:.1f} s")
    else:
        r = Synthesizer(circuit).r1cs
        t1 = time.perf_counter()
        print(f"constraints {r.n_constraints:,}  inputs {r.n_public + 1} (ONE included)  private {r.n_private:,}")
        print(f"digest {r.digest}")
        print(f"compile {t1 - t0:.1f} s ({r.n_constraints / (t1 - t0) / 1e6:.2f} M constraints/s)")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
