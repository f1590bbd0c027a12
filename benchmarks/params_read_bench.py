"""Checked ``.params`` reads: 1 thread vs all threads vs the previous decoder, same process.

    python3 benchmarks/params_read_bench.py [--logs 14 16] [--runs 1]

For each size 2^k the script writes a bellperson ``.params`` file shaped like a real key
(h: 2^k − 1, l and a: 2^k, b_g1 and b_g2: 2^(k−1) points; 64 random subgroup points tiled, since
the check costs the same for every non-identity point) and reads it back:

* ``checked`` with ``threads=1`` and with every core (:mod:`cuzk.curve.validate`),
* ``checked`` with the previous decoder (one ``prange`` ``decode_many`` call per 2^16-point
  chunk over Numba's whole pool; monkeypatched in, otherwise the same reader): the baseline,
* ``checked=False`` (trusted files).

It also prints the per-point subgroup check against the doublings it cannot avoid (G1: 2·63 for
φ(P) = −x²·P, G2: 63 for ψ(P) = x·P; measured as 63-doubling scalar multiplications), i.e. how
far the check is from its formula's floor. Every read is compared with the written key.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from cuzk.curve import G1, G2
from cuzk.curve.validate import resolve_threads
from cuzk.formats import bellperson as bp
from cuzk.groth16 import bellperson_layout
from cuzk.groth16.keys import ProvingKey, VerifyingKey


def _key(log_m: int) -> ProvingKey:
    rng = np.random.default_rng(log_m)
    g1, g2 = G1.random(64, rng), G2.random(64, rng)
    m = 1 << log_m

    def tile(pts, n):
        return np.resize(pts, (n,) + pts.shape[1:])

    vk = VerifyingKey(alpha_g1=g1[0], beta_g1=g1[1], beta_g2=g2[0], gamma_g2=g2[1], delta_g1=g1[2], delta_g2=g2[2],
                      ic=g1[3:5])
    return ProvingKey(vk=vk, h=tile(g1, m - 1), l=tile(g1, m), a=tile(g1, m), b_g1=tile(g1, m // 2),
                      b_g2=tile(g2, m // 2))


def _old_decode_rows(group, rows, out, *, compressed, checked, threads=None):
    """The reader's decoder before cuzk.curve.validate: one parallel=True kernel per chunk."""
    status = np.empty(rows.shape[0], dtype=np.int8)
    group.kernels.decode_many(np.ascontiguousarray(rows), compressed, checked, out, status)
    bad = np.flatnonzero(status != group.kernels.OK)
    return (int(bad[0]), int(status[bad[0]])) if bad.size else None


def _timed(fn, runs):
    walls, cpus = [], []
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return out, statistics.median(walls), statistics.median(cpus)


def _same(pk, back):
    return all(np.array_equal(getattr(pk, n), getattr(back, n)) for n in ("h", "l", "a", "b_g1", "b_g2"))


def read_sizes(logs, runs):
    cores = resolve_threads(None)
    print(f"cores available: {cores}")
    print(f"{'key':>5} {'MiB':>6} {'1 thread':>9} {'all':>7} {'speed-up':>8} {'cores':>6} {'old':>7} {'old/new':>7} "
          f"{'unchecked':>9}")
    with tempfile.TemporaryDirectory() as d:
        for log_m in logs:
            pk = _key(log_m)
            path = os.path.join(d, f"k{log_m}.params")
            pk.write(path)
            bp.read_params(path, threads=2)  # compile/load the kernels outside the timings
            one, t1, _ = _timed(lambda: bp.read_params(path, threads=1), runs)
            allt, ta, ca = _timed(lambda: bp.read_params(path), runs)
            new_decoder = bellperson_layout.decode_rows  # the reader behind bp.read_params
            bellperson_layout.decode_rows = _old_decode_rows
            try:
                bp.read_params(path)
                old, to, _ = _timed(lambda: bp.read_params(path), runs)
            finally:
                bellperson_layout.decode_rows = new_decoder
            fast, tu, _ = _timed(lambda: bp.read_params(path, checked=False), runs)
            assert all(_same(pk, k) for k in (one, allt, old, fast)), "a read disagrees with the written key"
            print(f"2^{log_m:<3} {os.path.getsize(path) / 2**20:6.1f} {t1:8.2f}s {ta:6.2f}s {t1 / ta:7.2f}x "
                  f"{ca / ta:6.2f} {to:6.2f}s {to / ta:6.2f}x {tu:8.2f}s")


def check_floor(n=2048):
    rng = np.random.default_rng(1)
    scal = np.zeros((n, 4), dtype=np.uint64)
    scal[:, 0] = np.uint64(1 << 63)  # 63 doublings and one (skipped-identity) add
    print("per-point subgroup check, one thread, vs the doublings its formula needs:")
    for group, muls in ((G1, 2), (G2, 1)):
        k = group.kernels
        pts = group.random(n, rng)
        jac = np.empty((n, 3) + group.coord_shape, dtype=np.uint64)
        k.mul_many(pts[:1], scal[:1], jac[:1])
        k.first_outside_subgroup(pts, 0, 1)
        _, tc, _ = _timed(lambda: k.first_outside_subgroup(pts, 0, n), 3)
        _, td, _ = _timed(lambda: k.mul_many(pts, scal, jac), 3)
        check, floor = tc / n * 1e6, muls * td / n * 1e6
        print(f"  {group.name}: check {check:.1f} µs, {muls}×63 doublings {floor:.1f} µs, ratio {check / floor:.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, nargs="+", default=[14, 16], help="key sizes 2^k")
    ap.add_argument("--runs", type=int, default=1, help="reads per variant (median)")
    args = ap.parse_args(argv)
    check_floor()
    read_sizes(args.logs, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
