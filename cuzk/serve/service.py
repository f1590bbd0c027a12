"""The gRPC services: Curio's ``cuzk.v1.ProvingEngine`` and cuzk's ``cuzk.v1.CircuitProver``, each
RPC one call into :class:`~cuzk.serve.daemon.Daemon`, plus the bearer-token check.

Every refusal is a gRPC status with a message: a :class:`~cuzk.serve.validate.RequestError`
keeps its code (INVALID_ARGUMENT naming the field, NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION, ...),
any other cuzk error of a request is INVALID_ARGUMENT, anything unexpected INTERNAL (logged with
its traceback; the daemon carries on). A waiting RPC (AwaitProof, Prove, ProveCircuit) wakes when
its client goes away, so a dropped connection frees its thread at once and the job goes on.
"""

from __future__ import annotations

import functools
import hmac
import logging
import threading

import grpc

from cuzk.errors import CuzkError
from cuzk.serve.daemon import TIERS
from cuzk.serve.proto.cuzk.v1 import circuits_pb2 as cpb
from cuzk.serve.proto.cuzk.v1 import circuits_pb2_grpc as cpb_grpc
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb
from cuzk.serve.proto.cuzk.v1 import proving_pb2_grpc as pb_grpc
from cuzk.serve.validate import RequestError, invalid

__all__ = ["ProvingEngineService", "CircuitProverService", "TokenAuth", "add_services", "parse_request"]

_log = logging.getLogger("cuzk.serve")


def _rpc(fn):
    """Run one RPC: count it by status code, and turn every exception into a status with a message."""
    method = fn.__name__

    @functools.wraps(fn)
    def run(self, request, context):
        try:
            reply = fn(self, request, context)
        except RequestError as e:
            code, message = e.code, e.message
        except CuzkError as e:
            code, message = "INVALID_ARGUMENT", f"{type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001 - never a crash or a hang for one bad request
            _log.exception("%s failed", method)
            code, message = "INTERNAL", f"{type(e).__name__}: {e}"
        else:
            self.daemon.count_rpc(method, "OK")
            return reply
        self.daemon.count_rpc(method, code)
        context.abort(getattr(grpc.StatusCode, code), message[:8000])

    return run


def _wake(context) -> threading.Event:
    """An event set when the RPC ends from the client's side (cancel, disconnect, deadline)."""
    ev = threading.Event()
    if not context.add_callback(ev.set):
        ev.set()
    return ev


def _answer(fields: dict) -> pb.AwaitProofResponse:
    return pb.AwaitProofResponse(**{**fields, "status": pb.AwaitProofResponse.Status.Value(fields["status"])})


class ProvingEngineService(pb_grpc.ProvingEngineServicer):
    """Curio's API (docs/serve.md says what each call does here)."""

    def __init__(self, daemon):
        self.daemon = daemon

    @_rpc
    def SubmitProof(self, request, context):  # noqa: N802 (the proto's names)
        job = self.daemon.submit(request)
        return pb.SubmitProofResponse(job_id=job.id, queue_position=self.daemon.jobs.queue_position(job),
                                      assigned_gpu=self.daemon.assigned_device(job))

    @_rpc
    def AwaitProof(self, request, context):  # noqa: N802
        return _answer(self.daemon.await_job(request.job_id, request.timeout_ms, _wake(context)))

    @_rpc
    def Prove(self, request, context):  # noqa: N802
        if not request.HasField("submit"):
            raise invalid("submit", "is missing")
        job = self.daemon.submit(request.submit)
        return pb.ProveResponse(result=_answer(self.daemon.await_job(job.id, request.timeout_ms, _wake(context))))

    @_rpc
    def CancelProof(self, request, context):  # noqa: N802
        was_running, cancelled = self.daemon.cancel(request.job_id)
        return pb.CancelProofResponse(was_running=was_running, cancelled=cancelled)

    @_rpc
    def GetStatus(self, request, context):  # noqa: N802
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

    @_rpc
    def GetMetrics(self, request, context):  # noqa: N802
        return pb.GetMetricsResponse(prometheus_text=self.daemon.metrics())

    @_rpc
    def PreloadSRS(self, request, context):  # noqa: N802
        already, ms = self.daemon.preload(request.circuit_id)
        return pb.PreloadSrsResponse(already_loaded=already, load_time_ms=ms)

    @_rpc
    def EvictSRS(self, request, context):  # noqa: N802
        loaded, freed = self.daemon.evict(request.circuit_id)
        return pb.EvictSrsResponse(was_loaded=loaded, freed_bytes=int(freed or 0))


