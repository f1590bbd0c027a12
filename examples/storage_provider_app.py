"""A long-running host in the shape of a storage provider: sealing proofs (many partitions,
normal priority) arrive steadily; now and then a deadline-bound WindowPoSt proof (critical)
jumps the queue. The host polls ``status()`` and ``summary()`` like a dashboard would and
exposes Prometheus metrics.

    python examples/storage_provider_app.py --duration 5           # simulated stages
    python examples/storage_provider_app.py --real tiny --duration 60
"""

import argparse
import logging
import random
import threading
import time

from cuzk import demo
from cuzk.pipeline import CRITICAL, NORMAL, Pipeline
from cuzk.timeline import Timeline


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=5.0, help="seconds to accept new work")
    ap.add_argument("--real", metavar="SIZE", help="real porep_like stages at this size")
    ap.add_argument("--synth", type=float, default=0.06)
    ap.add_argument("--prove", type=float, default=0.03)
    ap.add_argument("--concurrency", default="auto")
    ap.add_argument("--log-timeline", action="store_true", help="mirror events to logging as TIMELINE lines")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    stages = demo.real_stages(args.real) if args.real else demo.simulated_stages(args.synth, args.prove)
    concurrency = args.concurrency if args.concurrency == "auto" else int(args.concurrency)
    # A bounded timeline: a host that runs for weeks keeps only the recent past in memory.
    timeline = Timeline(capacity=50_000)
    if args.log_timeline:
        timeline.mirror_to_logging()

    rng = random.Random(7)
    futures, failures = [], []
    with Pipeline(stages.synthesizer, stages.prover, concurrency=concurrency, timeline=timeline) as pipe:
        stop = threading.Event()

        def dashboard():  # what a monitoring thread would poll
            while not stop.wait(1.0):
                st, s = pipe.status(), pipe.timeline.summary()
                print(f"[dashboard] {st} | GPU {100 * s.gpu_utilization:.0f}% | "
                      f"{s.seconds_per_proof:.3f} s/proof")

        mon = threading.Thread(target=dashboard, name="dashboard", daemon=True)
        mon.start()
        sector, t_end = 0, time.monotonic() + args.duration
        while time.monotonic() < t_end:
            sector += 1
            if sector % 5 == 0:  # a WindowPoSt deadline: one partition, must go first
                f = pipe.submit(stages.make_inputs(sector), priority=CRITICAL, job_id=f"wpost-{sector}")
            else:  # sealing: a few partitions per sector, proved as one job
                parts = [stages.make_inputs(sector * 10 + k) for k in range(rng.randint(2, 4))]
                f = pipe.submit_partitioned(parts, priority=NORMAL, job_id=f"seal-{sector}")
            f.add_done_callback(lambda f: failures.append(f) if not f.cancelled() and f.exception() else None)
            futures.append(f)
            time.sleep(rng.uniform(0.5, 1.5) * (args.synth + args.prove))
        print(f"stopping intake after {sector} jobs; draining")
        stop.set()
    mon.join(timeout=5)

    done = sum(1 for f in futures if f.done() and not f.cancelled() and f.exception() is None)
    print(f"\n{done}/{len(futures)} jobs proved, {len(failures)} failed")
    print(pipe.timeline.summary())
    print(pipe.metrics().to_prometheus())
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
