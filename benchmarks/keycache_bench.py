"""Key cache disk tier vs the checked read of the same key file, same process.

    python3 benchmarks/keycache_bench.py [--logs 12 16] [--runs 5] [--checked-runs 1]

For each domain 2^k, a ``porep_like(leaves=2^10, challenges=c)`` circuit sized to that domain
(c = 1: 3227 constraints, domain 2^12; c = 21: 62407 constraints, domain 2^16) gets a
development setup in both conventions; the bellperson ``.params`` and snarkjs ``.zkey`` files are
cached under ``/tmp/cuzk-keycache-bench`` between runs (the 2^16 setups take minutes). Timed,
wall clock, median of runs:

* checked read: ``ProvingKey.read(path, r1cs=...)`` / ``read_zkey(path, r1cs=...)``, every point
  checked on the curve and in the subgroup (what the cache's first load does);
* fill: the first ``KeyCache.load`` (checked read + hashing the source + writing the cache file);
* load (new KeyCache): a load by a fresh ``KeyCache``, as a new process does: source record +
  sampled digest, map the file, SHA-256 of a random sample of data chunks (the fill stamped the
  file as checked in full), attach the circuit;
* load (new KeyCache, no stamp): the same with the stamp removed first: SHA-256 of every data
  chunk (what every new process paid before the stamps);
* load (same KeyCache): a later load by the same object (data checked earlier; what an Engine
  does when it re-maps an evicted key).

Every cached key is compared with the checked read, array for array.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

CACHE = Path(os.environ.get("CUZK_BENCH_KEYS", "/tmp/cuzk-keycache-bench"))
CHALLENGES = {12: 1, 14: 5, 16: 21}  # porep_like(leaves=2^10, challenges) -> domain 2^k


def _synth(log_m: int):
    from cuzk.circuits import porep_like
    from cuzk.synth import Synthesizer

    return Synthesizer(porep_like(leaves=2**10, challenges=CHALLENGES[log_m]))


def sources(log_m: int, log=print):
    """(r1cs, params path, zkey path), generating and caching the key files on first use."""
    from cuzk.formats.snarkjs_setup import setup_snarkjs
    from cuzk.formats.snarkjs_write import write_zkey
    from cuzk.groth16 import setup

    synth = _synth(log_m)
    r1cs = synth.r1cs
    CACHE.mkdir(parents=True, exist_ok=True)
    tag = f"porep{CHALLENGES[log_m]}-{r1cs.digest[:12]}"
    params, zkey = CACHE / f"{tag}.params", CACHE / f"{tag}.zkey"
    if not params.exists():
        t = time.perf_counter()
        setup(r1cs)[0].write(params)
        log(f"  setup + write {params.name}: {time.perf_counter() - t:.1f} s")
    if not zkey.exists():
        t = time.perf_counter()
        write_zkey(setup_snarkjs(r1cs), zkey)
        log(f"  setup + write {zkey.name}: {time.perf_counter() - t:.1f} s")
    return r1cs, params, zkey


def _median(fn, runs):
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def bench(log_m: int, kind: str, path: Path, r1cs, runs: int, checked_runs: int) -> dict:
    from cuzk.engine.keyarrays import same_key
    from cuzk.engine.keycache import KeyCache
    from cuzk.formats.snarkjs import read_zkey
    from cuzk.groth16 import ProvingKey

    read = (lambda: ProvingKey.read(path, r1cs=r1cs)) if kind == "params" else (lambda: read_zkey(path, r1cs=r1cs))
    ref, t_checked = _median(read, checked_runs)
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        KeyCache(d).load(path, r1cs=r1cs)
        t_fill = time.perf_counter() - t
        (fresh, info), t_new = _median(lambda: KeyCache(d).load(path, r1cs=r1cs), runs)

        def unstamped():
            shutil.rmtree(Path(d) / "verified", ignore_errors=True)
            return KeyCache(d).load(path, r1cs=r1cs)

        (_, info_full), t_full = _median(unstamped, runs)
        same = KeyCache(d)
        same.load(path, r1cs=r1cs)
        (again, info2), t_same = _median(lambda: same.load(path, r1cs=r1cs), runs)
        assert info.hit and info.data_check in ("sampled", "full") and info2.data_check == "earlier"
        assert info_full.data_check == "full"
        assert same_key(ref, fresh) and same_key(ref, again), "a cached key differs from the checked read"
        size = info.bytes
    return {"log_m": log_m, "kind": kind, "source_mib": path.stat().st_size / 2**20, "cache_mib": size / 2**20,
            "checked": t_checked, "fill": t_fill, "new": t_new, "full": t_full, "same": t_same}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, nargs="+", default=[12, 16], choices=sorted(CHALLENGES))
    ap.add_argument("--runs", type=int, default=5, help="cache loads per variant (median)")
    ap.add_argument("--checked-runs", type=int, default=1, help="checked reads per key (median)")
    args = ap.parse_args(argv)
    print(f"cores: {len(os.sched_getaffinity(0))}; key files cached in {CACHE}")
    rows = []
    for log_m in args.logs:
        r1cs, params, zkey = sources(log_m)
        # warm-up: compile/load the kernels and fill the page cache outside the timings
        from cuzk.groth16 import ProvingKey

        ProvingKey.read(params, r1cs=r1cs)
        for kind, path in (("params", params), ("zkey", zkey)):
            rows.append(bench(log_m, kind, path, r1cs, args.runs, args.checked_runs))
    print(f"| domain | file | source MiB | cache MiB | checked read | fill | load (new KeyCache) | "
          f"same, no stamp | load (same KeyCache) | checked / new | checked / same |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| 2^{r['log_m']} | .{r['kind']} | {r['source_mib']:.1f} | {r['cache_mib']:.1f} | {r['checked']:.3f} s | "
              f"{r['fill']:.3f} s | {r['new'] * 1e3:.1f} ms | {r['full'] * 1e3:.1f} ms | {r['same'] * 1e3:.1f} ms | "
              f"{r['checked'] / r['new']:.0f}× | {r['checked'] / r['same']:.0f}× |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
