"""Synthesis benchmark: porep_like at ~2^14, 2^16, 2^18 constraints.

Per size: trace+compile time, PCE size / save / load time, witness time, mat-vec time and
nonzeros/s (one thread), total synthesis (median of --runs), one-vs-two-thread throughput,
peak RSS; plus a plain Python-int synthesis of the smallest size in the same process (ratio).

    python3 benchmarks/synth_bench.py                 # sizes 14,16,18
    python3 benchmarks/synth_bench.py --sizes 14 --runs 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import threading
import time

import numpy as np

from cuzk.circuits import porep_like
from cuzk.field import Fr
from cuzk.synth import Synthesizer, python_synthesize
from cuzk.synth import kernels as K
from cuzk.synth.program import flatten_inputs

__all__ = ["main"]

LEAVES = 1024  # depth 10: ~3,000 constraints per challenge


def _median_time(fn, runs):
    """Median wall seconds of ``runs`` calls; the calling thread's CPU seconds go to _CPU[fn]."""
    ts, cs = [], []
    for _ in range(runs):
        c = time.thread_time()
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
        cs.append(time.thread_time() - c)
    _CPU[fn] = statistics.median(cs)
    return statistics.median(ts)


# On a shared machine wall time includes waiting for a core; single-threaded kernels' thread CPU
# time is the per-core cost, so both are reported.
_CPU: dict = {}


def _challenges_for(log_n: int) -> int:
    one = Synthesizer(porep_like(leaves=LEAVES, challenges=1)).r1cs.n_constraints
    two = Synthesizer(porep_like(leaves=LEAVES, challenges=2)).r1cs.n_constraints
    per = two - one
    return max(1, round(((1 << log_n) - (one - per)) / per))


def _threads_throughput(synth, inputs, n_jobs):
    """Seconds for n_jobs syntheses on one thread and on two threads, and cores used by the two."""
    t = time.perf_counter()
    for i in range(n_jobs):
        synth.synthesize(**inputs[i % len(inputs)])
    one = time.perf_counter() - t

    def worker(k):
        for i in range(k, n_jobs, 2):
            synth.synthesize(**inputs[i % len(inputs)])

    ths = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    t, c = time.perf_counter(), time.process_time()
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    two = time.perf_counter() - t
    # Cores busy during the two-thread run: above 1 only if the threads ran at the same time,
    # i.e. the GIL was released (meaningful even when a loaded machine caps the speedup).
    return one, two, (time.process_time() - c) / two


