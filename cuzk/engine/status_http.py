"""A small HTTP endpoint for a running engine: ``/status`` (JSON) and ``/metrics`` (Prometheus).

:func:`serve_status` runs the standard library's ``ThreadingHTTPServer`` on a daemon thread
(``cuzk-http-status``); each request gets its own daemon thread and calls the callback it needs:

* ``GET /status`` → ``get_status()`` as JSON (``application/json``). Values JSON lacks are
  converted: attrs instances and mappings become objects, tuples/sets/numpy arrays lists, enums
  their name, numpy scalars numbers, NaN and infinities ``null``, anything else its ``str()``;
* ``GET /metrics`` → ``get_metrics()``'s text (``text/plain; version=0.0.4``, see
  :mod:`cuzk.prometheus`);
* any other path → 404; another method → 405.

A callback that raises gives a 500 with one line naming the exception type (the traceback is
logged to ``cuzk.engine.http``, not sent); the server carries on. Sockets time out after
``timeout`` seconds, so a client that connects and says nothing holds a thread that long at most.
It binds ``127.0.0.1`` by default: the status is for the node's own monitoring; expose it
wider only on purpose (``host="0.0.0.0"``).

    >>> import json, urllib.request
    >>> with serve_status(lambda: {"jobs": 2}, lambda: "cuzk_up 1\\n") as srv:
    ...     host, port = srv.address
    ...     json.load(urllib.request.urlopen(f"http://{host}:{port}/status", timeout=10))
    {'jobs': 2}
"""

from __future__ import annotations

import enum
import json
import logging
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import urlsplit

import attrs

from cuzk.prometheus import CONTENT_TYPE as METRICS_TYPE
from cuzk.errors import InputError

__all__ = ["serve_status", "StatusServer", "to_jsonable"]

_log = logging.getLogger("cuzk.engine.http")


def to_jsonable(obj, _depth: int = 0):
    """``obj`` with everything JSON cannot hold converted (see the module doc).

    >>> to_jsonable({"a": (1, float("nan")), "b": {2}})
    {'a': [1, None], 'b': [2]}
    """
    if _depth > 64:  # a cycle or absurd nesting: say so instead of recursing forever
        return "<nested too deeply>"
    d = _depth + 1
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, enum.Enum):
        return obj.name
    if attrs.has(type(obj)):
        return {f.name: to_jsonable(getattr(obj, f.name), d) for f in attrs.fields(type(obj))}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v, d) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v, d) for v in obj]
    tolist = getattr(obj, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        try:
            return to_jsonable(tolist(), d)
        except Exception:
            pass
    return str(obj)


class _Handler(BaseHTTPRequestHandler):
    server_version = "cuzk-status"
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (the standard library's name)
        path = urlsplit(self.path).path
        routes = self.server.routes
        if path not in routes:
            return self._send(404, "text/plain; charset=utf-8", f"not found: {path}; try /status or /metrics\n")
        kind, fn = routes[path]
        try:
            if kind == "json":
                body = json.dumps(to_jsonable(fn()), allow_nan=False, indent=1) + "\n"
                ctype = "application/json"
            else:
                body = fn()
                if not isinstance(body, str):
                    raise TypeError(f"the metrics callback returned {type(body).__name__}, not str")
                ctype = METRICS_TYPE
        except Exception as e:
            _log.exception("cuzk status endpoint: %s callback failed", path)
            return self._send(500, "text/plain; charset=utf-8", f"internal error in {path}: {type(e).__name__}\n")
        self._send(200, ctype, body)

    def _method_not_allowed(self):
        self._send(405, "text/plain; charset=utf-8", "only GET is served\n", allow=True)

    do_POST = do_PUT = do_DELETE = do_PATCH = _method_not_allowed  # noqa: N815

    def _send(self, code: int, ctype: str, body: str, allow: bool = False) -> None:
        data = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        if allow:
            self.send_header("Allow", "GET")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):  # the standard handler writes every request to stderr
        _log.debug("%s - %s", self.address_string(), fmt % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a slow client never blocks close() or interpreter exit
    allow_reuse_address = True


class StatusServer:
    """A running status endpoint; ``address`` is ``(host, port)``; :meth:`close` stops it."""

    def __init__(self, httpd: _Server, thread: threading.Thread):
        self._httpd, self._thread = httpd, thread
        self._closed = False
        self._lock = threading.Lock()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return host, port

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def close(self) -> None:
        """Stop serving and join the server thread (idempotent; requests in flight may finish)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)

    def __enter__(self) -> "StatusServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"StatusServer({self.url}{', closed' if self._closed else ''})"


def serve_status(get_status: Callable[[], dict], get_metrics: Callable[[], str], port: int = 0,
                 host: str = "127.0.0.1", *, timeout: float = 10.0) -> StatusServer:
    """Serve ``/status`` and ``/metrics`` on a background thread; returns the :class:`StatusServer`.

    Args:
        get_status: called per ``GET /status``; returns something JSON-able (see :func:`to_jsonable`).
        get_metrics: called per ``GET /metrics``; returns the Prometheus text.
        port: TCP port (0: any free one; read it back from ``.address``).
        host: address to bind (default loopback only).
        timeout: seconds a connection may stay idle.

    Raises:
        InputError: a callback is not callable, or ``port`` is not in [0, 65535].
        OSError: the address cannot be bound (port in use, ...).
    """
    if not callable(get_status) or not callable(get_metrics):
        raise InputError("get_status and get_metrics must be callables")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError(f"port must be an int in [0, 65535], got {port!r}")
    handler = type("Handler", (_Handler,), {"timeout": timeout})
    httpd = _Server((host, port), handler)
    httpd.routes = {"/status": ("json", get_status), "/metrics": ("text", get_metrics)}
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="cuzk-http-status",
                              daemon=True)
    thread.start()
    return StatusServer(httpd, thread)
