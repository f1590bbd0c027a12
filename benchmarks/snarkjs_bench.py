"""The same snarkjs .zkey + .wtns proved by ``snarkjs groth16 prove`` and by cuzk, same run.

For each domain 2^k a chain circuit with ⌊2^k / 1000⌋·1000 multiplications (4000, 16000, 65000) is compiled with
``circom2 --prime bls12381`` and set up with a power-k ptau (scripts/snarkjs_ceremony.py; cached
under ~/.cache/cuzk/snarkjs, the first build of a power-14 ptau takes a long time). Timed, wall
clock, median of ``--runs``:

* snarkjs: ``snarkjs groth16 prove c.zkey w.wtns proof.json public.json`` (a Node process);
* cuzk CLI: ``python -m cuzk groth16 prove ...`` (``cuzk groth16 prove``: a Python process, with bytecode caches as
  an installed Python has them even where the environment sets ``PYTHONDONTWRITEBYTECODE``; see
  :func:`cli_env`, ``--no-pyc`` keeps the environment: start-up, Numba cache
  load, the zkey through the key cache: filled by one untimed warm-up run, so the timed runs map
  it and skip the point checks); with ``--no-cache``, the zkey read with every point checked each
  time; with ``--trusted``, read without the point checks;
* cuzk in-process: ``pk.witness(wtns)`` + ``GpuProver(pk).prove(w)`` with the key resident
  (the proof is verified before it is returned, as always); after the table, one line per size
  gives the prover's sub-spans (H, MSM_A, ...) of the median in-process run.

Every cuzk proof is also checked by ``snarkjs groth16 verify``.

``--cuzk-setup``: for a size whose power-k ptau is not cached, the ``.zkey`` comes from cuzk's
development setup (:func:`cuzk.formats.snarkjs_setup.setup_snarkjs` + ``write_zkey``, seconds
instead of the ptau's many minutes), the witness still from ``snarkjs wtns calculate`` and the
verification key from ``snarkjs zkey export verificationkey``. snarkjs's proving work is the
same whatever produced the key (same sections, sizes and domain).

    python3 benchmarks/snarkjs_bench.py --sizes 12,14 --runs 3
    python3 benchmarks/snarkjs_bench.py --sizes 14,16 --runs 3 --cuzk-setup
    python3 benchmarks/snarkjs_bench.py --curve bn128 --sizes 12,14,16 --runs 3 --cuzk-setup

``--curve bn128``: the same chain compiled with circom's default prime (BN254); the ptau and
the cuzk setup are bn128's, cuzk reads the bn128 zkey and proves on BN254.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("snarkjs_ceremony", ROOT / "scripts" / "snarkjs_ceremony.py")
ceremony = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ceremony)


def chain_length(log_m: int) -> int:
    """Constraints so that snarkjs picks a domain of exactly 2^log_m (rows = n + 2 public)."""
    n = (2 ** log_m - 2) // 1000 * 1000
    assert 2 ** (log_m - 1) <= n + 2 < 2 ** log_m
    return n


def cli_env(pyc: bool = True) -> dict:
    """The cuzk CLI processes' environment: with bytecode caches, as an installed Python runs
    (``pip install`` byte-compiles; an editable install writes ``__pycache__`` on first import).
    A sandbox that sets ``PYTHONDONTWRITEBYTECODE`` makes every process compile each of the
    ~110 modules a prove imports from source again (0.3-0.4 s per process on the 2-core AMD
    host); ``pyc=False`` keeps the inherited environment as it is."""
    env = dict(os.environ)
    if pyc:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(cmd, env=None) -> float:
    t = time.perf_counter()
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {res.stdout[-1000:]} {res.stderr[-1000:]}")
    return dt


def ptau_cached(power: int, curve: str = "bls12381") -> bool:
    tag = "" if curve == "bls12381" else f"{curve}_"
    return (ceremony.cache_root() / f"pot{power}_{tag}{ceremony._lock_hash()[:12]}.ptau").exists()


def cuzk_setup_artifacts(name: str, source: str, inputs: dict, log=None, curve: str = "bls12381") -> Path:
    """circom compile + ``snarkjs wtns calculate`` + cuzk's setup and zkey writer, cached.

    The folder (under the ceremony cache, ``<name>-cuzksetup-<hash>``) holds ``circuit.r1cs``,
    ``circuit.zkey`` (written by cuzk), ``verification_key.json`` (exported by snarkjs),
    ``witness.wtns`` and ``timings.json``.
    """
    from cuzk.formats.snarkjs import read_r1cs
    from cuzk.formats.snarkjs_setup import setup_snarkjs
    from cuzk.formats.snarkjs_write import write_zkey

    log = log or sys.stderr
    ceremony.ensure_toolchain()
    parts = [name.encode(), source.encode(), json.dumps(inputs, sort_keys=True).encode(),
             ceremony._lock_hash().encode(), ceremony._circuit_files()]
    if curve != "bls12381":  # BLS12-381 artifacts keep their cache keys
        parts.append(curve.encode())
    key = hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]
    out = ceremony.cache_root() / f"{name}-cuzksetup-{key}"
    if (out / "done").exists():
        return out
    build = ceremony.CIRCOM_DIR / "build" / f"{name}-{key}"
    build.mkdir(parents=True, exist_ok=True)
    (build / "circuit.circom").write_text(source)
    rel = build.relative_to(ceremony.CIRCOM_DIR)
    t = {"compile": ceremony._run([ceremony._BIN / "circom2", rel / "circuit.circom", "--r1cs", "--wasm", "--prime",
                                   curve, "-l", "node_modules", "-o", rel], ceremony.CIRCOM_DIR, log)}
    work = ceremony.cache_root() / f"{name}-cuzksetup-{key}.tmp{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(build / "circuit.r1cs", work / "circuit.r1cs")
    shutil.copy(build / "circuit_js" / "circuit.wasm", work / "circuit.wasm")
    (work / "input.json").write_text(json.dumps(inputs))
    s = ceremony._BIN / "snarkjs"
    t["wtns"] = ceremony._run([s, "wtns", "calculate", "circuit.wasm", "input.json", "witness.wtns"], work, log)
    t0 = time.perf_counter()
    write_zkey(setup_snarkjs(read_r1cs(work / "circuit.r1cs")), work / "circuit.zkey")
    t["cuzk_setup"] = time.perf_counter() - t0
    log.write(f"cuzk setup + write_zkey: {t['cuzk_setup']:.2f} s\n")
    t["export_vk"] = ceremony._run([s, "zkey", "export", "verificationkey", "circuit.zkey", "verification_key.json"],
                                   work, log)
    (work / "timings.json").write_text(json.dumps(t, indent=1))
    (work / "done").write_text("ok\n")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(work, out)
    return out


def bench_size(log_m: int, runs: int, device: str, cuzk_setup: bool = False, curve: str = "bls12381",
               pyc: bool = True) -> dict:
    from cuzk.formats import snarkjs as sj
    from cuzk.formats.snarkjs_json import write_proof_json, write_public_json
    from cuzk.prover import GpuProver
    from cuzk.timeline import Timeline, stage_context

    n = chain_length(log_m)
    name = f"chain{n}" if curve == "bls12381" else f"chain{n}-{curve}"
    args = (name, ceremony.chain_source(n), {"x": "3", "k": "7"})
    use_cuzk = cuzk_setup and not ptau_cached(log_m, curve)
    d = cuzk_setup_artifacts(*args, curve=curve) if use_cuzk else ceremony.ceremony(*args, log_m, curve=curve)
    zkey, wtns = d / "circuit.zkey", d / "witness.wtns"
    out = {"log_m": log_m, "constraints": n, "zkey_from": "cuzk setup" if use_cuzk else "snarkjs ceremony"}
    with tempfile.TemporaryDirectory() as tmp:
        proof, public = Path(tmp) / "proof.json", Path(tmp) / "public.json"
        snark = [ceremony._BIN / "snarkjs", "groth16", "prove", zkey, wtns, proof, public]
        cli = [sys.executable, "-m", "cuzk", "groth16", "prove", zkey, wtns, proof, public, "--device", device,
               "--key-cache", Path(tmp) / "keys"]
        env = cli_env(pyc)
        timed(cli, env)  # untimed warm-up: Numba cache, bytecode, page cache, and the key cache filled
        timed(snark)
        out["snarkjs"] = statistics.median(timed(snark) for _ in range(runs))
        out["cli"] = statistics.median(timed(cli, env) for _ in range(runs))
        out["cli_checked"] = statistics.median(timed(cli + ["--no-cache"], env) for _ in range(runs))
        out["cli_trusted"] = statistics.median(timed(cli + ["--trusted"], env) for _ in range(runs))
        sj.read_zkey(zkey, checked=False)  # untimed: first-call dispatch and page cache
        t = time.perf_counter()
        pk = sj.read_zkey(zkey, checked=False)
        out["load_trusted"] = time.perf_counter() - t
        t = time.perf_counter()
        sj.read_zkey(zkey)
        out["load_checked"] = time.perf_counter() - t
        prover = GpuProver(pk, device=device)
        prover.prove(pk.witness(wtns))  # first proof: kernel dispatch warm-up
        times, parts = [], []
        for job in range(runs):
            tl = Timeline()
            t = time.perf_counter()
            with stage_context(tl, job_id=job):  # the prover's sub-spans (H, MSM_A, ...) for the breakdown
                w = pk.witness(wtns)
                p = prover.prove(w)
            times.append(time.perf_counter() - t)
            parts.append({sp.stage: sp.seconds for sp in tl.spans()})
        out["in_process"] = statistics.median(times)
        out["breakdown"] = parts[sorted(range(runs), key=times.__getitem__)[runs // 2]]  # the median run's
        out["device"] = prover.device
        out["curve"] = pk.curve
        write_proof_json(proof, p)
        write_public_json(public, w.public_inputs)
        res = ceremony.snarkjs("groth16", "verify", d / "verification_key.json", public, proof)
        out["snarkjs_verifies_cuzk"] = res.returncode == 0
    return out


def bench_wasm(n: int = 40) -> str:
    """circom's WASM witness calculator through wasmtime: serial vs two threads (GIL check)."""
    import threading

    from cuzk.formats.snarkjs_wasm import synthesizer_from_circom

    d = ceremony.ceremony("poseidon", ceremony.poseidon_source(), {"a": "1", "b": "2"}, 10)
    synths = [synthesizer_from_circom(d / "circuit.r1cs", d / "circuit.wasm") for _ in range(2)]
    inputs = {"a": 1, "b": 2}
    for s in synths:
        s.synthesize(**inputs)
    t = time.perf_counter()
    for _ in range(n):
        synths[0].calculator.calculate(inputs)
    serial = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(n):
        synths[0].synthesize(**inputs)
    full = time.perf_counter() - t

    def work(s):
        for _ in range(n // 2):
            s.calculator.calculate(inputs)

    threads = [threading.Thread(target=work, args=(s,)) for s in synths]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    two = time.perf_counter() - t
    return (f"WASM witness ({synths[0].calculator.witness_size} wires): {serial / n * 1e3:.1f} ms serial, "
            f"full synthesize {full / n * 1e3:.1f} ms; {n} calculations in 2 threads {two:.2f} s vs serial "
            f"{serial:.2f} s = {serial / two:.2f}× speed-up")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="12,14", help="log2 domain sizes, comma separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--curve", default="bls12381", choices=["bls12381", "bn128"], help="snarkjs's curve name")
    ap.add_argument("--wasm", action="store_true", help="also time circom's WASM witness calculator (needs wasmtime)")
    ap.add_argument("--cuzk-setup", action="store_true",
                    help="sizes without a cached ptau: the .zkey comes from cuzk's snarkjs-convention dev setup")
    ap.add_argument("--no-pyc", action="store_true",
                    help="run the CLI processes with the inherited environment even if it disables bytecode caches")
    a = ap.parse_args(argv)
    ok, why = ceremony.toolchain_status()
    if not ok:
        print(f"skipped: {why}")
        return 0
    print("| domain | constraints | snarkjs prove | cuzk CLI (key cache warm) | CLI / snarkjs | cuzk CLI (--no-cache, "
          "checked) | cuzk CLI (--trusted) | cuzk in-process | snarkjs / in-process | zkey load checked / trusted | "
          "snarkjs verifies cuzk | zkey from |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    breakdowns = []
    for log_m in (int(s) for s in a.sizes.split(",")):
        r = bench_size(log_m, a.runs, a.device, a.cuzk_setup, a.curve, pyc=not a.no_pyc)
        print(f"| 2^{log_m} | {r['constraints']} | {r['snarkjs']:.2f} s | {r['cli']:.2f} s | "
              f"{r['cli'] / r['snarkjs']:.2f}× | {r['cli_checked']:.2f} s | {r['cli_trusted']:.2f} s | "
              f"{r['in_process']:.3f} s ({r['device']}, {r['curve']}) | {r['snarkjs'] / r['in_process']:.1f}× | "
              f"{r['load_checked']:.2f} / {r['load_trusted']:.2f} s | "
              f"{r['snarkjs_verifies_cuzk']} | {r['zkey_from']} |", flush=True)
        breakdowns.append(f"2^{log_m} in-process prove, median run: " + ", ".join(
            f"{name} {sec:.3f} s" for name, sec in r["breakdown"].items()))
    for line in breakdowns:
        print(line)
    if a.wasm:
        print(bench_wasm())
    return 0


if __name__ == "__main__":
    sys.exit(main())
