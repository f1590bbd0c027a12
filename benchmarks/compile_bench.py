"""Compile benchmark: the stamped compile (``cs.repeat``) against tracing every instance, on
the 32 GiB WindowPoSt circuit (``cuzk.circuits.filecoin.FallbackPoSt``: 2,349 sectors x 10
challenges per partition, 125,279,217 constraints), in one process.

Prints, in order:
  1. the traced compile and the stamped compile of the same slice (``--traced-sectors``), their
     digests (equal), constraints/s and the ratio;
  2. the stamped compile at each of ``--sectors`` (first run, then the median of ``--runs``);
     a slice whose PCE would not fit ``--max-gib`` (or the free memory) is skipped;
  3. the whole partition traced with stamping but not placed: exact counts and the PCE size;
  4. witness and synthesis time per core at ``--synth-sectors`` (random inputs, no check: the
     work does not depend on the values).

    python3 benchmarks/compile_bench.py
    python3 benchmarks/compile_bench.py --sectors 100,900 --runs 3 --synth-sectors 100
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time

import numpy as np

from cuzk.circuits.filecoin.post import FallbackPoSt
from cuzk.field import FR, Fr
from cuzk.synth import Synthesizer, compile_circuit
from cuzk.synth import kernels as K
from cuzk.synth.placement import pce_sizes
from cuzk.synth.program import trace

__all__ = ["window_post", "main"]

PARTITION_SECTORS, CHALLENGES, SECTOR = 2349, 10, 32 << 30  # one 32 GiB WindowPoSt partition


def window_post(sectors: int, challenges: int = CHALLENGES, stamp: bool = True) -> FallbackPoSt:
    """A slice of the 32 GiB WindowPoSt partition; ``stamp=False`` traces every instance."""
    c = FallbackPoSt(SECTOR, challenges, sectors)
    c.stamp = stamp
    return c


def _compile(circuit):
    """(r1cs, program, seconds, {stage: seconds})."""
    marks = []
    t0 = time.perf_counter()
    r1cs, prog = compile_circuit(circuit, progress=lambda stage, d, n: marks.append((stage, time.perf_counter())))
    t1 = time.perf_counter()
    stages, prev = {}, t0
    for i, (stage, t) in enumerate(marks):
        end = marks[i + 1][1] if i + 1 < len(marks) and marks[i + 1][0] != stage else None
        if end is not None or i + 1 == len(marks):
            stages[stage] = stages.get(stage, 0.0) + ((end or t1) - prev)
            prev = end or t1
    return r1cs, prog, t1 - t0, {k: round(v, 2) for k, v in stages.items()}


def _rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _available_gib() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    return float("inf")


def _bytes(r1cs, prog) -> int:
    arrays = [prog.code, prog.consts, prog.var_slot]
    for m in (r1cs.a, r1cs.b, r1cs.c):
        arrays += [m.indptr, m.indices, m.coeff_index, m.coeff_table]
    return sum(a.nbytes for a in arrays)


def _random_inputs(spec, seed: int) -> np.ndarray:
    n = sum(int(np.prod(s)) for _, s in spec)
    rng = random.Random(seed)
    return Fr.from_ints([rng.randrange(FR.modulus) for _ in range(n)])


def traced_vs_stamped(sectors: int) -> float:
    hand, _, th, _ = _compile(window_post(sectors, stamp=False))
    st, _, ts, stages = _compile(window_post(sectors, stamp=True))
    assert st.digest == hand.digest and st.n_public == hand.n_public, "stamped compile differs from the traced one"
    n = hand.n_constraints
    print(f"[1] {sectors} sector(s), {n:,} constraints, digest {hand.digest[:16]} (equal)")
    print(f"    traced  compile {th:7.2f} s  {n / th:12,.0f} constraints/s")
    print(f"    stamped compile {ts:7.2f} s  {n / ts:12,.0f} constraints/s   ratio {th / ts:.1f}x   {stages}")
    return n / th


def stamped_rates(sizes, runs: int, max_gib: float, traced_rate: float):
    for s in sizes:
        cs, _ = trace(window_post(s))
        need = pce_sizes(cs)["memory_bytes"] * 1.25 / 2**30  # the arrays plus placement temporaries
        del cs
        room = min(max_gib, _available_gib() - 2)
        if need > room:
            print(f"[2] {s} sectors: needs ~{need:.1f} GiB, {room:.1f} GiB allowed/free: skipped")
            continue
        times, first, n, pce = [], None, 0, 0
        for _ in range(1 + runs):
            r1cs, prog, t, stages = _compile(window_post(s))
            n, pce = r1cs.n_constraints, _bytes(r1cs, prog)
            del r1cs, prog
            if first is None:
                first = (t, stages)
            else:
                times.append(t)
        med = statistics.median(times)
        print(f"[2] {s} sectors, {n:,} constraints: first {first[0]:.2f} s ({n / first[0]:,.0f}/s, {first[1]}), "
              f"median of {runs} {med:.2f} s = {n / med:,.0f} constraints/s ({n / med / traced_rate:.0f}x traced); "
              f"PCE {pce / 2**30:.2f} GiB in memory ({pce / n:.0f} B/constraint); peak RSS {_rss_gib():.2f} GiB")


def full_partition():
    t = time.perf_counter()
    cs, _ = trace(window_post(PARTITION_SECTORS))
    tt = time.perf_counter() - t
    sz = pce_sizes(cs)
    print(f"[3] WindowPoSt partition ({PARTITION_SECTORS} x {CHALLENGES}, FallbackPoSt): traced with cs.repeat in "
          f"{tt:.1f} s: {sz['rows']:,} constraints, {cs.n_public + 1:,} inputs, nnz A/B/C {sz['nnz']}, "
          f"{sz['code_words']:,} program words, {sz['vars']:,} variables; compiled PCE would hold "
          f"{sz['memory_bytes'] / 2**30:.1f} GiB")


def synthesis_rate(sectors: int, runs: int):
    r1cs, prog, _, _ = _compile(window_post(sectors))
    syn = Synthesizer.from_parts(r1cs, prog)
    inp = _random_inputs(prog.inputs, 1)
    inputs_dict = _unflatten(prog.inputs, Fr.to_ints(inp))
    _ = r1cs.a.data, r1cs.b.data, r1cs.c.data  # gathered once per circuit, not per synthesis
    w_cpu, s_cpu, s_wall = [], [], []
    for _ in range(runs):
        c = time.thread_time()
        K.run_witness(prog.code, prog.consts, inp, prog.n_slots)
        w_cpu.append(time.thread_time() - c)
        c, t = time.thread_time(), time.perf_counter()
        syn.synthesize_inputs(inputs_dict, check=False)
        s_cpu.append(time.thread_time() - c)
        s_wall.append(time.perf_counter() - t)
    n = r1cs.n_constraints
    w, s = statistics.median(w_cpu), statistics.median(s_cpu)
    print(f"[4] {sectors} sectors, {n:,} constraints, {r1cs.nnz:,} nonzeros: witness {w:.2f} s per core "
          f"({n / w:,.0f} constraints/s), synthesis (witness + 3 mat-vecs) {s:.2f} s per core "
          f"({n / s:,.0f} constraints/s; wall {statistics.median(s_wall):.2f} s); peak RSS {_rss_gib():.2f} GiB")


def _unflatten(spec, flat):
    out, at = {}, 0
    for name, shape in spec:
        size = int(np.prod(shape))
        out[name] = np.array(flat[at:at + size], dtype=object).reshape(shape).tolist()
        at += size
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traced-sectors", type=int, default=1)
    ap.add_argument("--sectors", default="10,40", help="comma-separated slice sizes for the stamped rate")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-gib", type=float, default=10.0, help="skip slices whose PCE would need more")
    ap.add_argument("--synth-sectors", type=int, default=10)
    ap.add_argument("--no-full", action="store_true", help="skip tracing the whole partition")
    a = ap.parse_args(argv)
    warm = Synthesizer(window_post(1, 1))  # Numba kernels loaded before anything is timed
    warm.synthesize_inputs(_unflatten(warm.program.inputs, [0] * warm.program.n_inputs))
    traced = traced_vs_stamped(a.traced_sectors)
    stamped_rates([int(x) for x in a.sectors.split(",") if x], a.runs, a.max_gib, traced)
    if not a.no_full:
        full_partition()
    if a.synth_sectors:
        synthesis_rate(a.synth_sectors, a.runs)


if __name__ == "__main__":
    main()
