"""``cuzk serve`` configuration, checked without a server: every section and key, the Rust
daemon's file accepted, unknown keys and bad values refused with the key named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuzk.errors import ConfigError
from cuzk.serve.config import (
    DEFAULT_TOML, MAX_MESSAGE_BYTES, default_config, load_config, parse_config, parse_duration, runtime_dir,
)

FULL = """
[daemon]
listen = ["0.0.0.0:9820", "unix:///run/curio/cuzk.sock", "[::1]:0"]
status_listen = "127.0.0.1:9821"
max_message_bytes = "64MiB"
max_concurrent_rpcs = 64
shutdown_grace = "2m"
request_retention = 30
max_jobs = 500

[memory]
total_budget = "auto"
safety_margin = "5GiB"
eviction_min_idle = "5m"

[gpus]
device = "cuda"
devices = [0, 1]
gpu_workers_per_device = 2
gpu_threads = 32

[srs]
param_cache = "/data/zk/params"
key_cache = "/data/zk/cuzk-cache"
preload = ["wpost-32g"]

[synthesis]
threads = 8
concurrency = 2

[pipeline]
synthesis_lookahead = 3

[scheduler]
max_batch_size = 1

[logging]
level = "debug"

[auth]
token_file = "/etc/cuzk/token"

[tls]
cert = "/etc/cuzk/tls.crt"
key = "/etc/cuzk/tls.key"
client_ca = "/etc/cuzk/clients.pem"

[[circuits]]
name = "age-check"
zkey = "/srv/age.zkey"
r1cs = "/srv/age.r1cs"
wasm = "/srv/age_js/age.wasm"
priority = "high"

[[circuits]]
name = "cube"
params = "/srv/cube.params"
circuit = "cuzk.circuits:Cube"
"""


def test_every_section_reads():
    c = parse_config(FULL)
    assert [x.target for x in c.listen] == ["0.0.0.0:9820", "unix:///run/curio/cuzk.sock", "[::1]:0"]
    assert c.status_listen.target == "127.0.0.1:9821"
    assert (c.max_message_bytes, c.max_concurrent_rpcs, c.shutdown_grace_s, c.request_retention_s, c.max_jobs) == \
        (64 << 20, 64, 120.0, 30.0, 500)
    assert (c.memory_budget, c.safety_margin, c.device, c.devices, c.workers_per_device) == \
        ("auto", 5 << 30, "cuda", (0, 1), 2)
    assert c.param_cache == Path("/data/zk/params") and c.preload == ("wpost-32g",)
    assert (c.synthesis_threads, c.synthesis_concurrency, c.lookahead, c.log_level) == (8, 2, 3, "debug")
    assert c.token_file == Path("/etc/cuzk/token") and c.tls_client_ca == Path("/etc/cuzk/clients.pem")
    assert [(x.name, x.priority) for x in c.circuits] == [("age-check", "high"), ("cube", "normal")]
    assert c.circuits[1].circuit == "cuzk.circuits:Cube"
    # the Rust daemon's keys that mean nothing here are accepted and listed
    assert set(c.ignored) == {"[memory] eviction_min_idle", "[gpus] gpu_threads", "[scheduler] max_batch_size"}


def test_the_rust_daemons_example_file_loads():
    # Curio's extern/cuzk/cuzk.example.toml, its keys and values as shipped (comments dropped)
    rust = """
