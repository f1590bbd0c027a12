"""What ``cuzk serve`` adds to a proof: a tiny circuit (Cube) proved over gRPC against
``Engine.submit(...).result()`` in the same process, on the daemon's own Engine, in one run.

Alternates the ways round by round (in-process; cuzk's Python client over loopback TCP and over
a Unix socket, in this process and in a process of its own; a bare grpcio handler on loopback
TCP that only calls ``Engine.submit(...).result()`` on the same Engine and returns the proof's
bytes: no daemon code, the daemon's and cuzk's client's channel options; the daemon's own ProveCircuit path called in process, without gRPC; and, where
go is installed, a Go client in its own process over TCP and the Unix socket, as Curio calls the
daemon: tests/oracles/curio-client's time-circuit command, which times each call itself), then
prints each way's median and p90 and the median difference and ratio against in-process.

Each round runs the ways in a fresh random order (``--seed``), each way ``--back-to-back``
calls in a row (default 3), the first of which is not counted: a call runs while the one before
it is still ending (grpc's threads closing its stream, the Go client's runtime), so a counted
call follows a call of its own way, as one caller's proofs follow each other. (A fixed cycle,
even one rotated each round, gives each way the same predecessor every round: the in-process
proof then always ran behind a gRPC call's tail, and the ways that followed it ran clean, which
understated what gRPC adds by up to 0.4 ms.) ``--back-to-back 1`` counts every call, each behind
a random way. The bare way is
grpcio's own cost for a call whose handler blocks while a proof runs: what the daemon adds
beyond it is the daemon's, and the in-process daemon path shows how much of that is its code. The
Python client of grpc-tcp / grpc-unix shares the daemon's process (and its GIL); py-tcp / py-unix
run it in a process of its own, as a Python host calls the daemon; the Go client shows what a
client written as Curio's is sees.

    .venv/bin/python benchmarks/serve_bench.py --proofs 300
    .venv/bin/python benchmarks/serve_bench.py --proofs 800 --ways go-tcp,go-unix   # fewer ways

``--ways`` runs only the named ways beside the in-process baseline (the no-op RPC only with
grpc-tcp), e.g. the Go client's alone, as Curio would call the daemon. ``--cpu-calls N`` then
calls each way N more times, in blocks of 50 alternated between the ways, and prints the CPU time
this process's threads spent per call, by role (read from /proc: the kernel counts in 10 ms
ticks, so N of a few hundred): where a way's added time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracles"))

import grpc  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from serve_support import config_text, cube_entry, cube_keys  # noqa: E402

from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import LATENCY_OPTION, NO_RETRIES_OPTION, parse_config  # noqa: E402
from cuzk.serve.logs import configure  # noqa: E402
from cuzk.serve.proto.cuzk.v1 import circuits_pb2 as cpb  # noqa: E402
from cuzk.serve.direct import DirectCalls  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402


WAYS = ("in-process", "grpc-tcp", "grpc-unix", "py-tcp", "py-unix", "bare-grpc", "daemon-code", "go-tcp", "go-unix")
INPUTS = {"x": 3, "out": 35}


class ChildClient:
    """A client in a process of its own: one ProveCircuit per line written, its own timing (ns)
    read back. The Go client's time-circuit loop, or cuzk's Python client (:func:`client_loop`)."""

    def __init__(self, argv: list, what: str):
        self.what = what
        self.proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)

    @classmethod
    def go(cls, binary, address: str) -> "ChildClient":
        return cls([binary, "-addr", address, "time-circuit", "cube", json.dumps(INPUTS)], "the Go client")

    @classmethod
    def python(cls, address: str) -> "ChildClient":
        return cls([sys.executable, __file__, "--client", address], "the Python client")

    def __call__(self) -> float:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            raise RuntimeError(f"{self.what} failed: {line}{self.proc.stdout.read()}")
        return int(line) * 1e-9

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def client_loop(address: str) -> int:
    """``--client ADDRESS``: cuzk's Python client in this process, one ProveCircuit of the Cube per
    line read from stdin, its duration in ns printed (as the Go client's time-circuit loop)."""
    with Client(address, timeout=60) as c:
        for _ in sys.stdin:
            t0 = time.perf_counter_ns()
            r = c.prove_circuit("cube", INPUTS)
            took = time.perf_counter_ns() - t0
            if r.result.status != 1:
                print(f"not completed: {r.result}", flush=True)
                return 1
            print(took, flush=True)
    return 0


def go_binary():
    """The Go client oracle's path, or None (printed why) where go is missing or its build fails."""
    from build_curio_client import build
    from oracle_cache import OracleBuildError

    try:
        return build()
    except OracleBuildError as e:
        print(f"no Go client ways: {str(e).splitlines()[0]}")
        return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proofs", type=int, default=300, help="counted proofs per way")
    ap.add_argument("--ways", default=",".join(WAYS[1:]),
                    help=f"comma-separated ways beside in-process (default: all of {', '.join(WAYS[1:])})")
    ap.add_argument("--back-to-back", type=int, default=3,
                    help="calls of a way in a row each round, the first not counted (1: all counted)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the rounds' orders")
    ap.add_argument("--grpcio-handlers", action="store_true",
                    help="serve cuzk's services through grpcio's handlers instead of grpc-core's call API "
                         "(cuzk/serve/direct.py), as the daemon does where that API is missing")
    ap.add_argument("--cpu-calls", type=int, default=0, help="then N calls per way in a block, CPU per thread role")
    ap.add_argument("--client", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.client:
        return client_loop(args.client)
    if args.back_to_back < 1:
        ap.error("--back-to-back: at least 1")
    chosen = ["in-process", *dict.fromkeys(w.strip() for w in args.ways.split(",") if w.strip())]
    unknown = sorted(set(chosen) - set(WAYS))
    if unknown:
        ap.error(f"--ways: unknown {', '.join(unknown)} (known: {', '.join(WAYS[1:])})")
    folder = Path(tempfile.mkdtemp(prefix="cuzk-serve-bench-"))
    params, _ = cube_keys(folder)
    sock = folder / "cuzk.sock"
    cfg = parse_config(config_text(folder, listen=["127.0.0.1:0", f"unix://{sock}"], circuits=cube_entry(params)))
    binary = go_binary() if {"go-tcp", "go-unix"} & set(chosen) else None
    if binary is None:
        chosen = [w for w in chosen if not w.startswith("go-")]
    times = {w: [] for w in chosen}
    transport = []
    # the daemon logs as `cuzk serve` does (cuzk/cli_serve.py; level info: a line per job), to a file
    log = (folder / "serve.log").open("w")
    configure(cfg.log_level, cfg.log_format, stream=log)
    if args.grpcio_handlers:
        DirectCalls.attach = classmethod(lambda cls, *a, **k: None)
    with Server(cfg) as srv, Client(srv.tcp_address, timeout=60) as tcp, Client(f"unix://{sock}", timeout=60) as unix:
        engine = srv.daemon.engine
        bare = grpc.server(ThreadPoolExecutor(4), options=[("grpc.so_reuseport", 0), LATENCY_OPTION], handlers=[
            grpc.method_handlers_generic_handler("bench.Bare", {"Prove": grpc.unary_unary_rpc_method_handler(
                lambda _req, _ctx: engine.submit("cube", INPUTS).result(timeout=60).to_bytes())})])
        bare_port = bare.add_insecure_port("127.0.0.1:0")
        bare.start()
        bare_channel = grpc.insecure_channel(f"127.0.0.1:{bare_port}", options=[LATENCY_OPTION, NO_RETRIES_OPTION])
        bare_prove = bare_channel.unary_unary("/bench.Bare/Prove")
        request = cpb.ProveCircuitRequest(circuit="cube", inputs_json=json.dumps(INPUTS))
        ways = {
            "in-process": lambda: engine.submit("cube", INPUTS).result(timeout=60),
            "grpc-tcp": lambda: tcp.prove_circuit("cube", INPUTS),
            "grpc-unix": lambda: unix.prove_circuit("cube", INPUTS),
            "bare-grpc": lambda: bare_prove(b"", timeout=60),
            # the daemon's ProveCircuit path without gRPC: parse, job table, answer texts
            "daemon-code": lambda: srv.daemon.prove_circuit(request).wait(),
        }
        # the clients in processes of their own time each call with their own clock
        go = {name: ChildClient.go(binary, srv.tcp_address if name == "go-tcp" else f"unix://{sock}")
              for name in chosen if name.startswith("go-")}
        go.update({name: ChildClient.python(srv.tcp_address if name == "py-tcp" else f"unix://{sock}")
                   for name in chosen if name.startswith("py-")})
        timed = {name: go[name] if name in go else _timed(ways[name]) for name in chosen}
        for fn in timed.values():  # warm: kernels loaded, key read, connections up
            for _ in range(5):
                fn()
        order = list(timed.items())
        rng = random.Random(args.seed)
        counted = max(1, args.back_to_back - 1)
        for _ in range(-(-args.proofs // counted)):
            rng.shuffle(order)  # the module doc says why a fresh order, and why back to back
            for name, fn in order:
                first = fn()  # behind another way's call: counted only when every call is
                if args.back_to_back == 1:
                    times[name].append(first)
                times[name].extend(fn() for _ in range(args.back_to_back - 1))
            if "grpc-tcp" not in times:  # the other ways alone: no Python client call between them
                continue
            t0 = time.perf_counter()
            try:  # an RPC that does no work: the round trip alone (answered NOT_FOUND)
                tcp.cancel("no-such-job")
            except grpc.RpcError:
                transport.append(time.perf_counter() - t0)
        cpu = _cpu_per_call(order, args.cpu_calls) if args.cpu_calls else {}
        bare_channel.close()
        bare.stop(0)
        for client in go.values():
            client.close()
    log.close()
    base = statistics.median(times["in-process"])
    print(f"cuzk's services served by {'grpcio handlers' if args.grpcio_handlers else 'grpc-core call API'}")
    print(f"Cube (1 constraint), {len(times['in-process'])} proofs per way "
          f"({'each behind a random way' if args.back_to_back == 1 else f'{args.back_to_back} back to back, the first not counted'}), "
          "CPU backend, one prove worker")
    # "paired": the median over rounds of the way's time less the in-process proof's of the same
    # round, which drift on the host moves less than the difference of the two medians
    print(f"{'way':<11} {'median ms':>10} {'p90 ms':>8} {'added ms':>9} {'paired ms':>10} {'ratio':>6}")
    for name, ts in times.items():
        med, p90 = statistics.median(ts), statistics.quantiles(ts, n=10)[-1]
        paired = statistics.median(t - b for t, b in zip(ts, times["in-process"]))
        print(f"{name:<11} {med * 1e3:10.2f} {p90 * 1e3:8.2f} {(med - base) * 1e3:9.2f} {paired * 1e3:10.2f} "
              f"{med / base:6.2f}")
    if "bare-grpc" in times:
        bare_med = statistics.median(times["bare-grpc"])
        for name in (w for w in times if w.startswith(("grpc-", "go-"))):
            print(f"{name}: the daemon adds {(statistics.median(times[name]) - bare_med) * 1e3:.2f} ms beyond bare grpcio")
    if "daemon-code" in times:
        print(f"the daemon's own code without gRPC adds {(statistics.median(times['daemon-code']) - base) * 1e3:.2f} ms "
              "to the in-process proof")
    if transport:
        print(f"an RPC doing no work over TCP (CancelProof, NOT_FOUND): median {statistics.median(transport) * 1e3:.2f} ms")
    if cpu:
        roles = sorted({r for per in cpu.values() for r in per}, key=lambda r: -cpu["in-process"].get(r, 0))
        print(f"CPU ms per call of this process's threads, {args.cpu_calls} calls per way in alternated blocks:")
        print(f"{'way':<11} " + " ".join(f"{r:>13}" for r in roles) + f" {'total':>7}")
        for name, per in cpu.items():
            print(f"{name:<11} " + " ".join(f"{per.get(r, 0) * 1e3:13.3f}" for r in roles)
                  + f" {sum(per.values()) * 1e3:7.3f}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


#: thread name prefixes (Python's names; the kernel's for grpc-core's own threads) -> role
_ROLES = (("cuzk-gpu", "prover"), ("cuzk-synth", "synthesis"), ("cuzk-serve-calls", "calls thread"),
          ("cuzk-serve-rpc", "rpc handlers"),
          ("ThreadPoolExecutor", "bare handlers"), ("MainThread", "main"), ("event_engine", "grpc core"),
          ("grpc", "grpc core"))


def _thread_cpu() -> dict:
    """CPU seconds by role of every thread of this process (grpcio's poll threads run ``_serve``)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
            comm = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
        except OSError:  # the thread ended
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        name = names.get(int(tid), comm)
        role = "grpc poll" if name.endswith("(_serve)") else next(
            (r for prefix, r in _ROLES if name.startswith(prefix)), "other")
        out[role] = out.get(role, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _cpu_per_call(order, calls: int, block: int = 50) -> dict:
    """way -> role -> CPU seconds per call, over ``calls`` calls of each way in blocks of
    ``block``, the ways taking turns (so the host's drift hits them alike)."""
    spent = {name: {} for name, _ in order}
    rounds = max(1, calls // block)
    for i in range(rounds):
        k = i % len(order)
        for name, fn in order[k:] + order[:k]:
            before = _thread_cpu()
            for _ in range(block):
                fn()
            after = _thread_cpu()
            for role, t in after.items():
                spent[name][role] = spent[name].get(role, 0.0) + max(0.0, t - before.get(role, 0.0))
    return {name: {r: t / (rounds * block) for r, t in per.items() if t > 0} for name, per in spent.items()}


def _timed(fn):
    """``fn`` as a call that returns its own duration, its answer checked."""
    def call() -> float:
        t0 = time.perf_counter()
        r = fn()
        took = time.perf_counter() - t0
        if hasattr(r, "result"):  # a ProveCircuitResponse
            assert r.result.status == 1, r
        elif isinstance(r, tuple):  # the daemon's own path: (answer fields, texts)
            assert r[0]["status"] == "COMPLETED" and r[1] is not None, r
        return took
    return call


if __name__ == "__main__":
    sys.exit(main())
