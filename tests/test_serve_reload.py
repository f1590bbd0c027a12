"""Renewing ``cuzk serve``'s secrets without a restart: TLS files replaced in place are used from
the next handshake (cuzk/serve/credentials.py), wrong or half-written ones are not (the old
certificate stays); SIGHUP reloads the bearer token (the old one is refused from then on, a bad
file keeps the old one) and tells systemd RELOADING=1 / READY=1."""

from __future__ import annotations

import logging
import os
import shutil
import socket

import pytest

grpc = pytest.importorskip("grpc")

from cuzk.errors import ConfigError  # noqa: E402
from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import DaemonProcess, config_text, cube_entry  # noqa: E402
from test_serve_security import make_cert  # noqa: E402

OLD, NEW = "old-token-0123456789abcdef", "new-token-0123456789abcdef"


def _status_ok(address, **kw) -> bool:
    """A fresh channel (a new TLS handshake) answers GetStatus; False when the call is refused."""
    try:
        with Client(address, timeout=15, **kw) as c:
            return c.status().backend == "cpu"
    except grpc.RpcError:
        return False


def _install(pair, cert, key):
    """Replace the served files the way a renewal tool does: write beside, then rename over."""
    for src, dst in ((pair[1], cert), (pair[0], key)):
        tmp = dst.with_suffix(".new")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)


def test_tls_files_renewed_in_place(cube, tmp_path, caplog):
    folder, params = cube
    ca1, ca2 = make_cert(tmp_path, "ca1"), make_cert(tmp_path, "ca2")
    first, second = make_cert(tmp_path, "srv1", ca1), make_cert(tmp_path, "srv2", ca2)
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    _install(first, cert, key)
    cfg = parse_config(config_text(folder, circuits=cube_entry(params)) + f'[tls]\ncert = "{cert}"\nkey = "{key}"\n')
    trusts1, trusts2 = {"tls": {"ca": ca1[1]}}, {"tls": {"ca": ca2[1]}}
    with Server(cfg) as srv:
        addr = srv.tcp_address
        assert _status_ok(addr, **trusts1) and not _status_ok(addr, **trusts2)
        with Client(addr, timeout=15, **trusts1) as kept:  # a connection made with the first certificate
            assert kept.health() == "SERVING"
            _install(second, cert, key)
            assert _status_ok(addr, **trusts2) and not _status_ok(addr, **trusts1)
            assert srv.tls.reloads == 1
            assert kept.health() == "SERVING"  # an open connection keeps its certificate
        # a key that is not the certificate's, then garbage: refused, the second one stays in use
        caplog.set_level(logging.ERROR, logger="cuzk.serve")
        shutil.copyfile(first[0], key)
        assert _status_ok(addr, **trusts2)
        cert.write_bytes(b"-----BEGIN CERTIFICATE-----\nnot base64\n")
        assert _status_ok(addr, **trusts2) and _status_ok(addr, **trusts2)
        assert srv.tls.reloads == 1
        refusals = [r.getMessage() for r in caplog.records if "not usable" in r.getMessage()]
        assert len(refusals) == 2 and "matching pair" in refusals[0]  # once per change, not per handshake
        _install(first, cert, key)  # a good pair again: taken at the next handshake
        assert _status_ok(addr, **trusts1) and srv.tls.reloads == 2
        with Client(addr, timeout=15, **trusts1) as c:  # what to alert on: refused changes
            text = c.metrics()
        assert 'cuzk_serve_secret_reloads_total{result="taken",secret="tls"} 2' in text
        assert 'cuzk_serve_secret_reloads_total{result="refused",secret="tls"} 2' in text


def test_a_wrong_pair_at_start_is_a_config_error(cube, tmp_path):
    folder, params = cube
    a, b = make_cert(tmp_path, "a"), make_cert(tmp_path, "b")
    cfg = parse_config(config_text(folder, circuits=cube_entry(params)) + f'[tls]\ncert = "{a[1]}"\nkey = "{b[0]}"\n')
    with pytest.raises(ConfigError, match="matching pair"):
        Server(cfg)


def test_reload_swaps_the_token(cube):
    folder, params = cube
    token_file = folder / "token"
    token_file.write_text(OLD)
    cfg = parse_config(config_text(folder, circuits=cube_entry(params)) + f'[auth]\ntoken_file = "{token_file}"\n')
    with Server(cfg) as srv:
        assert _status_ok(srv.tcp_address, token=OLD)
        token_file.write_text(NEW)
        assert _status_ok(srv.tcp_address, token=OLD)  # nothing changes before the reload
        assert "reloaded" in srv.reload()
        assert _status_ok(srv.tcp_address, token=NEW) and not _status_ok(srv.tcp_address, token=OLD)
        token_file.write_text("short")
        with pytest.raises(ConfigError, match="at least 16 characters"):
            srv.reload()
        assert _status_ok(srv.tcp_address, token=NEW)
        with Client(srv.tcp_address, token=NEW, timeout=15) as c:
            text = c.metrics()
        assert 'cuzk_serve_secret_reloads_total{result="taken",secret="token"} 1' in text
        assert 'cuzk_serve_secret_reloads_total{result="refused",secret="token"} 1' in text
    with Server(parse_config(config_text(folder, circuits=cube_entry(params)))) as srv:
        assert "nothing to reload" in srv.reload()


def test_sighup_reloads_a_running_daemon(cube, tmp_path):
    folder, params = cube
    token_file = tmp_path / "token"
    token_file.write_text(OLD)
    config = tmp_path / "cuzk.toml"
    config.write_text(config_text(folder, circuits=cube_entry(params)) + f'[auth]\ntoken_file = "{token_file}"\n')
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify.sock"))
    notify.settimeout(60)
    daemon = DaemonProcess(config, env={"NOTIFY_SOCKET": str(tmp_path / "notify.sock")})
    try:
        assert "READY=1" in notify.recv(4096).decode().splitlines()
        assert _status_ok(daemon.tcp, token=OLD)
        token_file.write_text(NEW)
        daemon.proc.send_signal(1)  # SIGHUP
        reloading = notify.recv(4096).decode().splitlines()
        assert "RELOADING=1" in reloading and any(x.startswith("MONOTONIC_USEC=") for x in reloading)
        assert notify.recv(4096).decode().splitlines() == ["READY=1"]
        assert _status_ok(daemon.tcp, token=NEW) and not _status_ok(daemon.tcp, token=OLD)
        assert any("SIGHUP: bearer token reloaded" in line for line in daemon.lines)
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
        notify.close()
