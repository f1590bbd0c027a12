"""Build the rust-fil-proofs test oracle once per machine and print its path.

The binary (tests/oracles/rust-fil-proofs/, see its README.md) is cached under
``$XDG_CACHE_HOME/cuzk/oracles/<digest>/cuzk-fil-oracle`` (``~/.cache`` when
``XDG_CACHE_HOME`` is unset), where ``<digest>`` is the SHA-256 of the crate's
Cargo.toml, Cargo.lock and sources: an edit to any of them builds a new binary, an
unchanged checkout reuses the old one. Cargo's intermediate files live in one shared
``.../cuzk/oracles/target`` folder, so a rebuild after a small edit recompiles only the
oracle itself. A file lock keeps parallel test workers from building twice.

Run as a script (what CI calls before the tests)::

    python tests/oracles/build_rust_oracle.py      # prints the binary's path

Exit status: 0 with the path on stdout; 1 when cargo is missing or the build fails
(cargo's output goes to stderr).

>>> len(source_digest())
64
>>> oracle_path().name
'cuzk-fil-oracle'
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = [
    "CRATE_DIR",
    "OracleBuildError",
    "build",
    "cache_root",
    "main",
    "oracle_path",
    "source_digest",
]

CRATE_DIR = Path(__file__).resolve().parent / "rust-fil-proofs"
BINARY_NAME = "cuzk-fil-oracle"


class OracleBuildError(RuntimeError):
    """Cargo is missing or ``cargo build`` failed; the message says which."""


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/cuzk/oracles`` (``~/.cache/cuzk/oracles`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cuzk" / "oracles"


def _source_files() -> list[Path]:
    files = [CRATE_DIR / "Cargo.toml", CRATE_DIR / "Cargo.lock"]
    files += sorted((CRATE_DIR / "src").rglob("*.rs"))
    return files


def source_digest() -> str:
    """SHA-256 (hex) over the crate's manifest, lock file and sources, with their names."""
    h = hashlib.sha256()
    for f in _source_files():
        h.update(f.relative_to(CRATE_DIR).as_posix().encode())
        h.update(b"\0")
        data = f.read_bytes()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def oracle_path() -> Path:
    """Where the binary for the current sources lives (whether or not it is built yet)."""
    return cache_root() / source_digest() / BINARY_NAME


def build(*, quiet: bool = False) -> Path:
    """Return the oracle binary's path, building it first if this checkout has none.

    Raises:
        OracleBuildError: cargo is not on PATH, or the build failed.
    """
    target = oracle_path()
    if target.is_file() and os.access(target, os.X_OK):
        return target
    cargo = shutil.which("cargo")
    if cargo is None:
        raise OracleBuildError("cargo is not on PATH: the rust-fil-proofs oracle cannot be built")
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building the same binary
        if target.is_file():
            return target
        target_dir = root / "target"
        env = dict(os.environ, CARGO_TARGET_DIR=str(target_dir))
        cmd = [cargo, "build", "--release", "--locked", "--manifest-path", str(CRATE_DIR / "Cargo.toml")]
        proc = subprocess.run(
            cmd,
            env=env,
            stdout=subprocess.DEVNULL if quiet else sys.stderr,
            stderr=subprocess.PIPE if quiet else sys.stderr,
            text=True,
        )
        if proc.returncode != 0:
            tail = (proc.stderr or "")[-4000:]
            raise OracleBuildError(f"cargo build of {CRATE_DIR} failed (exit {proc.returncode})\n{tail}")
        built = target_dir / "release" / BINARY_NAME
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(BINARY_NAME + ".partial")
        shutil.copy2(built, partial)
        os.replace(partial, target)  # readers see the whole binary or none
    return target


def main() -> int:
    try:
        path = build()
    except OracleBuildError as e:
        print(f"build_rust_oracle: {e}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
