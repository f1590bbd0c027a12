"""The ``cuzk serve`` configuration: a TOML file read with tomllib, checked key by key.

Sections mirror the Rust daemon's (Curio's extern/cuzk ``cuzk.example.toml``) where they mean the
same — ``[daemon] listen, status_listen``, ``[memory] total_budget``, ``[gpus] devices,
gpu_workers_per_device``, ``[srs] param_cache``, ``[synthesis]``, ``[pipeline]``,
``[logging] level, format`` — plus cuzk's own: ``[daemon] reflection``, ``[auth] token_file``,
``[tls] cert, key, client_ca`` and ``[[circuits]]``. A key the Rust daemon reads but that means
nothing here (its batching, its thread pools) is accepted and listed in
:attr:`ServeConfig.ignored`, so an operator's existing file loads; any other key is a
:class:`~cuzk.errors.ConfigError` naming it. Sizes are bytes or ``"64GiB"``-style text,
durations seconds or ``"5m"``-style text. docs/serve.md lists every key.

    >>> cfg = parse_config('[daemon]\\nlisten = "127.0.0.1:9820"\\n[gpus]\\ndevice = "cpu"\\n')
    >>> cfg.listen[0].target, cfg.device
    ('127.0.0.1:9820', 'cpu')
    >>> parse_config('[daemon]\\nlisten_on = "x"\\n')
    Traceback (most recent call last):
    ...
    cuzk.errors.ConfigError: config: unknown key [daemon] listen_on (known: listen, max_concurrent_rpcs, max_jobs, max_message_bytes, reflection, request_retention, shutdown_grace, status_listen)
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from pathlib import Path

import attrs

from cuzk.errors import ConfigError, InputError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as a package (extra "serve")
    import tomli as tomllib

__all__ = ["ServeConfig", "CircuitConfig", "Listen", "parse_config", "load_config", "default_config",
           "DEFAULT_TOML", "runtime_dir", "default_param_cache", "parse_duration", "MAX_MESSAGE_BYTES"]

#: Largest request or reply by default. Curio's own client caps its messages at 256 MiB; a 32 GiB
#: sector's C1 output is ~40 MB of JSON (~53 MB once base64'd into Curio's envelope), and a
#: 32 GiB WindowPoSt partition's 2,349 bincode vanilla proofs ~55 MB, so this fits both with room.
MAX_MESSAGE_BYTES = 256 << 20
#: The gRPC channel argument the daemon and cuzk's client both set: grpc-core tuned for latency
#: over throughput (a proof's answer is one small message). A bare grpcio call whose handler waits
#: 7 ms took 0.07-0.18 ms less with it on both ends, in three alternated runs of 600 calls
#: (docs/perf/serve.md).
LATENCY_OPTION = ("grpc.optimization_target", "latency")
#: cuzk's client channel: no transparent retries. grpc-core's retry machinery keeps a copy of
#: every call for a retry that, for this daemon, the caller can make itself (a request id makes a
#: submit idempotent); with it off a bare call took ~0.3 ms less in two alternated runs of 500
#: (docs/perf/serve.md). A call that never reached the daemon fails UNAVAILABLE instead.
NO_RETRIES_OPTION = ("grpc.enable_retries", 0)
_PRIORITIES = ("low", "normal", "high", "critical")
_DEVICES = ("auto", "cpu", "cuda")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def default_param_cache() -> Path:
    """Filecoin's parameter folder where none is configured: ``$FIL_PROOFS_PARAMETER_CACHE``, else
    rust-fil-proofs' own default ``/var/tmp/filecoin-proof-parameters``."""
    return Path(os.environ.get("FIL_PROOFS_PARAMETER_CACHE") or "/var/tmp/filecoin-proof-parameters")


