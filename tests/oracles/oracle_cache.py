"""What the oracle build scripts share: the per-machine cache, the source digest and the locked build.

Each oracle binary lives at ``cache_root() / <digest> / <name>``, where the digest covers the
sources it is built from, so an edit builds a new binary and an unchanged checkout reuses the
old one. ``build_once`` holds a file lock while it builds, because parallel test workers would
otherwise build the same binary twice, and moves the finished file into place in one step so a
reader sees the whole binary or none.

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> (d / "a.txt").write_text("x")
1
>>> len(file_digest([d / "a.txt"], lambda f: f.name))
64
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
from pathlib import Path
from typing import Callable, Iterable

__all__ = ["OracleBuildError", "build_once", "cache_root", "file_digest", "is_built", "script_main"]


class OracleBuildError(RuntimeError):
    """A build tool is missing or a build step failed; the message says which."""


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/cuzk/oracles`` (``~/.cache/cuzk/oracles`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cuzk" / "oracles"


def file_digest(files: Iterable[Path], name_of: Callable[[Path], str], salt: bytes = b"") -> str:
    """SHA-256 (hex) over ``salt`` then each file's name (``name_of``), length and bytes."""
    h = hashlib.sha256(salt)
    for f in files:
        h.update(name_of(f).encode() + b"\0")
        data = f.read_bytes()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def is_built(target: Path) -> bool:
    return target.is_file() and os.access(target, os.X_OK)


def build_once(target: Path, lock_name: str, make: Callable[[Path], None]) -> Path:
    """Run ``make(partial)`` under the cache's ``lock_name`` lock unless ``target`` exists by then.

    ``make`` writes the binary to ``partial``, which then replaces ``target``.
    """
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / lock_name, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building the same binary
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        make(partial)
        os.replace(partial, target)  # readers see the whole binary or none
    return target


def script_main(prog: str, build: Callable[[], Path]) -> int:
    """A build script's entry point: the path on stdout and 0, or the error on stderr and 1."""
    try:
        path = build()
    except OracleBuildError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    print(path)
    return 0