class CircuitProverService(cpb_grpc.CircuitProverServicer):
    """cuzk's extension: any ``[[circuits]]`` entry, snarkjs JSON out."""

    def __init__(self, daemon):
        self.daemon = daemon

    @_rpc
    def ProveCircuit(self, request, context):  # noqa: N802
        fields, texts = self.daemon.prove_circuit(request, _wake(context))
        reply = cpb.ProveCircuitResponse(result=_answer(fields))
        if texts is not None:
            reply.proof_json, reply.public_json, reply.result.proof = texts
        return reply

    @_rpc
    def ListCircuits(self, request, context):  # noqa: N802
        return cpb.ListCircuitsResponse(circuits=[cpb.CircuitInfo(**c) for c in self.daemon.circuit_list()])


class TokenAuth(grpc.ServerInterceptor):
    """Refuse every call without ``authorization: Bearer <token>`` (UNAUTHENTICATED); the token is
    compared in constant time (``hmac.compare_digest``), so its bytes cannot be guessed by timing.
    ``open_methods``: full method names that need no token (the health Check: cuzk/serve/health.py).
    ``on_refusal(method, "UNAUTHENTICATED")`` counts each refusal under the method's short name
    when its full name is in ``methods`` (those the server serves), else under ``"unknown"``: a
    refusal comes before grpc routes the call, and a label per name a client makes up would let
    anyone without the token grow the daemon's memory and its /metrics without bound."""

    def __init__(self, token: str, on_refusal=None, *, open_methods=(), methods=()):
        self._want = f"Bearer {token}".encode()
        self._on_refusal = on_refusal
        self._open = frozenset(open_methods)
        self._methods = frozenset(methods)

        def deny(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token (metadata 'authorization')")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def set_token(self, token: str) -> None:
        """Use ``token`` from the next call on (a reload); calls in flight are not affected."""
        self._want = f"Bearer {token}".encode()

    def intercept_service(self, continuation, handler_call_details):
        if handler_call_details.method in self._open:
            return continuation(handler_call_details)
        got = next((v for k, v in handler_call_details.invocation_metadata or () if k == "authorization"), "")
        got = got.encode() if isinstance(got, str) else bytes(got)
        if hmac.compare_digest(got, self._want):  # one read of _want: set_token swaps it whole
            return continuation(handler_call_details)
        if self._on_refusal is not None:
            method = handler_call_details.method
            self._on_refusal(method.rpartition("/")[2] if method in self._methods else "unknown", "UNAUTHENTICATED")
        return self._deny


def parse_request(req_cls, raw: bytes, context, count_rpc, method: str):
    """``req_cls`` parsed from a call's raw bytes, or the call aborted INVALID_ARGUMENT naming the
    message type (counted under ``method``). Every service of the daemon parses its requests
    here, not through grpc: grpc's own parsing answers INTERNAL and, in grpcio 1.85, keeps each
    such call's server state alive for good (the long fuzz run's RSS grew ~2 KB per request until
    this was changed)."""
    from google.protobuf.message import DecodeError

    try:
        return req_cls.FromString(raw)
    except (DecodeError, ValueError, RecursionError) as e:
        count_rpc(method, "INVALID_ARGUMENT")
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      f"request: the bytes are not a {req_cls.DESCRIPTOR.full_name} message ({e})")


def _handlers(service, module, servicer):
    """Method handlers that take the request's raw bytes and parse them with :func:`parse_request`."""
    out = {}
    for m in module.DESCRIPTOR.services_by_name[service].methods:
        req_cls, resp_cls = getattr(module, m.input_type.name), getattr(module, m.output_type.name)
        fn = getattr(servicer, m.name)

        def handle(raw, context, fn=fn, req_cls=req_cls, name=m.name):
            return fn(parse_request(req_cls, raw, context, servicer.daemon.count_rpc, name), context)

        out[m.name] = grpc.unary_unary_rpc_method_handler(handle, request_deserializer=None,
                                                          response_serializer=resp_cls.SerializeToString)
    return grpc.method_handlers_generic_handler(f"cuzk.v1.{service}", out)


def add_services(server, daemon) -> None:
    server.add_generic_rpc_handlers((
        _handlers("ProvingEngine", pb, ProvingEngineService(daemon)),
        _handlers("CircuitProver", cpb, CircuitProverService(daemon)),
    ))