def runtime_dir() -> Path:
    """The user's runtime folder: ``$XDG_RUNTIME_DIR``, else ``/run/user/<uid>``, else a
    ``cuzk-<uid>`` folder in the temporary directory."""
    env = os.environ.get("XDG_RUNTIME_DIR")
    if env and os.path.isdir(env):
        return Path(env)
    run = Path(f"/run/user/{os.getuid()}")
    return run if run.is_dir() else Path(tempfile.gettempdir()) / f"cuzk-{os.getuid()}"


#: The configuration ``cuzk serve`` runs with when given none: loopback only, the CPU backend.
DEFAULT_TOML = """\
[daemon]
listen = ["127.0.0.1:9820", "unix://{runtime}/cuzk/cuzk.sock"]
status_listen = "127.0.0.1:9821"
reflection = true

[gpus]
device = "cpu"
"""


@attrs.frozen
class Listen:
    """One address: TCP ``host:port`` (port 0 = a free one) or a Unix socket ``unix:///path``."""

    kind: str  #: "tcp" or "unix"
    host: str = ""
    port: int = 0
    path: str = ""

    @property
    def target(self) -> str:
        """The address as gRPC clients (Curio's included) write it."""
        if self.kind == "unix":
            return f"unix://{self.path}"
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_listen(text, where: str, *, unix: bool = True) -> Listen:
    """``"host:port"``, ``"[v6]:port"``, ``"tcp://host:port"`` or ``"unix:///abs/path"``."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"config: {where} must be an address such as '127.0.0.1:9820', got {text!r}")
    t = text.strip()
    if t.startswith("unix:"):
        if not unix:
            raise ConfigError(f"config: {where} must be a TCP host:port, got {text!r}")
        path = t[len("unix://"):] if t.startswith("unix://") else t[len("unix:"):]
        if not path.startswith("/") or "\0" in path or len(path.encode()) > 100:
            raise ConfigError(f"config: {where}: a Unix socket needs an absolute path of at most 100 bytes "
                              f"(the kernel's sun_path bound), got {text!r}")
        return Listen("unix", path=path)
    t = t.removeprefix("tcp://")
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([A-Za-z0-9.-]+):(\d{1,5})", t)
    if not m:
        raise ConfigError(f"config: {where} must be host:port, [v6]:port or unix:///path, got {text!r}")
    host, port = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    if not 0 <= int(port) <= 65535:
        raise ConfigError(f"config: {where}: port {port} is not in 0..65535")
    return Listen("tcp", host=host, port=int(port))


def parse_size(value, where: str) -> int:
    from cuzk.engine.keycache_cap import parse_size as size

    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, str):
        try:
            n = size(value)
        except InputError:
            n = None
    else:
        n = None
    if n is None or n <= 0:
        raise ConfigError(f"config: {where} must be a positive size (bytes or '64GiB'), got {value!r}")
    return n


def parse_duration(value, where: str) -> float:
    """Seconds from a number or ``"90s"``, ``"5m"``, ``"1h"``, ``"250ms"``."""
    units = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "": 1.0}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        secs = float(value)
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|)\s*", value) if isinstance(value, str) else None
        secs = float(m.group(1)) * units[m.group(2)] if m else -1.0
    if not 0 <= secs < math.inf or secs > 10 * 365 * 86400:
        raise ConfigError(f"config: {where} must be a duration (seconds, or '90s', '5m'), got {value!r}")
    return secs


def _int(lo: int, hi: int):
    def check(value, where):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ConfigError(f"config: {where} must be an integer in {lo}..{hi}, got {value!r}")
        return value
    return check


def _choice(options):
    def check(value, where):
        if value not in options:
            raise ConfigError(f"config: {where} must be one of {', '.join(options)}, got {value!r}")
        return value
    return check


def _bool(value, where):
    if not isinstance(value, bool):
        raise ConfigError(f"config: {where} must be true or false, got {value!r}")
    return value


def _str(value, where):
    if not isinstance(value, str) or "\0" in value:
        raise ConfigError(f"config: {where} must be a string, got {value!r}")
    return value


def _path(value, where):
    return Path(os.path.expanduser(_str(value, where))) if value != "" else None


def _listens(value, where):
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or len(items) > 16:
        raise ConfigError(f"config: {where} must be an address or a list of 1..16 addresses, got {value!r}")
    return tuple(parse_listen(v, where) for v in items)


def _status_listen(value, where):
    return None if value == "" else parse_listen(value, where, unix=False)


def _budget(value, where):
    if value in ("auto", "unlimited"):
        return value
    return parse_size(value, where)


def _devices(value, where):
    if not isinstance(value, list) or len(value) > 64:
        raise ConfigError(f"config: {where} must be a list of CUDA device ordinals, got {value!r}")
    return tuple(_int(0, 1023)(v, where) for v in value)


def _names(value, where):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"config: {where} must be a list of circuit ids, got {value!r}")
    return tuple(value)


_IGNORED = object()  # the Rust daemon's key with no meaning here: accepted, listed, unused
#: section -> key -> (reader, default); ``_IGNORED`` keys are the Rust daemon's
SCHEMA = {
    "daemon": {
        "listen": (_listens, None), "status_listen": (_status_listen, None),
        "max_message_bytes": (parse_size, MAX_MESSAGE_BYTES), "max_concurrent_rpcs": (_int(4, 100_000), 256),
        "shutdown_grace": (parse_duration, 60.0), "request_retention": (parse_duration, 600.0),
        "max_jobs": (_int(16, 10_000_000), 100_000), "reflection": (_bool, False),
    },
    "memory": {"total_budget": (_budget, "auto"), "safety_margin": (parse_size, None),
               "eviction_min_idle": _IGNORED, "pinned_budget": _IGNORED, "working_memory_budget": _IGNORED},
    "gpus": {"device": (_choice(_DEVICES), "auto"), "devices": (_devices, ()),
             "gpu_workers_per_device": (_int(1, 64), None), "gpu_threads": _IGNORED},
    "srs": {"param_cache": (_path, None), "key_cache": (_path, None), "preload": (_names, ())},
    "synthesis": {"threads": (_int(0, 4096), 0), "concurrency": (_int(1, 256), 1), "partition_workers": _IGNORED},
    "pipeline": {"synthesis_lookahead": (_int(0, 1024), 1), "synthesis_concurrency": (_int(1, 256), None),
                 "enabled": _IGNORED},
    "scheduler": {"max_batch_size": _IGNORED, "max_batch_wait_ms": _IGNORED, "sort_by_type": _IGNORED},
    "logging": {"level": (_choice(("trace", "debug", "info", "warn", "warning", "error")), "info"),
                "format": (_choice(("text", "json")), "text")},
    "auth": {"token_file": (_path, None)},
    "tls": {"cert": (_path, None), "key": (_path, None), "client_ca": (_path, None)},
}
CIRCUIT_SCHEMA = {
    "name": (_str, None), "zkey": (_path, None), "wasm": (_path, None), "r1cs": (_path, None),
    "params": (_path, None), "circuit": (_str, None), "priority": (_choice(_PRIORITIES), "normal"),
    "concurrency": (_int(1, 256), 1),
}


@attrs.frozen
class CircuitConfig:
    """One ``[[circuits]]`` entry: a snarkjs zkey (+ its circom r1cs and, optionally, wasm) or a
    bellperson ``.params`` + a Python circuit (``module:attr``)."""

    name: str
    zkey: Path | None = None
    wasm: Path | None = None
    r1cs: Path | None = None
    params: Path | None = None
    circuit: str | None = None
    priority: str = "normal"
    concurrency: int = 1  #: syntheses at once (threads: the daemon keeps each job's public inputs beside it)


@attrs.frozen
class ServeConfig:
    """A checked configuration (docs/serve.md names each key)."""

    listen: tuple
    status_listen: Listen | None
    max_message_bytes: int
    max_concurrent_rpcs: int
    shutdown_grace_s: float
    request_retention_s: float
    max_jobs: int
    reflection: bool  #: serve grpc.reflection.v1alpha (cuzk/serve/reflection.py)
    memory_budget: object  #: "auto", "unlimited" or bytes
    safety_margin: int | None
    device: str
    devices: tuple
    workers_per_device: int | None
    param_cache: Path
    key_cache: Path | None
    preload: tuple
    synthesis_threads: int
    synthesis_concurrency: int
    lookahead: int
    log_level: str
    log_format: str
    token_file: Path | None
    tls_cert: Path | None
    tls_key: Path | None
    tls_client_ca: Path | None
    circuits: tuple
    ignored: tuple  #: the Rust daemon's keys present in the file and not used ("[scheduler] max_batch_size")

    def engine_budget(self):
        """The Engine's ``memory_budget``: ``"auto"`` (or physical memory minus ``safety_margin``), bytes or None."""
        if self.memory_budget == "unlimited":
            return None
        if self.memory_budget == "auto" and self.safety_margin is not None:
            from cuzk.engine.budget import physical_memory

            return max(1 << 30, physical_memory() - self.safety_margin)
        return self.memory_budget

    def token(self) -> str | None:
        """The bearer token from ``[auth] token_file`` (surrounding whitespace dropped), or None."""
        if self.token_file is None:
            return None
        try:
            text = self.token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"config: [auth] token_file {self.token_file}: {e}") from None
        if len(text) < 16 or any(c.isspace() for c in text):
            raise ConfigError(f"config: [auth] token_file {self.token_file}: the token must be one word of at least "
                              "16 characters")
        return text


