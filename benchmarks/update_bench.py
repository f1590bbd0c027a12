"""SnapDeals on the CPU: the native update of an 8 MiB sector, the 2 KiB update partition's
synthesis rate, and its proof with the bit-aware MSMs off and on in the same run.

    python benchmarks/update_bench.py                          # every core, 3 proofs per mode
    python benchmarks/update_bench.py --threads 2 --runs 3 --keys /tmp/cuzk-keys

Steps: (1) an 8 MiB sector (a replica of random field elements and its tree R, made before the
clock starts: the update reads a sealed sector, it does not seal one) updated with random data at
Filecoin's h = 10, by stage (tree D, phi and the 2^h rhos with the encoding, tree R_new), then
decoded back; (2) a 2 KiB sector sealed and updated natively, its partition circuit compiled
(stamped trace to a PCE) and synthesized (witness + three mat-vecs, median of 3), constraints/s
per core from the synthesizing thread's CPU time; the R1CS digest printed; (3) a development key
(or one read from ``--keys``, written there on the first run) and partition 0 proved with
``bit_msm=False`` and ``bit_msm="auto"`` alternately (medians of wall and process CPU time, each
verified, equal bytes for fixed r, s).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

import numpy as np

import cuzk
from cuzk.circuits.filecoin.porep import fr32_pad, seal
from cuzk.circuits.filecoin.porep.sector_trees import TreeD, poseidon_tree, resolve_threads
from cuzk.circuits.filecoin.update import (
    circuit_for, circuit_inputs, decode, partition_proof, update, update_params, update_public_inputs,
)
from cuzk.circuits.filecoin.update.encode import _encode, map_nodes
from cuzk.circuits.filecoin.update.randomness import phi as make_phi, rhos
from cuzk.field import Fr
from cuzk.groth16 import create_proof, verify

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from porep_c2_bench import cpu_name, load_or_setup, synthesis_median, timed  # noqa: E402


class _Sealed:
    """A sealed 8 MiB sector as :func:`update` reads it (random replica, its tree R, comm_c)."""

    def __init__(self, nodes: int, threads: int):
        rng = np.random.default_rng(8)
        self.replica = rng.integers(0, 256, (nodes, 32), dtype=np.uint8)
        self.replica[:, 31] &= 0x3F
        self.comm_c = bytes(31) + b"\x01"
        self.tree_r = poseidon_tree(Fr.from_bytes(self.replica.tobytes(), byteorder="little"),
                                    update_params(nodes=nodes).shape, threads=threads)


def native(threads: int) -> None:
    nodes = 1 << 18
    p = update_params(nodes=nodes)
    sealed = _Sealed(nodes, threads)
    data = np.random.default_rng(9).integers(0, 256, (nodes, 32), dtype=np.uint8)
    data[:, 31] &= 0x3F
    update(sealed, data, threads=threads)  # Numba cache loads out of the measurement
    c0 = time.process_time()
    dt, u = timed(lambda: update(sealed, data, threads=threads))
    cpu_s = time.process_time() - c0
    # the same stages by hand, for the split
    t_d, tree_d = timed(lambda: TreeD.build(data, threads=threads))
    comm_d = int.from_bytes(tree_d.root, "little")
    out = np.empty_like(data)
    t_enc, _ = timed(lambda: map_nodes(_encode, (sealed.replica, data),
                                       rhos(make_phi(comm_d, u.comm_r_old_int), h=10, nodes=nodes), 18 - 10, out))
    t_r, _ = timed(lambda: poseidon_tree(Fr.from_bytes(out.tobytes(), byteorder="little"), p.shape, threads=threads))
    t_dec, back = timed(lambda: decode(u.replica, sealed.replica, comm_d_new=u.comm_d_new, comm_r_old=u.comm_r_old))
    assert np.array_equal(back, data) and np.array_equal(out, u.replica)
    print(f"native update, 8 MiB ({nodes:,} nodes, h = {u.h}, {threads} threads): {dt:.2f} s wall, "
          f"{cpu_s:.2f} s process CPU; tree D {t_d:.2f} s, rhos + encoding {t_enc:.2f} s, tree R_new {t_r:.2f} s; "
          f"decode {t_dec:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None, help="threads (default: every core)")
    ap.add_argument("--runs", type=int, default=3, help="proofs per mode")
    ap.add_argument("--keys", default=None, help="a folder for the key: read if this circuit's is there, else written")
    ap.add_argument("--skip-native", action="store_true", help="skip the 8 MiB native update")
    args = ap.parse_args()
    threads = resolve_threads(args.threads)
    print(f"host: {cpu_name()}, {os.cpu_count()} cores; threads {threads}")
    if not args.skip_native:
        native(threads)

    sealed = seal(fr32_pad(random.Random(7).randbytes(2032)), registered_proof=5, prover_id=bytes(range(32)),
                  sector_id=42, ticket=bytes([9] * 32))
    u = update(sealed, fr32_pad(random.Random(8).randbytes(2032)))
    dt, synth = timed(lambda: cuzk.Synthesizer(circuit_for(u.params)))
    r1cs = synth.r1cs
    n = r1cs.n_constraints
    print(f"2 KiB update partition: compile (trace + PCE) {dt:.2f} s, {n:,} constraints, "
          f"{n / dt / 1e6:.2f} M constraints/s; R1CS digest {r1cs.digest}")
    st = dict(comm_r_old=u.comm_r_old, comm_d_new=u.comm_d_new, comm_r_new=u.comm_r_new)
    w = synthesis_median(synth, circuit_inputs(u.params, partition_proof(u, 0), k=0, **st))

    pk, how = load_or_setup(args.keys, r1cs, "update")
    print(f"key: {how}; domain 2^{pk.domain_size.bit_length() - 1}")
    rows = {False: [], "auto": []}
    proofs = {}
    for _ in range(args.runs):
        for mode in rows:
            c0 = time.process_time()
            dt, proof = timed(lambda: create_proof(pk, w, 5, 6, backend="cpu", threads=args.threads, bit_msm=mode))
            rows[mode].append((dt, time.process_time() - c0))
            proofs.setdefault(mode, proof)
            assert proof == proofs[mode]
    public = update_public_inputs(u.params, 0, **st)
    ok = all(verify(pk.vk, public, p) for p in proofs.values()) and proofs[False] == proofs["auto"]
    med = {m: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs)) for m, rs in rows.items()}
    for mode, rs in rows.items():
        print(f"prove 2 KiB update partition, bit_msm={mode!r}: {med[mode][0]:.2f} s wall, {med[mode][1]:.2f} s "
              f"process CPU (medians of {len(rs)}; wall {', '.join(f'{r[0]:.2f}' for r in rs)})")
    print(f"  general / bit_msm='auto': {med[False][0] / med['auto'][0]:.2f}x wall, "
          f"{med[False][1] / med['auto'][1]:.2f}x CPU; proofs verify and are equal: {ok}")


if __name__ == "__main__":
    main()
