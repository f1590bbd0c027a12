"""Engine scheduling figures, each as a ratio against a baseline run in this process.

1. Overhead per job, stages sleeping ``--stage-ms``: (a) N jobs one at a time (submit, wait)
   against calling the two stages directly (baseline): overhead = (engine - direct) / N; it
   includes three thread hand-offs per job. (b) N jobs in flight at once against the ideal of
   a two-stage pipeline, N x one measured stage: overhead = (engine - ideal) / N. (c) the
   process CPU time per job in (b) (the stages sleep: it is the engine's own work).
2. CRITICAL latency under a backlog: ``--backlog`` NORMAL jobs of a sealing-like circuit
   (synthesis S ms, prove P ms), then one CRITICAL job of a PoSt-like circuit; its total_s
   against the bound (its own synthesis + its prove + one prove already in flight) = S + 2P.
   Repeated ``--repeats`` times: p50 and p95 of the ratio. Also the same with the CRITICAL job on
   the *same* circuit (it must wait for that circuit's synthesis slot: bound S + 2P + S).

    python benchmarks/engine_bench.py [--jobs 400] [--stage-ms 1] [--backlog 24] [--repeats 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import cuzk


class Sleep:
    def __init__(self, seconds):
        self.seconds = seconds

    def synthesize(self, i=0):
        time.sleep(self.seconds)
        return i

    def prove(self, w):
        time.sleep(self.seconds)
        return w


def overhead(jobs: int, stage_s: float) -> dict:
    synth, prover = Sleep(stage_s), Sleep(stage_s)
    t0 = time.perf_counter()
    for i in range(jobs):
        prover.prove(synth.synthesize(i))
    direct = time.perf_counter() - t0
    with cuzk.Engine(device="cpu", memory_budget=None) as engine:
        engine.register("c", synth, prover)
        engine.submit("c", {"i": -1}).result()  # threads started, paths warm
        t0 = time.perf_counter()
        for i in range(jobs):
            engine.submit("c", {"i": i}).result()
        sequential = time.perf_counter() - t0
        c0, t0 = time.process_time(), time.perf_counter()
        futures = [engine.submit("c", {"i": i}) for i in range(jobs)]
        for f in futures:
            f.result()
        pipelined, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"direct": direct, "sequential": sequential, "pipelined": pipelined, "ideal": direct / 2, "cpu": cpu}


def critical_latency(backlog: int, synth_s: float, prove_s: float, same_circuit: bool) -> float:
    seal = (Sleep(synth_s), Sleep(prove_s))
    post = (Sleep(synth_s), Sleep(prove_s))
    with cuzk.Engine(device="cpu", memory_budget=None) as engine:
        engine.register("seal", *seal)
        engine.register("post", *post)
        futures = [engine.submit("seal", {"i": i}) for i in range(backlog)]
        # steady state: the prove worker busy, the channel full, syntheses queued
        while engine.status()["circuits"]["seal"]["proving"] == 0:
            time.sleep(0.001)
        time.sleep(synth_s / 2)
        crit = engine.submit("seal" if same_circuit else "post", {"i": 10**6}, priority="critical")
        crit.result()
        latency = crit.timings.total_s
        engine.close(cancel_futures=True)
        for f in futures:
            f.cancelled() or f.result()
    return latency


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--stage-ms", type=float, default=1.0)
    ap.add_argument("--backlog", type=int, default=24)
    ap.add_argument("--synth-ms", type=float, default=40.0)
    ap.add_argument("--prove-ms", type=float, default=20.0)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args(argv)

    o = overhead(args.jobs, args.stage_ms / 1e3)
    n = args.jobs
    print(f"overhead: {n} jobs, stages sleeping {args.stage_ms} ms each")
    print(f"  one at a time: direct calls {o['direct']:.3f} s, engine {o['sequential']:.3f} s "
          f"(ratio {o['sequential'] / o['direct']:.3f}x): {(o['sequential'] - o['direct']) / n * 1e6:.0f} us per job")
    print(f"  all in flight: ideal {o['ideal']:.3f} s, engine {o['pipelined']:.3f} s "
          f"(ratio {o['pipelined'] / o['ideal']:.3f}x): {(o['pipelined'] - o['ideal']) / n * 1e6:.0f} us per job "
          f"(target <= 200 us)")
    print(f"  engine CPU time per job: {o['cpu'] / n * 1e6:.0f} us")

    s, p = args.synth_ms / 1e3, args.prove_ms / 1e3
    for same in (False, True):
        bound = s + 2 * p + (s if same else 0.0)
        ratios = sorted(critical_latency(args.backlog, s, p, same) / bound for _ in range(args.repeats))
        p95 = ratios[min(len(ratios) - 1, int(round(0.95 * (len(ratios) - 1))))]
        where = "same circuit (waits for its synthesis slot)" if same else "its own circuit (PoSt beside sealing)"
        print(f"CRITICAL behind {args.backlog} NORMAL jobs, {where}: synth {args.synth_ms} ms, prove {args.prove_ms} ms, "
              f"bound {bound * 1e3:.0f} ms")
        print(f"  latency / bound: p50 {statistics.median(ratios):.3f}, p95 {p95:.3f} over {args.repeats} runs"
              + (" (target <= 1.2)" if not same else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
