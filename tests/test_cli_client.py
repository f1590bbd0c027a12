"""``cuzk client`` (cuzk/cli_client.py) against a loopback ``cuzk serve``: every command's output
and exit status, the token and TLS options, and a refused call printed as its status and message."""

from __future__ import annotations

import json

import pytest

grpc = pytest.importorskip("grpc")

from cuzk.cli import main  # noqa: E402
from cuzk.serve.config import parse_config  # noqa: E402
from cuzk.serve.server import Server  # noqa: E402

from serve_support import config_text, cube_entry, cube_keys  # noqa: E402
from test_serve_security import make_cert  # noqa: E402

TOKEN = "client-token-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-client")
    params, _ = cube_keys(folder)
    with Server(parse_config(config_text(folder, circuits=cube_entry(params)))) as srv:
        yield srv, folder


def _run(capsys, *argv):
    code = main(["client", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_status_health_metrics(served, capsys):
    srv, _ = served
    a = ["--address", srv.tcp_address, "--timeout", "60"]
    code, out, _ = _run(capsys, *a, "status")
    assert code == 0 and out.startswith("backend cpu, up ") and "device 0 cpu: idle" in out
    assert "key cube: COLD" in out or "key cube: HOT" in out
    code, out, _ = _run(capsys, *a, "status", "--json")
    assert code == 0 and json.loads(out)["engine"]["backend"] == "cpu"
    assert _run(capsys, *a, "health")[:2] == (0, "SERVING\n")
    code, _, err = _run(capsys, *a, "health", "cuzk.v1.Nope")
    assert code == 1 and err.startswith("cuzk client health: NOT_FOUND: health: no service 'cuzk.v1.Nope'")
    code, out, _ = _run(capsys, *a, "metrics")
    assert code == 0 and "cuzk_serve_uptime_seconds" in out and out.endswith("\n")


def test_keys_prove_and_cancel(served, capsys, tmp_path):
    srv, _ = served
    a = ["--address", srv.tcp_address, "--timeout", "120"]
    code, out, _ = _run(capsys, *a, "preload", "cube")
    assert code == 0 and (out.startswith("loaded in ") or out == "already loaded\n")
    assert _run(capsys, *a, "preload", "cube")[:2] == (0, "already loaded\n")
    code, out, _ = _run(capsys, *a, "prove-circuit", "cube", "--inputs", '{"x": 3, "out": 35}', "--request-id", "cli-1")
    assert code == 0 and json.loads(out)["public"] == ["35"] and json.loads(out)["job_id"] == "cli-1"
    inputs = tmp_path / "in.json"
    inputs.write_text('{"x": 2, "out": 15}')
    code, out, _ = _run(capsys, *a, "prove-circuit", "cube", "--inputs", f"@{inputs}", "--out", str(tmp_path / "p"))
    assert code == 0 and json.loads((tmp_path / "p" / "public.json").read_text()) == ["15"]
    assert json.loads((tmp_path / "p" / "proof.json").read_text())["protocol"] == "groth16"
    code, _, err = _run(capsys, *a, "prove-circuit", "cube", "--inputs", '{"x": 2, "out": 16}')
    assert code == 1 and ": FAILED: " in err and "not satisfied" in err
    assert _run(capsys, *a, "cancel", "cli-1")[:2] == (0, "already ended\n")
    code, _, err = _run(capsys, *a, "cancel", "no-such-job")
    assert code == 1 and err.startswith("cuzk client cancel: NOT_FOUND: job_id: no job 'no-such-job'")
    code, out, _ = _run(capsys, *a, "evict", "cube")
    assert code == 0 and out.startswith("freed ")
    assert _run(capsys, *a, "evict", "cube")[:2] == (0, "was not loaded\n")


def test_unreachable_daemon(tmp_path, capsys):
    code, _, err = _run(capsys, "--address", f"unix://{tmp_path}/none.sock", "--timeout", "5", "health")
    assert code == 1 and err.startswith("cuzk client health: UNAVAILABLE: ")


def test_token_and_tls(tmp_path, capsys):
    folder = tmp_path
    params, _ = cube_keys(folder)
    ca = make_cert(tmp_path, "ca")
    key, crt = make_cert(tmp_path, "server", ca)
    (folder / "token").write_text(TOKEN)
    cfg = parse_config(config_text(folder, circuits=cube_entry(params)) + f'[auth]\ntoken_file = "{folder / "token"}"\n'
                       f'[tls]\ncert = "{crt}"\nkey = "{key}"\n')
    with Server(cfg) as srv:
        a = ["--address", srv.tcp_address, "--timeout", "30", "--tls-ca", str(ca[1])]
        code, _, err = _run(capsys, *a, "status")
        assert code == 1 and "UNAUTHENTICATED" in err
        code, out, _ = _run(capsys, *a, "--token-file", str(folder / "token"), "status")
        assert code == 0 and out.startswith("backend cpu")
        code, _, err = _run(capsys, "--address", srv.tcp_address, "--timeout", "10", "--token-file",
                            str(folder / "token"), "status")  # plain text against TLS
        assert code == 1 and "UNAVAILABLE" in err


@pytest.mark.parametrize("flags, says", [
    (["--tls-cert", "c.pem"], "cert given without key"),  # grpc-core aborted the process on a cert alone
    (["--tls-key", "k.pem"], "key given without cert"),   # a key alone was dropped: plain text
    (["--tls-ca", "ca.pem", "--tls-key", "k.pem"], "key given without cert"),
])
def test_a_client_certificate_without_its_key_is_refused(tmp_path, capsys, flags, says):
    for name in ("c.pem", "k.pem", "ca.pem"):
        (tmp_path / name).write_text("not a PEM")
    flags = [str(tmp_path / f) if f.endswith(".pem") else f for f in flags]
    code, _, err = _run(capsys, "--address", f"unix://{tmp_path}/none.sock", *flags, "status")
    assert code == 1 and says in err and err.count("\n") == 1


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
def test_timeout_must_be_a_positive_finite_number(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as e:
        main(["client", "--address", f"unix://{tmp_path}/none.sock", "--timeout", value, "health"])
    assert e.value.code == 2 and "--timeout: expected a positive number of seconds" in capsys.readouterr().err


def test_the_python_client_checks_its_arguments(tmp_path):
    from cuzk.errors import InputError
    from cuzk.serve import Client

    with pytest.raises(InputError, match="cert given without key"):
        Client(f"unix://{tmp_path}/none.sock", tls={"cert": b"x"})
    with pytest.raises(InputError, match="timeout"):
        Client(f"unix://{tmp_path}/none.sock", timeout=float("nan"))
    with pytest.raises(InputError, match="unknown keys"):
        Client(f"unix://{tmp_path}/none.sock", tls={"pem": b"x"})
