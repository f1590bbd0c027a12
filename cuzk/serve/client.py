"""``cuzk.serve.Client``: a Python client of ``cuzk serve`` with one method per RPC.

Replies are the proto's messages (``cuzk.serve.proto.cuzk.v1.proving_pb2``); a refused call
raises ``grpc.RpcError`` with its status code and the daemon's message (``e.code()``,
``e.details()``).

    >>> with Client("127.0.0.1:9820") as c:                                  # doctest: +SKIP
    ...     r = c.prove(proof_kind="WINDOW_POST_PARTITION", sector_size=2048, registered_proof=10,
    ...                 vanilla_proofs=[...], randomness=seed, request_id="wdpost-1000-0")
    ...     r.status == r.COMPLETED, len(r.proof)
    (True, 192)
    >>> Client("127.0.0.1:9820", token="...").prove_circuit("cube", {"x": 3, "out": 35}).public_json   # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cuzk.errors import InputError
from cuzk.serve.config import LATENCY_OPTION, MAX_MESSAGE_BYTES, NO_RETRIES_OPTION
from cuzk.serve.proto.cuzk.v1 import circuits_pb2 as cpb
from cuzk.serve.proto.cuzk.v1 import circuits_pb2_grpc as cpb_grpc
from cuzk.serve.proto.cuzk.v1 import proving_pb2 as pb
from cuzk.serve.proto.cuzk.v1 import proving_pb2_grpc as pb_grpc

__all__ = ["Client", "RpcError"]

RpcError = grpc.RpcError  #: what a refused call raises (``e.code()``, ``e.details()``)


def _bytes(v):
    return Path(v).read_bytes() if isinstance(v, (str, Path)) else v


def _credentials(tls):
    """``True`` (system roots), a dict ``{"ca", "cert", "key"}`` of paths or PEM bytes, or credentials."""
    if tls is True:
        return grpc.ssl_channel_credentials()
    if isinstance(tls, grpc.ChannelCredentials):
        return tls
    if isinstance(tls, dict):
        unknown = set(tls) - {"ca", "cert", "key"}
        if unknown:
            raise InputError(f"tls: unknown keys {sorted(unknown)} (ca, cert, key)")
        if bool(tls.get("cert")) != bool(tls.get("key")):  # grpc-core aborts the process on a cert alone
            have, lack = ("cert", "key") if tls.get("cert") else ("key", "cert")
            raise InputError(f"tls: a client certificate and its key go together; {have} given without {lack}")
        return grpc.ssl_channel_credentials(root_certificates=_bytes(tls.get("ca")),
                                            private_key=_bytes(tls.get("key")),
                                            certificate_chain=_bytes(tls.get("cert")))
    raise InputError(f"tls must be True, a dict of ca/cert/key or grpc credentials, got {tls!r:.60}")


class Client:
    """A connection to ``cuzk serve`` at ``address`` (``host:port`` or ``unix:///path``).

    The channel asks grpc-core for low latency and makes no transparent retries
    (:data:`cuzk.serve.config.NO_RETRIES_OPTION`): a call that never reached the daemon fails
    UNAVAILABLE, and the caller repeats it (with the same request id, a submit is idempotent).

    Args:
        token: the bearer token of the daemon's ``[auth] token_file``.
        tls: None (plain), True (system CA roots), ``{"ca": ..., "cert": ..., "key": ...}``
            (paths or PEM bytes; cert/key for a daemon that asks for client certificates).
        timeout: default seconds per call (None: no limit).
        options: more grpc channel options.
    """

    def __init__(self, address: str, *, token: str | None = None, tls=None, timeout: float | None = None,
                 max_message_bytes: int = MAX_MESSAGE_BYTES, options=()):
        if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < math.inf):
            raise InputError(f"timeout: seconds per call, a positive finite number or None, got {timeout!r:.40}")
        opts = [("grpc.max_send_message_length", max_message_bytes),
                ("grpc.max_receive_message_length", max_message_bytes), LATENCY_OPTION, NO_RETRIES_OPTION,
                *options]
        self.address = address
        self._channel = (grpc.secure_channel(address, _credentials(tls), options=opts) if tls is not None
                         else grpc.insecure_channel(address, options=opts))
        self._metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
        self.timeout = timeout
        self.engine = pb_grpc.ProvingEngineStub(self._channel)
        self.circuits = cpb_grpc.CircuitProverStub(self._channel)
        self.health_stub = health_pb2_grpc.HealthStub(self._channel)

    def _call(self, rpc, request, timeout):
        return rpc(request, timeout=self.timeout if timeout is None else timeout, metadata=self._metadata)

    # -- Curio's ProvingEngine -----------------------------------------------------------------
    def status(self, *, timeout=None) -> pb.GetStatusResponse:
        return self._call(self.engine.GetStatus, pb.GetStatusRequest(), timeout)

    def status_json(self, *, timeout=None) -> dict:
        """The daemon's full status (Engine and jobs) as a dict."""
        return json.loads(self.status(timeout=timeout).engine_status_json)

    def metrics(self, *, timeout=None) -> str:
        return self._call(self.engine.GetMetrics, pb.GetMetricsRequest(), timeout).prometheus_text

    def preload(self, circuit_id: str, *, timeout=None) -> pb.PreloadSrsResponse:
        return self._call(self.engine.PreloadSRS, pb.PreloadSrsRequest(circuit_id=circuit_id), timeout)

    def evict(self, circuit_id: str, *, timeout=None) -> pb.EvictSrsResponse:
        return self._call(self.engine.EvictSRS, pb.EvictSrsRequest(circuit_id=circuit_id), timeout)

    @staticmethod
    def request(request: pb.SubmitProofRequest | None = None, **fields) -> pb.SubmitProofRequest:
        """A SubmitProofRequest from a message or its fields (enum fields by name or number)."""
        if request is not None:
            if fields:
                raise ValueError("pass a SubmitProofRequest or its fields, not both")
            return request
        return pb.SubmitProofRequest(**fields)

    def submit(self, request: pb.SubmitProofRequest | None = None, *, timeout=None, **fields) -> pb.SubmitProofResponse:
        return self._call(self.engine.SubmitProof, self.request(request, **fields), timeout)

    def await_proof(self, job_id: str, timeout_ms: int = 0, *, timeout=None) -> pb.AwaitProofResponse:
        return self._call(self.engine.AwaitProof, pb.AwaitProofRequest(job_id=job_id, timeout_ms=timeout_ms), timeout)

    def prove(self, request: pb.SubmitProofRequest | None = None, *, timeout_ms: int = 0, timeout=None,
              **fields) -> pb.AwaitProofResponse:
        """Submit and wait; returns the AwaitProofResponse (``status``, ``proof``, timings)."""
        req = pb.ProveRequest(submit=self.request(request, **fields), timeout_ms=timeout_ms)
        return self._call(self.engine.Prove, req, timeout).result

    def cancel(self, job_id: str, *, timeout=None) -> pb.CancelProofResponse:
        return self._call(self.engine.CancelProof, pb.CancelProofRequest(job_id=job_id), timeout)

    # -- cuzk's CircuitProver ------------------------------------------------------------------
    def prove_circuit(self, circuit: str, inputs: dict | str | None = None, *, wtns=None, request_id: str = "",
                      priority=0, deadline_unix_ms: int = 0, timeout_ms: int = 0,
                      timeout=None) -> cpb.ProveCircuitResponse:
        """Prove a ``[[circuits]]`` entry from ``inputs`` (a dict or JSON text) or ``wtns`` (a
        ``.wtns`` path or its bytes); the reply has ``result`` and snarkjs ``proof_json``/``public_json``."""
        text = inputs if isinstance(inputs, str) or inputs is None else json.dumps(inputs, default=str)
        req = cpb.ProveCircuitRequest(circuit=circuit, inputs_json=text or "", wtns=_bytes(wtns) or b"",
                                      request_id=request_id, priority=priority, deadline_unix_ms=deadline_unix_ms,
                                      timeout_ms=timeout_ms)
        return self._call(self.circuits.ProveCircuit, req, timeout)

    def list_circuits(self, *, timeout=None) -> list:
        return list(self._call(self.circuits.ListCircuits, cpb.ListCircuitsRequest(), timeout).circuits)

    # -- gRPC's health service ------------------------------------------------------------------
    def health(self, service: str = "", *, timeout=None) -> str:
        """"SERVING" or "NOT_SERVING" (stopping); ``service``: "" (the daemon), "cuzk.v1.ProvingEngine"
        or "cuzk.v1.CircuitProver". Needs no token."""
        reply = self._call(self.health_stub.Check, health_pb2.HealthCheckRequest(service=service), timeout)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)

    def watch_health(self, service: str = "", *, timeout=None):
        """The service's status names as they change, the current one first; the stream ends when
        the daemon stops (or after ``timeout`` s: DEADLINE_EXCEEDED). ``.cancel()`` ends it."""
        return _StatusNames(self._call(self.health_stub.Watch, health_pb2.HealthCheckRequest(service=service),
                                       timeout))

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _StatusNames:
    """A Watch stream read as status names; ``cancel()`` ends it from the client's side."""

    def __init__(self, stream):
        self._stream = stream

    def __iter__(self):
        return self

    def __next__(self) -> str:
        return health_pb2.HealthCheckResponse.ServingStatus.Name(next(self._stream).status)

    def cancel(self) -> None:
        self._stream.cancel()
