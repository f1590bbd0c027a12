"""Where the time of a warm-cache ``cuzk groth16 prove`` goes, against ``--trusted``, same run.

An earlier run measured the warm key-cache path 0.4-0.5 s slower than ``--trusted`` (docs/perf/history.md)
with the modes run one after the other. Here every mode runs as a whole process, interleaved
(mode A, mode B, mode C, mode A, ...), ``--runs`` times after one untimed warm-up each, and we
report per mode the medians of the process's wall time and CPU time (user + sys of the child:
robust to a loaded machine) and of the CLI's own stage times (``-v``):

* ``trusted``: the zkey read without point checks (``--trusted``);
* ``cache``: the zkey mapped from the key cache, which another process checked in full and
  stamped: this process checks a random sample of its chunks;
* ``cache, no stamp``: the same with the stamp removed before each run, i.e. what every process
  paid before stamps: the SHA-256 of the whole cache file.

Then, in this process, the key-cache load alone (a fresh ``KeyCache`` each time, stamp present or
removed), and what Numba did in a fresh process of each mode (overloads compiled rather than
loaded from its cache, and which kernels got read-only array specialisations).

    python3 benchmarks/cli_cache_bench.py --sizes 14,16 --runs 5

Inputs: the chain circuits of ``benchmarks/snarkjs_bench.py --cuzk-setup`` (cached under
~/.cache/cuzk/snarkjs; built by that script the first time, which needs circom2 and snarkjs).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

_STAGES = re.compile(r"zkey \(([^)]*)\) ([\d.]+) s, witness \+ prover set-up ([\d.]+) s, prove ([\d.]+) s")

_NUMBA_PROBE = """
import gc, json, sys
from numba.core.registry import CPUDispatcher
from cuzk import cli_groth16
cli_groth16.main(sys.argv[1:])
sigs, misses = {}, []
for d in gc.get_objects():
    if isinstance(d, CPUDispatcher):
        name = d.py_func.__qualname__
        for s in d.signatures:
            sigs.setdefault(name, []).append(str(s))
        if d.stats.cache_misses:
            misses.append(name)
print(json.dumps({"signatures": sigs, "compiled": misses}))
"""


def _artifacts(log_m: int) -> Path:
    import snarkjs_bench as sb

    n = sb.chain_length(log_m)
    return sb.cuzk_setup_artifacts(f"chain{n}", sb.ceremony.chain_source(n), {"x": "3", "k": "7"})


def _run(cmd, env) -> tuple[float, float, dict]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode:
        raise RuntimeError(f"{cmd} failed: {res.stderr[-2000:]}")
    m = _STAGES.search(res.stderr)
    stages = {"load": float(m[2]), "witness+setup": float(m[3]), "prove": float(m[4])} if m else {}
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), stages


def _med(xs) -> float:
    return statistics.median(xs)


def bench_size(log_m: int, runs: int) -> dict:
    from cuzk.engine.keycache import KeyCache

    d = _artifacts(log_m)
    zkey, wtns = d / "circuit.zkey", d / "witness.wtns"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT)] + sys.path)}
    with tempfile.TemporaryDirectory() as tmp:
        keys = Path(tmp) / "keys"
        cli = [sys.executable, "-m", "cuzk.cli_groth16", "prove", zkey, wtns, Path(tmp) / "proof.json",
               Path(tmp) / "public.json", "--device", "cpu", "--key-cache", keys, "-v"]
        modes = {"trusted": cli + ["--trusted"], "cache": cli, "cache, no stamp": cli}
        stamps = keys / "verified"
        _run(cli, env)  # fills the cache (checked read) and stamps it
        for name, cmd in modes.items():  # untimed warm-ups: page cache, Numba's cache of each path
            _run(cmd, env)
        out = {name: [] for name in modes}
        for _ in range(runs):
            for name, cmd in modes.items():
                if name == "cache, no stamp":
                    shutil.rmtree(stamps, ignore_errors=True)
                out[name].append(_run(cmd, env))
        # the load alone, in this process: a fresh KeyCache per load (as a new process has)
        loads = {"stamped (sample)": [], "no stamp (whole file)": []}
        for _ in range(max(runs, 5)):
            for name in loads:
                if name.startswith("no stamp"):
                    shutil.rmtree(stamps, ignore_errors=True)
                t = time.perf_counter()
                _, info = KeyCache(keys).load(zkey, kind="zkey")
                loads[name].append((time.perf_counter() - t, info.data_check, info.bytes))
        probes = {}
        for name in ("trusted", "cache"):
            argv = [str(a) for a in modes[name][3:] if a != "-v"]
            res = subprocess.run([sys.executable, "-c", _NUMBA_PROBE, *argv], capture_output=True, text=True, env=env)
            probes[name] = json.loads(res.stdout.strip().splitlines()[-1]) if res.returncode == 0 else {"error": res.stderr[-500:]}
    return {"log_m": log_m, "runs": out, "loads": loads, "numba": probes}


def report(r: dict) -> None:
    print(f"\n== 2^{r['log_m']}: whole `cuzk groth16 prove` processes, medians of {len(r['runs']['trusted'])} "
          "interleaved runs ==")
    base_wall = _med(x[0] for x in r["runs"]["trusted"])
    base_cpu = _med(x[1] for x in r["runs"]["trusted"])
    print(f"{'mode':<18}{'wall s':>8}{'- trusted':>11}{'CPU s':>8}{'- trusted':>11}   stages (load / witness+setup / prove)")
    for name, rows in r["runs"].items():
        wall, cpu = _med(x[0] for x in rows), _med(x[1] for x in rows)
        st = {k: _med(x[2][k] for x in rows) for k in ("load", "witness+setup", "prove")} if rows[0][2] else {}
        print(f"{name:<18}{wall:8.3f}{wall - base_wall:+11.3f}{cpu:8.3f}{cpu - base_cpu:+11.3f}   "
              + " / ".join(f"{v:.3f}" for v in st.values()))
    print("key-cache load alone, fresh KeyCache (median):")
    for name, rows in r["loads"].items():
        print(f"  {name:<24}{_med(x[0] for x in rows) * 1e3:8.1f} ms  (data check: {rows[0][1]}, "
              f"{rows[0][2] / 2**20:.1f} MiB)")
    s, n = (_med(x[0] for x in r["loads"][k]) for k in r["loads"])
    print(f"  ratio whole-file / sample: {n / s:.1f}x; saved per process: {(n - s) * 1e3:.1f} ms")
    for name, p in r["numba"].items():
        if "error" in p:
            print(f"numba ({name}): probe failed: {p['error']}")
            continue
        n_sigs = sum(len(v) for v in p["signatures"].values())
        ro = sorted(k for k, v in p["signatures"].items() if any(", True, aligned" in s for s in v))
        print(f"numba ({name}): {n_sigs} specialisations, compiled in this process (cache misses): "
              f"{p['compiled'] or 'none'}; with read-only arrays: {', '.join(ro)}")
    t, c = r["numba"].get("trusted", {}), r["numba"].get("cache", {})
    if "signatures" in t and "signatures" in c:
        only = sorted({(k, s) for k, v in c["signatures"].items() for s in v}
                      - {(k, s) for k, v in t["signatures"].items() for s in v})
        print("specialisations only the cache path uses: " + ("; ".join(f"{k}{s[:60]}…" for k, s in only) or "none"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="14,16", help="domain sizes 2^k, comma-separated")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for k in (int(x) for x in args.sizes.split(",")):
        report(bench_size(k, args.runs))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
