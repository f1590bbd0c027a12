"""Time the native SDR sealer per stage: parents, labels per layer, tree D, columns + tree C,
encoding + tree R, total.

    python benchmarks/seal_bench.py                 # 2 KiB and 8 MiB (V1_1 proofs)
    python benchmarks/seal_bench.py --512mib        # also 512 MiB (minutes; layers on disk)
    python benchmarks/seal_bench.py --threads 2 --cache-dir /tmp/seal

A first run compiles the Numba kernels (cached afterwards): each size is sealed once at 2 KiB
first so that the timed runs measure the kernels, not the compiler.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from cuzk.circuits.filecoin.porep.registered import registered_seal_proof
from cuzk.circuits.filecoin.porep.seal import seal

#: RegisteredSealProof ids of the V1_1 proofs timed here
PROOFS = {"2KiB": 5, "8MiB": 6, "512MiB": 7}


def sector_data(nodes: int, seed: int = 1) -> bytes:
    raw = np.random.default_rng(seed).integers(0, 256, size=(nodes, 32), dtype=np.uint8)
    raw[:, 31] &= 0x3F  # Fr32-padded data: every node below r
    return raw.tobytes()


def run(name: str, threads, cache_dir) -> dict:
    proof = registered_seal_proof(PROOFS[name])
    data = sector_data(proof.nodes)
    stages: dict = {}
    cpu = [time.process_time()]

    def on_stage(k, dt):
        # wall seconds, and the CPU seconds of every thread of this process (on a shared host
        # the wall figure includes waiting for a core; the CPU figure does not)
        now = time.process_time()
        stages[k] = (dt, now - cpu[0])
        cpu[0] = now

    t0, c0 = time.perf_counter(), time.process_time()
    s = seal(data, registered_proof=proof, prover_id=bytes(32), sector_id=1, ticket=bytes(32),
             cache_dir=cache_dir, threads=threads, on_stage=on_stage)
    stages["total"] = (time.perf_counter() - t0, time.process_time() - c0)
    print(f"{name:>7}  wall/cpu s  " + "  ".join(f"{k} {w:.3f}/{c:.3f}" for k, (w, c) in stages.items()))
    print(f"         comm_d {s.comm_d.hex()}  comm_r {s.comm_r.hex()}")
    return stages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--512mib", dest="big", action="store_true", help="also seal a 512 MiB sector")
    ap.add_argument("--threads", type=int, default=None, help="tree threads (default: every core)")
    ap.add_argument("--cache-dir", default=None, help="write layer/tree-D/replica files here")
    args = ap.parse_args()
    run("2KiB", args.threads, None)  # warm-up: compiles or loads every kernel
    sizes = ["2KiB", "8MiB"] + (["512MiB"] if args.big else [])
    for name in sizes:
        if args.cache_dir is None and name == "512MiB":
            with tempfile.TemporaryDirectory() as d:
                run(name, args.threads, d)
        else:
            run(name, args.threads, args.cache_dir)


if __name__ == "__main__":
    main()
