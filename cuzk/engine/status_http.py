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
logged to ``cuzk.engine.http``, not sent); the server carries on. Hostile or broken clients are
bounded, since the server runs for the life of a daemon:

* at most ``max_connections`` connections are served at once (one thread each); one more gets
  ``503 Service Unavailable`` (``Retry-After: 1``), written from the accepting thread without
  reading the request, and is closed;
* a socket idle for ``timeout`` seconds is closed, and so is one whose request (reading it and
  answering) takes longer than ``request_timeout`` in all: a client sending a byte now and then
  is cut then;
* a client that resets the connection mid-reply is logged at debug level to ``cuzk.engine.http``
  (socketserver's default prints a traceback to stderr); any other error in a handler is logged
  there with its traceback.

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
import socket
import sys
import threading
import time
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

    def handle_one_request(self):
        self.server.request_started(self.request)
        super().handle_one_request()

    def log_message(self, fmt, *args):  # the standard handler writes every request to stderr
        _log.debug("%s - %s", self.address_string(), fmt % args)


_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n%s")


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a slow client never blocks interpreter exit; close() cuts them
    allow_reuse_address = True
    block_on_close = False  # close() shuts the sockets down and joins the threads itself

    def __init__(self, address, handler, max_connections: int, request_timeout: float):
        super().__init__(address, handler)
        self.max_connections = max_connections
        self.request_timeout = request_timeout
        self._conns: dict = {}  # socket -> (deadline of its current request, handler thread or None)
        self._conns_lock = threading.Lock()
        self.refused = 0  # connections answered 503

    # -- the connection cap ----------------------------------------------------------------
    def process_request(self, request, client_address):
        with self._conns_lock:
            full = len(self._conns) >= self.max_connections
            if not full:
                self._conns[request] = (time.monotonic() + self.request_timeout, None)
        if full:
            self.refused += 1
            _log.warning("cuzk status endpoint: %d connections open (the cap): 503 to %s", self.max_connections,
                         client_address[0])
            body = f"busy: {self.max_connections} connections are open, the cap; retry later\n".encode()
            try:
                request.settimeout(0.2)  # a few hundred bytes into an empty socket buffer: never blocks long
                request.sendall(_BUSY % (len(body), body))
            except OSError:
                pass
            self.shutdown_request(request)
            return
        t = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=True,
                             name="cuzk-http-conn")
        with self._conns_lock:
            self._conns[request] = (self._conns[request][0], t)
        t.start()

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._conns_lock:
                self._conns.pop(request, None)

    def request_started(self, request) -> None:
        """A new request on ``request``: its deadline is ``request_timeout`` from now."""
        with self._conns_lock:
            if request in self._conns:
                self._conns[request] = (time.monotonic() + self.request_timeout, self._conns[request][1])

    @property
    def open_connections(self) -> int:
        with self._conns_lock:
            return len(self._conns)

    # -- the per-request bound, checked every poll interval by serve_forever ----------------
    def service_actions(self):
        now = time.monotonic()
        with self._conns_lock:
            late = [sock for sock, (deadline, _) in self._conns.items() if deadline < now]
        for sock in late:
            _log.debug("cuzk status endpoint: a request took over %.1f s, closing its connection", self.request_timeout)
            _cut(sock)

    def cut_all(self, wait: float) -> None:
        """Shut every open connection down and join their threads (close())."""
        with self._conns_lock:
            conns = list(self._conns.items())
        for sock, _ in conns:
            _cut(sock)
        end = time.monotonic() + wait
        for _, (_, t) in conns:
            if t is not None:
                t.join(max(0.0, end - time.monotonic()))

    # -- errors go to the logger, never to stderr ------------------------------------------
    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):  # reset, broken pipe, cut
            _log.debug("cuzk status endpoint: connection from %s ended: %r", client_address[0], exc)
        else:
            _log.error("cuzk status endpoint: error while serving %s", client_address[0], exc_info=True)


def _cut(sock) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # the handler's blocked read returns at once
    except OSError:
        pass


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
    def open_connections(self) -> int:
        """Connections being served now (at most ``max_connections``)."""
        return self._httpd.open_connections

    @property
    def refused(self) -> int:
        """Connections answered 503 because ``max_connections`` were open."""
        return self._httpd.refused

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
        self._httpd.cut_all(10)
        self._thread.join(10)

    def __enter__(self) -> "StatusServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"StatusServer({self.url}{', closed' if self._closed else ''})"


def serve_status(get_status: Callable[[], dict], get_metrics: Callable[[], str], port: int = 0,
                 host: str = "127.0.0.1", *, timeout: float = 10.0, max_connections: int = 16,
                 request_timeout: float = 30.0) -> StatusServer:
    """Serve ``/status`` and ``/metrics`` on a background thread; returns the :class:`StatusServer`.

    Args:
        get_status: called per ``GET /status``; returns something JSON-able (see :func:`to_jsonable`).
        get_metrics: called per ``GET /metrics``; returns the Prometheus text.
        port: TCP port (0: any free one; read it back from ``.address``).
        host: address to bind (default loopback only).
        timeout: seconds a connection may stay idle.
        max_connections: connections served at once; more get a 503 (a scraper or two and a
            person with curl need a handful).
        request_timeout: seconds one request may take in all, reading it and answering.

    Raises:
        InputError: a callback is not callable, ``port`` is not in [0, 65535], or a bound is
            not positive.
        OSError: the address cannot be bound (port in use, ...).
    """
    if not callable(get_status) or not callable(get_metrics):
        raise InputError("get_status and get_metrics must be callables")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError(f"port must be an int in [0, 65535], got {port!r}")
    if isinstance(max_connections, bool) or not isinstance(max_connections, int) or max_connections < 1:
        raise InputError(f"max_connections must be an int >= 1, got {max_connections!r}")
    for name, v in (("timeout", timeout), ("request_timeout", request_timeout)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf:
            raise InputError(f"{name} must be a positive number of seconds, got {v!r}")
    handler = type("Handler", (_Handler,), {"timeout": timeout})
    httpd = _Server((host, port), handler, max_connections, float(request_timeout))
    httpd.routes = {"/status": ("json", get_status), "/metrics": ("text", get_metrics)}
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="cuzk-http-status",
                              daemon=True)
    thread.start()
    return StatusServer(httpd, thread)
