"""cuzk's BLS12-381 Fq product and square (and Fr product) against blst's, on this machine.

    python3 benchmarks/fq_vs_blst_bench.py [--ops 4000000] [--rounds 5]

Four shapes, each the best of ``--rounds`` rounds of ``--ops`` operations on one thread: a
dependent chain of Fq products (latency), four chains interleaved (throughput), a chain of Fq
squares, and a chain of Fr products (the NTTs' field).
cuzk's are timed in this process (``cuzk.curves.bls12_381.fq``: the form this CPU runs, asm or
i128, ``cuzk.field.intrinsics``); blst's (``benchmarks/blst_ref``, blst 0.3.17 with its own
x86-64 assembly, ADX where the CPU has it) by its Rust probe, built once with cargo and cached
like the Rust oracles, then run right after with the same counts. Prints each shape's ns per
operation and blst / cuzk (above 1: cuzk's is faster). A reference point for the question
"would a faster field product speed up the MSMs?": blst is the product most BLS12-381 provers
use. Needs cargo (crates.io) for the blst side; without it only cuzk's rows are printed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from cuzk.curves.bls12_381 import fq as F
from cuzk.curves.bls12_381 import fr as R
from cuzk.field import intrinsics

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests" / "oracles"))
from oracle_cache import OracleBuildError, build_once, cache_root, file_digest  # noqa: E402
from field_bench import _binary_chain, _unary_chain  # noqa: E402 - benchmarks/ is sys.path[0] when run

__all__ = ["main", "cuzk_rows", "blst_rows"]

_PROBE = ROOT / "blst_ref"


@njit(cache=True, nogil=True)
def _mul_4_chains(a, n):
    y = F.load(a, 1)
    x0, x1, x2, x3 = F.load(a, 0), F.load(a, 1), F.load(a, 2), F.load(a, 3)
    for _ in range(n // 4):
        x0 = F.mul(x0, y)
        x1 = F.mul(x1, y)
        x2 = F.mul(x2, y)
        x3 = F.mul(x3, y)
    F.store(a, 0, F.add(F.add(x0, x1), F.add(x2, x3)))


def cuzk_rows(ops: int, rounds: int) -> dict[str, float]:
    """ns per operation of each shape, best of ``rounds`` (one thread, thread CPU time)."""
    rng = np.random.default_rng(1)
    a = np.zeros((4, 6), np.uint64)
    a[:, 0] = rng.integers(1, 2**62, 4, dtype=np.uint64)  # any value below p is a Montgomery form
    out = {}
    # the one-chain shapes are benchmarks/field_bench.py's chains, the op passed in
    shapes = (("mul_chain", lambda x, k: _binary_chain(F.mul, F.load, F.store, x, k), a),
              ("mul_4_chains", _mul_4_chains, a),
              ("sqr_chain", lambda x, k: _unary_chain(F.sqr, F.load, F.store, x, k), a),
              ("fr_mul_chain", lambda x, k: _binary_chain(R.mul, R.load, R.store, x, k),
               np.ascontiguousarray(a[:, :4])))  # below r as well
    for name, fn, arr in shapes:
        fn(arr.copy(), 8)  # compile or load from Numba's cache
        best = float("inf")
        for _ in range(rounds):
            t0 = time.thread_time()
            fn(arr.copy(), ops)
            best = min(best, (time.thread_time() - t0) / ops * 1e9)
        out[name] = best
    return out


def _probe_binary() -> Path:
    """The probe, built with cargo into the oracles' cache (one build per source digest)."""
    files = [_PROBE / "Cargo.toml", _PROBE / "Cargo.lock", _PROBE / "src" / "main.rs"]
    digest = file_digest(files, lambda f: f.relative_to(_PROBE).as_posix())
    target = cache_root() / digest / "blst-ref"

    def make(partial: Path) -> None:
        cargo = shutil.which("cargo")
        if cargo is None:
            raise OracleBuildError("cargo is not on PATH")
        build_dir = cache_root() / "blst-ref-build"
        r = subprocess.run([cargo, "build", "--release", "--locked", "--quiet", "--target-dir", str(build_dir)],
                           cwd=_PROBE, capture_output=True, text=True)
        if r.returncode:
            raise OracleBuildError(f"cargo build failed:\n{r.stderr[-2000:]}")
        shutil.copy2(build_dir / "release" / "blst-ref", partial)

    return build_once(target, "blst-ref.lock", make)


def blst_rows(ops: int, rounds: int) -> dict[str, float]:
    out = subprocess.run([str(_probe_binary()), str(ops), str(rounds)], capture_output=True, text=True, check=True)
    return {name: float(v) for name, v in (line.split() for line in out.stdout.splitlines())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=4_000_000, help="operations per round")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    form = "asm (mulx/adcx/adox)" if intrinsics.ASM_BASE_FIELD else "i128"
    print(f"CPU {intrinsics.CPU_NAME}, cuzk's Fq product: {form}; {args.ops:,} operations, best of {args.rounds}")
    ours = cuzk_rows(args.ops, args.rounds)
    try:
        theirs = blst_rows(args.ops, args.rounds)
    except (OracleBuildError, subprocess.CalledProcessError) as e:
        print(f"blst: not measured ({e})")
        theirs = {}
    print(f"{'shape':<14} {'cuzk ns':>8} {'blst ns':>8} {'blst/cuzk':>9}")
    for name, ns in ours.items():
        b = theirs.get(name)
        print(f"{name:<14} {ns:8.2f} " + (f"{b:8.2f} {b / ns:9.2f}" if b else f"{'-':>8} {'-':>9}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
