"""Soak run: real Cube proofs through one Pipeline on the CPU backend, RSS growth.

    python benchmarks/soak_run.py --proofs 10000

Method (details in tests/reliability/soak.py): the Timeline gets a small ring buffer
(``--capacity``, 5,000 events by default, about 250 proofs' worth), so it is already full at the
warm-up reading and holds the same number of events at the end; RSS (``VmRSS``) is read after
``gc.collect()`` once after ``--warmup`` proofs and once after the last, both with nothing in
flight, and their difference is the growth beyond the Timeline's bound. The prover verifies
every proof (its default); every ``--verify-every``-th is verified again with
``cuzk.groth16.verify``. Exit status 1 if the growth exceeds ``--max-growth-mb`` (5), a proof
failed or did not verify, or a synthesized witness outlived the pipeline.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the soak driver lives with the tests (CI runs it short)

from reliability.soak import soak  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--proofs", type=int, default=10_000)
    ap.add_argument("--warmup", type=int, default=500, help="proofs before the first RSS reading (default 500)")
    ap.add_argument("--capacity", type=int, default=5000, help="Timeline ring-buffer events (default 5000)")
    ap.add_argument("--verify-every", type=int, default=10, help="re-verify every Nth proof (default 10)")
    ap.add_argument("--report-every", type=int, default=1000, help="RSS trace interval in proofs (default 1000)")
    ap.add_argument("--max-growth-mb", type=float, default=5.0)
    args = ap.parse_args(argv)

    def progress(done, rss):
        print(f"  ... {done} proofs, RSS {rss / 2**20:.1f} MB", file=sys.stderr, flush=True)

    r = soak(args.proofs, warmup=args.warmup, verify_every=args.verify_every, capacity=args.capacity,
             report_every=args.report_every, progress=progress)
    print(r.table(f"soak run: --proofs {args.proofs} (Cube, GpuProver device='cpu', concurrency 2, lookahead 1, "
                  f"1 prove worker; {os.cpu_count()} cpus)"))
    ok = (r.growth <= args.max_growth_mb * 2**20 and r.failed == 0 and r.verify_rate == 1.0 and r.alive_end == 0
          and r.timeline_len[0] == r.capacity)
    print(f"  result            {'PASS' if ok else 'FAIL'} (growth <= {args.max_growth_mb} MB, no failure, "
          f"verification rate 1.0, no witness alive, ring buffer full at warm-up)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
