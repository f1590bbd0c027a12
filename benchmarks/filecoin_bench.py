"""Filecoin circuits benchmark: neptune Poseidon, tree builds, 32 GiB WinningPoSt, CPU proofs.

Measures, each with a baseline from this process where one is meaningful:
  * native Poseidon arity 8, hashes/s per core (thread CPU time, one thread), vs the pure-Python
    permutation (PoseidonSpec.hash);
  * tree build of a 2 KiB sector (vs building it with the Python hash) and of an 8 MiB sector;
  * 32 GiB WinningPoSt: inputs from a sparse tree, trace/compile (constraints/s), synthesis;
  * CPU prove (setup, prove, verify) of the 2 KiB WindowPoSt partition and of the 32 GiB
    WinningPoSt (--prove-winning; minutes on 2 cores).

    python3 benchmarks/filecoin_bench.py                   # all but the 32 GiB prove
    python3 benchmarks/filecoin_bench.py --prove-winning   # everything
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

import cuzk
from cuzk.circuits.filecoin import FallbackPoSt, PostSector, build_tree, window_post, winning_post, winning_post_sectors
from cuzk.circuits.filecoin.poseidon import hash_nodes, neptune_spec
from cuzk.circuits.filecoin.sparse import SparseTree
from cuzk.field import FR, Fr
from cuzk.synth import Synthesizer

__all__ = ["main"]

R = FR.modulus


def _median(fn, runs):
    """(median wall s, median thread-CPU s) of ``runs`` calls."""
    ws, cs = [], []
    for _ in range(runs):
        c, t = time.thread_time(), time.perf_counter()
        fn()
        ws.append(time.perf_counter() - t)
        cs.append(time.thread_time() - c)
    return statistics.median(ws), statistics.median(cs)


def bench_hash(runs):
    rng = random.Random(1)
    n = 4096
    rows = Fr.from_ints([rng.randrange(R) for _ in range(8 * n)]).reshape(n, 8, 4)
    t0 = time.perf_counter()
    hash_nodes(rows[:1])
    first = time.perf_counter() - t0
    wall, cpu = _median(lambda: hash_nodes(rows), runs)
    spec = neptune_spec(8)
    py = [[rng.randrange(R) for _ in range(8)] for _ in range(20)]
    pw, pc = _median(lambda: [spec.hash(x) for x in py], max(1, runs // 2))
    native, python = n / cpu, len(py) / pc
    print(f"poseidon arity 8 native: {native:,.0f} hashes/s per core ({n / wall:,.0f}/s wall; first call incl. "
          f"JIT/cache load {first:.2f} s) | pure Python {python:,.0f}/s | ratio {native / python:.1f}x")


def _python_tree(leaves, levels):
    layer = list(leaves)
    for a in levels:
        spec = neptune_spec(a)
        layer = [spec.hash(layer[i:i + a]) for i in range(0, len(layer), a)]
    return layer[0]


def bench_trees(runs):
    rng = random.Random(2)
    small = bytes(b for _ in range(64) for b in rng.randrange(R).to_bytes(32, "little"))
    wall, cpu = _median(lambda: build_tree(small), runs)
    ints = [int.from_bytes(small[i:i + 32], "little") for i in range(0, len(small), 32)]
    pw, pc = _median(lambda: _python_tree(ints, (8, 8)), runs)
    assert build_tree(small).root == _python_tree(ints, (8, 8))
    print(f"tree 2 KiB (8-0-0, 73 hashes): {wall * 1e3:.1f} ms wall, {cpu * 1e3:.1f} ms CPU | Python hash {pc * 1e3:.1f} ms "
          f"| ratio {pc / cpu:.1f}x")
    n = (8 << 20) // 32
    leaves = Fr.from_ints([rng.randrange(R) for _ in range(n)])
    wall, cpu = _median(lambda: build_tree(leaves), max(1, runs // 2))
    hashes = sum(n // 8 ** k for k in range(1, 7))
    print(f"tree 8 MiB (8-0-0, {n:,} leaves, {hashes:,} hashes): {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"({hashes / cpu:,.0f} hashes/s per core)")


def _winning_inputs(seed=3):
    c = winning_post(32 << 30)
    rng = random.Random(seed)
    sector_id, comm_c, rnd = 4242, rng.randrange(R), rng.randrange(R)
    t0 = time.perf_counter()
    chal = sorted({x for i in range(c.sector_count) for x in c.challenges(rnd, sector_id, i)})
    tree = SparseTree(c.shape, c.shape.leaves, {x: rng.randrange(R) for x in chal})
    sector = PostSector(sector_id=sector_id, comm_c=comm_c, tree=tree)
    inputs = c.inputs(rnd, winning_post_sectors(sector))
    public = c.public_inputs(rnd, [(sector_id, sector.comm_r)] * c.sector_count)
    return c, inputs, public, time.perf_counter() - t0


def bench_winning(runs, prove):
    c, inputs, public, t_inputs = _winning_inputs()
    t0 = time.perf_counter()
    synth = Synthesizer(c)
    t_trace = time.perf_counter() - t0
    r = synth.r1cs
    synth.synthesize_inputs(inputs, check=True)  # warm (and check every row once)
    wall, cpu = _median(lambda: synth.synthesize(**inputs), runs)
    print(f"32 GiB WinningPoSt: {r.n_constraints:,} constraints, {r.n_public + 1} inputs | inputs from a sparse tree "
          f"{t_inputs:.2f} s | trace+compile {t_trace:.1f} s ({r.n_constraints / t_trace:,.0f} constraints/s) | "
          f"synthesis {wall:.2f} s wall, {cpu:.2f} s CPU (median of {runs})")
    if prove:
        _prove("32 GiB WinningPoSt", synth, inputs, public, max(1, runs // 2))


def _prove(label, synth, inputs, public, runs):
    t0 = time.perf_counter()
    pk, vk = cuzk.groth16.setup(synth.r1cs)
    t_setup = time.perf_counter() - t0
    prover = cuzk.GpuProver(pk, device="cpu")
    w = synth.synthesize(**inputs)
    t0 = time.perf_counter()
    proof = prover.prove(w)
    first = time.perf_counter() - t0
    wall, _ = _median(lambda: prover.prove(w), runs)
    ok = cuzk.groth16.verify(vk, public, proof)
    m = synth.r1cs.n_constraints + synth.r1cs.n_public + 1
    print(f"{label} CPU prove: {wall:.2f} s (median of {runs}; first {first:.2f} s) | setup {t_setup:.1f} s | "
          f"domain 2^{(m - 1).bit_length()} | verifies: {ok}")
    assert ok


def bench_window(runs):
    c = window_post(2048)
    rng = random.Random(4)
    secs = [PostSector(sector_id=i, comm_c=rng.randrange(R), tree=build_tree([rng.randrange(R) for _ in range(64)]))
            for i in range(c.sector_count)]
    rnd = rng.randrange(R)
    synth = Synthesizer(c)
    print(f"2 KiB WindowPoSt: {synth.r1cs.n_constraints:,} constraints, {synth.r1cs.n_public + 1} inputs")
    _prove("2 KiB WindowPoSt", synth, c.inputs(rnd, secs), c.public_inputs(rnd, secs), runs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--prove-winning", action="store_true", help="also set up and prove the 32 GiB WinningPoSt on the CPU")
    ap.add_argument("--only", choices=("hash", "trees", "winning", "window"), action="append")
    a = ap.parse_args(argv)
    only = set(a.only or ("hash", "trees", "winning", "window"))
    print(f"cuzk {cuzk.__version__} | numba threads {__import__('numba').get_num_threads()}")
    if "hash" in only:
        bench_hash(a.runs)
    if "trees" in only:
        bench_trees(a.runs)
    if "winning" in only:
        bench_winning(a.runs, a.prove_winning)
    if "window" in only:
        bench_window(a.runs)


if __name__ == "__main__":
    main()
