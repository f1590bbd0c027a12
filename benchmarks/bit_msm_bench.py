"""The bit-aware MSM (ones added directly, zeros skipped) against the general MSM, same process.

    python3 benchmarks/bit_msm_bench.py [--curve bls12_381] [--sizes 20 22] [--groups g1 g2]
        [--fraction 0.95] [--threads 2] [--witness z.npy [--montgomery]] [--sweep]

Scalars: with ``--witness`` a saved witness (an (n, 4) uint64 .npy of canonical Fr rows, or
Montgomery rows with ``--montgomery``, e.g. ``np.save(path, synthesized.z)``), its first n rows
per size (or all of it once, ``--sizes`` ignored); otherwise a synthetic PoRep-like vector: a
share ``--fraction`` of 0/1 entries (half each) and the rest uniform in [0, r). The fraction of
bits in the vector used is printed. Points: k_i·G for random 64-bit k_i (a fixed-base batch
multiplication over short scalars: cheap, distinct, not a real key). Each row times the general
``msm`` and ``msm_bits`` (its scan included, and apart as ``scan``) over the same points and
scalars, after a small untimed call of each (compile or cache load), checks that both give the
same point and prints the ratio general / bit-aware. ``--sweep`` times 2^16 G1 points at bit
fractions 0 .. 0.95 (where "auto" should switch on: cuzk.groth16.bit_msm.AUTO_MIN_FRACTION).

``--block-sums`` (with ``--witness``) times nothing: it counts what a per-key table of block
sums would save the ones' sum. With Σ P over each block of b consecutive points stored beside
the key, a block's ones cost min(ones, 1 + zeros) additions (the block's sum, then each zero's
point subtracted; an other row's scalar becomes s - 1), so the table pays only where a
witness's bits are lopsided within blocks. It prints, per b, the table's points as a share of
the key's and the ones' additions against one per one.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from cuzk import curves
from cuzk.kernels import msm_bits, msm_cpu
from cuzk.kernels.bit_split import split_bits

__all__ = ["main", "synthetic_scalars", "warm_scalars", "cheap_points"]


def synthetic_scalars(n: int, fraction: float, r: int, rng) -> np.ndarray:
    """(n, 4) canonical rows: ``fraction`` of them 0 or 1 (half each, at random places), the rest
    uniform below r."""
    out = np.zeros((n, 4), np.uint64)
    kind = rng.random(n)
    others = np.flatnonzero(kind >= fraction)
    out[kind < fraction / 2, 0] = 0
    out[(kind >= fraction / 2) & (kind < fraction), 0] = 1
    raw = rng.integers(0, 2**64, size=(len(others), 4), dtype=np.uint64)
    raw[:, 3] &= np.uint64((1 << (r.bit_length() - 1 - 192)) - 1)  # below 2^(bits-1) < r
    out[others] = raw
    return out


def warm_scalars(n: int, r: int, rng) -> list[np.ndarray]:
    """Two vectors that take msm_bits down both of its paths for the other rows: distinct values
    (their plain MSM) and repeated ones (a PoRep witness: grouped bases, the ``group_sums``
    kernel). Warming with the first alone left ``group_sums`` to compile inside the first timed
    witness row on a cold cache (0.74x printed for a 2.65x MSM)."""
    distinct = synthetic_scalars(n, 0.9, r, rng)
    repeated = distinct.copy()
    others = split_bits(distinct).others
    repeated[others] = repeated[others[rng.integers(0, 4, len(others))]]  # 4 values, each many times
    return [distinct, repeated]


def cheap_points(cv, group: str, n: int, rng, threads: int) -> np.ndarray:
    """n points k_i·G, k_i random 64-bit (fixed-base, few non-zero windows)."""
    k = np.zeros((n, 4), np.uint64)
    k[:, 0] = rng.integers(1, 2**63, n, dtype=np.uint64)
    G = cv.G1 if group == "g1" else cv.G2
    bm = cv.kernels.batch_mul_g1 if group == "g1" else cv.kernels.batch_mul_g2
    return bm(G.generator(), k, threads=threads)


def _group(cv, group):
    return cv.kernels.group(group)


def _timed(fn):
    """(wall s, this thread's CPU s, result): with one thread the CPU time is the kernels' own,
    steadier than the wall time on a shared machine."""
    t, c = time.perf_counter(), time.thread_time()
    out = fn()
    return time.perf_counter() - t, time.thread_time() - c, out


def run(cv, group: str, pts: np.ndarray, sc: np.ndarray, threads: int) -> str:
    g = _group(cv, group)
    w_gen, c_gen, a = _timed(lambda: msm_cpu.msm(g, pts, sc, threads))
    w_bits, c_bits, b = _timed(lambda: msm_bits.msm_bits(g, pts, sc, threads))
    w_scan, _, s = _timed(lambda: split_bits(sc, threads))
    assert np.array_equal(a, b), "the bit-aware MSM gave another point"
    n = len(sc)
    cpu = f"  cpu {c_gen:.3f} / {c_bits:.3f} s = {c_gen / c_bits:5.2f}x" if threads == 1 else ""
    return (f"{cv.name:10s} {group} n=2^{np.log2(n):.1f} bits={s.bit_fraction:.3f} (zeros {len(s.zeros) / n:.3f}, "
            f"ones {len(s.ones) / n:.3f})  general {w_gen:7.3f} s  bit-aware {w_bits:7.3f} s  "
            f"(scan {w_scan * 1e3:.1f} ms)  ratio {w_gen / w_bits:5.2f}x{cpu}")


def block_sums(z: np.ndarray) -> None:
    """Print the ones' additions with a table of block sums, per block size (module doc)."""
    split = split_bits(z)
    n, ones = len(z), len(split.ones)
    zero, one = np.zeros(n, np.bool_), np.zeros(n, np.bool_)
    zero[split.zeros], one[split.ones] = True, True
    print(f"n {n:,}: zeros {len(split.zeros):,}, ones {ones:,}, others {len(split.others):,}")
    for b in (2, 4, 8, 16, 32, 64, 128, 256):
        m = n // b * b
        per = np.minimum(one[:m].reshape(-1, b).sum(1), 1 + zero[:m].reshape(-1, b).sum(1))
        adds = int(per.sum()) + int(one[m:].sum())
        print(f"b = {b:3d}: table {n // b:>9,} points (+{100 / b:4.1f} % of the key's), "
              f"ones' additions {adds:>9,} = {adds / max(ones, 1):.3f} of one per one")


def _load_witness(path: str, montgomery: bool, cv) -> np.ndarray:
    z = np.load(path, allow_pickle=False)
    if z.ndim != 2 or z.shape[1] != 4 or z.dtype != np.uint64:
        raise SystemExit(f"{path}: expected an (n, 4) uint64 array, got {z.shape} {z.dtype}")
    return cv.Fr.from_mont(z) if montgomery else z


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--curve", default="bls12_381")
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 22], help="log2 of the MSM sizes")
    ap.add_argument("--groups", nargs="+", default=["g1", "g2"], choices=["g1", "g2"])
    ap.add_argument("--g2-max", type=int, default=20, help="largest log2 size run for G2 (memory, time)")
    ap.add_argument("--fraction", type=float, default=0.95, help="share of 0/1 scalars (synthetic vector)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--witness", help="a saved (n, 4) uint64 .npy witness to take the scalars from")
    ap.add_argument("--montgomery", action="store_true", help="the witness rows are Montgomery (Synthesized.z)")
    ap.add_argument("--sweep", action="store_true", help="2^16 G1 points at bit fractions 0 .. 0.95")
    ap.add_argument("--block-sums", action="store_true",
                    help="with --witness: count the ones' additions with a table of block sums (no timing)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    cv = curves.get(args.curve)
    if args.block_sums:
        if not args.witness:
            raise SystemExit("--block-sums needs --witness")
        block_sums(_load_witness(args.witness, args.montgomery, cv))
        return 0
    rng = np.random.default_rng(args.seed)
    threads = msm_cpu.resolve_threads(args.threads)
    small = cheap_points(cv, "g1", 4096, rng, threads)
    for group in args.groups:  # compile or load every kernel untimed
        p = small if group == "g1" else cheap_points(cv, "g2", 4096, rng, threads)
        for s in warm_scalars(4096, cv.Fr.modulus, rng):
            msm_cpu.msm(_group(cv, group), p, s, threads), msm_bits.msm_bits(_group(cv, group), p, s, threads)
    print(f"# threads={threads} curve={cv.name}", flush=True)
    if args.sweep:
        pts = cheap_points(cv, "g1", 1 << 16, rng, threads)
        for f in (0.0, 0.1, 0.25, 0.5, 0.75, 0.95):
            print(run(cv, "g1", pts, synthetic_scalars(1 << 16, f, cv.Fr.modulus, rng), threads), flush=True)
        return 0
    witness = _load_witness(args.witness, args.montgomery, cv) if args.witness else None
    sizes = [None] if witness is not None else args.sizes
    for group in args.groups:
        for log_n in sizes:
            if log_n is not None and group == "g2" and log_n > args.g2_max:
                continue
            n = len(witness) if log_n is None else 1 << log_n
            sc = witness if witness is not None else synthetic_scalars(n, args.fraction, cv.Fr.modulus, rng)
            t, _, pts = _timed(lambda: cheap_points(cv, group, n, rng, threads))
            print(f"# {group} points: {n} in {t:.1f} s", file=sys.stderr, flush=True)
            print(run(cv, group, pts, sc, threads), flush=True)
            del pts
    return 0


if __name__ == "__main__":
    sys.exit(main())