def _section(doc, name, schema, where_prefix, ignored):
    table = doc.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"config: [{name}] must be a table, got {table!r:.60}")
    for key in table:
        if key not in schema:
            raise ConfigError(f"config: unknown key {where_prefix}{key} (known: {', '.join(sorted(schema))})")
    out = {}
    for key, spec in schema.items():
        where = f"{where_prefix}{key}"
        if spec is _IGNORED:
            if key in table:
                ignored.append(where)
            continue
        reader, default = spec
        out[key] = reader(table[key], where) if key in table else default
    return out


def _circuits(doc) -> tuple:
    items = doc.get("circuits", [])
    if not isinstance(items, list) or not all(isinstance(t, dict) for t in items):
        raise ConfigError("config: circuits must be an array of tables ([[circuits]])")
    seen, out = set(), []
    for i, table in enumerate(items):
        c = _section({"c": table}, "c", CIRCUIT_SCHEMA, f"[[circuits]] #{i + 1} ", [])
        name = c["name"]
        if name is None or not _NAME.match(name):
            raise ConfigError(f"config: [[circuits]] #{i + 1} name must be 1..128 characters of letters, digits, "
                              f"'_', '.', '-', got {name!r}")
        if name in seen:
            raise ConfigError(f"config: [[circuits]] name {name!r} appears twice")
        seen.add(name)
        where = f"[[circuits]] {name!r}"
        if (c["zkey"] is None) == (c["params"] is None):
            raise ConfigError(f"config: {where} needs exactly one of zkey or params")
        if c["params"] is not None and (c["circuit"] is None or not re.fullmatch(r"[\w.]+:[\w.]+", c["circuit"])):
            raise ConfigError(f"config: {where}: params needs circuit = 'module:attr' (the Python circuit), "
                              f"got {c['circuit']!r}")
        if c["params"] is not None and (c["wasm"] or c["r1cs"]):
            raise ConfigError(f"config: {where}: wasm and r1cs go with a zkey, not with params")
        if c["zkey"] is not None and c["circuit"] is not None:
            raise ConfigError(f"config: {where}: circuit = 'module:attr' goes with params, not with a zkey")
        if c["zkey"] is not None and c["r1cs"] is None:
            raise ConfigError(f"config: {where}: a zkey circuit needs its circom r1cs (r1cs = '...'), to compute "
                              "A·z, B·z, C·z from a witness")
        out.append(CircuitConfig(**c))
    return tuple(out)


