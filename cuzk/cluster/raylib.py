"""Everything cuzk asks of Ray itself: importing it, connecting, and sorting its exceptions.

cuzk imports ``ray`` nowhere but in :mod:`cuzk.cluster`, and there only inside functions, so
``import cuzk.cluster`` works without the ``ray`` extra and the first call that needs Ray says
so with a :class:`cuzk.errors.ClusterError`.

    >>> kind_of(ValueError("a job's own error"))
    'job'
"""

from __future__ import annotations

import socket
import time

from cuzk.errors import ClusterError

__all__ = ["require_ray", "connect", "kind_of", "unwrap", "probe"]


def require_ray():
    """The ``ray`` module.

    Raises:
        cuzk.errors.ClusterError: Ray is not installed (``pip install 'cuzk[ray]'``).
    """
    try:
        import ray
    except ImportError as e:
        raise ClusterError("cuzk.cluster needs Ray: pip install 'cuzk[ray]' (ray>=2.9)") from e
    return ray


#: HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113 sec. 3.4): a gRPC
#: server (Ray's GCS, its client server) answers with a SETTINGS frame of its own at once
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4  #: the frame type byte of SETTINGS


def _speaks_grpc(sock: socket.socket, deadline: float) -> str | None:
    """None when the peer answers the HTTP/2 preface with a SETTINGS frame before ``deadline``,
    else what it did instead."""
    sock.sendall(_H2_PREFACE)
    head = b""
    while len(head) < 9:  # a frame header: 3 bytes length, 1 type, 1 flags, 4 stream id
        left = deadline - time.monotonic()
        if left <= 0:
            return "it accepted a TCP connection but said nothing"
        sock.settimeout(left)
        try:
            chunk = sock.recv(9 - len(head))
        except socket.timeout:
            continue
        if not chunk:
            return "it accepted a TCP connection and closed it"
        head += chunk
    if head[3] != _H2_SETTINGS:
        return f"it answered {head!r}, not an HTTP/2 SETTINGS frame"
    return None


def probe(address: str, timeout_s: float) -> None:
    """Fail fast on a ``host:port`` (or ``ray://host:port``) that is not a Ray endpoint:
    ``ray.init`` would retry for minutes on a silent address and can hang on one that accepts
    TCP but never speaks. Both Ray's GCS and its client server are gRPC servers, so the probe
    connects, sends HTTP/2's preface and waits for the server's SETTINGS frame. Other forms
    (``"auto"``, ``"local"``) are left to Ray.

    Raises:
        cuzk.errors.ClusterError: naming the address, within about ``timeout_s``.
    """
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            sock = socket.create_connection((host.strip("[]"), int(port)),
                                            timeout=max(0.1, deadline - time.monotonic()))
        except OSError as e:
            last = e
            time.sleep(0.2)
            continue
        try:
            why = _speaks_grpc(sock, deadline)
        except ConnectionResetError:  # it closed before (or while) our preface arrived
            why = "it accepted a TCP connection and closed it (reset)"
        except OSError as e:
            why = f"the connection failed: {e}"
        finally:
            sock.close()
        if why is None:
            return
        raise ClusterError(f"Ray address {address!r} does not speak Ray's protocol (no gRPC answer within "
                           f"{timeout_s:g} s): {why}")
    raise ClusterError(f"Ray address {address!r} does not answer (no TCP connection within {timeout_s:g} s: "
                       f"{last})")


def connect(address: str | None, timeout_s: float, init_kwargs: dict | None = None) -> bool:
    """Connect to (or start) Ray; True when this call initialised it (so close shuts it down).

    An already initialised Ray is reused whatever ``address`` says.

    Raises:
        cuzk.errors.ClusterError: Ray is missing, or the address does not answer.
    """
    ray = require_ray()
    if address is not None:  # even when Ray is up: a silent address is the caller's mistake
        probe(address, timeout_s)
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, **(init_kwargs or {}))
    except Exception as e:  # Ray's ConnectionError, RuntimeError, ValueError...: one cuzk error
        raise ClusterError(f"could not connect to Ray at {address!r}: {type(e).__name__}: {e}") from e
    return True


def kind_of(exc: BaseException) -> str:
    """``"dead"`` (the actor, worker or node is gone), ``"lost"`` (an object, e.g. a witness,
    is gone with its node) or ``"job"`` (anything else: the job's own fault, never retried)."""
    try:
        from ray import exceptions as rx
    except ImportError:
        return "job"
    if isinstance(exc, rx.ObjectLostError):
        return "lost"
    if isinstance(exc, rx.RayTaskError):
        return "job"
    dead = tuple(getattr(rx, n) for n in ("RayActorError", "WorkerCrashedError", "NodeDiedError",
                                           "LocalRayletDiedError", "TaskUnschedulableError",
                                           "ActorUnschedulableError", "RaySystemError") if hasattr(rx, n))
    return "dead" if isinstance(exc, dead) else "job"


def unwrap(exc: BaseException) -> BaseException:
    """The exception a remote function raised, out of Ray's ``RayTaskError`` wrapper."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and type(exc).__name__.startswith("RayTaskError"):
        return cause
    return exc
