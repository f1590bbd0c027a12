"""``python -m tests.fuzz``: a long fuzz campaign over cuzk's readers, printing a per-reader table.

Run from the repository root::

    CUZK_NUMBA_CACHE_DIR=.numba-cache .venv/bin/python -m tests.fuzz --minutes 60 --workers 2 --seed 1

``--inputs N`` stops after N inputs (whichever of time and count ends first); ``--targets a,b``
picks readers (``--list`` names them); ``--out DIR`` keeps seeds, the worker log and failing
inputs (each as ``failures/<n>-<target>.bin`` + ``.txt``). Exit status 1 if any input failed or
an input raised its worker's RSS by more than 3x the largest input (the run-level figure, which
includes allocator creep, is printed beside it).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def main(argv=None) -> int:
    from .runner import FAILURES, format_table, run
    from .targets import TARGETS

    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--inputs", type=int, default=None, help="stop after this many inputs")
    ap.add_argument("--targets", default=None, help="comma-separated target names (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10.0, help="per-input seconds before it counts as a hang")
    ap.add_argument("--out", default=None, help="folder for seeds, worker log and failing inputs")
    ap.add_argument("--list", action="store_true", help="list the targets and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(sorted(TARGETS)))
        return 0

    def progress(stats, sent):
        n_fail = sum(t.outcomes[o] for t in stats.targets.values() for o in FAILURES)
        print(f"... {stats.total} inputs, {stats.wall_s:.0f} s, {stats.total / max(stats.wall_s, 1e-9):.0f}/s, "
              f"{n_fail} failures", file=sys.stderr, flush=True)

    stats = run(minutes=args.minutes, max_inputs=args.inputs, seed=args.seed, workers=args.workers,
                targets=args.targets.split(",") if args.targets else None, out_dir=args.out,
                timeout_s=args.timeout, progress=progress)
    print(format_table(stats))
    for f in stats.failures[:50]:
        print(f"FAIL {f['target']} #{f['index']} {f['outcome']} {f['exc']}: {f['msg'][:200]} -> {f['input']}")
    return 1 if stats.failures or not stats.input_memory_ok else 0


if __name__ == "__main__":
    sys.exit(main())
