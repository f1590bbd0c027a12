"""The gRPC services: Curio's ``cuzk.v1.ProvingEngine`` and cuzk's ``cuzk.v1.CircuitProver``, each
RPC one call into :class:`~cuzk.serve.daemon.Daemon`, plus the bearer-token check.

Every refusal is a gRPC status with a message: a :class:`~cuzk.serve.validate.RequestError`
keeps its code (INVALID_ARGUMENT naming the field, NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION, ...),
any other cuzk error of a request is INVALID_ARGUMENT, anything unexpected INTERNAL (logged with
its traceback; the daemon carries on).

Each RPC is written once, as a method that takes the parsed request and returns the reply or,
for a call that waits on a job (AwaitProof, Prove, ProveCircuit), a
:class:`~cuzk.serve.pending.Pending`. Two transports serve them: :func:`direct_handlers` on
grpc-core's call API (cuzk/serve/direct.py: the answer of a waiting call is sent by the thread
that ends its job), and :func:`add_blocking_services`, grpcio's own handlers, where the handler's
thread waits and wakes when its client goes away (a dropped connection frees the thread at once;
the job goes on either way).
"""

from __future__ import annotations

import hmac
import logging
import threading

import grpc

from cuzk.errors import CuzkError
from cuzk.serve.daemon import TIERS
from cuzk.serve.pending import Pending
from cuzk.serve.proto.cuzk.v1 import circuits_pb2 as cpb
from cuzk.serve.proto.cuzk.v1 import circuits_pb2_grpc as cpb_grpc
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb
from cuzk.serve.proto.cuzk.v1 import proving_pb2_grpc as pb_grpc
from cuzk.serve.validate import RequestError, invalid, status_text

__all__ = ["ProvingEngineService", "CircuitProverService", "TokenAuth", "add_blocking_services", "direct_handlers",
           "parse_request", "QUICK_METHODS"]

_log = logging.getLogger("cuzk.serve")


def _guarded(method: str, thunk):
    """``("OK", thunk())``, or ``(code, message)`` for the exception it raised (see the module doc)."""
    try:
        return "OK", thunk()
    except RequestError as e:
        return e.code, e.message
    except CuzkError as e:
        return "INVALID_ARGUMENT", f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - never a crash or a hang for one bad request
        _log.exception("%s failed", method)
        return "INTERNAL", f"{type(e).__name__}: {e}"


def _wake(context) -> threading.Event:
    """An event set when the RPC ends from the client's side (cancel, disconnect, deadline)."""
    ev = threading.Event()
    if not context.add_callback(ev.set):
        ev.set()
    return ev


def _answer(fields: dict) -> pb.AwaitProofResponse:
    return pb.AwaitProofResponse(**fields)  # the status by its name: protobuf takes enum names


class ProvingEngineService(pb_grpc.ProvingEngineServicer):
    """Curio's API (docs/serve.md says what each call does here)."""

    def __init__(self, daemon):
        self.daemon = daemon

    def SubmitProof(self, request):  # noqa: N802 (the proto's names)
        job = self.daemon.submit(request)
        return pb.SubmitProofResponse(job_id=job.id, queue_position=self.daemon.jobs.queue_position(job),
                                      assigned_gpu=self.daemon.assigned_device(job))

    def AwaitProof(self, request):  # noqa: N802
        return self.daemon.await_job(request.job_id, request.timeout_ms).then(_answer)

    def Prove(self, request):  # noqa: N802
        if not request.HasField("submit"):
            raise invalid("submit", "is missing")
        job = self.daemon.submit(request.submit)
        return self.daemon.await_job(job.id, request.timeout_ms).then(lambda f: pb.ProveResponse(result=f))

    def CancelProof(self, request):  # noqa: N802
        was_running, cancelled = self.daemon.cancel(request.job_id)
        return pb.CancelProofResponse(was_running=was_running, cancelled=cancelled)

    def GetStatus(self, request):  # noqa: N802
        d = self.daemon
        st = d.status()
        eng = st["engine"]
        devices = (eng["memory"].get("devices") or {})
        gpus = {}
        for w in eng["workers"]:
            if w["kind"] != "prove":
                continue
            ordinal = w["device"] if w["device"] is not None else 0
            g = gpus.setdefault(ordinal, pb.GPUStatus(
                ordinal=ordinal, name="cpu" if w["device"] is None else f"cuda:{ordinal}",
                vram_total_bytes=int((devices.get(ordinal) or devices.get(str(ordinal)) or {}).get("total") or 0)))
            if w["job"] is not None and not g.current_job_id:
                job = next((j for j in d.jobs.snapshot() if j.engine_future is not None
                            and str(j.engine_future.job_id) == str(w["job"])), None)
                g.current_job_id = job.id if job is not None else str(w["job"])
                g.current_proof_kind = job.kind if job is not None else (w["circuit"] or "")
        srs = []
        for name, key in eng["keys"].items():
            c = eng["circuits"][name]
            refs = sum(c[s] for s in ("queued", "synthesizing", "waiting_for_gpu", "proving"))
            srs.append(pb.SRSStatus(circuit_id=name, tier=pb.SRSStatus.Tier.Value(TIERS.get(key["tier"], "COLD")),
                                    size_bytes=int(key["bytes"] or 0), ref_count=refs))
        queues = [pb.QueueStatus(proof_kind=k, pending=q["pending"], in_progress=q["in_progress"])
                  for k, q in sorted(st["queues"].items())]
        return pb.GetStatusResponse(
            gpus=[gpus[k] for k in sorted(gpus)], loaded_srs=srs, queues=queues,
            total_proofs_completed=st["jobs"]["completed"], total_proofs_failed=st["jobs"]["failed"],
            uptime_seconds=int(st["uptime_s"]), pinned_memory_bytes=int(eng["memory"]["reserved"] or 0),
            pinned_memory_limit_bytes=int(eng["memory"]["budget"] or 0), backend=eng["backend"],
            engine_status_json=d.status_json())

    def GetMetrics(self, request):  # noqa: N802
        return pb.GetMetricsResponse(prometheus_text=self.daemon.metrics())

    def PreloadSRS(self, request):  # noqa: N802
        already, ms = self.daemon.preload(request.circuit_id)
        return pb.PreloadSrsResponse(already_loaded=already, load_time_ms=ms)

    def EvictSRS(self, request):  # noqa: N802
        loaded, freed = self.daemon.evict(request.circuit_id)
        return pb.EvictSrsResponse(was_loaded=loaded, freed_bytes=int(freed or 0))


