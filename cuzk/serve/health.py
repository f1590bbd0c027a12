"""gRPC's standard health service (``grpc.health.v1.Health``) for ``cuzk serve``: what load
balancers, Kubernetes' gRPC probes, ``grpc_health_probe`` and grpc clients with health checking
ask before they send work.

The service names answered are ``""`` (the daemon as a whole), ``cuzk.v1.ProvingEngine`` and
``cuzk.v1.CircuitProver``: SERVING from start until the graceful stop begins, then NOT_SERVING
for good (watchers are told at once, before the daemon stops taking calls); any other name:
NOT_FOUND from Check (naming the known ones), SERVICE_UNKNOWN from Watch.

The statuses and the Watch streams are grpcio-health-checking's ``HealthServicer`` (gRPC's own
implementation of the protocol). This module adds what the daemon needs around it:

* requests parsed from their raw bytes, as every other RPC here (cuzk/serve/service.py
  ``_handlers`` says why): bad bytes are INVALID_ARGUMENT, not a call state grpc keeps;
* Watch in grpc's non-blocking mode, so a stream holds no handler thread, and at most
  :func:`stream_bound` streams at once: each holds one of ``[daemon] max_concurrent_rpcs``
  until it ends, so more would let watchers crowd out proofs (RESOURCE_EXHAUSTED beyond);
* every call counted in ``cuzk_serve_rpcs_total`` like the others.

Check needs no bearer token (cuzk/serve/service.py ``TokenAuth``): Kubernetes' probe sends no
metadata, and the answer says only up or down. Watch needs it.
"""

from __future__ import annotations

import threading

import grpc
from grpc_health.v1 import health as _health
from grpc_health.v1 import health_pb2

from cuzk.serve.service import parse_request

__all__ = ["Health", "SERVICES", "MAX_STREAMS", "CHECK_METHOD", "StreamSlots", "stream_bound"]

SERVICES = ("", "cuzk.v1.ProvingEngine", "cuzk.v1.CircuitProver")
CHECK_METHOD = "/grpc.health.v1.Health/Check"  #: the one method TokenAuth lets through without a token
MAX_STREAMS = 16  #: the most health Watch streams, and the most reflection streams, at once


def stream_bound(max_concurrent_rpcs: int) -> int:
    """How many long-lived streams of one kind (health Watch, reflection) may be open at once: 16,
    or an eighth of the daemon's concurrent calls when that is less (at least 1), so the two
    kinds together hold at most a quarter of the calls proofs need."""
    return max(1, min(MAX_STREAMS, max_concurrent_rpcs // 8))


class StreamSlots:
    """At most ``bound`` long-lived streams of one kind open at once (health Watch, reflection);
    a slot is given back when its call ends, however it ends."""

    def __init__(self, bound: int, count_rpc, method: str, refusal: str):
        self.bound = bound
        self.open = 0  #: streams open now
        self._count, self._method, self._refusal = count_rpc, method, refusal
        self._lock = threading.Lock()

    def take(self, context) -> bool:
        """Hold a slot until the call ends; aborts RESOURCE_EXHAUSTED when all are held. False when
        the call had already ended (nothing held, nothing to answer)."""
        with self._lock:
            full = self.open >= self.bound
            if not full:
                self.open += 1
        if full:
            self._count(self._method, "RESOURCE_EXHAUSTED")
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, self._refusal.format(bound=self.bound))
        if not context.add_callback(self._give_back):
            self._give_back()
            return False
        self._count(self._method, "OK")
        return True

    def _give_back(self) -> None:
        with self._lock:
            self.open -= 1


class Health:
    """The health service of one daemon; ``count_rpc(method, code)`` counts each call;
    ``max_watches``: :func:`stream_bound` of the daemon's concurrent calls."""

    def __init__(self, count_rpc, max_watches: int = MAX_STREAMS):
        self._servicer = _health.HealthServicer(experimental_non_blocking=True)
        self._count = count_rpc
        self._watches = StreamSlots(max_watches, count_rpc, "Watch",
                                    "health: at most {bound} Watch streams at once; use Check")
        for name in SERVICES:
            self._servicer.set(name, health_pb2.HealthCheckResponse.SERVING)

    @property
    def watches(self) -> int:
        """Watch streams open now."""
        return self._watches.open

    @property
    def max_watches(self) -> int:
        return self._watches.bound

    def stop(self) -> None:
        """NOT_SERVING for every service from now on (the graceful stop's first step)."""
        self._servicer.enter_graceful_shutdown()

    def status(self, service: str = "") -> str:
        """The status name a Check of ``service`` answers ("SERVING", "NOT_SERVING"), or "NOT_FOUND"."""
        value = self._servicer._server_status.get(service)  # grpc_health keeps no public getter
        return "NOT_FOUND" if value is None else health_pb2.HealthCheckResponse.ServingStatus.Name(value)

    def _check(self, raw, context):
        request = parse_request(health_pb2.HealthCheckRequest, raw, context, self._count, "Check")
        if self.status(request.service) == "NOT_FOUND":  # grpc_health's own answer has no message
            self._count("Check", "NOT_FOUND")
            context.abort(grpc.StatusCode.NOT_FOUND, f"health: no service {request.service[:200]!r} (known: "
                                                     f"{', '.join(repr(s) for s in SERVICES)})")
        self._count("Check", "OK")
        return self._servicer.Check(request, context)

    def _watch(self, raw, context, send_response_callback=None):
        request = parse_request(health_pb2.HealthCheckRequest, raw, context, self._count, "Watch")
        if self._watches.take(context):
            self._servicer.Watch(request, context, send_response_callback)

    # grpcio's sync server calls a behavior marked so with a send callback and frees its thread
    _watch.experimental_non_blocking = True

    def handler(self) -> grpc.GenericRpcHandler:
        """The service's method handlers, for ``server.add_generic_rpc_handlers``."""
        serialize = health_pb2.HealthCheckResponse.SerializeToString
        return grpc.method_handlers_generic_handler(_health.SERVICE_NAME, {
            "Check": grpc.unary_unary_rpc_method_handler(self._check, response_serializer=serialize),
            "Watch": grpc.unary_stream_rpc_method_handler(self._watch, response_serializer=serialize),
        })
