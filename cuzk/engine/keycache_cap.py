"""The key cache's size cap: how many bytes of entries a cache directory may hold, and which
entries make room when a new one would exceed it (used by :class:`cuzk.engine.keycache.KeyCache`).

* The cap: ``KeyCache(max_bytes=...)`` / ``Engine(key_cache_max_bytes=...)``, else
  ``$CUZK_CACHE_MAX_BYTES`` (``500M``, ``100G``, plain bytes, or ``unlimited``), else **half the
  size of the filesystem that holds the cache directory** (a production key set is a few large
  entries; half a disk keeps room for everything else, and a key over the cap is simply not
  cached).
* When a fill would take the entries past the cap, entries are removed least recently used first
  (last use = the file's atime, set on every load) — never one *pinned* by a live Engine of this
  process (the entry its host-tier key was mapped from), and never a partial file: only whole
  ``.cuzkkey`` entries are candidates, and a new entry becomes visible by rename. If the entries
  that may go do not make room, the new entry is not written (the caller still gets its checked
  key; ``LoadInfo.note`` says why).
* Making room and writing the entry happen under an ``flock`` on ``<dir>/cap.lock``, so
  concurrent writers (threads or processes) never take the cache past the cap together.

    >>> parse_size("1.5K"), parse_size("2GiB") == 2 << 30, parse_size("unlimited")
    (1536, True, None)
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import weakref
from pathlib import Path

from cuzk.errors import InputError

__all__ = ["ENV", "parse_size", "resolve_cap", "default_cap", "pin", "pinned", "file_lock", "remove_unheld_lock", "cap_lock",
           "choose_victims"]

ENV = "CUZK_CACHE_MAX_BYTES"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_UNLIMITED = ("unlimited", "none", "inf")
_log = logging.getLogger("cuzk.engine.keycache")

_pins: dict[str, int] = {}  # real path of an entry -> live pins in this process
_pins_lock = threading.Lock()


def parse_size(text) -> int | None:
    """Bytes of ``123``, ``10K``, ``5M``, ``100G``, ``2T`` (powers of 1024; ``iB``/``B`` suffixes
    allowed); None for ``unlimited``.

    Raises:
        cuzk.errors.InputError: anything else.
    """
    t = str(text).strip().upper()
    if t.lower() in _UNLIMITED:
        return None
    t = t.removesuffix("IB").removesuffix("B")
    num, unit = (t[:-1], t[-1]) if t and t[-1] in _UNITS else (t, "")
    try:
        value = float(num) * _UNITS[unit]
    except ValueError:
        value = -1.0
    if not 0 <= value < 2**63:
        raise InputError(f"expected a size such as 500M, 100G or 'unlimited', got {text!r}")
    return int(value)


def default_cap(directory) -> int:
    """Half the size of the filesystem holding ``directory`` (its nearest existing ancestor)."""
    p = Path(directory).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    st = os.statvfs(p)
    return st.f_blocks * st.f_frsize // 2


def resolve_cap(max_bytes, directory) -> int | None:
    """The cap in bytes (None: unlimited) from the argument, else ``$CUZK_CACHE_MAX_BYTES``, else
    :func:`default_cap`.

    Raises:
        cuzk.errors.InputError: a negative or malformed size (naming where it came from).
    """
    if max_bytes is None:
        env = os.environ.get(ENV, "").strip()
        if not env:
            return default_cap(directory)
        try:
            return parse_size(env)
        except InputError as e:
            raise InputError(f"${ENV}: {e}") from None
    if isinstance(max_bytes, str):
        return parse_size(max_bytes)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise InputError(f"max_bytes must be an int >= 0, a size such as '100G', 'unlimited' or None, "
                         f"got {max_bytes!r}")
    return max_bytes


def _unpin(key: str) -> None:
    with _pins_lock:
        n = _pins.get(key, 0) - 1
        if n > 0:
            _pins[key] = n
        else:
            _pins.pop(key, None)


def pin(path, owner) -> weakref.finalize:
    """Keep the entry at ``path`` from being removed to make room while ``owner`` lives; call
    the returned finalizer to unpin earlier (idempotent)."""
    key = os.path.realpath(path)
    with _pins_lock:
        _pins[key] = _pins.get(key, 0) + 1
    return weakref.finalize(owner, _unpin, key)


def pinned(path) -> bool:
    with _pins_lock:
        return os.path.realpath(path) in _pins


@contextlib.contextmanager
def file_lock(path: Path):
    """Exclusive ``flock`` on the file ``path`` (also between threads: each open is its own lock
    owner); without flock (or in a read-only directory) holders are not serialised."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:  # read-only cache directory: the writer reports it
        _log.warning("cannot lock %s: %s", path, e)
        yield
        return
    try:
        while True:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # the file may have been removed (a clear found it unheld) while we waited on it: a lock
            # on a removed inode excludes no one who opens the path now, so lock what is there now
            try:
                if os.path.samestat(os.fstat(fd), os.stat(path)):
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def remove_unheld_lock(path) -> bool:
    """Remove the lock file ``path`` unless someone holds it; whether it was removed (also True
    when it was already gone). Holding it while unlinking means no holder is cut off; a process
    waiting on it then finds the path gone and locks the new file (see :func:`file_lock`)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return True
    finally:
        os.close(fd)


def cap_lock(directory: Path):
    """Exclusive lock on ``<directory>/cap.lock``: room is made and taken by one writer at a time."""
    return file_lock(directory / "cap.lock")


def choose_victims(entries, need: int, cap: int | None, keep: str | None = None):
    """``(victims, fits)``: entries to remove, damaged first, then least recently used, so that
    ``need`` more bytes fit under ``cap``; pinned entries and ``keep`` (the entry about to be
    replaced, whose bytes the new file takes over) never go."""
    if cap is None:
        return [], True
    others = [e for e in entries if e.path != keep]
    total = sum(e.bytes for e in others)
    victims = []
    for e in sorted(others, key=lambda e: (e.error is None, e.last_use)):
        if total + need <= cap:
            break
        if pinned(e.path):
            continue
        victims.append(e)
        total -= e.bytes
    return victims, total + need <= cap
