"""Cold start: what Numba compiles for import + the first small proof, and how long it takes.

    python3 benchmarks/cold_start_bench.py [--size tiny] [--top 25]

Runs the same child process twice against one fresh, empty Numba cache directory
(``CUZK_NUMBA_CACHE_DIR``): first cold (everything compiles), then warm (everything loads from
the cache). The child imports cuzk, builds ``porep_like`` at ``--size`` (``cuzk demo`` sizes),
runs the development setup, synthesizes, proves on the CPU backend and verifies, recording every
``numba:compile`` event (``numba.core.event``): per function the specializations and the time
spent compiling it, excluding the callees it compiled meanwhile. Prints each phase's wall time,
the totals, and the functions with the most compile time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
from collections import defaultdict
t0 = time.perf_counter()
from numba.core import event as ev

class Rec(ev.Listener):
    def __init__(self):
        self.stack, self.out = [], defaultdict(lambda: [0, 0.0])
    def on_start(self, event):
        self.stack.append([time.perf_counter(), 0.0])
    def on_end(self, event):
        start, child = self.stack.pop()
        total = time.perf_counter() - start
        d = event.data["dispatcher"]
        name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
        self.out[name][0] += 1
        self.out[name][1] += total - child
        if self.stack:
            self.stack[-1][1] += total

rec = Rec()
ev.register("numba:compile", rec)
phases = {}
def mark(name, t):
    phases[name] = time.perf_counter() - t
    return time.perf_counter()
t = t0
import cuzk
from cuzk.demo import real_stages
t = mark("import", t)
stages = real_stages(sys.argv[1], device="cpu")
t = mark("circuit + setup", t)
inputs = stages.make_inputs(0)
w = stages.synthesizer.synthesize(**inputs)
t = mark("first synthesis", t)
proof = stages.prover.prove(w)
t = mark("first prove", t)
ok = stages.verify(inputs, proof)
t = mark("verify", t)
phases["total"] = time.perf_counter() - t0
print(json.dumps({"ok": bool(ok), "phases": phases, "compiled": dict(rec.out)}))
"""


def _run(cache: str, size: str) -> dict:
    env = dict(os.environ, CUZK_NUMBA_CACHE_DIR=cache)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, size], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"child failed:\n{p.stderr[-3000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["process"] = time.perf_counter() - t0
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="tiny", help="porep_like size (cuzk demo's --size)")
    ap.add_argument("--top", type=int, default=25, help="functions to list")
    args = ap.parse_args(argv)
    print(f"load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            r = _run(cache, args.size)
            comp = r["compiled"]
            specs = sum(v[0] for v in comp.values())
            secs = sum(v[1] for v in comp.values())
            ph = ", ".join(f"{k} {v:.2f} s" for k, v in r["phases"].items())
            print(f"{label}: process {r['process']:.2f} s ({ph}); verified {r['ok']}; "
                  f"{len(comp)} functions, {specs} specializations, {secs:.2f} s compiling (cache loads raise no compile event)")
            if label == "cold":
                by_mod: dict[str, list] = {}
                for name, (n, s) in comp.items():
                    m = by_mod.setdefault(name.split(".<locals>")[0].rsplit(".", 1)[0], [0, 0, 0.0])
                    m[0] += 1
                    m[1] += n
                    m[2] += s
                print("  by module (functions, specializations, seconds):")
                for mod, (f, n, s) in sorted(by_mod.items(), key=lambda kv: -kv[1][2])[: args.top]:
                    print(f"    {s:7.2f} s  {f:4d} fn  {n:4d} spec  {mod}")
                print("  functions with the most compile time (specializations, seconds):")
                for name, (n, s) in sorted(comp.items(), key=lambda kv: -kv[1][1])[: args.top]:
                    print(f"    {s:7.2f} s  {n:3d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
