"""A long-running host in the shape of a storage provider, on one ``cuzk.Engine``:

* ``seal``: sealing proofs, a few partitions per sector, NORMAL priority, arriving steadily;
* ``window-post``: a WindowPoSt partition now and then, CRITICAL, with a deadline (a proof
  that would be late is failed with DeadlineExceededError instead of proved late);
* ``winning-post``: rare, CRITICAL, a tight deadline.

The host serves ``/status`` and ``/metrics`` on 127.0.0.1 (like an operator's dashboard and
Prometheus would scrape them), polls its own status endpoint once a second, and prints the
per-circuit timeline summary at the end.

    python examples/storage_provider_app.py --duration 5           # simulated stages
    python examples/storage_provider_app.py --real tiny --duration 60
    python examples/storage_provider_app.py --porep 2 --keys /tmp/cuzk-keys   # Filecoin's real proofs

``--porep N`` is the storage provider's real day: N 2 KiB sectors sealed by cuzk's native SDR
sealer, their commit phase 1, and their C2 (the StackedCircuit, one partitioned Engine job per
sector) at NORMAL, a SnapDeals update of the first sector (new deal data, its EmptySectorUpdate
proof) at NORMAL; then a WindowPoSt over the same sectors' replica trees at CRITICAL with a
deadline, behind that backlog. Every proof is verified (C2 against public inputs
recomputed from each sector's statement). Keys come from cuzk's development setup (Filecoin's
official parameters are not reachable here): the 2.7M-constraint PoRep key takes about two minutes
on two cores, so ``--keys DIR`` keeps it for the next run.
"""

import argparse
import json
import logging
import random
import threading
import time
import urllib.request

import cuzk
from cuzk import demo
from cuzk.errors import DeadlineExceededError
from cuzk.timeline import Timeline


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=5.0, help="seconds to accept new work")
    ap.add_argument("--real", metavar="SIZE", help="real porep_like stages at this size (all three circuits)")
    ap.add_argument("--synth", type=float, default=0.06)
    ap.add_argument("--prove", type=float, default=0.03)
    ap.add_argument("--log-timeline", action="store_true", help="mirror events to logging as TIMELINE lines")
    ap.add_argument("--porep", type=int, metavar="N", help="seal N 2 KiB sectors, C2 them, WindowPoSt them")
    ap.add_argument("--keys", metavar="DIR", help="with --porep: keep the development keys here")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.porep:
        from porep_day import run_porep  # examples/porep_day.py, beside this file

        return run_porep(args.porep, args.keys)

    stages = demo.real_stages(args.real) if args.real else demo.simulated_stages(args.synth, args.prove)
    # A bounded timeline: a host that runs for weeks keeps only the recent past in memory.
    timeline = Timeline(capacity=50_000)
    if args.log_timeline:
        timeline.mirror_to_logging()

    rng = random.Random(7)
    futures, late, failures = [], [], []
    post_deadline = 4 * (args.synth + args.prove) + 0.5  # seconds a PoSt may take, queue included
    with cuzk.Engine(device="auto", timeline=timeline) as engine:
        engine.register("seal", stages.synthesizer, stages.prover, priority="normal", concurrency=1)
        engine.register("window-post", stages.synthesizer, stages.prover, priority="critical")
        engine.register("winning-post", stages.synthesizer, stages.prover, priority="critical")
        host, port = engine.serve_status(port=0)
        print(f"status on http://{host}:{port}/status and /metrics")
        stop = threading.Event()

        def dashboard():  # what a monitoring system would poll
            while not stop.wait(1.0):
                with urllib.request.urlopen(f"http://{host}:{port}/status", timeout=5) as r:
                    st = json.loads(r.read())
                line = ", ".join(f"{n}: {c['queued']}q {c['synthesizing'] + c['waiting_for_gpu'] + c['proving']}r "
                                 f"{c['done']}d" for n, c in st["circuits"].items())
                print(f"[dashboard] {line} | memory {st['memory']['reserved'] / 2**20:.1f} MiB")

        mon = threading.Thread(target=dashboard, name="dashboard", daemon=True)
        mon.start()

        def record(f):
            if f.cancelled():
                return
            exc = f.exception()
            (late if isinstance(exc, DeadlineExceededError) else failures).append(f) if exc else None

        sector, t_end = 0, time.monotonic() + args.duration
        while time.monotonic() < t_end:
            sector += 1
            if sector % 11 == 0:
                f = engine.submit("winning-post", stages.make_inputs(sector), request_id=f"winning-{sector}",
                                  deadline=time.time() + post_deadline / 2)
            elif sector % 5 == 0:
                f = engine.submit("window-post", stages.make_inputs(sector), request_id=f"wpost-{sector}",
                                  deadline=time.time() + post_deadline)
            else:  # a sector's sealing proof: a few partitions, proved as one job
                parts = [stages.make_inputs(sector * 10 + k) for k in range(rng.randint(2, 4))]
                f = engine.submit_partitioned("seal", parts, request_id=f"seal-{sector}")
            f.add_done_callback(record)
            futures.append(f)
            time.sleep(rng.uniform(0.5, 1.5) * (args.synth + args.prove))
        print(f"stopping intake after {sector} jobs; draining")
        for f in futures:
            f.exception()  # wait for every job
        stop.set()
        mon.join(timeout=5)
        metrics = engine.metrics()

    done = [f for f in futures if not f.cancelled() and f.exception() is None]
    print(f"\n{len(done)}/{len(futures)} jobs proved, {len(late)} past their deadline, {len(failures)} failed")
    posts = [f.timings.total_s for f in done if str(f.job_id).startswith(("wpost", "winning"))]
    if posts:
        print(f"PoSt latency: max {max(posts):.3f} s over {len(posts)} proofs (deadline {post_deadline:.2f} s)")
    summary = timeline.summary()
    print(summary)
    print(timeline.waterfall(max_rows=12))
    print("\n".join(line for line in metrics.splitlines() if line.startswith("cuzk_jobs_done_total")))
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