def parse_config(text: str, *, source: str = "config") -> ServeConfig:
    """Check a TOML document (see the module doc); returns a :class:`ServeConfig`.

    Raises:
        cuzk.errors.ConfigError: TOML that does not parse, an unknown section or key, a bad value.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    for name in doc:
        if name not in SCHEMA and name != "circuits":
            raise ConfigError(f"config: unknown section [{name}] (known: {', '.join(sorted([*SCHEMA, 'circuits']))})")
    ignored: list = []
    s = {name: _section(doc, name, schema, f"[{name}] ", ignored) for name, schema in SCHEMA.items()}
    d, mem, g, srs = s["daemon"], s["memory"], s["gpus"], s["srs"]
    listen = d["listen"] if d["listen"] is not None else _listens("127.0.0.1:9820", "[daemon] listen")
    if len({x.target for x in listen}) != len(listen):
        raise ConfigError("config: [daemon] listen names one address twice")
    if mem["safety_margin"] is not None and mem["total_budget"] != "auto":
        raise ConfigError("config: [memory] safety_margin applies to total_budget = 'auto' only")
    if g["devices"] and g["device"] == "cpu":
        raise ConfigError("config: [gpus] devices lists CUDA devices, but device = 'cpu'")
    tls = s["tls"]
    if (tls["cert"] is None) != (tls["key"] is None):
        raise ConfigError("config: [tls] needs both cert and key")
    if tls["client_ca"] is not None and tls["cert"] is None:
        raise ConfigError("config: [tls] client_ca needs the server's cert and key too")
    param_cache = srs["param_cache"] or default_param_cache()
    concurrency = s["pipeline"]["synthesis_concurrency"] or s["synthesis"]["concurrency"]
    return ServeConfig(
        listen=listen, status_listen=d["status_listen"], max_message_bytes=d["max_message_bytes"],
        max_concurrent_rpcs=d["max_concurrent_rpcs"], shutdown_grace_s=d["shutdown_grace"],
        request_retention_s=d["request_retention"], max_jobs=d["max_jobs"], reflection=d["reflection"],
        memory_budget=mem["total_budget"], safety_margin=mem["safety_margin"],
        device=g["device"], devices=g["devices"], workers_per_device=g["gpu_workers_per_device"],
        param_cache=param_cache, key_cache=srs["key_cache"], preload=srs["preload"],
        synthesis_threads=s["synthesis"]["threads"], synthesis_concurrency=concurrency,
        lookahead=s["pipeline"]["synthesis_lookahead"], log_level=s["logging"]["level"],
        log_format=s["logging"]["format"], token_file=s["auth"]["token_file"],
        tls_cert=tls["cert"], tls_key=tls["key"], tls_client_ca=tls["client_ca"],
        circuits=_circuits(doc), ignored=tuple(ignored),
    )


def load_config(path) -> ServeConfig:
    """Read and check the TOML file at ``path``; relative paths in it are taken from its folder.

    Raises:
        cuzk.errors.ConfigError: the file cannot be read, or :func:`parse_config`'s reasons.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"config: cannot read {p}: {e}") from None
    return _relative_to(parse_config(text, source=str(p)), p.resolve().parent)


def _relative_to(cfg: ServeConfig, base: Path) -> ServeConfig:
    def fix(v):
        return base / v if isinstance(v, Path) and not v.is_absolute() else v

    fields = {f.name: fix(getattr(cfg, f.name)) for f in attrs.fields(ServeConfig) if f.name != "circuits"}
    circuits = tuple(attrs.evolve(c, **{f.name: fix(getattr(c, f.name)) for f in attrs.fields(CircuitConfig)})
                     for c in cfg.circuits)
    return ServeConfig(**{**fields, "circuits": circuits})


def default_config() -> ServeConfig:
    """:data:`DEFAULT_TOML` with the user's runtime folder filled in."""
    return parse_config(DEFAULT_TOML.replace("{runtime}", str(runtime_dir())), source="embedded default")
