"""Build (and cache) snarkjs artifacts for cuzk's interoperability tests and benchmark.

For a circom circuit this compiles it with ``circom2 --prime bls12381`` (or ``--prime bn128``,
circom's default, with ``--curve bn128``), runs a small powers of tau of that curve, ``groth16 setup`` plus one contribution, exports the verification key, computes a witness
with ``snarkjs wtns calculate`` and a snarkjs proof of it. Everything lands in
``~/.cache/cuzk/snarkjs/<key>/`` (``$CUZK_SNARKJS_CACHE`` overrides the root), keyed by a hash
of the circuit source, its input, the ptau power and the pinned package-lock, so later runs
reuse it; the ptau file is cached per power (it is circuit-independent, and by far the slowest
step: minutes at power 10 on two cores).

The toolchain comes from ``tests/circom/package.json`` (``npm ci`` there on first use). circom2
runs in a WASI sandbox that sees only its working folder, so it runs from ``tests/circom``.

    python3 scripts/snarkjs_ceremony.py chain 100 --power 8        # prints the artifact folder
    python3 scripts/snarkjs_ceremony.py chain 100 --curve bn128
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["CIRCOM_DIR", "toolchain_status", "ensure_toolchain", "snarkjs", "ceremony", "chain_source",
           "poseidon_source", "power_for"]

CIRCOM_DIR = Path(__file__).resolve().parent.parent / "tests" / "circom"
_BIN = CIRCOM_DIR / "node_modules" / ".bin"


def cache_root() -> Path:
    base = os.environ.get("CUZK_SNARKJS_CACHE")
    return Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cuzk" / "snarkjs"


def toolchain_status() -> tuple[bool, str]:
    """``(usable, reason)``: node and npm on PATH (the packages install on demand)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return False, f"{tool} is not on PATH (snarkjs/circom interoperability needs Node.js and npm)"
    return True, "node and npm found"


def ensure_toolchain() -> None:
    """``npm ci`` in tests/circom unless the pinned packages are already there."""
    if (_BIN / "snarkjs").exists() and (_BIN / "circom2").exists():
        return
    cmd = ["npm", "ci" if (CIRCOM_DIR / "package-lock.json").exists() else "install", "--no-audit", "--no-fund"]
    subprocess.run(cmd, cwd=CIRCOM_DIR, check=True, capture_output=True, text=True)


def _run(args, cwd, log) -> float:
    t = time.perf_counter()
    res = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    log.write(f"$ {' '.join(map(str, args))}  ({dt:.2f} s, rc {res.returncode})\n")
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    return dt


def snarkjs(*args, cwd=None) -> subprocess.CompletedProcess:
    """Run the pinned snarkjs CLI (no check: callers look at the return code)."""
    return subprocess.run([str(_BIN / "snarkjs"), *map(str, args)], cwd=cwd, capture_output=True, text=True)


def chain_source(n: int) -> str:
    """A main component: ``Chain(n)`` with ``k`` public (n multiplication constraints)."""
    return f'pragma circom 2.0.0;\ninclude "../../circuits/chain.circom";\ncomponent main {{public [k]}} = Chain({n});\n'


def poseidon_source() -> str:
    return 'pragma circom 2.0.0;\ninclude "../../circuits/poseidon.circom";\ncomponent main {public [a]} = PoseidonPreimage();\n'


def power_for(n_rows: int) -> int:
    """snarkjs's domain exponent for ``n_rows = constraints + public``: ⌊log2 n_rows⌋ + 1."""
    return n_rows.bit_length()


def _lock_hash() -> str:
    lock = CIRCOM_DIR / "package-lock.json"
    return hashlib.sha256(lock.read_bytes() if lock.exists() else (CIRCOM_DIR / "package.json").read_bytes()).hexdigest()


def _ptau(power: int, log, curve: str = "bls12381") -> Path:
    tag = "" if curve == "bls12381" else f"{curve}_"  # BLS12-381 files keep their names (cached)
    path = cache_root() / f"pot{power}_{tag}{_lock_hash()[:12]}.ptau"
    if path.exists():
        return path
    work = cache_root() / f"ptau-work-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    s = _BIN / "snarkjs"
    _run([s, "powersoftau", "new", curve, power, "p0.ptau"], work, log)
    _run([s, "powersoftau", "contribute", "p0.ptau", "p1.ptau", "--name=cuzk", "-e=cuzk test entropy"], work, log)
    _run([s, "powersoftau", "prepare", "phase2", "p1.ptau", "final.ptau"], work, log)
    os.replace(work / "final.ptau", path)
    shutil.rmtree(work, ignore_errors=True)
    return path