class CircuitProverService(cpb_grpc.CircuitProverServicer):
    """cuzk's extension: any ``[[circuits]]`` entry, snarkjs JSON out."""

    def __init__(self, daemon):
        self.daemon = daemon

    def ProveCircuit(self, request):  # noqa: N802
        return self.daemon.prove_circuit(request).then(_circuit_reply)

    def ListCircuits(self, request):  # noqa: N802
        return cpb.ListCircuitsResponse(circuits=[cpb.CircuitInfo(**c) for c in self.daemon.circuit_list()])


def _circuit_reply(answer) -> cpb.ProveCircuitResponse:
    fields, texts = answer
    if texts is None:
        return cpb.ProveCircuitResponse(result=fields)
    # one constructor from plain values (the result as a dict, its status by name): written on the
    # prover's thread as the proof ends, where each message built and copied costs microseconds
    return cpb.ProveCircuitResponse(result={**fields, "proof": texts.proof_bytes}, proof_json=texts.proof_json,
                                    public_json=texts.public_json)


class TokenAuth(grpc.ServerInterceptor):
    """Refuse every call without ``authorization: Bearer <token>`` (UNAUTHENTICATED); the token is
    compared in constant time (``hmac.compare_digest``), so its bytes cannot be guessed by timing.
    ``open_methods``: full method names that need no token (the health Check: cuzk/serve/health.py).
    ``on_refusal(method, "UNAUTHENTICATED")`` counts each refusal under the method's short name
    when its full name is in ``methods`` (those the server serves), else under ``"unknown"``: a
    refusal comes before grpc routes the call, and a label per name a client makes up would let
    anyone without the token grow the daemon's memory and its /metrics without bound."""

    MESSAGE = "missing or wrong bearer token (metadata 'authorization')"

    def __init__(self, token: str, on_refusal=None, *, open_methods=(), methods=()):
        self._want = f"Bearer {token}".encode()
        self._on_refusal = on_refusal
        self._open = frozenset(open_methods)
        self._methods = frozenset(methods)

        def deny(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, self.MESSAGE)

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def set_token(self, token: str) -> None:
        """Use ``token`` from the next call on (a reload); calls in flight are not affected."""
        self._want = f"Bearer {token}".encode()

    def allows(self, method: str, metadata) -> bool:
        """Whether a call of ``method`` (full name) with ``metadata`` may go on; a refusal is counted."""
        if method in self._open:
            return True
        got = next((v for k, v in metadata or () if k == "authorization"), "")
        got = got.encode() if isinstance(got, str) else bytes(got)
        if hmac.compare_digest(got, self._want):  # one read of _want: set_token swaps it whole
            return True
        if self._on_refusal is not None:
            self._on_refusal(method.rpartition("/")[2] if method in self._methods else "unknown", "UNAUTHENTICATED")
        return False

    def refusal(self, method: str, metadata):
        """None, or the status a call refused by :meth:`allows` gets (cuzk/serve/direct.py's ``admit``)."""
        return None if self.allows(method, metadata) else ("UNAUTHENTICATED", self.MESSAGE)

    def intercept_service(self, continuation, handler_call_details):
        if self.allows(handler_call_details.method, handler_call_details.invocation_metadata):
            return continuation(handler_call_details)
        return self._deny


