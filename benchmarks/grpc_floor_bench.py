"""The floor under ``cuzk serve``'s overhead on this host: what one gRPC call costs with no daemon
behind it, against a plain TCP round trip between the same two processes.

A server process (grpcio's sync server, the daemon's latency option, handlers that return one
byte at once or after sleeping 6 ms) and this client process; the ways alternate call by call:

* tcp ping-pong: one byte over a loopback TCP socket (TCP_NODELAY), Python on both ends;
* grpc no-op: a unary call whose handler returns at once, in a tight loop of its own first and
  then alternated with the 6 ms calls;
* grpc 6 ms handler: a unary call whose handler sleeps 6 ms (the length of a Cube proof through
  the Engine), less a 6 ms sleep timed in this process.

What grpcio adds over the socket is its own threads handing the call along (poll thread, pool
thread, the reply back): on a host where that is most of a millisecond, no daemon behind grpcio
can add under it (docs/perf/serve.md).

    .venv/bin/python benchmarks/grpc_floor_bench.py --calls 600
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

from cuzk.serve.config import LATENCY_OPTION, NO_RETRIES_OPTION

_SLEEP = 0.006


def serve() -> None:
    """The server process: prints its gRPC and TCP ports, serves until stdin closes."""
    handlers = {"Noop": lambda _r, _c: b"x", "Sleep": lambda _r, _c: (time.sleep(_SLEEP), b"x")[1]}
    srv = grpc.server(ThreadPoolExecutor(4), options=[("grpc.so_reuseport", 0), LATENCY_OPTION], handlers=[
        grpc.method_handlers_generic_handler("bench.Floor", {k: grpc.unary_unary_rpc_method_handler(v)
                                                             for k, v in handlers.items()})])
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    lis = socket.create_server(("127.0.0.1", 0))
    print(port, lis.getsockname()[1], flush=True)
    conn, _ = lis.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while data := conn.recv(64):
        conn.sendall(data)
    srv.stop(0)


def _median_ms(ts) -> float:
    return statistics.median(ts) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=600, help="calls per way")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve()
        return 0
    child = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        grpc_port, tcp_port = child.stdout.readline().split()
        sock = socket.create_connection(("127.0.0.1", int(tcp_port)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}", options=[LATENCY_OPTION, NO_RETRIES_OPTION])
        noop, slow = channel.unary_unary("/bench.Floor/Noop"), channel.unary_unary("/bench.Floor/Sleep")

        def ping():
            sock.sendall(b"x")
            sock.recv(64)

        def timed(fn):
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0

        for fn in (ping, lambda: noop(b""), lambda: slow(b"")):
            for _ in range(50):
                fn()
        tight = [timed(lambda: noop(b"")) for _ in range(args.calls)]
        times = {"tcp": [], "between": [], "slow": [], "sleep": []}
        for _ in range(args.calls):
            times["tcp"].append(timed(ping))
            times["slow"].append(timed(lambda: slow(b"")))
            times["between"].append(timed(lambda: noop(b"")))
            times["sleep"].append(timed(lambda: time.sleep(_SLEEP)))
        channel.close()
        sock.close()
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    print(f"{args.calls} calls per way, client and server in two processes, loopback")
    print(f"tcp ping-pong                      {_median_ms(times['tcp']):7.3f} ms")
    print(f"grpc no-op, tight loop             {_median_ms(tight):7.3f} ms")
    print(f"grpc no-op, between 6 ms calls     {_median_ms(times['between']):7.3f} ms")
    added = _median_ms(times["slow"]) - _median_ms(times["sleep"])
    print(f"grpc 6 ms handler, beyond the 6 ms {added:7.3f} ms")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
