"""Fixed-base precomputation: the trade-off curve, table bytes vs MSM time.

Part 1, MSMs: for each size, random subgroup points and scalars; the baseline is the plain
``cuzk.kernels.cpu.msm`` with its default split policy, as the prover runs it, in the same
process. For every plan of ``trade_off(group, n)`` (its modelled Pareto front) the table is
built once (wall time, all threads) and then ``msm_precomputed`` and the baseline alternate
``--runs`` times; figures are medians: on 1 thread the calling thread's CPU time (the kernels
run on it; less disturbed by other processes than wall time), on 2 threads wall time. Every
table's MSM is checked equal to the baseline's point.

Part 2, a proof: ``porep_like`` at 2^16 (as benchmarks/prove_bench.py builds it) proved by
``GpuProver(pk, "cpu")`` and by ``GpuProver(pk, "cpu", precompute=X)`` for several X,
alternating, same r, s (the proofs must be byte-identical); per-step times from the prover's
sub-spans, so the saving per table byte of each query (A, B1, B2, L, H) shows.

    python3 benchmarks/fixed_base_bench.py                       # G1 2^16, 2^18; G2 2^14, 2^16; prove 2^16
    python3 benchmarks/fixed_base_bench.py --g1 16 --g2 --no-prove --runs 3

``--gather-max 0`` lifts the bound on a window's gather (``msm_fixed._GATHER_MAX``): with
``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184`` in the environment (glibc then serves
every block from a heap it keeps) that shows what a window kernel reusing its gather buffer
would gain, without the page faults of a fresh mapping per window.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

import numpy as np

from cuzk.curve import G1, G2
from cuzk.curves import get as _get_curve
cpu = _get_curve("bls12_381").kernels  # BLS12-381's CPU kernels

MIB = 1 << 20
SUB_SPANS = ("H", "MSM_A", "MSM_B1", "MSM_B2", "MSM_L", "MSM_H")
QUERY_SPAN = {"a": "MSM_A", "b_g1": "MSM_B1", "b_g2": "MSM_B2", "l": "MSM_L", "h": "MSM_H"}


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return f"load {os.getloadavg()}"


def _scalars(rng, n):
    a = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    a[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # < 2^252 < r
    return a


def _timed(fn, threads):
    """(result, seconds): thread CPU time on one thread, wall time otherwise."""
    clock = time.thread_time if threads == 1 else time.perf_counter
    t0 = clock()
    out = fn()
    return out, clock() - t0


def msm_curve(group: str, log_n: int, runs: int, threads_list, max_factor: float) -> list[str]:
    n = 1 << log_n
    G = G1 if group == "g1" else G2
    rng = np.random.default_rng(log_n)
    mul = cpu.batch_mul_g1 if group == "g1" else cpu.batch_mul_g2
    pts, ks = mul(G.generator(), _scalars(rng, n)), _scalars(rng, n)
    key_bytes = pts.nbytes
    want = cpu.msm(group, pts, ks)  # also compiles
    lines = [f"== {group.upper()} 2^{log_n}: bases {key_bytes / MIB:.1f} MiB; " + _uptime()]
    head = f"{'plan':>22} {'copies':>6} {'MiB':>7} {'x bases':>7} {'model':>6} {'build s':>8}"
    for th in threads_list:
        head += f" {f'{th}t ms':>9} {'ratio':>6}"
    lines.append(head)
    for _, ratio, plan in cpu.trade_off(group, n):
        nbytes = plan.table_bytes(n, pts[:1].nbytes)
        if nbytes > max_factor * key_bytes:
            break
        if plan.m == 1:
            row = f"{'plain msm (default)':>22} {1:6d} {0:7.1f} {0:7.1f} {1.0:6.3f} {0:8.2f}"
            table = None
        else:
            t0 = time.perf_counter()
            table = cpu.precompute(group, pts, plan)
            build = time.perf_counter() - t0
            assert G.eq(cpu.msm_precomputed(table, ks), want), f"{plan} gives another point"
            row = (f"{f'c={plan.c} t={plan.t} {plan.method}':>22} {plan.m:6d} {nbytes / MIB:7.1f} "
                   f"{nbytes / key_bytes:7.1f} {ratio:6.3f} {build:8.2f}")
        for th in threads_list:
            plain, mine = [], []
            for _ in range(runs):  # alternate with the plain MSM, so both see the same load
                plain.append(_timed(lambda: cpu.msm(group, pts, ks, th), th)[1])
                if table is not None:
                    mine.append(_timed(lambda: cpu.msm_precomputed(table, ks, th), th)[1])
            t = statistics.median(mine or plain)
            # the median of each run's ratio to the plain run beside it: robust to a load that drifts
            r = statistics.median([a / b for a, b in zip(mine, plain)]) if mine else 1.0
            row += f" {t * 1e3:9.1f} {r:6.3f}"
        lines.append(row)
        del table
    lines.append("(ratio: median over the runs of table time / the plain MSM run just before it)")
    return lines


CHALLENGES = {14: 5, 16: 22}  # porep_like(leaves=1024): domains 2^14 and 2^16 (prove_bench.py)


def prove_curve(runs: int, factors, threads, log_n: int = 16) -> list[str]:
    from cuzk.circuits import porep_like
    from cuzk.groth16 import fixed_base, setup
    from cuzk.prover import GpuProver
    from cuzk.synth import Synthesizer
    from cuzk.timeline import Timeline, stage_context

    circuit = porep_like(leaves=1024, challenges=CHALLENGES[log_n])
    synth = Synthesizer(circuit)
    pk, _ = setup(synth.r1cs, np.random.default_rng(log_n))
    w = synth.synthesize(**circuit.sample_inputs(seed=1))
    qbytes = sum(getattr(pk, q).nbytes for q in fixed_base.QUERY_GROUPS)
    sizes = ", ".join(f"{q} {getattr(pk, q).shape[0]:,}" for q in fixed_base.QUERY_GROUPS)
    lines = [f"== porep_like 2^{log_n} prove, {threads} threads: queries {sizes} points, {qbytes / MIB:.1f} MiB; "
             + _uptime()]

    def once(prover, job):
        tl = Timeline()
        with stage_context(tl, job_id=job):
            t0 = time.perf_counter()
            proof = prover.prove(w, 12345, 67890)
            wall = time.perf_counter() - t0
        return proof.to_bytes(), wall, {s.stage: s.seconds for s in tl.spans() if s.stage in SUB_SPANS}

    plain = GpuProver(pk, device="cpu", threads=threads)
    once(plain, -1)  # warm-up
    # the planner's shares of a total figure ("auto" is AUTO_FACTOR x), then 4x for every query alike
    options = [(f"{f:g}x query bytes", int(f * qbytes)) for f in factors]
    uniform = {q: cpu.plan_for_bytes(g, getattr(pk, q).shape[0], 4 * getattr(pk, q).nbytes)
               for q, g in fixed_base.QUERY_GROUPS.items()}
    uniform = {q: p for q, p in uniform.items() if p is not None}
    options.append(("4x each query", fixed_base.build_tables(pk, uniform, threads)))
    results = []
    for label, option in options:
        t0 = time.perf_counter()
        prover = GpuProver(pk, device="cpu", threads=threads, precompute=option)
        made = time.perf_counter() - t0
        build = prover.tables.seconds if prover.tables is not None else 0.0
        once(prover, -2)
        mine, base = [], []
        for j in range(runs):
            b = once(plain, 2 * j)
            m = once(prover, 2 * j + 1)
            assert m[0] == b[0], f"{label}: the proof differs from the plain prover's"
            base.append(b)
            mine.append(m)
        results.append((label, prover.tables, build if build else made, mine, base))
    med = statistics.median
    lines.append(f"{'option':>18} {'MiB':>7} {'build s':>7} {'plain s':>8} {'prove s':>8} {'ratio':>6}  "
                 "per step: s with tables (ratio to the plain proof beside it); H has no table: the control")
    for label, tables, build, mine, base in results:
        plain_wall, wall = med([r[1] for r in base]), med([r[1] for r in mine])
        ratio = med([m[1] / b[1] for m, b in zip(mine, base)])
        steps = {s: med([r[2][s] for r in mine]) for s in SUB_SPANS}
        step_ratio = {s: med([m[2][s] / b[2][s] for m, b in zip(mine, base)]) for s in SUB_SPANS}
        ref = {s: med([r[2][s] for r in base]) for s in SUB_SPANS}
        mib = tables.nbytes / MIB if tables is not None else 0.0
        lines.append(f"{label:>18} {mib:7.1f} {build:7.2f} {plain_wall:8.3f} {wall:8.3f} {ratio:6.3f}  "
                     + " ".join(f"{s} {steps[s]:.3f} ({step_ratio[s]:.2f})" for s in SUB_SPANS))
        if tables is not None:
            per = []
            for q, t in tables.tables.items():
                saved = ref[QUERY_SPAN[q]] - steps[QUERY_SPAN[q]]
                per.append(f"{q} {t.plan.c}/{t.plan.t}x{t.plan.m} {t.nbytes / MIB:.1f} MiB "
                           f"{saved * 1e3:+.0f} ms ({saved * 1e3 / (t.nbytes / MIB):+.2f} ms/MiB)")
            lines.append(f"{'':>18} saved: " + "; ".join(per))
    lines.append(f"(ratios: medians over the runs of each proof / the plain proof just before it; {_uptime()})")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--g1", type=int, nargs="*", default=[16, 18])
    ap.add_argument("--g2", type=int, nargs="*", default=[14, 16])
    ap.add_argument("--runs", type=int, default=3, help="alternating runs per plan (median)")
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--max-factor", type=float, default=16.0, help="largest table, in multiples of the bases' bytes")
    ap.add_argument("--no-prove", action="store_true")
    ap.add_argument("--prove-runs", type=int, default=3)
    ap.add_argument("--prove-size", type=int, default=16, choices=sorted(CHALLENGES))
    ap.add_argument("--prove-factors", type=float, nargs="*", default=[1, 2, 4, 8])
    ap.add_argument("--gather-max", type=int, default=None, help="bytes (0: unbounded); see the docstring")
    args = ap.parse_args(argv)
    if args.gather_max is not None:
        from cuzk.kernels import msm_fixed

        msm_fixed._GATHER_MAX = args.gather_max or 1 << 62
        print(f"gather bound: {msm_fixed._GATHER_MAX} bytes; MALLOC_MMAP_MAX_={os.environ.get('MALLOC_MMAP_MAX_')}")
    print(f"cpus={os.cpu_count()} {_uptime()}", flush=True)
    for group, logs in (("g1", args.g1), ("g2", args.g2)):
        for k in logs:
            print("\n".join(msm_curve(group, k, args.runs, args.threads, args.max_factor)), flush=True)
    if not args.no_prove:
        print("\n".join(prove_curve(args.prove_runs, args.prove_factors, max(args.threads), args.prove_size)), flush=True)
    print(f"end: {_uptime()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