[daemon]
listen = "0.0.0.0:9820"
[srs]
param_cache = "/data/zk/params"
[memory]
total_budget = "auto"
safety_margin = "5GiB"
eviction_min_idle = "5m"
[gpus]
devices = []
gpu_threads = 32
gpu_workers_per_device = 2
[scheduler]
max_batch_size = 1
max_batch_wait_ms = 10000
sort_by_type = true
[synthesis]
threads = 0
[pipeline]
enabled = true
synthesis_lookahead = 1
synthesis_concurrency = 1
[logging]
level = "info"
"""
    c = parse_config(rust)
    assert c.listen[0].target == "0.0.0.0:9820" and c.device == "auto" and c.workers_per_device == 2
    assert "[scheduler] max_batch_wait_ms" in c.ignored and "[pipeline] enabled" in c.ignored


def test_defaults_and_the_embedded_config():
    c = parse_config("")
    assert c.listen[0].target == "127.0.0.1:9820" and c.status_listen is None
    assert c.max_message_bytes == MAX_MESSAGE_BYTES and c.device == "auto" and c.circuits == ()
    d = default_config()
    assert d.device == "cpu" and d.status_listen.host == "127.0.0.1"
    hosts = [x.host for x in d.listen if x.kind == "tcp"]
    assert hosts == ["127.0.0.1"]  # loopback only
    (unix,) = [x for x in d.listen if x.kind == "unix"]
    assert unix.path == str(runtime_dir() / "cuzk" / "cuzk.sock")
    assert "{runtime}" in DEFAULT_TOML


def test_param_cache_defaults_like_filecoin(monkeypatch):
    monkeypatch.setenv("FIL_PROOFS_PARAMETER_CACHE", "/x/params")
    assert parse_config("").param_cache == Path("/x/params")
    monkeypatch.delenv("FIL_PROOFS_PARAMETER_CACHE")
    assert parse_config("").param_cache == Path("/var/tmp/filecoin-proof-parameters")


@pytest.mark.parametrize("text, named", [
    ("[daemon]\nlisten_on = 1\n", "[daemon] listen_on"),
    ("[deamon]\nlisten = 'x'\n", "[deamon]"),
    ("[gpus]\ndevice = 'tpu'\n", "[gpus] device"),
    ("[gpus]\ndevice = 'cpu'\ndevices = [0]\n", "[gpus] devices"),
    ("[gpus]\ngpu_workers_per_device = 0\n", "[gpus] gpu_workers_per_device"),
    ("[gpus]\ndevices = [-1]\n", "[gpus] devices"),
    ("[daemon]\nlisten = 'localhost'\n", "[daemon] listen"),
    ("[daemon]\nlisten = 'unix://relative.sock'\n", "[daemon] listen"),
    ("[daemon]\nlisten = '1.2.3.4:70000'\n", "[daemon] listen"),
    ("[daemon]\nlisten = []\n", "[daemon] listen"),
    ("[daemon]\nlisten = ['a:1', 'a:1']\n", "[daemon] listen"),
    ("[daemon]\nstatus_listen = 'unix:///x.sock'\n", "[daemon] status_listen"),
    ("[daemon]\nmax_message_bytes = '12 parsecs'\n", "[daemon] max_message_bytes"),
    ("[daemon]\nmax_message_bytes = 0\n", "[daemon] max_message_bytes"),
    ("[daemon]\nshutdown_grace = 'soon'\n", "[daemon] shutdown_grace"),
    ("[daemon]\nshutdown_grace = -1\n", "[daemon] shutdown_grace"),
    ("[daemon]\nmax_concurrent_rpcs = true\n", "[daemon] max_concurrent_rpcs"),
    ("[memory]\ntotal_budget = 'lots'\n", "[memory] total_budget"),
    ("[memory]\ntotal_budget = '8GiB'\nsafety_margin = '1GiB'\n", "[memory] safety_margin"),
    ("[tls]\ncert = '/a'\n", "[tls]"),
    ("[tls]\nclient_ca = '/a'\n", "[tls] client_ca"),
    ("[logging]\nlevel = 'loud'\n", "[logging] level"),
    ("[synthesis]\nconcurrency = 0\n", "[synthesis] concurrency"),
    ("[srs]\npreload = 'wpost-32g'\n", "[srs] preload"),
    ("daemon = 3\n", "[daemon]"),
    ("[[circuits]]\nname = 'a'\n", "exactly one of zkey or params"),
    ("[[circuits]]\nname = 'a b'\nparams = 'x'\ncircuit = 'm:a'\n", "name"),
    ("[[circuits]]\nname = 'a'\nparams = 'x'\n", "circuit = 'module:attr'"),
    ("[[circuits]]\nname = 'a'\nparams = 'x'\ncircuit = 'm:a'\nwasm = 'w'\n", "wasm and r1cs"),
    ("[[circuits]]\nname = 'a'\nzkey = 'x'\n", "r1cs"),
    ("[[circuits]]\nname = 'a'\nzkey = 'x'\nr1cs = 'y'\ncircuit = 'm:a'\n", "goes with params"),
    ("[[circuits]]\nname = 'a'\nzkey = 'x'\nr1cs = 'y'\ncolour = 'red'\n", "[[circuits]] #1 colour"),
    ("[[circuits]]\nname = 'a'\nzkey = 'x'\nr1cs = 'y'\n[[circuits]]\nname = 'a'\nzkey = 'x'\nr1cs = 'y'\n",
     "appears twice"),
    ("[[circuits]]\nname = 'a'\nzkey = 'x'\nr1cs = 'y'\npriority = 'urgent'\n", "priority"),
    ("circuits = 3\n", "circuits"),
    ("[daemon\n", "not valid TOML"),
])
def test_bad_configs_name_the_key(text, named):
    with pytest.raises(ConfigError) as e:
        parse_config(text)
    assert named in str(e.value)


def test_durations():
    assert [parse_duration(v, "x") for v in (5, 2.5, "90s", "5m", "1h", "250ms")] == [5, 2.5, 90, 300, 3600, 0.25]


def test_load_config_resolves_relative_paths(tmp_path):
    (tmp_path / "cuzk.toml").write_text("[srs]\nparam_cache = 'params'\n[auth]\ntoken_file = 'token'\n"
                                        "[[circuits]]\nname = 'c'\nparams = 'c.params'\ncircuit = 'm:C'\n")
    c = load_config(tmp_path / "cuzk.toml")
    assert c.param_cache == tmp_path / "params" and c.token_file == tmp_path / "token"
    assert c.circuits[0].params == tmp_path / "c.params"
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


def test_token_file(tmp_path):
    f = tmp_path / "token"
    cfg = parse_config(f"[auth]\ntoken_file = '{f}'\n")
    with pytest.raises(ConfigError, match="token_file"):
        cfg.token()  # missing
    f.write_text("short\n")
    with pytest.raises(ConfigError, match="16 characters"):
        cfg.token()
    f.write_text("  0123456789abcdef0123  \n")
    assert cfg.token() == "0123456789abcdef0123"
    assert parse_config("").token() is None


def test_engine_budget():
    assert parse_config("[memory]\ntotal_budget = 'unlimited'\n").engine_budget() is None
    assert parse_config("[memory]\ntotal_budget = '2GiB'\n").engine_budget() == 2 << 30
    assert parse_config("").engine_budget() == "auto"
    assert parse_config("[memory]\nsafety_margin = '1GiB'\n").engine_budget() >= 1 << 30


def test_runtime_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert runtime_dir() == tmp_path
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "absent"))
    assert runtime_dir() != tmp_path / "absent"
    assert os.fspath(runtime_dir())