def _circuit_files() -> bytes:
    return b"".join((CIRCOM_DIR / "circuits" / f).read_bytes() for f in sorted(os.listdir(CIRCOM_DIR / "circuits")))


def ceremony(name: str, source: str, inputs: dict, power: int, *, curve: str = "bls12381", log=None) -> Path:
    """Artifacts for one circuit over ``curve`` (snarkjs's name: "bls12381" or "bn128"), built
    once and cached; returns their folder.

    The folder holds ``circuit.r1cs``, ``circuit.wasm``, ``circuit.zkey``,
    ``verification_key.json``, ``input.json``, ``witness.wtns``, ``proof.json``, ``public.json``
    (a snarkjs proof) and ``timings.json`` (seconds per step when it was built).
    """
    log = log or sys.stderr
    ensure_toolchain()
    if curve not in ("bls12381", "bn128"):
        raise ValueError(f"curve must be 'bls12381' or 'bn128', got {curve!r}")
    parts = [name.encode(), source.encode(), json.dumps(inputs, sort_keys=True).encode(),
             str(power).encode(), _lock_hash().encode(), _circuit_files()]
    if curve != "bls12381":  # BLS12-381 artifacts keep their cache keys
        parts.append(curve.encode())
    key = hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]
    out = cache_root() / f"{name}-{key}"
    if (out / "done").exists():
        return out
    ptau = _ptau(power, log, curve)
    build = CIRCOM_DIR / "build" / f"{name}-{key}"
    build.mkdir(parents=True, exist_ok=True)
    (build / "circuit.circom").write_text(source)
    rel = build.relative_to(CIRCOM_DIR)
    t = {}
    t["compile"] = _run([_BIN / "circom2", rel / "circuit.circom", "--r1cs", "--wasm", "--prime", curve,
                         "-l", "node_modules", "-o", rel], CIRCOM_DIR, log)
    s = _BIN / "snarkjs"
    work = cache_root() / f"{name}-{key}.tmp{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(build / "circuit.r1cs", work / "circuit.r1cs")
    shutil.copy(build / "circuit_js" / "circuit.wasm", work / "circuit.wasm")
    (work / "input.json").write_text(json.dumps(inputs))
    t["setup"] = _run([s, "groth16", "setup", "circuit.r1cs", ptau, "c0.zkey"], work, log)
    t["contribute"] = _run([s, "zkey", "contribute", "c0.zkey", "circuit.zkey", "--name=cuzk", "-e=cuzk zkey entropy"], work, log)
    (work / "c0.zkey").unlink()
    t["export_vk"] = _run([s, "zkey", "export", "verificationkey", "circuit.zkey", "verification_key.json"], work, log)
    t["wtns"] = _run([s, "wtns", "calculate", "circuit.wasm", "input.json", "witness.wtns"], work, log)
    t["prove"] = _run([s, "groth16", "prove", "circuit.zkey", "witness.wtns", "proof.json", "public.json"], work, log)
    (work / "timings.json").write_text(json.dumps(t, indent=1))
    (work / "done").write_text("ok\n")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(work, out)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("circuit", choices=["chain", "poseidon"])
    p.add_argument("n", type=int, nargs="?", default=100, help="chain length (chain only)")
    p.add_argument("--power", type=int, help="ptau power (default: the smallest that fits)")
    p.add_argument("--curve", default="bls12381", choices=["bls12381", "bn128"], help="snarkjs's curve name")
    a = p.parse_args(argv)
    if a.circuit == "chain":
        src, inputs, rows = chain_source(a.n), {"x": "3", "k": "7"}, a.n + 2
        name = f"chain{a.n}"
    else:
        src, inputs, rows, name = poseidon_source(), {"a": "1", "b": "2"}, 300, "poseidon"
    if a.curve != "bls12381":
        name = f"{name}-{a.curve}"
    print(ceremony(name, src, inputs, a.power or power_for(rows), curve=a.curve))
    return 0


if __name__ == "__main__":
    sys.exit(main())
