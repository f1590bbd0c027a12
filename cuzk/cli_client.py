"""``cuzk client``: an operator's commands against a running ``cuzk serve`` (docs/serve.md).

    cuzk client status                   # backend, uptime, devices, keys by tier, queues, totals
    cuzk client status --json            # the daemon's full status (the same as HTTP /status)
    cuzk client health                   # SERVING (exit 0) or NOT_SERVING (exit 1): for scripts
    cuzk client metrics                  # the Prometheus text
    cuzk client preload wpost-32g        # load a key ahead; evict frees it
    cuzk client cancel JOB_ID
    cuzk client prove-circuit cube --inputs '{"x": 3, "out": 35}' --out proof/   # proof.json, public.json

``--address`` (default: the embedded configuration's Unix socket, ``unix://$XDG_RUNTIME_DIR/cuzk/cuzk.sock``),
``--token-file`` (the daemon's ``[auth] token_file``), ``--tls-ca`` (TLS, trusting this CA;
``--tls-cert`` / ``--tls-key`` when the daemon asks for client certificates). A refused call
prints its gRPC status and message and exits 1.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from cuzk.cli_keys import size_text

__all__ = ["add_client_parser"]


def _seconds(text: str) -> float:
    """argparse type: a positive finite number of seconds (-1, nan or inf failed every call as
    DEADLINE_EXCEEDED, which did not name the argument)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not 0 < v < math.inf:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return v


def _client(args):
    from cuzk.serve import Client
    from cuzk.serve.config import runtime_dir

    token = None
    if args.token_file:
        token = Path(args.token_file).read_text(encoding="utf-8").strip()
    tls = None
    if args.tls_ca or args.tls_cert or args.tls_key:  # a key alone is refused, not dropped (Client)
        tls = {k: v for k, v in (("ca", args.tls_ca), ("cert", args.tls_cert), ("key", args.tls_key)) if v}
    address = args.address or f"unix://{runtime_dir()}/cuzk/cuzk.sock"
    return Client(address, token=token, tls=tls, timeout=args.timeout)


def _status(c, args) -> int:
    if args.json:
        print(json.dumps(c.status_json(), indent=2, sort_keys=True))
        return 0
    st = c.status()
    print(f"backend {st.backend}, up {st.uptime_seconds} s, proofs completed {st.total_proofs_completed}, "
          f"failed {st.total_proofs_failed}")
    limit = size_text(st.pinned_memory_limit_bytes) if st.pinned_memory_limit_bytes else "unlimited"
    print(f"memory budget: {size_text(st.pinned_memory_bytes)} of {limit}")
    for g in st.gpus:
        job = f"{g.current_job_id} ({g.current_proof_kind})" if g.current_job_id else "idle"
        print(f"device {g.ordinal} {g.name}: {job}")
    for k in st.loaded_srs:
        tier = type(k).Tier.Name(k.tier)
        print(f"key {k.circuit_id}: {tier}, {size_text(k.size_bytes)}, {k.ref_count} queued or running")
    for q in st.queues:
        print(f"queue {q.proof_kind}: {q.pending} pending, {q.in_progress} in progress")
    return 0


def _health(c, args) -> int:
    status = c.health(args.service)
    print(status)
    return 0 if status == "SERVING" else 1


def _prove_circuit(c, args) -> int:
    inputs = None
    if args.inputs is not None:
        inputs = Path(args.inputs[1:]).read_text(encoding="utf-8") if args.inputs.startswith("@") else args.inputs
    r = c.prove_circuit(args.circuit, inputs, wtns=args.wtns, request_id=args.request_id or "")
    status = type(r.result).Status.Name(r.result.status)
    if status != "COMPLETED":
        print(f"job {r.result.job_id}: {status}: {r.result.error_message}", file=sys.stderr)
        return 1
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "proof.json").write_text(r.proof_json + "\n", encoding="utf-8")
        (out / "public.json").write_text(r.public_json + "\n", encoding="utf-8")
        print(f"job {r.result.job_id}: {out / 'proof.json'}, {out / 'public.json'} ({r.result.total_ms} ms)")
    else:
        print(json.dumps({"job_id": r.result.job_id, "proof": json.loads(r.proof_json),
                          "public": json.loads(r.public_json), "total_ms": r.result.total_ms}))
    return 0


def _preload(c, args) -> int:
    r = c.preload(args.id)
    print("already loaded" if r.already_loaded else f"loaded in {r.load_time_ms} ms")
    return 0


def _evict(c, args) -> int:
    r = c.evict(args.id)
    print(f"freed {size_text(r.freed_bytes)}" if r.was_loaded else "was not loaded")
    return 0


def _cancel(c, args) -> int:
    r = c.cancel(args.job_id)
    print("cancelled" if r.cancelled else "running: it finishes" if r.was_running else "already ended")
    return 0


def _metrics(c, args) -> int:
    print(c.metrics(), end="")
    return 0


_COMMANDS = {"status": _status, "health": _health, "metrics": _metrics, "preload": _preload, "evict": _evict,
             "cancel": _cancel, "prove-circuit": _prove_circuit}


def _cmd_client(args) -> int:
    import importlib.util

    if importlib.util.find_spec("grpc") is None:  # the extra's absence, said plainly
        print("cuzk client: error: grpcio is not installed: pip install 'cuzk[serve]'", file=sys.stderr)
        return 1
    from cuzk.serve.client import RpcError

    try:
        with _client(args) as c:
            return _COMMANDS[args.client_command](c, args)
    except RpcError as e:
        print(f"cuzk client {args.client_command}: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1


def add_client_parser(subparsers) -> argparse.ArgumentParser:
    c = subparsers.add_parser("client", help="talk to a running cuzk serve: status, health, metrics, keys, "
                                             "cancel, prove a configured circuit")
    c.add_argument("--address", "-a",
                   help="host:port or unix:///path (default: the embedded configuration's socket)")
    c.add_argument("--token-file", help="the bearer token's file ([auth] token_file)")
    c.add_argument("--tls-ca", help="use TLS, trusting this CA certificate file")
    c.add_argument("--tls-cert", help="client certificate (a daemon with [tls] client_ca)")
    c.add_argument("--tls-key", help="the client certificate's key")
    c.add_argument("--timeout", type=_seconds, default=None, help="seconds per call (default: none)")
    sub = c.add_subparsers(dest="client_command", required=True)
    s = sub.add_parser("status", help="devices, keys by tier, queues, totals")
    s.add_argument("--json", action="store_true", help="the daemon's full status as JSON")
    h = sub.add_parser("health", help="SERVING (exit 0) or NOT_SERVING (exit 1)")
    h.add_argument("service", nargs="?", default="", help='"" (the daemon), cuzk.v1.ProvingEngine, cuzk.v1.CircuitProver')
    sub.add_parser("metrics", help="the Prometheus text")
    for name, what in (("preload", "load a circuit's key ahead"), ("evict", "free a circuit's key")):
        sub.add_parser(name, help=what).add_argument("id", help="a circuit id (wpost-32g, ...) or [[circuits]] name")
    sub.add_parser("cancel", help="cancel a queued job").add_argument("job_id")
    p = sub.add_parser("prove-circuit", help="prove a [[circuits]] entry; snarkjs proof.json / public.json")
    p.add_argument("circuit")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--inputs", help="the inputs as JSON text, or @FILE")
    src.add_argument("--wtns", help="a circom .wtns file")
    p.add_argument("--out", help="write proof.json and public.json into this folder (default: print one JSON object)")
    p.add_argument("--request-id", help="an idempotency key (a retry with it gets the same job)")
    c.set_defaults(fn=_cmd_client)
    return c
