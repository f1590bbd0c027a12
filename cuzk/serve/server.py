"""``cuzk serve``: the gRPC server around a :class:`~cuzk.serve.daemon.Daemon`.

:class:`Server` listens on every ``[daemon] listen`` address (TCP, with TLS when ``[tls]`` is set;
Unix sockets created mode 0600 in a folder only the user can enter when cuzk makes it), checks
the bearer token when ``[auth] token_file`` is set (:meth:`Server.reload`, on SIGHUP, reads it
again; TLS files are re-read when they change: cuzk/serve/credentials.py), bounds messages to
``[daemon] max_message_bytes`` both ways, answers gRPC's health protocol (cuzk/serve/health.py)
and, with ``[daemon] reflection``, server reflection (cuzk/serve/reflection.py), and serves
``/status`` and ``/metrics`` over HTTP through the Engine's ``serve_status``. :meth:`Server.stop`
is the graceful stop SIGTERM/SIGINT run: health NOT_SERVING, no new work (UNAVAILABLE), queued
jobs cancelled (their waiters answered CANCELLED), running proofs given ``[daemon]
shutdown_grace`` to finish, then the Engine closed. :func:`run` also tells systemd READY=1 /
STOPPING=1 (cuzk/serve/systemd.py).

    >>> from cuzk.serve.config import parse_config
    >>> cfg = parse_config('[daemon]\\nlisten = "127.0.0.1:0"\\n[gpus]\\ndevice = "cpu"\\n')
    >>> with Server(cfg) as srv:                       # doctest: +SKIP
    ...     srv.addresses                              # the port the kernel gave
    ['127.0.0.1:40457']
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from cuzk.errors import ConfigError
from cuzk.serve.config import LATENCY_OPTION
from cuzk.serve.credentials import server_credentials
from cuzk.serve.daemon import Daemon
from cuzk.serve.health import CHECK_METHOD, Health, stream_bound
from cuzk.serve.reflection import SERVICE_NAMES, Reflection
from cuzk.serve.direct import DirectCalls
from cuzk.serve.pending import Timers
from cuzk.serve.service import QUICK_METHODS, TokenAuth, add_blocking_services, direct_handlers
from cuzk.serve.systemd import notify

__all__ = ["Server", "run"]

_log = logging.getLogger("cuzk.serve")


def _prepare_socket(path: str) -> None:
    """Make the socket's folder (0700 when cuzk creates it) and clear a stale socket; a socket
    something still answers on is refused (another daemon runs there)."""
    p = Path(path)
    if not p.parent.is_dir():
        p.parent.mkdir(mode=0o700, parents=True)
    if p.exists() or p.is_symlink():
        if not stat.S_ISSOCK(p.lstat().st_mode):
            raise ConfigError(f"config: [daemon] listen: {path} exists and is not a socket")
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.settimeout(1.0)
            probe.connect(path)
        except OSError:
            p.unlink()  # nothing listens: left by a daemon that died
        else:
            raise ConfigError(f"config: [daemon] listen: {path} is in use by another process")
        finally:
            probe.close()


def served_methods() -> frozenset:
    """Full names ("/package.Service/Method") of every method of the services the daemon serves,
    from their descriptors (the generated modules register them in protobuf's default pool)."""
    from google.protobuf import descriptor_pool

    pool = descriptor_pool.Default()
    return frozenset(f"/{svc}/{m.name}" for svc in SERVICE_NAMES for m in pool.FindServiceByName(svc).methods)


class Server:
    """The daemon on its addresses (see the module doc). ``engine``: use this Engine (tests)."""

    def __init__(self, cfg, *, engine=None):
        self.cfg = cfg
        self.daemon = Daemon(cfg, engine=engine)
        self._stream_bound = stream_bound(cfg.max_concurrent_rpcs)  # health Watch and reflection each
        #: grpc.health.v1.Health (cuzk/serve/health.py)
        self.health = Health(self.daemon.count_rpc, self._stream_bound)
        self.reflection = None  #: server reflection when [daemon] reflection is on
        self.tls = None  #: the [tls] files (cuzk/serve/credentials.py), re-read when they change
        self._auth = None
        self.token_reloads = {"taken": 0, "refused": 0}  #: SIGHUP reloads of the bearer token
        self.daemon.metric_sources.append(self._metrics)
        self.addresses: list[str] = []
        self.status_address: str | None = None
        self._sockets: list[str] = []
        self._stopped = threading.Event()
        self._stop_lock = threading.Lock()
        self._pool = None
        self._timers = Timers()  # the waiting calls' timeouts (cuzk/serve/pending.py)
        #: cuzk's services on grpc-core's call API (cuzk/serve/direct.py); None: grpcio's handlers serve them
        self.direct: DirectCalls | None = None
        self._grpc = None
        try:
            self._grpc = self._make_server()
            self._grpc.start()
            if self.direct is not None:
                self.direct.start()
            if cfg.status_listen is not None:
                host, port = self.daemon.engine.serve_status(cfg.status_listen.port, cfg.status_listen.host,
                                                             status=self.daemon.status, metrics=self.daemon.metrics)
                self.status_address = f"http://{host}:{port}"
        except BaseException:
            # a late failure (the status port taken) stops what had started: the ports, the threads
            if self._grpc is not None:
                stopped = self._grpc.stop(0).wait(10.0)
                if self.direct is not None:
                    self.direct.stop(stopped)
            if self._pool is not None:
                self._pool.shutdown(wait=False)
            self._timers.close()
            self.daemon.close()
            self._unlink_sockets()
            raise
        self.preloading = self.daemon.start_preload()
        _log.info("cuzk serve: gRPC on %s, status on %s", ", ".join(self.addresses), self.status_address or "-")
        for key in cfg.ignored:
            _log.warning("config: %s is a Rust daemon setting cuzk serve does not use; ignored", key)

    def _make_server(self):
        cfg = self.cfg
        token = cfg.token()
        if token:
            self._auth = TokenAuth(token, self.daemon.count_rpc, open_methods=(CHECK_METHOD,), methods=served_methods())
        interceptors = [self._auth] if self._auth is not None else []
        n = cfg.max_message_bytes
        self._pool = ThreadPoolExecutor(max_workers=cfg.max_concurrent_rpcs, thread_name_prefix="cuzk-serve-rpc")
        server = grpc.server(
            self._pool,
            interceptors=interceptors, maximum_concurrent_rpcs=cfg.max_concurrent_rpcs,
            options=[("grpc.max_receive_message_length", n), ("grpc.max_send_message_length", n),
                     ("grpc.so_reuseport", 0), LATENCY_OPTION])
        self.direct = DirectCalls.attach(server, direct_handlers(self.daemon, self._timers), self._pool,
                                         admit=self._auth.refusal if self._auth is not None else None,
                                         max_calls=cfg.max_concurrent_rpcs, inline=QUICK_METHODS)
        if self.direct is None:
            _log.info("cuzk serve: this grpcio has not the call API cuzk/serve/direct.py uses; its own handlers serve")
            add_blocking_services(server, self.daemon)
        server.add_generic_rpc_handlers((self.health.handler(),))
        if cfg.reflection:
            self.reflection = Reflection(self.daemon.count_rpc, self._stream_bound)
            server.add_generic_rpc_handlers((self.reflection.handler(),))
        creds, self.tls = server_credentials(cfg)
        for addr in cfg.listen:
            if addr.kind == "unix":
                _prepare_socket(addr.path)
                old = os.umask(0o177)  # the socket is born 0600: no window where others may connect
                try:
                    port = server.add_insecure_port(addr.target)
                finally:
                    os.umask(old)
                if port == 0:
                    raise ConfigError(f"config: [daemon] listen: cannot listen on {addr.target}")
                os.chmod(addr.path, 0o600)
                self._sockets.append(addr.path)
                self.addresses.append(addr.target)
                continue
            port = server.add_secure_port(addr.target, creds) if creds else server.add_insecure_port(addr.target)
            if port == 0:
                raise ConfigError(f"config: [daemon] listen: cannot listen on {addr.target} (in use?)")
            host = f"[{addr.host}]" if ":" in addr.host else addr.host
            self.addresses.append(f"{host}:{port}")
        return server

    @property
    def tcp_address(self) -> str | None:
        """The first TCP address (tests and clients on loopback)."""
        return next((a for a in self.addresses if not a.startswith("unix:")), None)

    def reload(self) -> str:
        """What SIGHUP does: read ``[auth] token_file`` again and use the token in it from the next
        call on. A file that does not give a valid token leaves the old one in use (ConfigError
        naming the problem). Returns what was done, for the log. TLS files need no signal (see
        cuzk/serve/credentials.py); the configuration file itself is not read again."""
        if self._auth is None:
            return "no [auth] token_file at start: nothing to reload (restart to add a token)"
        try:
            token = self.cfg.token()
        except ConfigError:  # the old token stays
            self.token_reloads["refused"] += 1
            raise
        self._auth.set_token(token)
        self.token_reloads["taken"] += 1
        return f"bearer token reloaded from {self.cfg.token_file}"

    def _metrics(self, out) -> None:
        """The server's series in ``cuzk_serve_*``: secrets re-read (a refused TLS change is what
        to alert on: the old certificate is still in use and will expire) and long-lived streams."""
        reloads = {("token", k): v for k, v in self.token_reloads.items()} if self._auth is not None else {}
        if self.tls is not None:
            reloads.update({("tls", "taken"): self.tls.reloads, ("tls", "refused"): self.tls.refusals})
        for (secret, result), n in sorted(reloads.items()):
            out.counter("secret_reloads", "Secrets re-read without a restart, per secret and result.", n,
                        labels={"secret": secret, "result": result})
        streams = {"health_watch": self.health.watches}
        if self.reflection is not None:
            streams["reflection"] = self.reflection.streams
        for kind, n in streams.items():
            out.gauge("streams", "Long-lived streams open now, per kind.", n, labels={"kind": kind})

    def stop(self, grace_s: float | None = None) -> dict:
        """The graceful stop (see the module doc); idempotent. Returns what it did."""
        with self._stop_lock:
            if self._stopped.is_set():
                return {}
            grace = self.cfg.shutdown_grace_s if grace_s is None else grace_s
            self.health.stop()  # first: balancers and watchers stop sending work before the drain
            summary = self.daemon.drain(grace)
            _log.info("cuzk serve: stopping (%s)", summary)
            # in-flight replies (waiters just woken by their jobs' ends) get a moment to go out
            stopped = self._grpc.stop(grace=2.0).wait(10.0)
            if self.direct is not None:
                self.direct.stop(stopped)
            # grpc leaves the handler pool to its owner; its waiters were woken by the stop
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._timers.close()
            self.daemon.close()
            self._unlink_sockets()
            self._stopped.set()
            return summary

    def _unlink_sockets(self) -> None:
        for path in self._sockets:
            try:
                os.unlink(path)
            except OSError:
                pass
        self._sockets = []

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server has stopped; False on timeout."""
        return self._stopped.wait(timeout)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop(grace_s=0.0)


def run(cfg, *, announce=print) -> int:
    """Serve until SIGTERM or SIGINT, then stop gracefully; SIGHUP reloads the bearer token
    (:meth:`Server.reload`). Returns the exit status (0)."""
    server = Server(cfg)
    announce(f"cuzk serve: gRPC listening on {' '.join(server.addresses)}")
    if server.status_address:
        announce(f"cuzk serve: status on {server.status_address}/status and {server.status_address}/metrics")
    notify("READY=1", f"STATUS=gRPC on {' '.join(server.addresses)}", f"MAINPID={os.getpid()}")
    stop, hup, wake = threading.Event(), threading.Event(), threading.Event()
    signals = []

    def handler(signum, _frame):
        if signum == getattr(signal, "SIGHUP", None):
            hup.set()  # the main loop reloads: no file reads inside a signal handler
        else:
            announce(f"cuzk serve: {signal.Signals(signum).name}: no new work; queued jobs cancelled, running "
                     f"ones finish (at most {cfg.shutdown_grace_s:g} s)")
            stop.set()
        wake.set()

    for sig in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signals.append((sig, signal.signal(sig, handler)))
    try:
        while not stop.is_set():
            wake.wait(1.0)
            wake.clear()
            if hup.is_set():
                hup.clear()
                # systemd's reload handshake (Type=notify-reload needs the monotonic time beside it)
                notify("RELOADING=1", f"MONOTONIC_USEC={time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000}")
                try:
                    announce(f"cuzk serve: SIGHUP: {server.reload()}")
                except ConfigError as e:
                    announce(f"cuzk serve: SIGHUP: kept the previous token: {e}")
                notify("READY=1")
    finally:
        notify("STOPPING=1", "STATUS=stopping: queued jobs cancelled, running proofs finishing")
        summary = server.stop()
        for sig, old in signals:
            signal.signal(sig, old)
    announce(f"cuzk serve: stopped ({summary.get('cancelled', 0)} queued jobs cancelled, "
             f"{summary.get('running', 0) - summary.get('unfinished', 0)} finished, "
             f"{summary.get('unfinished', 0)} cut off)")
    return 0
