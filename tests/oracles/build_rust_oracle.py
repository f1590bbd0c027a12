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

import os
import shutil
import subprocess
import sys
from pathlib import Path

from oracle_cache import OracleBuildError, build_once, cache_root, file_digest, is_built, script_main

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


def _source_files() -> list[Path]:
    files = [CRATE_DIR / "Cargo.toml", CRATE_DIR / "Cargo.lock"]
    files += sorted((CRATE_DIR / "src").rglob("*.rs"))
    return files


def source_digest() -> str:
    """SHA-256 (hex) over the crate's manifest, lock file and sources, with their names."""
    return file_digest(_source_files(), lambda f: f.relative_to(CRATE_DIR).as_posix())


def oracle_path() -> Path:
    """Where the binary for the current sources lives (whether or not it is built yet)."""
    return cache_root() / source_digest() / BINARY_NAME


def build(*, quiet: bool = False) -> Path:
    """Return the oracle binary's path, building it first if this checkout has none.

    Raises:
        OracleBuildError: cargo is not on PATH, or the build failed.
    """
    target = oracle_path()
    if is_built(target):
        return target
    cargo = shutil.which("cargo")
    if cargo is None:
        raise OracleBuildError("cargo is not on PATH: the rust-fil-proofs oracle cannot be built")
    target_dir = cache_root() / "target"

    def make(partial: Path) -> None:
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
        shutil.copy2(target_dir / "release" / BINARY_NAME, partial)

    return build_once(target, "build.lock", make)


def main() -> int:
    return script_main("build_rust_oracle", build)


if __name__ == "__main__":
    sys.exit(main())
