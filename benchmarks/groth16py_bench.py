"""BN254: cuzk's CPU prover against groth16py (arkworks, PyPI) on the same bn128 .zkey + .wtns.

Both provers start from the same files in the same process: cuzk reads the zkey once
(``read_zkey``, key resident) and per proof turns the ``.wtns`` into a witness and proves
(``pk.witness(wtns)`` + ``GpuProver(pk, device="cpu", threads=T).prove``, which also verifies
the proof with a pairing before returning it); groth16py imports the zkey once
(``import_zkey``) and per proof calls ``prove_wtns(pk, wtns)``. The two alternate, ``--runs``
times each, and the medians and their ratio are printed. Thread counts are equal: cuzk's
kernels get ``threads=T`` and arkworks' rayon pool ``RAYON_NUM_THREADS=T`` (set before
groth16py is imported). groth16py's proof is decoded (EIP-197 layout) and checked with cuzk's
verifier, so both sides produce real proofs.

The artifacts are benchmarks/snarkjs_bench.py's: a circom chain of ⌊2^k/1000⌋·1000
multiplications compiled for bn128, its zkey from cuzk's snarkjs-convention setup (or a cached
bn128 ptau ceremony), its witness from ``snarkjs wtns calculate``.

    python3 benchmarks/groth16py_bench.py --log-m 16 --threads 2 --runs 5
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("snarkjs_bench", ROOT / "benchmarks" / "snarkjs_bench.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def decode_eth_proof(blob: bytes):
    """A cuzk BN254 :class:`~cuzk.groth16.Proof` from the 256-byte Ethereum encoding
    (A.x, A.y, B.x.c1, B.x.c0, B.y.c1, B.y.c0, C.x, C.y; 32-byte big-endian each, EIP-197)."""
    from cuzk import curves
    from cuzk.groth16 import Proof

    if len(blob) != 256:
        raise ValueError(f"expected a 256-byte proof, got {len(blob)}")
    v = [int.from_bytes(blob[32 * i: 32 * i + 32], "big") for i in range(8)]
    bn = curves.get("bn254")
    a = bn.G1.from_ints((v[0], v[1]))
    b = bn.G2.from_ints(((v[3], v[2]), (v[5], v[4])))
    c = bn.G1.from_ints((v[6], v[7]))
    return Proof(a=a, b=b, c=c, curve="bn254")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log-m", type=int, default=16, help="log2 of the domain (12, 14, 16)")
    ap.add_argument("--threads", type=int, default=2, help="threads for both provers")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args(argv)
    os.environ["RAYON_NUM_THREADS"] = str(a.threads)  # before groth16py's rayon pool exists
    try:
        import groth16py
    except ImportError:
        print("skipped: groth16py is not installed (pip install groth16py)")
        return 0
    ok, why = bench.ceremony.toolchain_status()
    if not ok:
        print(f"skipped: {why}")
        return 0
    from cuzk.formats import snarkjs as sj
    from cuzk.groth16 import verify
    from cuzk.prover import GpuProver

    n = bench.chain_length(a.log_m)
    args = (f"chain{n}-bn128", bench.ceremony.chain_source(n), {"x": "3", "k": "7"})
    d = (bench.ceremony.ceremony(*args, a.log_m, curve="bn128") if bench.ptau_cached(a.log_m, "bn128")
         else bench.cuzk_setup_artifacts(*args, curve="bn128"))
    zkey, wtns = str(d / "circuit.zkey"), str(d / "witness.wtns")

    pk = sj.read_zkey(zkey, checked=False)
    prover = GpuProver(pk, device="cpu", threads=a.threads)
    g_pk, _ = groth16py.import_zkey(zkey)
    w = pk.witness(wtns)
    ours = prover.prove(w)  # warm-up (Numba dispatch); verified before it is returned
    theirs = decode_eth_proof(groth16py.prove_wtns(g_pk, wtns))
    both_verify = verify(pk.vk, w.public_inputs, ours) and verify(pk.vk, w.public_inputs, theirs)

    t_cuzk, t_g16 = [], []
    for _ in range(a.runs):
        t = time.perf_counter()
        prover.prove(pk.witness(wtns))
        t_cuzk.append(time.perf_counter() - t)
        t = time.perf_counter()
        groth16py.prove_wtns(g_pk, wtns)
        t_g16.append(time.perf_counter() - t)
    mc, mg = statistics.median(t_cuzk), statistics.median(t_g16)
    print("| domain | constraints | threads (both) | cuzk (CPU, BN254) | groth16py (arkworks) | groth16py / cuzk | "
          "both proofs verify |")
    print("|---|---|---|---|---|---|---|")
    print(f"| 2^{a.log_m} | {n} | {a.threads} | {mc:.3f} s | {mg:.3f} s | {mg / mc:.2f}× | {both_verify} |")
    print(f"runs: cuzk {[round(x, 3) for x in t_cuzk]}, groth16py {[round(x, 3) for x in t_g16]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
