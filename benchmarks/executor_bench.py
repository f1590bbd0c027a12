"""Synthesis throughput of the ``"processes"`` executor with 1 and 2 workers, circom witnesses.

    python3 benchmarks/executor_bench.py [--n 2000] [--jobs 24] [--workers 1 2]

A circom ``Chain(n)`` circuit (n multiplication constraints, tests/circom/circuits/chain.circom)
is compiled with ``circom2 --r1cs --wasm --prime bls12381`` (cached under tests/circom/build)
and synthesized by :func:`cuzk.formats.snarkjs_wasm.synthesizer_from_circom`: circom's WASM
witness calculator driven from Python, which holds the GIL (two threads run slower than one).
Each worker process builds its own calculator from a picklable factory. ``--jobs`` syntheses are
submitted from as many threads as there are workers; the prover is absent (throughput of
synthesis alone). All settings (processes and threads, each worker count) are made up front and
their runs alternate round by round, so load changes on a shared machine hit them alike.
Printed: jobs/s per setting (median over rounds), the median per-round ratio to 1 worker, and
the machine's load.

Without Node.js, ``--gil-python`` uses a pure-Python synthesizer of comparable cost instead.

``--first-job``: the latency of a fresh worker's first job, with the worker warm-up
(:mod:`cuzk.engine.synth_warmup`: Numba's cached code loaded in the background once the worker
is ready) and without it (``warm_up=False``, as before), same run: per round, one executor of each
kind (1 worker) is made, ``--idle`` seconds pass (the gap between ``Engine.register`` and the
first submit; 0 shows a job arriving during the warm-up is not slowed), then two jobs are timed.
Printed: medians of the first and second job per kind, and the first-job ratio.

    python3 benchmarks/executor_bench.py --first-job --rounds 5 --idle 0 2
    python3 benchmarks/executor_bench.py --first-job --rounds 5 --idle 0 2 --cuzk 1   # cuzk's Numba synthesizer
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.util
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("snarkjs_ceremony", ROOT / "scripts" / "snarkjs_ceremony.py")
ceremony = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ceremony)


def compile_chain(n: int) -> tuple[Path, Path]:
    """(``.r1cs``, ``.wasm``) of ``Chain(n)``, compiled once and cached under tests/circom/build."""
    ceremony.ensure_toolchain()
    source = ceremony.chain_source(n)
    key = hashlib.sha256(source.encode() + ceremony._circuit_files()).hexdigest()[:12]
    build = ceremony.CIRCOM_DIR / "build" / f"bench-chain{n}-{key}"
    r1cs, wasm = build / "circuit.r1cs", build / "circuit_js" / "circuit.wasm"
    if not (r1cs.exists() and wasm.exists()):
        build.mkdir(parents=True, exist_ok=True)
        (build / "circuit.circom").write_text(source)
        rel = build.relative_to(ceremony.CIRCOM_DIR)
        ceremony._run([ceremony._BIN / "circom2", rel / "circuit.circom", "--r1cs", "--wasm", "--prime", "bls12381",
                       "-l", "node_modules", "-o", rel], ceremony.CIRCOM_DIR, sys.stderr)
    return r1cs, wasm


class PythonWitness:
    """Stand-in when Node is missing: a pure-Python loop (GIL held) with a real-shaped result."""

    def __init__(self, n: int):
        self.n = n

    def synthesize(self, x: int, k: int):
        import numpy as np

        from cuzk.synth import Synthesized

        s = x
        for _ in range(self.n * 40):  # ~ the circom calculator's per-wire Python cost
            s = (s * s + k) % 1000000007
        z = np.full((self.n + 3, 4), s, dtype=np.uint64)
        return Synthesized(z=z, a=z[:self.n], b=z[:self.n], c=z[:self.n], public_inputs=[k], digest="py")


class CuzkWitness:
    """cuzk's own Numba synthesizer for ``porep_like(leaves=1024, challenges)`` (built in each
    worker); ``synthesize`` ignores its arguments and synthesizes the circuit's sample inputs."""

    def __init__(self, challenges: int):
        from cuzk.circuits.porep import porep_like
        from cuzk.synth import Synthesizer

        circuit = porep_like(leaves=1024, challenges=challenges)
        self.synth, self.inputs = Synthesizer(circuit), circuit.sample_inputs(seed=1)

    def synthesize(self, x: int, k: int):
        return self.synth.synthesize(**self.inputs)


def run(ex, jobs: int, pool: ThreadPoolExecutor) -> float:
    """Jobs per second for ``jobs`` syntheses submitted through ``pool`` (kept across runs, so a
    threads executor's per-thread synthesizers are built once)."""
    t = time.perf_counter()
    outs = list(pool.map(lambda i: ex.synthesize(x=3 + i, k=7), range(jobs)))
    dt = time.perf_counter() - t
    assert len(outs) == jobs
    return jobs / dt


