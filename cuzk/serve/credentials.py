"""The TLS credentials of ``cuzk serve``'s TCP listeners, renewed without a restart.

Certificates expire and are replaced in place (cert-manager, certbot, an operator's script). The
server's credentials are grpc's dynamic ones: before each new TLS handshake grpc asks
:meth:`TlsFiles.fetch`, which reads the ``[tls]`` files and, when their bytes changed, checks
that the key matches the certificate and that the client CA parses (Python's ``ssl``, reading the
files in place), then hands grpc the new configuration. Files caught half-written or wrong are
not used: the previous certificate stays in use, and the problem is logged once per change of
the files. Connections already open keep the certificate they were made with.
"""

from __future__ import annotations

import logging
import ssl
import threading
from pathlib import Path

import grpc

from cuzk.errors import ConfigError

__all__ = ["TlsFiles", "server_credentials"]

_log = logging.getLogger("cuzk.serve")


def _read(path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise ConfigError(f"config: [tls] {what} {path}: {e}") from None


def _check(paths: dict) -> None:
    """Raise ConfigError unless the key file holds the certificate's private key and the client
    CA parses; Python's ssl reads the files in place (no copy of the key is written anywhere)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(paths["cert"], paths["key"])
    except (ssl.SSLError, OSError, ValueError) as e:
        raise ConfigError(f"config: [tls] cert and key do not load as a matching pair ({e})") from None
    if "client_ca" in paths:
        try:
            ctx.load_verify_locations(cafile=paths["client_ca"])
        except (ssl.SSLError, OSError, ValueError) as e:
            raise ConfigError(f"config: [tls] client_ca does not parse as PEM certificates ({e})") from None


class TlsFiles:
    """The ``[tls]`` files of a configuration: read and checked now (ConfigError naming the
    problem), re-read by :meth:`fetch` when their bytes change."""

    def __init__(self, cert, key, client_ca=None):
        self.paths = {"cert": Path(cert), "key": Path(key)}
        if client_ca is not None:
            self.paths["client_ca"] = Path(client_ca)
        self._lock = threading.Lock()
        self.reloads = 0  #: certificate changes taken into use since start
        self.refusals = 0  #: changes of the files not taken (half-written, mismatched, unreadable)
        self._data = self._read_all()
        self.config = self._load(self._data)
        self._refused = None  # the bytes that failed, logged once

    def _read_all(self) -> dict:
        return {what: _read(p, what) for what, p in self.paths.items()}

    def _load(self, data: dict):
        _check(self.paths)
        # the bytes handed to grpc are the bytes checked: files rewritten meanwhile are tried again
        # at the next handshake
        if self._read_all() != data:
            raise ConfigError("config: [tls] files changed while being read")
        return grpc.ssl_server_certificate_configuration([(data["key"], data["cert"])],
                                                         root_certificates=data.get("client_ca"))

    def fetch(self):
        """grpc's certificate fetcher: the new configuration when the files' bytes changed and
        check out, else None (keep the current one). A few KB read per new connection: exact
        where file times are too coarse to tell two quick writes apart."""
        with self._lock:
            try:
                data = self._read_all()
            except ConfigError as e:  # a file gone for a moment (renamed over) or unreadable
                return self._refuse("unreadable", e)
            if data == self._data or data == self._refused:
                return None
            try:
                config = self._load(data)
            except Exception as e:  # noqa: BLE001 - grpc calls this on its handshake path: never raise
                return self._refuse(data, e)
            self._data, self._refused, self.config = data, None, config
            self.reloads += 1
            _log.info("TLS: new certificate from %s taken into use", self.paths["cert"])
            return config

    def _refuse(self, what, error) -> None:
        if what != self._refused:  # once per change, not once per handshake
            self.refusals += 1
            _log.error("TLS files changed but are not usable; keeping the previous certificate: %s", error)
        self._refused = what
        return None


def server_credentials(cfg) -> tuple[grpc.ServerCredentials | None, TlsFiles | None]:
    """The TCP listeners' credentials for ``cfg`` and the files behind them; (None, None) without ``[tls]``."""
    if cfg.tls_cert is None:
        return None, None
    files = TlsFiles(cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca)
    creds = grpc.dynamic_ssl_server_credentials(files.config, files.fetch,
                                                require_client_authentication=cfg.tls_client_ca is not None)
    return creds, files
