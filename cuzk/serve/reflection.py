"""gRPC server reflection (``grpc.reflection.v1alpha.ServerReflection``) for ``cuzk serve``, on
when ``[daemon] reflection = true`` (the embedded default has it): ``grpcurl`` and other generic
clients then list the daemon's services and call them without the ``.proto`` files.

The descriptors are grpcio-reflection's ``ReflectionServicer`` reading protobuf's default pool,
where the committed stubs (cuzk/serve/proto/cuzk/v1) and grpc_health register themselves. Around
it, as for the health Watch (cuzk/serve/health.py): requests parsed from raw bytes (bad bytes end
the stream INVALID_ARGUMENT), at most cuzk/serve/health.py's ``stream_bound`` streams at once
(each holds a handler thread until the client closes it; RESOURCE_EXHAUSTED beyond), each stream counted in
``cuzk_serve_rpcs_total``. The bearer token, when set, is needed as for any call.
"""

from __future__ import annotations

import threading

import grpc
from google.protobuf.message import DecodeError
from grpc_reflection.v1alpha import reflection as _reflection
from grpc_reflection.v1alpha import reflection_pb2

from cuzk.serve.health import MAX_STREAMS

__all__ = ["Reflection", "SERVICE_NAMES"]

#: what ``list_services`` answers: every service the daemon serves
SERVICE_NAMES = ("cuzk.v1.ProvingEngine", "cuzk.v1.CircuitProver", "grpc.health.v1.Health", _reflection.SERVICE_NAME)
_METHOD = "ServerReflectionInfo"


class Reflection:
    """The reflection service of one daemon; ``count_rpc(method, code)`` counts each stream."""

    def __init__(self, count_rpc, max_streams: int = MAX_STREAMS):
        self._servicer = _reflection.ReflectionServicer(SERVICE_NAMES)
        self.max_streams = max_streams
        self._count = count_rpc
        self._lock = threading.Lock()
        self.streams = 0  #: streams open now

    def _info(self, raw_requests, context):
        with self._lock:
            full = self.streams >= self.max_streams
            if not full:
                self.streams += 1
        if full:
            self._count(_METHOD, "RESOURCE_EXHAUSTED")
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"reflection: at most {self.max_streams} streams at once")
        if not context.add_callback(self._ended):
            self._ended()  # the call had already ended
            return
        self._count(_METHOD, "OK")

        def requests():
            for raw in raw_requests:
                try:
                    yield reflection_pb2.ServerReflectionRequest.FromString(raw)
                except (DecodeError, ValueError, RecursionError) as e:
                    self._count(_METHOD, "INVALID_ARGUMENT")
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "request: the bytes are not a "
                                  f"grpc.reflection.v1alpha.ServerReflectionRequest message ({e})")

        yield from self._servicer.ServerReflectionInfo(requests(), context)

    def _ended(self) -> None:
        with self._lock:
            self.streams -= 1

    def handler(self) -> grpc.GenericRpcHandler:
        """The service's method handler, for ``server.add_generic_rpc_handlers``."""
        return grpc.method_handlers_generic_handler(_reflection.SERVICE_NAME, {
            _METHOD: grpc.stream_stream_rpc_method_handler(
                self._info, response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString)})
