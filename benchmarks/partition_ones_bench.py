"""How much of their bit-aware MSMs a sector's partitions could share: the rows whose scalar is 1
in several witnesses of the same circuit.

A 32 GiB sector's C2 proves ten partitions of one circuit over one key; each partition's A and L
MSMs spend most of their bit-aware time summing the points of its ones (docs/perf/kernels.md).
Proved together, the partitions' ones could be grouped by which partitions have them (each row's
membership code, 2^k groups), each group summed once and each partition's sum assembled from the
group sums that include it: the additions fall from Σ_j |ones_j| to |∪_j ones_j|. This prints,
for the 2 KiB partition's witnesses under k different seeds (as a sector's partitions differ:
other challenges, the same sector), the union against the separate counts, and times the two
summing kernels such a path would choose between on the same points: ``sum_rows`` (one group,
the ones of one witness) and ``group_sums`` (the union grouped by code), per addition.

    python benchmarks/partition_ones_bench.py --witnesses 6
"""

from __future__ import annotations

import argparse
import random

import numpy as np
from csr_bounds_bench import _median  # noqa: E402 - benchmarks/ is sys.path[0] when run

import cuzk
from cuzk import curves
from cuzk.circuits.filecoin.porep import c2, commit_phase1, fr32_pad, seal
from cuzk.field.jit import readonly
from cuzk.kernels import msm_bits
from cuzk.kernels.bit_split import split_bits


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--witnesses", type=int, default=6, help="seeds (partitions) of the one sector")
    args = ap.parse_args(argv)
    bls = curves.get("bls12_381")
    sealed = seal(fr32_pad(random.Random(41).randbytes(2032)), registered_proof=5, prover_id=bytes(range(32)),
                  sector_id=42, ticket=bytes([9] * 32))
    synth = cuzk.Synthesizer(c2.circuit_for(sealed.proof))
    masks = []
    for k in range(args.witnesses):
        w = synth.synthesize(**c2.partition_inputs(commit_phase1(sealed, bytes([k]) * 32))[0])
        split = split_bits(np.ascontiguousarray(bls.Fr.from_mont(w.z)))
        m = np.zeros(split.n, np.bool_)
        m[split.ones] = True
        masks.append(m)
    n = len(masks[0])
    print(f"2 KiB PoRep partition: {n:,} variables; ones per witness {min(m.sum() for m in masks):,}"
          f"-{max(m.sum() for m in masks):,}")
    print("witnesses  union of ones   of the rows  separate sums  union / separate")
    for k in sorted(k for k in {1, 2, 4, args.witnesses} if k <= args.witnesses):
        union = np.logical_or.reduce(masks[:k]).sum()
        separate = sum(int(m.sum()) for m in masks[:k])
        print(f"{k:>9}  {union:>13,}  {union / n:>11.3f}  {separate:>13,}  {union / separate:>16.3f}")

    # the two kernels on the same points (random affine points stand in for the key's: the sums'
    # cost does not depend on which points), one thread
    g = bls.kernels.group("g1")
    k = args.witnesses
    pts = readonly(bls.kernels.batch_mul_g1(bls.G1.generator(), np.random.default_rng(1).integers(
        1, 1 << 62, (n, 4), dtype=np.uint64) & np.array([-1, 0, 0, 0], np.int64).astype(np.uint64)))
    ones = np.flatnonzero(masks[0])
    code = np.zeros(n, np.int64)
    for j, m in enumerate(masks[:k]):
        code |= m.astype(np.int64) << j
    rows = np.flatnonzero(code)
    order = np.argsort(code[rows], kind="stable")
    rows = readonly(np.ascontiguousarray(rows[order]))
    count = np.bincount(code[rows], minlength=1 << k)[1:]
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    out = np.empty((len(count), 2, 6), np.uint64)
    msm_bits.ones_sum(g, pts, ones[:4096], 1)  # compile / cache loads
    g.kernels.group_sums(pts, rows[:4096], np.array([0]), np.array([4096]), out[:1])
    t_rows = _median(lambda: msm_bits.ones_sum(g, pts, ones, 1), 3)
    t_groups = _median(lambda: g.kernels.group_sums(pts, rows, start, count, out), 3)
    print(f"one thread: sum_rows over one witness's {len(ones):,} ones {t_rows * 1e3:.0f} ms "
          f"({t_rows / len(ones) * 1e9:.0f} ns per addition); group_sums over the union of {k} in "
          f"{len(count):,} groups {t_groups * 1e3:.0f} ms ({t_groups / len(rows) * 1e9:.0f} ns per addition)")
    print(f"the {k} witnesses' ones: {k} x sum_rows {k * t_rows * 1e3:.0f} ms against one group_sums "
          f"{t_groups * 1e3:.0f} ms: {k * t_rows / t_groups:.2f}x (the 2^{k} group sums' assembly not counted)")


if __name__ == "__main__":
    main()
