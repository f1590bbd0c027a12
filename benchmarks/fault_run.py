"""Fault-injection run of ``cuzk.Pipeline`` or ``cuzk.Engine``: many jobs with random faults, checked.

    python benchmarks/fault_run.py --jobs 100000 --seed 7
    python benchmarks/fault_run.py --jobs 100000 --seed 7 --target engine

Jobs go through fresh pipelines ("episodes" of 40-200 jobs, each with a random concurrency
1..3 or "auto", lookahead 0..2, 1..3 prove workers, sometimes a memory budget) on fake fast
stages that raise every kind of exception (BaseException subclasses included), return None or
hostile objects, sleep; the driver, done-callbacks and timeline listeners cancel, close, submit
more, reuse job ids and raise. The oracle (tests/reliability/oracle.py) checks every job,
timeline, status and thread; the table counts faults, outcomes and violations. The harness is
the one the CI test uses (tests/reliability/, tests/test_reliability_faults.py).

``--target engine`` runs the same episodes through a ``cuzk.Engine`` with 2-3 registered
circuits (jobs spread over them), plus the Engine's own actions: deadlines (already past, a few
ms ahead, far ahead), repeated request ids (same inputs: the same future; other inputs or
another circuit: InputError) and ``evict()`` calls (tests/reliability/engine_target.py).

Exit status: 0 when no violation, 1 otherwise (known defects included; they are marked *).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the harness lives with the tests

from reliability.run import TARGETS, fault_run  # noqa: E402
from reliability.tally import KNOWN_DEFECTS  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=10_000, help="jobs to submit (default 10000)")
    ap.add_argument("--seed", type=int, default=1, help="plan seed (episodes are replayable by seed)")
    ap.add_argument("--episode-jobs", type=int, nargs=2, default=(40, 200), metavar=("MIN", "MAX"),
                    help="planned jobs per pipeline (default 40 200)")
    ap.add_argument("--target", choices=TARGETS, default="pipeline",
                    help="the front end under test (default pipeline)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    last = [time.perf_counter()]

    def progress(tally):
        if not args.quiet and time.perf_counter() - last[0] > 10:
            last[0] = time.perf_counter()
            print(f"  ... {tally.jobs} jobs, {tally.episodes} episodes, {tally.seconds:.0f} s, "
                  f"{sum(tally.violations.values())} violations", file=sys.stderr, flush=True)

    tally = fault_run(args.jobs, args.seed, episode_jobs=tuple(args.episode_jobs), progress=progress,
                      target=args.target)
    print(tally.table(f"fault run: --jobs {args.jobs} --seed {args.seed} --target {args.target} "
                      f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus)"))
    for kind, why in KNOWN_DEFECTS.items():  # only those this run met
        if tally.violations[kind]:
            print(f"  * {kind}: {why}")
    return 0 if tally.ok else 1


if __name__ == "__main__":
    sys.exit(main())
