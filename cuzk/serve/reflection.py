"""gRPC server reflection (``grpc.reflection.v1alpha.ServerReflection``) for ``cuzk serve``, on
when ``[daemon] reflection = true`` (the embedded default has it): ``grpcurl`` and other generic
clients then list the daemon's services and call them without the ``.proto`` files.

The descriptors are grpcio-reflection's ``ReflectionServicer`` reading protobuf's default pool,
where the committed stubs (cuzk/serve/proto/cuzk/v1) and grpc_health register themselves. Around
it, as for the health Watch (cuzk/serve/health.py): requests parsed from raw bytes (bad bytes end
the stream INVALID_ARGUMENT), at most ``stream_bound`` streams at once (each holds a handler
thread until the client closes it; RESOURCE_EXHAUSTED beyond), each stream counted in
``cuzk_serve_rpcs_total``. The bearer token, when set, is needed as for any call.
"""

from __future__ import annotations

import grpc
from grpc_reflection.v1alpha import reflection as _reflection
from grpc_reflection.v1alpha import reflection_pb2

from cuzk.serve.health import MAX_STREAMS, StreamSlots
from cuzk.serve.service import parse_request

__all__ = ["Reflection", "SERVICE_NAMES"]

#: what ``list_services`` answers: every service the daemon serves
SERVICE_NAMES = ("cuzk.v1.ProvingEngine", "cuzk.v1.CircuitProver", "grpc.health.v1.Health", _reflection.SERVICE_NAME)
_METHOD = "ServerReflectionInfo"


class Reflection:
    """The reflection service of one daemon; ``count_rpc(method, code)`` counts each stream."""

    def __init__(self, count_rpc, max_streams: int = MAX_STREAMS):
        self._servicer = _reflection.ReflectionServicer(SERVICE_NAMES)
        self._count = count_rpc
        self._slots = StreamSlots(max_streams, count_rpc, _METHOD, "reflection: at most {bound} streams at once")

    @property
    def streams(self) -> int:
        """Streams open now."""
        return self._slots.open

    @property
    def max_streams(self) -> int:
        return self._slots.bound

    def _info(self, raw_requests, context):
        if not self._slots.take(context):
            return
        requests = (parse_request(reflection_pb2.ServerReflectionRequest, raw, context, self._count, _METHOD)
                    for raw in raw_requests)
        yield from self._servicer.ServerReflectionInfo(requests, context)

    def handler(self) -> grpc.GenericRpcHandler:
        """The service's method handler, for ``server.add_generic_rpc_handlers``."""
        return grpc.method_handlers_generic_handler(_reflection.SERVICE_NAME, {
            _METHOD: grpc.stream_stream_rpc_method_handler(
                self._info, response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString)})