def first_job(factory, rounds: int, idles) -> None:
    """First- and second-job latency of fresh 1-worker process executors, warm-up on and off."""
    from cuzk.engine.executors import make_executor

    for idle in idles:
        res = {True: [], False: []}
        for _ in range(rounds):
            for warm in (True, False):  # alternate: a load change hits both alike
                t = time.perf_counter()
                with make_executor("processes", factory=factory, warm_up=warm) as ex:
                    made = time.perf_counter() - t
                    time.sleep(idle)
                    lat = []
                    for i in range(2):
                        t = time.perf_counter()
                        ex.synthesize(x=3 + i, k=7)
                        lat.append(time.perf_counter() - t)
                res[warm].append((made, *lat))
        med = {w: [statistics.median(r[i] for r in rows) for i in range(3)] for w, rows in res.items()}
        for w in (False, True):
            print(f"idle {idle:.1f} s, warm-up {'on ' if w else 'off'}: executor ready {med[w][0] * 1e3:7.1f} ms, "
                  f"first job {med[w][1] * 1e3:7.1f} ms, second job {med[w][2] * 1e3:7.1f} ms (medians of {rounds})")
        ratio = statistics.median(b[1] / a[1] for a, b in zip(res[True], res[False]))
        print(f"idle {idle:.1f} s: first job without / with warm-up {ratio:.2f}x (median of paired rounds)", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="Chain(n) constraints")
    ap.add_argument("--jobs", type=int, default=24)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3, help="runs per setting (median)")
    ap.add_argument("--gil-python", action="store_true", help="pure-Python stand-in instead of circom")
    ap.add_argument("--first-job", action="store_true", help="first-job latency with and without the warm-up")
    ap.add_argument("--cuzk", type=int, default=0, metavar="C",
                    help="synthesize cuzk's porep_like(leaves=1024, challenges=C) instead of circom")
    ap.add_argument("--rounds", type=int, default=5, help="--first-job: executors made per kind")
    ap.add_argument("--idle", type=float, nargs="+", default=[0.0, 2.0], help="--first-job: seconds before the job")
    a = ap.parse_args(argv)
    from cuzk.engine.executors import make_executor

    if a.cuzk:
        factory = functools.partial(CuzkWitness, a.cuzk)
        what = f"cuzk Synthesizer, porep_like(leaves=1024, challenges={a.cuzk}) (Numba)"
    elif a.gil_python or not ceremony.toolchain_status()[0]:
        factory = functools.partial(PythonWitness, a.n)
        what = f"pure-Python GIL-holding stand-in (n={a.n})"
    else:
        from cuzk.formats.snarkjs_wasm import synthesizer_from_circom

        r1cs, wasm = compile_chain(a.n)
        factory = functools.partial(synthesizer_from_circom, str(r1cs), str(wasm))
        what = f"circom Chain({a.n}) WASM witness + A·z, B·z, C·z"
    one = factory()
    t = time.perf_counter()
    for _ in range(5):
        one.synthesize(x=3, k=7)
    print(f"{what}: {(time.perf_counter() - t) / 5 * 1e3:.1f} ms per synthesis in-process; "
          f"cores {len(os.sched_getaffinity(0))}, load average {os.getloadavg()[0]:.2f}")
    if a.first_job:
        first_job(factory, a.rounds, a.idle)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return 0
    # every setting is made once and the runs alternate between them, so a load change on a
    # shared machine hits all settings alike; the ratio is the median of per-round ratios
    made = {(kind, w): make_executor(kind, factory=factory, workers=w) for w in a.workers
            for kind in ("processes", "threads")}
    pools = {key: ThreadPoolExecutor(key[1]) for key in made}
    try:
        for key, ex in made.items():
            run(ex, 4 * key[1], pools[key])  # every worker and pool thread has served once
        rounds = []
        for _ in range(a.repeats):
            rounds.append({key: run(ex, a.jobs, pools[key]) for key, ex in made.items()})
    finally:
        for key, ex in made.items():
            pools[key].shutdown()
            ex.close()
    base = a.workers[0]
    for w in a.workers:
        proc = statistics.median(r[("processes", w)] for r in rounds)
        thr = statistics.median(r[("threads", w)] for r in rounds)
        ratio = statistics.median(r[("processes", w)] / r[("processes", base)] for r in rounds)
        print(f"workers {w}: processes {proc:.2f} jobs/s, {ratio:.2f}× of {base} worker(s) (median of "
              f"{a.repeats} paired rounds); threads {thr:.2f} jobs/s", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
