"""Import-time costs: the constants a curve derives at import, and what ``cuzk groth16 prove`` imports.

``--constants`` (in process, each against its baseline in the same run): the towers' Frobenius
tables (Fq6 ``FROB_V1``/``FROB_V2``, Fq12 ``FROB_W``, 24 Fq2 powers of ξ) computed one power at a
time, as before commit 452174a, vs ``fq2_ints.frobenius_powers``; and a spec's ξ checks (not a
square, not a cube) as Fq2 powers vs ``families._check_xi`` (the norm in Fq). Best of 5.

With two trees: each round starts one Python process per tree (``PYTHONPATH`` = the tree) that imports the
modules the CLI's prove path imports and exits; the figures are the whole process's wall time
and its CPU time (user + sys, from ``getrusage``: steadier than wall time on a shared VM),
interpreter start included (``python -c pass`` is ~0.03 s here). One untimed process per
tree first writes its bytecode caches. Numba compiles nothing here (dispatchers compile on first
call), so no Numba cache is involved.

    git worktree add --detach /tmp/import-old HEAD~1
    python3 benchmarks/import_bench.py /tmp/import-old . --rounds 15
    python3 benchmarks/import_bench.py --constants
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

from tree_ab import alternate, load_average

MODULES = ("cuzk", "cuzk.formats.snarkjs", "cuzk.formats.snarkjs_json", "cuzk.prover", "cuzk.engine.keycache",
           "cuzk.curves.bls12_381.fq12", "cuzk.curves.bls12_381.pairing")


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(tree: str, code: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed Python runs (benchmarks/snarkjs_bench.py cli_env)
    c, t = _child_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - t, _child_cpu() - c


def _best_ms(fn, *args, reps=5) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def constants() -> None:
    from cuzk.curves import families
    from cuzk.curves.catalog import CURVES
    from cuzk.field import fq2_ints

    def one_by_one(p, beta, xi):
        for d, count, m in ((3, 6, 1), (3, 6, 2), (6, 12, 1)):
            [fq2_ints.pow_(xi, m * (p**k - 1) // d % (p * p - 1), p, beta) for k in range(count)]

    def from_one_power(p, beta, xi):
        v = fq2_ints.frobenius_powers(xi, 3, 6, p, beta)
        [fq2_ints.mul(c, c, p, beta) for c in v]
        fq2_ints.frobenius_powers(xi, 6, 12, p, beta)

    def checks_in_fq2(p, beta, xi):
        fq2_ints.pow_(xi, (p * p - 1) // 2, p, beta), fq2_ints.pow_(xi, (p * p - 1) // 3, p, beta)

    for name, spec in CURVES.items():
        args = (spec.fq.modulus, spec.fq2_nonresidue, spec.fq6_nonresidue)
        t0, t1 = _best_ms(one_by_one, *args), _best_ms(from_one_power, *args)
        c0, c1 = _best_ms(checks_in_fq2, *args), _best_ms(families._check_xi, args[2], args[0], args[1])
        print(f"{name}: Frobenius tables {t0:.1f} -> {t1:.2f} ms ({t0 / t1:.0f}x), xi checks {c0:.1f} -> {c1:.2f} ms")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", nargs="?", help="source tree before the change")
    ap.add_argument("new", nargs="?", help="source tree with the change")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--constants", action="store_true", help="time the derived constants in this process")
    a = ap.parse_args(argv)
    if a.constants:
        constants()
    if not (a.old and a.new):
        return 0
    code = "import " + ", ".join(MODULES)
    # the untimed first process per tree writes its bytecode caches
    rows = alternate(a.old, a.new, a.rounds, lambda tree: dict(zip(("wall", "CPU"), run(tree, code))),
                     show=lambda r: f"wall {r['wall']:.3f} s, CPU {r['CPU']:.3f} s")
    med = {}
    for k, times in rows.items():
        for what in ("wall", "CPU"):
            xs = [t[what] for t in times]
            med[k, what] = statistics.median(xs)
            print(f"{k} {what}: median {med[k, what]:.3f} s  ({', '.join(f'{x:.3f}' for x in xs)})")
    print(f"new / old: wall {med['new', 'wall'] / med['old', 'wall']:.3f}, CPU {med['new', 'CPU'] / med['old', 'CPU']:.3f}"
          f"  (load at the end {load_average()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