def _parse(req_cls, raw: bytes):
    """``(message, None)``, or ``(None, why)`` when ``raw`` is not a ``req_cls`` message."""
    from google.protobuf.message import DecodeError

    try:
        return req_cls.FromString(raw), None
    except (DecodeError, ValueError, RecursionError) as e:
        return None, f"request: the bytes are not a {req_cls.DESCRIPTOR.full_name} message ({e})"


def parse_request(req_cls, raw: bytes, context, count_rpc, method: str):
    """``req_cls`` parsed from a call's raw bytes, or the call aborted INVALID_ARGUMENT naming the
    message type (counted under ``method``). Every service of the daemon parses its requests
    itself, not through grpc: grpc's own parsing answers INTERNAL and, in grpcio 1.85, keeps each
    such call's server state alive for good (the long fuzz run's RSS grew ~2 KB per request until
    this was changed)."""
    request, why = _parse(req_cls, raw)
    if why is not None:
        count_rpc(method, "INVALID_ARGUMENT")
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, why)
    return request


def _methods(daemon):
    """(service, method name, request class, response class, the servicer's method) of every RPC."""
    for service, module, servicer in (("ProvingEngine", pb, ProvingEngineService(daemon)),
                                      ("CircuitProver", cpb, CircuitProverService(daemon))):
        for m in module.DESCRIPTOR.services_by_name[service].methods:
            yield (service, m.name, getattr(module, m.input_type.name), getattr(module, m.output_type.name),
                   getattr(servicer, m.name))


def add_blocking_services(server, daemon) -> None:
    """The services as grpcio handlers on ``server``: the transport where grpc-core's call API is
    not available (cuzk/serve/direct.py)."""
    count = daemon.count_rpc
    per_service: dict = {}
    for service, name, req_cls, resp_cls, fn in _methods(daemon):
        def handle(raw, context, fn=fn, req_cls=req_cls, name=name):
            request = parse_request(req_cls, raw, context, count, name)
            code, out = _guarded(name, lambda: fn(request))
            if code == "OK" and isinstance(out, Pending):
                code, out = _guarded(name, lambda: out.wait(_wake(context)))
            count(name, code)
            if code != "OK":
                context.abort(getattr(grpc.StatusCode, code), status_text(out))
            return out

        per_service.setdefault(service, {})[name] = grpc.unary_unary_rpc_method_handler(
            handle, request_deserializer=None, response_serializer=resp_cls.SerializeToString)
    server.add_generic_rpc_handlers(tuple(grpc.method_handlers_generic_handler(f"cuzk.v1.{service}", handlers)
                                          for service, handlers in per_service.items()))


#: methods whose handlers never block (no file reads, no key loads, no waits), so cuzk/serve/direct.py
#: may run them on its calls' thread for a small message; a Filecoin submit is not among them (its
#: first use registers the circuit, and its payloads are parsed at length)
QUICK_METHODS = ("/cuzk.v1.CircuitProver/ProveCircuit", "/cuzk.v1.ProvingEngine/AwaitProof",
                 "/cuzk.v1.ProvingEngine/CancelProof")


def direct_handlers(daemon, timers) -> dict:
    """Full method name -> ``handler(raw, call)`` for cuzk/serve/direct.py: the reply of a waiting
    call is built and sent by the thread that ends its job, or by ``timers``' thread at its
    timeout; a client gone away first leaves nothing behind."""
    count = daemon.count_rpc
    out = {}
    for service, name, req_cls, _resp_cls, fn in _methods(daemon):
        def respond(call, code, reply, name=name):
            if code == "OK":
                code, reply = _guarded(name, reply.SerializeToString)
            count(name, code)
            if code == "OK":
                call.reply(reply)
            else:
                call.abort(code, reply)

        def handle(raw, call, fn=fn, req_cls=req_cls, name=name, respond=respond):
            request, why = _parse(req_cls, raw)
            if why is not None:
                count(name, "INVALID_ARGUMENT")
                call.abort("INVALID_ARGUMENT", why)
                return
            code, reply = _guarded(name, lambda: fn(request))
            if code == "OK" and isinstance(reply, Pending):
                call.on_gone(reply.when_ready(lambda build: respond(call, *_guarded(name, build)), timers))
                return
            respond(call, code, reply)

        out[f"/cuzk.v1.{service}/{name}"] = handle
    return out
