"""Cold start: what Numba compiles for import + the first small proof, and how long it takes.

    python3 benchmarks/cold_start_bench.py [--size tiny] [--top 25] [--json out.json] [--runs 1]
        [--warm-up] [--pyc] [--cache DIR [--warm-only]]

Runs the same child process twice against one fresh, empty Numba cache directory
(``CUZK_NUMBA_CACHE_DIR``, a temporary directory: the shared cache is never touched): first
cold (everything compiles), then warm (everything loads from the cache). The child does what
``cuzk demo`` does before its first proof, one timed phase per step: import the proving stack,
build ``porep_like`` at ``--size`` (``cuzk demo`` sizes) and its ``Synthesizer``, run the
development setup, make the CPU ``GpuProver``, synthesize, prove (the prover verifies its proof)
and verify once more as the demo does; it records

* every ``numba:compile`` event (``numba.core.event``): per function the specializations
  (argument types) and the time spent compiling each, excluding the callees it compiled
  meanwhile, and of that the time inside LLVM (``numba:llvm_lock``) and saving to the cache;
* every cache load (``Cache.load_overload``): per function how many and how long;

then prints each phase's wall time, the totals, the functions with the most compile time, the
functions compiled more than once (with their argument types, so the source of a duplicate
shows), and for the warm run where its time went. ``--json`` writes everything. ``--runs N``
repeats the warm child N times (median per phase). The source tree is the one ``cuzk`` is
imported from (run it with ``PYTHONPATH=<tree>`` to measure another checkout). Where
``PYTHONDONTWRITEBYTECODE`` is set (this machine), every child also compiles cuzk's Python
sources at import; ``--pyc`` caches their bytecode as an installed package would.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
from collections import defaultdict
t0 = time.perf_counter()
from numba.core import event as ev
from numba.core import caching

class Rec(ev.Listener):
    # compile events nest (a caller compiles its callees): a stack of [start, child time, llvm
    # time]; llvm_lock intervals count for the innermost compile only (so they are "self" time)
    def __init__(self):
        self.stack, self.specs = [], []
        self.llvm_start = None
        self.phase = "import"
    def on_start(self, event):
        self.stack.append([time.perf_counter(), 0.0, 0.0])
    def on_end(self, event):
        start, child, llvm = self.stack.pop()
        total = time.perf_counter() - start
        d = event.data["dispatcher"]
        name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
        args = ", ".join(str(a) for a in event.data["args"])
        self.specs.append([name, args, total - child, llvm, self.phase])
        if self.stack:
            self.stack[-1][1] += total

class Llvm(ev.Listener):
    # the LLVM lock is taken around every llvmlite binding call, re-entrantly: time the outermost
    def __init__(self, rec):
        self.rec, self.t, self.depth = rec, None, 0
    def on_start(self, event):
        self.depth += 1
        if self.depth == 1:
            self.t = time.perf_counter()
    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0 and self.rec.stack:
            self.rec.stack[-1][2] += time.perf_counter() - self.t

rec = Rec()
ev.register("numba:compile", rec)
ev.register("numba:llvm_lock", Llvm(rec))
loads = defaultdict(lambda: [0, 0.0, {}])
saves = [0, 0.0]
_load, _save = caching.Cache.load_overload, caching.Cache.save_overload
def load_overload(self, sig, ctx):
    t = time.perf_counter()
    try:
        return _load(self, sig, ctx)
    finally:
        f = self._py_func
        e = loads[f"{f.__module__}.{f.__qualname__}"]
        dt = time.perf_counter() - t
        e[0] += 1
        e[1] += dt
        e[2][rec.phase] = e[2].get(rec.phase, 0.0) + dt
def save_overload(self, sig, data):
    t = time.perf_counter()
    try:
        return _save(self, sig, data)
    finally:
        dt = time.perf_counter() - t
        saves[0] += 1
        saves[1] += dt
        if rec.stack:  # the save runs inside the caller's compile event: not the caller's work
            rec.stack[-1][1] += dt
caching.Cache.load_overload, caching.Cache.save_overload = load_overload, save_overload

phases = {}
ORDER = ["import", "circuit", "setup", "prover", "first synthesis", "first prove", "verify"]
def mark(name, t):
    phases[name] = time.perf_counter() - t
    i = ORDER.index(name)
    rec.phase = ORDER[i + 1] if i + 1 < len(ORDER) else name  # compiles from here on belong to the next
    return time.perf_counter()
rec.phase = "import"
t = t0
import cuzk
import cuzk.circuits, cuzk.groth16, cuzk.prover, cuzk.synth  # the proving stack, as a prover process imports it
from cuzk.demo import SIZES
t = mark("import", t)
circuit = cuzk.circuits.porep_like(**SIZES[sys.argv[1]])  # what cuzk.demo.real_stages builds
synth = cuzk.Synthesizer(circuit)
t = mark("circuit", t)
pk, vk = cuzk.groth16.setup(synth.r1cs)
t = mark("setup", t)
prover = cuzk.GpuProver(pk, device="cpu", **({"warm_up": True} if sys.argv[2] == "1" else {}))
t = mark("prover", t)
inputs = circuit.sample_inputs(seed=0)
w = synth.synthesize(**inputs)
t = mark("first synthesis", t)
proof = prover.prove(w)  # verified inside, as every proof is
t = mark("first prove", t)
msm = {"msm": cuzk.curves.get("bls12_381").kernels.msm_g1} if "msm" in (cuzk.groth16.verify.__kwdefaults__ or {}) else {}
ok = cuzk.groth16.verify(vk, circuit.public_inputs(inputs), proof, **msm)
t = mark("verify", t)
phases["total"] = time.perf_counter() - t0
modules = sorted(m for m in sys.modules if m.startswith("cuzk"))
print(json.dumps({"ok": bool(ok), "phases": phases, "specs": rec.specs, "loads": dict(loads),
                  "saves": saves, "modules": modules}))
"""


