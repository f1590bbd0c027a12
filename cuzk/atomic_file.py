"""Files written whole or not at all: one temp-file-and-rename for every writer in cuzk.

:func:`atomic_write` writes into a temporary file in the target's folder and renames it into
place; whatever goes wrong (the target is a directory, the disk is full, the writer raises,
Ctrl-C), the temporary file is removed and the target is untouched. :func:`write_together`
does the same for several files at once: all of them are replaced, or none (the CLI's
``proof.json`` + ``public.json``).

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with atomic_write(os.path.join(folder, "a.txt"), "w") as f:
    ...     _ = f.write("hello")
    >>> sorted(os.listdir(folder))
    ['a.txt']
    >>> write_together({os.path.join(folder, "a.txt"): b"1", folder: b"2"})  # a folder: refused
    Traceback (most recent call last):
    IsADirectoryError: ...
    >>> open(os.path.join(folder, "a.txt")).read(), sorted(os.listdir(folder))
    ('hello', ['a.txt'])
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Iterator, Mapping

__all__ = ["atomic_write", "write_together", "refuse_same_file"]


def _temp_beside(path: str, mode: int | None) -> tuple[int, str]:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    os.fchmod(fd, mode if mode is not None else 0o666 & ~_umask())
    return fd, tmp


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _refuse_directory(path: str) -> None:
    if os.path.isdir(path):  # os.replace would fail only after the whole file was written
        raise IsADirectoryError(f"[Errno 21] Is a directory: {path!r}")


def refuse_same_file(paths) -> None:
    """Refuse ``paths`` (outputs to write together) when two of them resolve to one file.

    Raises:
        cuzk.errors.InputError: naming both paths.
    """
    from cuzk.errors import InputError

    seen: dict[str, str] = {}
    for path in map(os.fspath, paths):
        real = os.path.realpath(path)  # "out/p.json", "./out/p.json" and a link to it are one file
        if real in seen:
            same = f"{path} is named twice" if seen[real] == path else f"{seen[real]} and {path} are one file ({real})"
            raise InputError(f"{same}; each output needs its own file")
        seen[real] = path


@contextlib.contextmanager
def atomic_write(path, mode: str = "wb", *, fsync: bool = False, perms: int | None = None,
                 encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary file for writing; on success rename it to ``path``.

    Args:
        mode: ``"wb"`` or ``"w"`` (text, ``encoding`` default UTF-8).
        fsync: flush to disk before the rename (for files other processes will map).
        perms: permission bits of the result (default: 0666 less the umask, like ``open``).

    Raises:
        IsADirectoryError, OSError: the file cannot be written; nothing is left behind.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_write mode must be 'wb' or 'w', got {mode!r}")
    path = os.fspath(path)
    _refuse_directory(path)
    fd, tmp = _temp_beside(path, perms)
    try:
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": encoding or "utf-8"})) as f:
            yield f
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def write_together(contents: Mapping[object, bytes]) -> None:
    """Replace every ``path`` with its bytes, or none of them.

    Each file is first written to a temporary file beside it; then the targets are replaced
    one by one, the old ones kept aside until all are in place, so a failure at any step puts
    back what was there (and removes what was not).

    Raises:
        cuzk.errors.InputError: two paths name one file (the second write would replace the
            first; :func:`refuse_same_file`); nothing is written.
        IsADirectoryError, OSError: one file cannot be written; every target is as it was.
    """
    items = [(os.fspath(p), data) for p, data in contents.items()]
    refuse_same_file([path for path, _ in items])
    for path, _ in items:
        _refuse_directory(path)
    temps: list[str] = []
    done: list[tuple[str, str | None]] = []  # (target, its old content moved aside, or None)
    try:
        for path, data in items:
            fd, tmp = _temp_beside(path, None)
            temps.append(tmp)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        for (path, _), tmp in zip(items, temps):
            old = None
            if os.path.lexists(path):
                fd, old = _temp_beside(path + ".old", None)
                os.close(fd)
                os.replace(path, old)
            done.append((path, old))
            os.replace(tmp, path)
    except BaseException:
        for path, old in reversed(done):
            if old is not None:
                os.replace(old, path)
            else:
                _unlink(path)
        for tmp in temps:
            _unlink(tmp)
        raise
    for _, old in done:
        if old is not None:
            _unlink(old)
