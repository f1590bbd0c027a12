"""What the key cache knows about a source key file: its digest, cheaply re-established.

A cache entry is named by the SHA-256 of the source file's bytes. Hashing a production key
(tens of GiB) on every load would cost more than the load itself, so the cache keeps a small
record per source path (:class:`SourceRecord`, one JSON file each under ``<cache>/sources``):
the file's size, mtime (ns), inode and device when it was hashed, the full digest, and a
*sampled digest* — SHA-256 of the size and of 64 fixed-position 64 KiB pieces (the first and
the last among them; the whole file when it is under 4 MiB).

On load, when size, mtime, inode and device all still match the record, the sampled digest is
recomputed (a few MiB of reads) and, if it matches too, the record's full digest is trusted.
Otherwise the whole file is hashed again and the entry looked up under the new digest. A
record that cannot be read, or is damaged (nested JSON, a field missing or of the wrong type:
:meth:`SourceRecord.parse`, through the bounded JSON loader), means the same: hash again.

What this trusts: that a file whose size, mtime_ns, inode and device are unchanged, and whose
sampled pieces are unchanged, holds the bytes it held when it was hashed. Ordinary replacement
(copy, rename, rewrite, ``touch``) changes mtime or inode and forces a full hash. Defeating it
takes an in-place edit outside the sampled pieces followed by restoring mtime (deliberate, by
someone who can write the key file). Even then the cache serves the *old* key, which was read
with every point checked: the failure is a stale key, never an unchecked one.

:class:`HashingReader` wraps the source file during the checked read (:func:`checked_read`) so
that the digest recorded is that of the very bytes the reader checked.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "k.params")
    >>> _ = open(p, "wb").write(b"abc")
    >>> full_digest(p)[:16], len(sampled_digest(p))
    ('ba7816bf8f01cfea', 64)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat

import attrs

from cuzk.atomic_file import atomic_write
from cuzk.bounded_json import loads_bounded
from cuzk.errors import InputError, KeyCacheError, KeyCacheFormatError

__all__ = ["SourceRecord", "HashingReader", "full_digest", "sampled_digest", "check_header", "checked_read",
           "sniff_kind", "regular_size", "open_regular", "SAMPLES", "SAMPLE_BYTES", "RECORD_BYTES"]

SAMPLES = 64  #: pieces in a sampled digest
SAMPLE_BYTES = 64 << 10  #: bytes per piece
_BLOCK = 8 << 20  # read size while hashing a whole file
#: the longest record file read (one is ~400 bytes; a longer one is damage)
RECORD_BYTES = 1 << 16


def _opened(source):
    """(binary file, whether we opened it) for a path or an open binary file."""
    if isinstance(source, (str, os.PathLike)):
        return open(source, "rb"), True
    return source, False


def regular_size(f, where=None, what: str = "a key") -> int:
    """The size of open file ``f`` (a file object or descriptor), refused unless it is a regular
    file (``what`` says which file the caller wanted, for the message).

    Every read here trusts ``st_size``: a character device reports 0 (and ``/dev/zero`` then
    reads forever into one bytes object), a pipe has no size at all.

    Raises:
        InputError: ``f`` is a directory, device, pipe or socket (``where`` or its name named).
    """
    st = os.fstat(f if isinstance(f, int) else f.fileno())
    if not stat.S_ISREG(st.st_mode):
        where = where if where is not None else getattr(f, "name", "the key source")
        raise InputError(f"{where}: not a regular file ({_file_type(st.st_mode)}); {what} must be one")
    return st.st_size


def open_regular(path, what: str = "a key"):
    """``(open binary file, size)`` of ``path``, refused unless it is a regular file; opened
    without waiting, so a pipe is refused rather than waited on for a writer.

    Raises:
        InputError: ``path`` is a directory, device, pipe or socket (see :func:`regular_size`).
    """
    def opener(name, flags):  # the file object keeps the path as its name (the zkey header check reads by it)
        fd = os.open(name, flags | getattr(os, "O_NONBLOCK", 0))
        try:
            regular_size(fd, os.fspath(name), what)
        except BaseException:
            os.close(fd)
            raise
        return fd

    f = open(path, "rb", opener=opener)
    return f, os.fstat(f.fileno()).st_size


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def full_digest(source, *, progress=None) -> str:
    """SHA-256 (hex) of a whole file (a path, or an open binary file, read from offset 0);
    ``progress(done, total)`` in bytes, per 8 MiB."""
    f, mine = _opened(source)
    try:
        h = hashlib.sha256()
        total, done = regular_size(f), 0
        f.seek(0)
        while block := f.read(_BLOCK):
            h.update(block)
            done += len(block)
            if progress is not None:
                progress(done, total)
        return h.hexdigest()
    finally:
        if mine:
            f.close()


def sampled_digest(source) -> str:
    """SHA-256 (hex) of the size and ``SAMPLES`` pieces of ``SAMPLE_BYTES`` at fixed positions
    (evenly spaced, first and last included) of a file (path or open binary file); the whole
    file when it is smaller than that."""
    f, mine = _opened(source)
    try:
        h = hashlib.sha256(b"cuzk-sampled-v1")
        size = regular_size(f)
        h.update(size.to_bytes(8, "little"))
        if size <= SAMPLES * SAMPLE_BYTES:
            f.seek(0)
            h.update(f.read(size))  # a file that grew since the fstat still hashes as the size says
        else:
            for i in range(SAMPLES):
                f.seek(i * (size - SAMPLE_BYTES) // (SAMPLES - 1))
                h.update(f.read(SAMPLE_BYTES))
        return h.hexdigest()
    finally:
        if mine:
            f.close()


def check_header(f, kind: str, where: str) -> None:
    """Refuse a source that cannot be a key of ``kind`` from a few reads of its structure,
    before it is hashed in full (a 1 GiB file of another kind is refused in microseconds, not
    after a second of hashing). It checks what the checked read checks first:

    * ``zkey``: magic, version, a section table that fits the file exactly, Groth16 protocol and
      every section the reader needs (:func:`cuzk.synth.binfile.read_container`, skipping the bodies);
    * ``params``: the bellperson layout's fixed vk points and the six length prefixes (ic and the
      five queries), each backed by the bytes after it and adding up to the file's size.

    Args:
        f: the source, an open binary file (its position is left at 0).

    Raises:
        SnarkjsFormatError, ParamsFormatError: not such a key (the checked read's own errors).

    >>> import io
    >>> check_header(io.BytesIO(bytes(1000)), "params", "x.params")
    Traceback (most recent call last):
    ...
    cuzk.errors.ParamsFormatError: x.params: ic count is 0 at byte offset 864; it must hold ONE's point
    """
    try:
        if kind == "zkey":
            _zkey_header(f, where)
        else:
            _params_layout(f, where)
    finally:
        f.seek(0)


def _zkey_header(f, where: str) -> None:
    from cuzk.errors import SnarkjsFormatError
    from cuzk.synth.binfile import read_container

    name = getattr(f, "name", None)
    if not isinstance(name, (str, bytes, os.PathLike)):
        return  # not a named file: the checked read checks it
    sec = read_container(name, b"zkey", (1,), where, keep=(1,))  # reads 12 bytes per section header
    if len(sec.get(1, b"")) != 4 or int.from_bytes(sec[1], "little") != 1:
        raise SnarkjsFormatError(f"{where}: not a Groth16 zkey (protocol section)")


def _params_layout(f, where: str) -> None:
    from cuzk.formats.bellperson import check_params_layout

    check_params_layout(f, where)


@attrs.frozen
class SourceRecord:
    """A source key file as it was when its digest was taken."""

    source: str  #: real path (symlinks resolved)
    size: int
    mtime_ns: int
    inode: int
    device: int
    digest: str  #: SHA-256 of the whole file
    sampled: str  #: :func:`sampled_digest` at the same time
    kind: str  #: "params" or "zkey"

    @classmethod
    def of(cls, source: str, st: os.stat_result, digest: str, sampled: str, kind: str) -> "SourceRecord":
        return cls(source, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev, digest, sampled, kind)

    def same_stat(self, st: os.stat_result) -> bool:
        """Size, mtime, inode and device all unchanged."""
        return (self.size, self.mtime_ns, self.inode, self.device) == (st.st_size, st.st_mtime_ns, st.st_ino,
                                                                       st.st_dev)

    @staticmethod
    def path_in(folder, source: str) -> str:
        """Where the record for ``source`` lives (named by a hash of the path)."""
        return os.path.join(folder, hashlib.sha256(source.encode()).hexdigest()[:32] + ".json")

    def save(self, folder) -> None:
        """Write atomically (temp file + rename); concurrent writers leave one whole record."""
        os.makedirs(folder, exist_ok=True)
        with atomic_write(self.path_in(folder, self.source), "w") as f:
            json.dump(attrs.asdict(self), f)

    @classmethod
    def parse(cls, raw: bytes, where: str) -> "SourceRecord":
        """The record in ``raw`` (a record file's bytes), every field checked for type.

        Raises:
            KeyCacheFormatError: not a record: too long, nested too deep, not JSON, a field
                missing, extra or of the wrong type (named).
        """
        d = loads_bounded(raw, where, KeyCacheFormatError, max_bytes=RECORD_BYTES)
        if not isinstance(d, dict) or set(d) != set(_FIELDS):
            raise KeyCacheFormatError(f"{where}: not a source record (fields {sorted(d) if isinstance(d, dict) else d!r:.80})")
        for name, check in _FIELDS.items():
            if not check(d[name]):
                raise KeyCacheFormatError(f"{where}: source record field {name} is {str(d[name])[:40]!r}")
        return cls(**d)

    @classmethod
    def load(cls, folder, source: str) -> "SourceRecord | None":
        """The record for ``source``, or None (absent, unreadable or damaged: all mean "hash again")."""
        path = cls.path_in(folder, source)
        try:
            with open(path, "rb") as f:
                raw = f.read(RECORD_BYTES + 1)
            rec = cls.parse(raw, path)
        except (OSError, KeyCacheFormatError):
            return None
        return rec if rec.source == source else None


def _nat(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _hex64(v) -> bool:
    return isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v)


# every field of a record and what it must be: a digest names a cache file, so it must be one
_FIELDS = {"source": lambda v: isinstance(v, str), "size": _nat, "mtime_ns": lambda v: isinstance(v, int)
           and not isinstance(v, bool), "inode": _nat, "device": _nat, "digest": _hex64, "sampled": _hex64,
           "kind": lambda v: v in ("params", "zkey")}


class HashingReader(io.RawIOBase):
    """A read-only binary file that hashes the bytes read, in order, and reports progress.

    Sequential reads from offset 0 to the end hash the whole file; ``seek``/``tell`` are passed
    through (a reader may look at the size first). :meth:`hexdigest` refuses to answer when
    the reads were not one sequential pass over every byte.

    Args:
        f: an open binary file.
        progress: ``progress(done, total)`` in bytes after each read, or None.
    """

    def __init__(self, f, progress=None):
        super().__init__()
        self._f = f
        self._total = regular_size(f)
        self._hash = hashlib.sha256()
        self._hashed = 0  # bytes [0, _hashed) went into the hash, in order
        self._gap = False
        self._progress = progress

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset, whence=io.SEEK_SET) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def fileno(self) -> int:
        return self._f.fileno()

    def read(self, n=-1) -> bytes:
        at = self._f.tell()
        data = self._f.read(n)
        if at == self._hashed:
            self._hash.update(data)
            self._hashed += len(data)
        elif at + len(data) > self._hashed:
            self._gap = True  # bytes skipped or re-read out of order: no whole-file digest
        if self._progress is not None:
            self._progress(min(self._hashed, self._total), self._total)
        return data

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)

    def hexdigest(self) -> str:
        """SHA-256 of the file as read.

        Raises:
            KeyCacheError: the reads skipped bytes, went out of order, or stopped before the end.
        """
        if self._gap or self._hashed != self._total:
            raise KeyCacheError(f"the key reader did not read the source in one pass ({self._hashed} of "
                                f"{self._total} bytes in order); cannot tie the cache entry to its bytes")
        return self._hash.hexdigest()


def sniff_kind(path) -> str:
    """``"zkey"`` for a file that starts with snarkjs' magic ``zkey``, else ``"params"``.

    Raises:
        InputError: ``path`` is not a regular file (opening a pipe would wait for a writer).
    """
    f, _ = open_regular(path)
    with f:
        return "zkey" if f.read(4) == b"zkey" else "params"


def checked_read(src: str, st, digest: str, kind: str, threads, progress):
    """The key in source file ``src`` (of ``kind``, ``"params"`` or ``"zkey"``) read with every point
    checked, and proof that the checked bytes are the ones ``digest`` (with stat ``st``) names.

    Raises:
        cuzk.errors.KeyCacheError: the source changed while it was being read.
        ParamsFormatError, SnarkjsFormatError: the source is not a valid key.
    """
    if kind == "params":
        from cuzk.formats.bellperson import read_params

        with open(src, "rb") as f:
            reader = HashingReader(f, progress)
            key = read_params(reader, checked=True, threads=threads)
            if reader.hexdigest() != digest:
                raise KeyCacheError(f"{src} changed while it was being read; load it again")
        return key
    from cuzk.formats.snarkjs import read_zkey

    # read_zkey takes only a path and reads the file whole; a change between hashing and reading
    # shows in the stat (ordinary writes and renames change mtime or inode)
    if progress is not None:
        progress(0, st.st_size)
    key = read_zkey(src, checked=True, threads=threads)
    after = os.stat(src)
    if (after.st_size, after.st_mtime_ns, after.st_ino) != (st.st_size, st.st_mtime_ns, st.st_ino):
        raise KeyCacheError(f"{src} changed while it was being read; load it again")
    if progress is not None:
        progress(st.st_size, st.st_size)
    return key