def _run(cache: str, size: str, warm_up: bool = False, pyc: bool = False) -> dict:
    env = dict(os.environ, CUZK_NUMBA_CACHE_DIR=cache)
    if pyc:  # bytecode cached beside the Numba cache, as an installed package has it
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(cache, "pyc")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, size, "1" if warm_up else "0"], env=env, capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise SystemExit(f"child failed:\n{p.stderr[-3000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["process"] = time.perf_counter() - t0
    return out


def _module(name: str) -> str:
    return name.split(".<locals>")[0].rsplit(".", 1)[0]


def _report(label: str, r: dict, top: int) -> None:
    specs, loads = r["specs"], r["loads"]
    funcs: dict[str, list] = {}
    for name, args, secs, llvm, phase in specs:
        funcs.setdefault(name, []).append((args, secs, llvm, phase))
    secs = sum(s[2] for s in specs)
    llvm = sum(s[3] for s in specs)
    ph = ", ".join(f"{k} {v:.2f} s" for k, v in r["phases"].items())
    print(f"{label}: process {r['process']:.2f} s ({ph}); verified {r['ok']}")
    print(f"  compiled {len(funcs)} functions, {len(specs)} specializations, {secs:.2f} s compiling "
          f"({llvm:.2f} s of it in LLVM); cache saves {r['saves'][0]} ({r['saves'][1]:.2f} s); "
          f"cache loads {sum(v[0] for v in loads.values())} of {len(loads)} functions "
          f"({sum(v[1] for v in loads.values()):.2f} s); {len(r['modules'])} cuzk modules imported")
    if specs:
        by_phase: dict[str, list] = {}
        for _, _, s, lv, phase in specs:
            e = by_phase.setdefault(phase, [0, 0.0, 0.0])
            e[0] += 1
            e[1] += s
            e[2] += lv
        print("  by phase (specializations, seconds, LLVM seconds): "
              + "; ".join(f"{p} {n} / {s:.1f} s / {lv:.1f} s" for p, (n, s, lv) in by_phase.items()))
        by_mod: dict[str, list] = {}
        for name, items in funcs.items():
            m = by_mod.setdefault(_module(name), [0, 0, 0.0, 0.0])
            m[0] += 1
            m[1] += len(items)
            m[2] += sum(i[1] for i in items)
            m[3] += sum(i[2] for i in items)
        print("  by module (seconds, LLVM seconds, functions, specializations):")
        for mod, (f, n, s, lv) in sorted(by_mod.items(), key=lambda kv: -kv[1][2])[:top]:
            print(f"    {s:7.2f} s {lv:7.2f} s  {f:4d} fn  {n:4d} spec  {mod}")
        print("  functions with the most compile time (specializations, seconds, LLVM seconds):")
        for name, items in sorted(funcs.items(), key=lambda kv: -sum(i[1] for i in kv[1]))[:top]:
            print(f"    {sum(i[1] for i in items):7.2f} s {sum(i[2] for i in items):7.2f} s  {len(items):3d}  {name}")
        dups = {k: v for k, v in funcs.items() if len(v) > 1}
        if dups:
            print(f"  compiled more than once: {len(dups)} functions, "
                  f"{sum(len(v) - 1 for v in dups.values())} extra specializations, "
                  f"{sum(sum(i[1] for i in v) - max(i[1] for i in v) for v in dups.values()):.2f} s beyond one each:")
            for name, items in sorted(dups.items(), key=lambda kv: -sum(i[1] for i in kv[1]))[:top]:
                print(f"    {name} ({len(items)}):")
                for args, s, _, phase in items:
                    print(f"        {s:6.2f} s  [{phase}]  ({args})")
    if loads:
        print("  slowest cache loads (loads, seconds):")
        by_phase = {}
        for _, _, phases in loads.values():
            for p, dt in phases.items():
                by_phase[p] = by_phase.get(p, 0.0) + dt
        print("  cache loads by phase: " + ", ".join(f"{p} {dt:.2f} s" for p, dt in by_phase.items()))
        for name, (n, s, _) in sorted(loads.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f"    {s:7.3f} s  {n:3d}  {name}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="tiny", help="porep_like size (cuzk demo's --size)")
    ap.add_argument("--top", type=int, default=25, help="functions to list")
    ap.add_argument("--json", help="write both runs' raw records here")
    ap.add_argument("--runs", type=int, default=1, help="warm runs (the report shows the median's phases)")
    ap.add_argument("--warm-up", action="store_true", help="GpuProver(warm_up=True): kernels on a background thread")
    ap.add_argument("--pyc", action="store_true",
                    help="let the children cache Python bytecode (in the cache dir) even where PYTHONDONTWRITEBYTECODE is set")
    ap.add_argument("--cache", help="use (and keep) this Numba cache directory instead of a fresh temporary one")
    ap.add_argument("--warm-only", action="store_true", help="skip the cold run (with --cache filled by an earlier run)")
    args = ap.parse_args(argv)
    import cuzk  # noqa: F401  (which tree is measured)

    print(f"load {os.getloadavg()[0]:.2f}; cuzk from {os.path.dirname(sys.modules['cuzk'].__file__)}")
    results = {}
    if args.warm_only and not args.cache:
        raise SystemExit("--warm-only needs --cache")
    with (contextlib.nullcontext(args.cache) if args.cache else tempfile.TemporaryDirectory(prefix="cuzk-cold-")) as cache:
        if not args.warm_only:
            results["cold"] = _run(cache, args.size, args.warm_up, args.pyc)
            _report("cold", results["cold"], args.top)
            print(f"load {os.getloadavg()[0]:.2f}")
        warm = [_run(cache, args.size, args.warm_up, args.pyc) for _ in range(max(1, args.runs))]
        results["warm_runs"] = warm
        med = sorted(warm, key=lambda r: r["phases"]["total"])[len(warm) // 2]
        results["warm"] = med
        if len(warm) > 1:
            print("warm totals: " + ", ".join(f"{r['phases']['total']:.2f}" for r in warm)
                  + f" s (median {statistics.median(r['phases']['total'] for r in warm):.2f} s)")
        _report("warm", med, args.top)
    print(f"load {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
