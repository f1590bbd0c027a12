"""Unary calls served on grpc-core's call API, beside grpcio's own handlers on the same server.

grpcio's threaded server hands a unary call through its threads four times before a handler
runs (its poll thread to a pool thread, which asks for the request's message; the poll thread
sees the message arrive; the pool thread again), and a handler that waits on a proof holds its
pool thread and must be woken to send the reply. Where each hand-off is a wake-up under the GIL,
that was most of what the daemon added to a proof (docs/perf/serve.md, "Overhead per proof").

Here cuzk's methods are registered with grpc-core itself and requested on a completion queue of
their own. One thread (``cuzk-serve-calls``) takes each call, asks for its message, and hands the
message to a pool thread that runs the handler, or runs it itself for the methods named
``inline`` when the message is small (handlers that never block: one hand-off less); the handler
answers through :class:`Call`, from any thread: a reply that waits on a job is sent by the thread
that ends the job (cuzk/serve/pending.py). Every other method (health, reflection) stays with
grpcio.

grpcio has no public API for this. It uses the ``cygrpc`` layer grpcio's own server is written
on (``Server.register_method``, ``request_registered_call``, ``Call.start_server_batch``),
reached through the object ``grpc.server()`` returns. :meth:`DirectCalls.attach` returns None
when that layer is not as expected (another grpcio): the daemon then serves the same handlers
through grpcio's handler API instead (cuzk/serve/service.py), slower but the same answers.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Callable

import grpc

from cuzk.serve.validate import status_text

try:
    from grpc._cython import cygrpc
except ImportError:  # another grpcio's layout: attach() returns None, grpcio's handlers serve
    cygrpc = None

__all__ = ["Call", "DirectCalls"]

_log = logging.getLogger("cuzk.serve")
_NO_FLAGS = 0


class Call:
    """One unary call: its ``method`` (full name) and ``metadata``; :meth:`reply` or :meth:`abort`
    answers it once, from any thread."""

    __slots__ = ("method", "metadata", "_raw", "_calls", "_lock", "_answered", "_gone", "_on_gone")

    def __init__(self, calls: "DirectCalls", method: str, raw, metadata):
        self.method, self.metadata = method, metadata
        self._raw, self._calls = raw, calls
        self._lock = threading.Lock()
        self._answered = False
        self._gone = False
        self._on_gone: list = []

    def reply(self, payload: bytes) -> bool:
        """Send ``payload`` with status OK; False when the call was answered already or is gone."""
        return self._answer((cygrpc.SendInitialMetadataOperation((), _NO_FLAGS),
                             cygrpc.SendMessageOperation(payload, _NO_FLAGS),
                             cygrpc.SendStatusFromServerOperation((), cygrpc.StatusCode.ok, b"", _NO_FLAGS)))

    def abort(self, code: str, message: str) -> bool:
        """End the call with status ``code`` (a ``grpc.StatusCode`` name) and ``message`` (cut by
        :func:`~cuzk.serve.validate.status_text` to what a client accepts)."""
        number = getattr(grpc.StatusCode, code).value[0]
        return self._answer((cygrpc.SendInitialMetadataOperation((), _NO_FLAGS),
                             cygrpc.SendStatusFromServerOperation((), number, status_text(message).encode(), _NO_FLAGS)))

    def on_gone(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` if the client goes away before the answer (it cancels, its deadline
        passes, its connection drops); at once if it has already."""
        with self._lock:
            if not self._gone:
                self._on_gone.append(fn)
                return
        fn()

    def _answer(self, ops) -> bool:
        with self._lock:
            if self._answered or self._gone:
                return False
            self._answered = True
        return self._calls._start(self, ops, self._calls._sent)

    def _ended(self, cancelled: bool) -> None:
        """The call is over (answered, or cancelled by grpc or the client)."""
        with self._lock:
            self._gone = True
            todo = self._on_gone if cancelled and not self._answered else []
            self._on_gone = []
        for fn in todo:
            try:
                fn()
            except Exception:  # noqa: BLE001
                _log.exception("%s: a callback for a call gone away failed", self.method)


