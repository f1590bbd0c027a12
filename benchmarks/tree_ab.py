"""Two source trees measured in turn by fresh Python processes: the A/B runner the tree benchmarks share.

Each process runs with ``PYTHONPATH`` = its tree and that tree's own Numba cache
(``<tree>/.numba-cache``) and prints one JSON object as its last line. One untimed process per
tree first fills (or loads) its cache; then the rounds alternate (old, new, old, new, ...) so a
change of the shared machine's load hits both. Used by benchmarks/ab_bench.py,
benchmarks/tree_ab_bench.py and benchmarks/import_bench.py (whose probe is a bare import).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Callable

__all__ = ["run_probe", "alternate", "load_average"]


def run_probe(tree: str, code: str, *args: str) -> dict:
    """Run ``python -c code *args`` in ``tree`` and return the JSON of its last output line."""
    tree = os.path.abspath(tree)
    env = dict(os.environ, PYTHONPATH=tree, CUZK_NUMBA_CACHE_DIR=os.path.join(tree, ".numba-cache"))
    res = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, cwd=tree)
    if res.returncode != 0:
        raise RuntimeError(f"probe in {tree} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def load_average() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def alternate(old: str, new: str, rounds: int, probe: Callable[[str], dict], warm: Callable[[str], dict] | None = None,
              show: Callable[[dict], str] = json.dumps) -> dict[str, list[dict]]:
    """``{"old": [...], "new": [...]}``: ``probe(tree)`` for each tree, ``rounds`` times,
    alternating, after one untimed ``warm(tree)`` (default: ``probe``) per tree; each round's
    result goes to stderr as ``show`` formats it."""
    for tree in (old, new):
        (warm or probe)(tree)
    rows: dict[str, list[dict]] = {"old": [], "new": []}
    for i in range(rounds):
        for label, tree in (("old", old), ("new", new)):
            rows[label].append(probe(tree))
            print(f"round {i + 1} {label} (load {load_average()}): {show(rows[label][-1])}", file=sys.stderr, flush=True)
    return rows
