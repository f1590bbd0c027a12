"""Build the Go Curio-client test oracle once per machine and print its path.

The program (tests/oracles/curio-client/, see its README.md) is a Go gRPC client of
``cuzk.v1.ProvingEngine``; its stubs are generated at build time from cuzk's own
``cuzk/serve/proto/cuzk/v1/proving.proto`` (and ``circuits.proto``, cuzk's extension service, for
its benchmark command) by protoc-gen-go and protoc-gen-go-grpc (pinned as
``tool`` dependencies in its go.mod/go.sum), with the protoc of the ``grpcio-tools`` package this
Python runs. The binary is cached under
``$XDG_CACHE_HOME/cuzk/oracles/<digest>/curio-client`` (``~/.cache`` when ``XDG_CACHE_HOME`` is
unset), where ``<digest>`` is the SHA-256 of go.mod, go.sum, the Go sources, the ``.proto`` files and
the protoc version: an edit to any of them builds a new binary, an unchanged checkout reuses the
old one. The build happens in a copy of the module under ``.../oracles/curio-client-build``, so
the checkout is never written; a file lock keeps parallel test workers from building twice.

Run as a script::

    python tests/oracles/build_curio_client.py      # prints the binary's path

Exit status: 0 with the path on stdout; 1 when go is missing or the build fails (its output
goes to stderr).

>>> len(source_digest())
64
>>> client_path().name
'curio-client'
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from oracle_cache import OracleBuildError, build_once, cache_root, file_digest, is_built, script_main

__all__ = ["MODULE_DIR", "PROTOS", "build", "client_path", "main", "source_digest"]

MODULE_DIR = Path(__file__).resolve().parent / "curio-client"
PROTO_ROOT = Path(__file__).resolve().parents[2] / "cuzk" / "serve" / "proto"
# Curio's service, and cuzk's extension service that the time-circuit command calls
PROTOS = ("cuzk/v1/proving.proto", "cuzk/v1/circuits.proto")
BINARY_NAME = "curio-client"
MODULE_PATH = "cuzk.dev/oracles/curio-client"  # go.mod's module line
STUBS = "cuzk"  # the generated package's folder: the stubs are package cuzk, as in Curio's lib/cuzk
PLUGINS = ("google.golang.org/protobuf/cmd/protoc-gen-go", "google.golang.org/grpc/cmd/protoc-gen-go-grpc")


def _protoc_version() -> str:
    """grpcio-tools' version ("" when it is not installed): its protoc writes the stubs."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("grpcio-tools")
    except PackageNotFoundError:
        return ""


def _module_files() -> list[Path]:
    """The Go module's own files, copied into the build folder."""
    return [MODULE_DIR / "go.mod", MODULE_DIR / "go.sum", *sorted(MODULE_DIR.glob("*.go"))]


def _source_files() -> list[Path]:
    return [*_module_files(), *(PROTO_ROOT / p for p in PROTOS)]


def source_digest() -> str:
    """SHA-256 (hex) over go.mod, go.sum, the Go sources, the .proto files and grpcio-tools' version."""
    return file_digest(_source_files(), lambda f: f.name, f"grpcio-tools {_protoc_version()}\0".encode())


def client_path() -> Path:
    """Where the binary for the current sources lives (whether or not it is built yet)."""
    return cache_root() / source_digest() / BINARY_NAME


def _run(cmd: list, cwd: Path, env: dict, what: str) -> None:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise OracleBuildError(f"{what} failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n"
                               f"{proc.stdout[-4000:]}")


def _build_in(work: Path, go: str, out: Path) -> None:
    """Copy the module to ``work``, generate its stubs there and build ``out``."""
    if work.exists():
        shutil.rmtree(work)
    (work / STUBS).mkdir(parents=True)
    (work / "bin").mkdir()
    for f in _module_files():
        shutil.copy2(f, work / f.name)
    # -mod=readonly: the pinned go.sum is the truth; GOTOOLCHAIN=local: build with this machine's
    # go or fail saying which version go.mod needs, never fetch another toolchain
    env = dict(os.environ, GOFLAGS="-mod=readonly", GOTOOLCHAIN="local")
    _run([go, "build", "-o", f"{work / 'bin'}/", *PLUGINS], work, env, "building protoc-gen-go and protoc-gen-go-grpc")
    mappings = [f"M{p}={MODULE_PATH}/{STUBS}" for p in PROTOS]
    _run([sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}",
          f"--plugin=protoc-gen-go={work / 'bin' / 'protoc-gen-go'}",
          f"--plugin=protoc-gen-go-grpc={work / 'bin' / 'protoc-gen-go-grpc'}",
          "--go_out=.", f"--go_opt=module={MODULE_PATH}", *(f"--go_opt={m}" for m in mappings),
          "--go-grpc_out=.", f"--go-grpc_opt=module={MODULE_PATH}", *(f"--go-grpc_opt={m}" for m in mappings),
          *PROTOS], work, env, "generating the Go stubs (python -m grpc_tools.protoc)")
    _run([go, "build", "-trimpath", "-o", out, "."], work, env, f"go build of {MODULE_DIR}")


def build() -> Path:
    """Return the client binary's path, building it first if this checkout has none.

    Raises:
        OracleBuildError: go or grpcio-tools is missing, or a build step failed.
    """
    target = client_path()
    if is_built(target):
        return target
    go = shutil.which("go")
    if go is None:
        raise OracleBuildError("go is not on PATH: the Curio client oracle cannot be built")
    if not _protoc_version():
        raise OracleBuildError("grpcio-tools is not installed (the test extra): no protoc for the Go stubs")
    return build_once(target, "curio-client.lock",
                      lambda partial: _build_in(cache_root() / "curio-client-build", go, partial))


def main() -> int:
    return script_main("build_curio_client", build)


if __name__ == "__main__":
    sys.exit(main())