class DirectCalls:
    """Serve ``handlers`` (full method name -> ``handler(request_bytes, call)``) on a grpcio
    server's own ports (see the module doc). ``admit(method, metadata)`` -> None or ``(code,
    message)``: a refusal before the request is read (the bearer token). At most ``max_calls``
    calls at once; more are answered RESOURCE_EXHAUSTED. Handlers run on ``pool``, except those of
    the methods in ``inline`` for a message of at most ``inline_bytes``: the calls' thread runs
    them, so they must not block (no file reads, no waits, no work beyond the message's size)."""

    def __init__(self, cy_server, handlers: dict, pool, *, admit=None, max_calls: int, inline=(),
                 inline_bytes: int = 1 << 16):
        self._server = cy_server
        self._handlers = dict(handlers)
        self._pool = pool
        self._admit = admit
        self.max_calls = max_calls
        self._inline = frozenset(inline)
        self._inline_bytes = inline_bytes
        self._lock = threading.Lock()
        self._live = 0
        self._closed = False
        self._cq = cygrpc.CompletionQueue()
        self._thread: threading.Thread | None = None
        for method in self._handlers:
            cy_server.register_method(method)
        cy_server.register_completion_queue(self._cq)

    @classmethod
    def attach(cls, grpc_server, handlers: dict, pool, **kw) -> "DirectCalls | None":
        """Register ``handlers`` on ``grpc_server`` (made by ``grpc.server()``, not started yet);
        None where this grpcio does not have the layer used (the module doc)."""
        cy = getattr(grpc_server, "_cy_server", None)
        if cygrpc is None or cy is None:
            return None
        layer = (cygrpc, ("CompletionQueue", "SendInitialMetadataOperation", "SendMessageOperation",
                          "SendStatusFromServerOperation", "ReceiveMessageOperation", "ReceiveCloseOnServerOperation"))
        server = (cy, ("register_method", "request_registered_call", "register_completion_queue"))
        if not all(hasattr(obj, n) for obj, names in (layer, server) for n in names):
            return None
        return cls(cy, handlers, pool, **kw)

    @property
    def live(self) -> int:
        """Calls begun and not ended."""
        return self._live

    def start(self) -> None:
        """Take calls (after the grpc server has started)."""
        for method in self._handlers:
            self._request(method)
        self._thread = threading.Thread(target=self._serve, name="cuzk-serve-calls", daemon=True)
        self._thread.start()

    def stop(self, server_stopped: bool) -> None:
        """After the grpc server's stop: no more answers start, the queue is shut down and its
        thread ends. ``server_stopped``: grpc's stop completed (else the queue is left to the
        process's end, since grpc-core may still hold requests on it)."""
        with self._lock:
            self._closed = True
            if server_stopped:
                self._cq.shutdown()
        if server_stopped and self._thread is not None:
            self._thread.join(10.0)

    # -- the calls' thread ----------------------------------------------------------------------
    def _request(self, method: str) -> None:
        try:
            self._server.request_registered_call(self._cq, self._cq, method, functools.partial(self._arrived, method))
        except Exception:  # noqa: BLE001 - the server is shutting down: no more calls to take
            _log.debug("cuzk serve: no further %s calls requested", method, exc_info=True)

    def _start(self, call: Call, ops, tag) -> bool:
        with self._lock:  # never after stop's queue shutdown
            if self._closed:
                return False
            try:
                return call._raw.start_server_batch(ops, functools.partial(tag, call)) == 0
            except Exception:  # noqa: BLE001 - the call is gone in grpc-core; nothing to answer
                return False

    def _serve(self) -> None:
        while True:
            ev = self._cq.poll()
            kind = ev.completion_type
            if kind == cygrpc.CompletionType.queue_shutdown:
                return
            if kind == cygrpc.CompletionType.queue_timeout:
                continue
            try:
                ev.tag(ev)
            except Exception:  # noqa: BLE001 - one call's failure must not stop the others
                _log.exception("cuzk serve: a call's event failed")
            ev = None  # the event holds the call: dropped before the next wait

    def _arrived(self, method: str, ev) -> None:
        if not ev.success:  # the server is shutting down
            return
        call = Call(self, method, ev.call, ev.invocation_metadata)
        with self._lock:
            if self._closed:
                return
            self._live += 1
            over = self._live > self.max_calls
        refusal = self._admit(method, call.metadata) if self._admit is not None else None
        if refusal is None and over:
            refusal = ("RESOURCE_EXHAUSTED", f"{self.max_calls} calls are in flight, the daemon's bound "
                                             "([daemon] max_concurrent_rpcs); retry later")
        # the message first (the answer waits on it), then the call's end, then the next call
        if refusal is None:
            self._start(call, (cygrpc.ReceiveMessageOperation(_NO_FLAGS),), self._message)
        if not self._start(call, (cygrpc.ReceiveCloseOnServerOperation(_NO_FLAGS),), self._closed_event):
            with self._lock:
                self._live -= 1
        self._request(method)
        if refusal is not None:
            call.abort(*refusal)

    def _closed_event(self, call: Call, ev) -> None:
        with self._lock:
            self._live -= 1
        cancelled = not ev.success or ev.batch_operations[0].cancelled()
        call._ended(cancelled)

    def _message(self, call: Call, ev) -> None:
        raw = ev.batch_operations[0].message() if ev.success else None
        if raw is None:
            if ev.success:  # the client half-closed without a message
                call.abort("INVALID_ARGUMENT", "request: no message (a unary call takes exactly one)")
            return
        if call.method in self._inline and len(raw) <= self._inline_bytes:
            self._handle(call, raw)
            return
        try:
            self._pool.submit(self._handle, call, raw)
        except RuntimeError:  # the pool is shut down: the daemon is stopping
            call.abort("UNAVAILABLE", "the daemon is shutting down: it takes no new work")

    def _handle(self, call: Call, raw: bytes) -> None:
        try:
            self._handlers[call.method](raw, call)
        except Exception as e:  # noqa: BLE001 - every call gets an answer
            _log.exception("%s failed", call.method)
            call.abort("INTERNAL", f"{type(e).__name__}: {e}")

    def _sent(self, call: Call, ev) -> None:
        pass  # the answer went out (or the call had ended): the close event does the accounting