def bench_size(log_n: int, runs: int, python_baseline: bool) -> dict:
    k = _challenges_for(log_n)
    circuit = porep_like(leaves=LEAVES, challenges=k)
    c0, t = time.thread_time(), time.perf_counter()
    synth = Synthesizer(circuit)
    trace_s, trace_cpu = time.perf_counter() - t, time.thread_time() - c0
    r = synth.r1cs
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c.pce")
        t = time.perf_counter()
        synth.save(path)
        save_s = time.perf_counter() - t
        pce_bytes = os.path.getsize(path)
        t = time.perf_counter()
        loaded = Synthesizer.load(path)
        load_s = time.perf_counter() - t
    inputs = [circuit.sample_inputs(seed) for seed in range(4)]
    w = loaded.synthesize(**inputs[0])  # warm-up (JIT cache load) on the loaded PCE
    assert np.array_equal(w.c, synth.synthesize(**inputs[0]).c)

    p = synth.program
    inp = Fr.from_ints(flatten_inputs(p.inputs, inputs[0]))
    wit = lambda: K.run_witness(p.code, p.consts, inp, p.n_slots)  # noqa: E731
    witness_s = _median_time(wit, runs)
    z = w.z
    mv = lambda: [K.csr_matvec(m.indptr, m.indices, m.data, z) for m in (r.a, r.b, r.c)]  # noqa: E731
    matvec_s = _median_time(mv, runs)
    tot = lambda: synth.synthesize(**inputs[1])  # noqa: E731
    total_s = _median_time(tot, runs)
    check_s = _median_time(lambda: synth.synthesize_inputs(inputs[1], check=True), runs)
    par_s = _median_time(lambda: synth.synthesize_inputs(inputs[1], threads=2), runs)
    one_s, two_s, cores = _threads_throughput(synth, inputs, max(8, 2 * runs))
    out = dict(
        log_n=log_n, challenges=k, constraints=r.n_constraints, vars=r.n_vars, nnz=r.nnz,
        trace_s=trace_s, trace_cpu=trace_cpu, pce_mb=pce_bytes / 2**20, save_s=save_s, load_s=load_s,
        witness_s=witness_s, matvec_s=matvec_s, nnz_per_s=r.nnz / matvec_s, total_s=total_s,
        witness_cpu=_CPU[wit], matvec_cpu=_CPU[mv], nnz_per_cpu_s=r.nnz / _CPU[mv], total_cpu=_CPU[tot],
        check_s=check_s, par2_s=par_s, two_thread_speedup=one_s / two_s, two_thread_cores=cores,
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )
    if python_baseline:
        rows = r.rows_as_ints()
        c, t = time.thread_time(), time.perf_counter()
        python_synthesize(synth, inputs[1], rows=rows)
        out["python_s"] = time.perf_counter() - t
        out["python_cpu"] = time.thread_time() - c
        out["python_ratio"] = out["python_cpu"] / out["total_cpu"]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="14,16,18", help="log2 constraint counts, comma separated")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per figure (median reported)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    Synthesizer(porep_like(leaves=8, challenges=1)).synthesize(**porep_like(leaves=8, challenges=1).sample_inputs(0))
    for i, n in enumerate(sizes):
        res = bench_size(n, args.runs, python_baseline=(i == 0))
        print(f"\n== porep_like(leaves={LEAVES}, challenges={res['challenges']}): "
              f"{res['constraints']} constraints (2^{np.log2(res['constraints']):.2f}), {res['vars']} vars, {res['nnz']} nnz")
        print(f"  trace+compile      {res['trace_s']:8.3f} s wall  {res['trace_cpu']:8.3f} s CPU")
        print(f"  PCE file           {res['pce_mb']:8.2f} MiB  save {res['save_s']:.3f} s  load {res['load_s']:.3f} s")
        print(f"  witness program    {res['witness_s'] * 1e3:8.2f} ms wall  {res['witness_cpu'] * 1e3:8.2f} ms CPU")
        print(f"  3 mat-vecs (1 thr) {res['matvec_s'] * 1e3:8.2f} ms wall  {res['matvec_cpu'] * 1e3:8.2f} ms CPU"
              f"  = {res['nnz_per_s'] / 1e6:.1f} M nnz/s wall, {res['nnz_per_cpu_s'] / 1e6:.1f} M nnz/s per core")
        print(f"  synthesis total    {res['total_s'] * 1e3:8.2f} ms wall  {res['total_cpu'] * 1e3:8.2f} ms CPU"
              f"  (check=True {res['check_s'] * 1e3:.2f} ms, "
              f"threads=2 mat-vec {res['par2_s'] * 1e3:.2f} ms)")
        print(f"  2 synthesis threads vs 1: {res['two_thread_speedup']:.2f}x throughput, "
              f"{res['two_thread_cores']:.2f} cores busy while both ran")
        print(f"  peak RSS so far    {res['peak_rss_mb']:8.0f} MiB")
        if "python_s" in res:
            print(f"  Python-int synthesis {res['python_s']:.3f} s wall {res['python_cpu']:.3f} s CPU"
                  f"  -> Numba is {res['python_ratio']:.0f}x faster (CPU)")
    print(f"\nload average at end: {os.getloadavg()} on {os.cpu_count()} CPUs (wall figures include waiting for a core)")


if __name__ == "__main__":
    main()
