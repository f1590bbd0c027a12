"""``cuzk serve``'s gRPC health service (cuzk/serve/health.py): Check and Watch over loopback,
NOT_SERVING from the graceful stop's first step, Check without the bearer token and Watch only
with it, the Watch bound, bad bytes answered INVALID_ARGUMENT, and the daemon's ``READY=1`` /
``STOPPING=1`` to systemd (cuzk/serve/systemd.py) around a real ``cuzk serve`` process."""

from __future__ import annotations

import queue
import socket
import threading
import time

import pytest

grpc = pytest.importorskip("grpc")
pytest.importorskip("grpc_health")

from cuzk.serve import Client  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.health import MAX_STREAMS, SERVICES, stream_bound  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import config_text, cube_entry  # noqa: E402

TOKEN = "health-token-0123456789abcdef"


def _code(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code(), e.value.details() or ""


def _reader(stream) -> queue.Queue:
    """The Watch stream's names on a queue, read on a thread; None when it ends."""
    q: queue.Queue = queue.Queue()

    def read():
        try:
            for name in stream:
                q.put(name)
        except grpc.RpcError as e:
            q.put(e.code())
        q.put(None)

    threading.Thread(target=read, daemon=True).start()
    return q


def test_check_and_watch_follow_the_graceful_stop(cube):
    folder, params = cube
    srv = Server(parse_config(config_text(folder, circuits=cube_entry(params))))
    try:
        with Client(srv.tcp_address, timeout=30) as c:
            for name in SERVICES:
                assert c.health(name) == "SERVING"
            code, details = _code(lambda: c.health("cuzk.v1.NoSuchService"))
            assert code == grpc.StatusCode.NOT_FOUND and "cuzk.v1.NoSuchService" in details and "cuzk.v1.ProvingEngine" in details
            unknown = _reader(c.watch_health("cuzk.v1.NoSuchService", timeout=60))
            assert unknown.get(timeout=30) == "SERVICE_UNKNOWN"
            watch = _reader(c.watch_health("", timeout=60))
            assert watch.get(timeout=30) == "SERVING"
            assert srv.health.watches == 2
            assert 'cuzk_serve_streams{kind="health_watch"} 2' in c.metrics()
            # a proof still works beside the open streams
            assert c.prove_circuit("cube", {"x": 3, "out": 35}).result.status == 1
            srv.stop(grace_s=5)
            # told NOT_SERVING before the server went away, then the stream ends
            assert watch.get(timeout=30) == "NOT_SERVING"
            rest = [watch.get(timeout=30)]
            while rest[-1] is not None:
                rest.append(watch.get(timeout=30))
            assert all(x != "SERVING" for x in rest)
        assert srv.health.status("") == "NOT_SERVING"
        counts = srv.daemon.rpc_counts
        assert counts[("Check", "OK")] == len(SERVICES) and counts[("Check", "NOT_FOUND")] == 1
        assert counts[("Watch", "OK")] == 2
    finally:
        srv.stop(grace_s=0)


def test_check_needs_no_token_watch_does(cube):
    folder, params = cube
    (folder / "token").write_text(TOKEN)
    cfg = parse_config(config_text(folder, circuits=cube_entry(params)) + f'[auth]\ntoken_file = "{folder / "token"}"\n')
    with Server(cfg) as srv:
        with Client(srv.tcp_address, timeout=30) as c:
            assert c.health() == "SERVING"  # Kubernetes' gRPC probe sends no metadata
            assert _code(lambda: next(iter(c.watch_health(timeout=30))))[0] == grpc.StatusCode.UNAUTHENTICATED
            assert _code(c.status)[0] == grpc.StatusCode.UNAUTHENTICATED
        with Client(srv.tcp_address, token="wrong-token-0123456789abcdef", timeout=30) as c:
            assert c.health("cuzk.v1.ProvingEngine") == "SERVING"
        with Client(srv.tcp_address, token=TOKEN, timeout=30) as c:
            stream = c.watch_health(timeout=30)
            assert next(iter(stream)) == "SERVING"
            stream.cancel()
        assert srv.daemon.rpc_counts[("Watch", "UNAUTHENTICATED")] == 1


def test_watch_streams_are_bounded_and_give_their_place_back(cube):
    folder, params = cube
    with Server(parse_config(config_text(folder, circuits=cube_entry(params)))) as srv, \
            Client(srv.tcp_address, timeout=60) as c:
        streams = [c.watch_health(timeout=60) for _ in range(MAX_STREAMS)]
        for s in streams:
            assert next(iter(s)) == "SERVING"
        code, details = _code(lambda: next(iter(c.watch_health(timeout=30))))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and f"at most {MAX_STREAMS}" in details
        # the streams hold no handler thread: calls go on as usual
        assert c.prove_circuit("cube", {"x": 3, "out": 35}).result.status == 1
        assert c.health() == "SERVING"
        for s in streams:
            s.cancel()
        deadline = time.monotonic() + 30
        while srv.health.watches and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.health.watches == 0
        again = c.watch_health(timeout=30)
        assert next(iter(again)) == "SERVING"
        again.cancel()


@pytest.mark.parametrize("method", ["Check", "Watch"])
def test_bad_bytes_are_invalid_argument(cube, method):
    folder, params = cube
    with Server(parse_config(config_text(folder, circuits=cube_entry(params)))) as srv, \
            grpc.insecure_channel(srv.tcp_address) as ch:
        path = f"/grpc.health.v1.Health/{method}"
        call = ch.unary_unary(path) if method == "Check" else ch.unary_stream(path)
        for garbage in (b"\xff\xff\xff", b"\x0a\x05ab", b"\x08" * 11):
            code, details = _code(lambda: list(call(garbage, timeout=30)) if method == "Watch" else call(garbage, timeout=30))
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "HealthCheckRequest" in details
        with Client(srv.tcp_address, timeout=30) as c:
            assert c.health() == "SERVING"
        assert srv.health.watches == 0


def test_systemd_is_told_ready_and_stopping(cube, tmp_path):
    from serve_support import DaemonProcess

    folder, params = cube
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify.sock"
    notify.bind(str(path))
    notify.settimeout(60)
    config = tmp_path / "cuzk.toml"
    config.write_text(config_text(folder, circuits=cube_entry(params)))
    daemon = DaemonProcess(config, env={"NOTIFY_SOCKET": str(path)})
    try:
        ready = notify.recv(4096).decode()
        assert "READY=1" in ready.splitlines() and f"MAINPID={daemon.proc.pid}" in ready.splitlines()
        assert any(line.startswith("STATUS=") and daemon.tcp in line for line in ready.splitlines()), ready
        with Client(daemon.tcp, timeout=30) as c:
            assert c.health() == "SERVING"
        assert daemon.terminate() == 0
        stopping = notify.recv(4096).decode()
        assert "STOPPING=1" in stopping.splitlines()
    finally:
        daemon.kill()
        notify.close()


def test_a_small_daemon_keeps_most_of_its_calls_for_proofs(cube):
    assert [stream_bound(n) for n in (4, 8, 16, 64, 128, 256, 100_000)] == [1, 1, 2, 8, 16, 16, 16]
    folder, params = cube
    with Server(parse_config(config_text(folder, circuits=cube_entry(params), extra="max_concurrent_rpcs = 8\n"
                                         "reflection = true"))) as srv, Client(srv.tcp_address, timeout=60) as c:
        assert srv.health.max_watches == 1 and srv.reflection.max_streams == 1
        held = c.watch_health(timeout=60)
        assert next(iter(held)) == "SERVING"
        with pytest.raises(grpc.RpcError) as e:
            next(iter(c.watch_health(timeout=30)))
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "at most 1 Watch" in e.value.details()
        assert c.prove_circuit("cube", {"x": 3, "out": 35}).result.status == 1
        held.cancel()
