"""``cuzk serve --check-config`` (cuzk/serve/check.py): a good configuration prints what was
checked and exits 0 without listening; each thing a start would refuse (a short token, a key that
is not the certificate's, a missing or wrong circuit file, a circuit path that does not import)
exits 1 naming it."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("grpc")

from cuzk.cli import main  # noqa: E402

from serve_support import config_text, cube_entry  # noqa: E402
from test_serve_security import make_cert  # noqa: E402


def _check(tmp_path, capsys, text):
    path = tmp_path / "cuzk.toml"
    path.write_text(text)
    code = main(["serve", "--config", str(path), "--check-config"])
    out, err = capsys.readouterr()
    return code, out, err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_good_config(cube, tmp_path, capsys):
    folder, params = cube
    ca = make_cert(tmp_path, "ca")
    key, crt = make_cert(tmp_path, "server", ca)
    (tmp_path / "token").write_text("check-token-0123456789abcdef")
    port = _free_port()
    code, out, _ = _check(tmp_path, capsys, config_text(folder, listen=[f"127.0.0.1:{port}"], circuits=cube_entry(params))
                          + f'[auth]\ntoken_file = "{tmp_path / "token"}"\n'
                          + f'[tls]\ncert = "{crt}"\nkey = "{key}"\nclient_ca = "{ca[1]}"\n'
                          + "[scheduler]\nmax_batch_size = 4\n")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == f"listen: 127.0.0.1:{port}" and lines[-1].endswith(": OK")
    assert any(x.startswith("[tls] ") and "key matches, client CA parses" in x for x in lines)
    assert any(x.startswith("[auth] token_file ") for x in lines)
    assert f"[[circuits]] cube: loads (key {params})" in lines
    assert "note: [scheduler] max_batch_size is a Rust daemon setting cuzk serve ignores" in lines
    with socket.socket() as s:  # nothing was left listening
        s.bind(("127.0.0.1", port))


@pytest.mark.parametrize("case, says", [
    ("short token", "at least 16 characters"),
    ("wrong key", "matching pair"),
    ("missing params", "does not exist"),
    ("bad circuit path", "cannot be imported"),
    ("unknown key", "unknown key"),
])
def test_what_a_start_would_refuse(cube, tmp_path, capsys, case, says):
    folder, params = cube
    text = config_text(folder, circuits=cube_entry(params))
    if case == "short token":
        (tmp_path / "token").write_text("short")
        text += f'[auth]\ntoken_file = "{tmp_path / "token"}"\n'
    elif case == "wrong key":
        a, b = make_cert(tmp_path, "a"), make_cert(tmp_path, "b")
        text += f'[tls]\ncert = "{a[1]}"\nkey = "{b[0]}"\n'
    elif case == "missing params":
        text = config_text(folder, circuits=cube_entry(tmp_path / "none.params"))
    elif case == "bad circuit path":
        text = config_text(folder, circuits=cube_entry(params).replace("cuzk.circuits:Cube", "cuzk.circuits:NoSuch"))
    else:
        text = text.replace("[daemon]\n", "[daemon]\nlisten_twice = 1\n")
    code, _, err = _check(tmp_path, capsys, text)
    assert code == 1 and err.startswith("cuzk serve: error: ") and says in err, err
