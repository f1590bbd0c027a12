"""The key-cache file: named raw arrays behind a checksummed table, memory-mapped on load.

Layout (all integers little-endian)::

    offset 0    8 bytes   magic b"CUZKKEY\\0"
            8   u32       format version (FORMAT_VERSION)
           12   u32       reserved, 0
           16   u64       table offset T
           24   u64       table length L
           32   32 bytes  SHA-256 of the table bytes
           64   ...       data region: each array's raw bytes at a 64-byte aligned offset
            T   L bytes   table: UTF-8 JSON {"meta", "arrays", "data_end", "chunk", "chunks"}

The table comes last so a file is written in one pass: the data is streamed (and hashed) first,
then the table, then the fixed 64-byte preamble is filled in. ``arrays`` lists each array's
name, dtype, shape and offset; ``chunks`` holds the SHA-256 of every ``chunk``-byte piece of
bytes [64, data_end) (the last piece may be short), so a load can check the data in parallel.

:func:`read_keyfile` checks, before using anything: the magic and version; the table's own
digest (so only bytes this module wrote reach ``json.loads``); that the file is exactly
``T + L`` bytes long (truncation); every field of the table for type and range (a digest-valid
table may still come from a foreign or broken writer), so that every array lies inside the data
region, aligned, uniquely named, with a whitelisted dtype and a size matching its shape; and, unless told it was checked already in
this process, every data chunk's digest. Any failure is a :class:`~cuzk.errors.KeyCacheFormatError`.

What the checksums are for: accidental damage (a truncated copy, a flipped bit, a crash while
another tool wrote). They are no defence against someone who can write the cache directory,
who could as well rewrite the digests; the cache directory is trusted like the code itself.

The arrays come back as read-only ``np.memmap`` views of one mapping of the file: nothing is
read from disk until used, and the pages are shared with every process mapping the same file.
Files are written to a temporary file in the target folder and renamed into place, so readers
see either no file or a whole one; the temporary file is removed on any failure. They are
written read-only (mode 0444) and never opened for writing again: replaced by a rename or
unlinked, both harmless to a process that has the old file mapped.

    >>> import numpy as np, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "x.cuzkkey")
    >>> size = write_keyfile(p, {"h": np.arange(12, dtype=np.uint64).reshape(2, 6)}, {"kind": "demo"})
    >>> kf = read_keyfile(p)
    >>> kf.meta["kind"], kf.arrays["h"].shape, int(kf.arrays["h"][1, 0]), kf.arrays["h"].flags.writeable
    ('demo', (2, 6), 6, False)
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import struct
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import numpy as np

from cuzk.atomic_file import atomic_write
from cuzk.bounded_json import check_depth, check_items, loads_bounded
from cuzk.errors import KeyCacheFormatError

__all__ = ["MAGIC", "FORMAT_VERSION", "KeyFile", "write_keyfile", "planned_size", "read_keyfile", "read_table", "file_identity",
           "read_stamp", "write_stamp"]

MAGIC = b"CUZKKEY\x00"
#: Bumped whenever the layout or the meaning of a stored array changes; part of entry names too.
FORMAT_VERSION = 1
_PREAMBLE = struct.Struct("<8sIIQQ32s")  # magic, version, reserved, table offset, table length, table digest
_ALIGN = 64  # cache-line and AVX-512 alignment for every array (and a multiple of uint64's)
#: Bytes per data checksum piece: small enough to spread over threads, large enough that the
#: table stays small (a 32 GiB key has 4096 pieces, ~270 KB of JSON).
CHUNK = 8 << 20
_MAX_TABLE = 64 << 20  # a table is a few hundred KB at most; refuse to parse anything huge
# dtypes a key can hold (limbs, CSR indices, density bits); anything else in a table is damage
_DTYPES = {"<u8", "<i8", "<i4", "|u1"}


@attrs.frozen(eq=False)
class KeyFile:
    """A loaded key-cache file."""

    path: str  #: where it was read from
    meta: dict  #: the writer's JSON metadata
    arrays: dict  #: name -> read-only np.memmap view, in file order
    nbytes: int  #: the file's size
    identity: tuple  #: :func:`file_identity` of the file that was mapped
    verified: bool  #: whether this read checked every data chunk's digest (False: known good)
    sampled: int = 0  #: data chunks checked by sampling (a file ``stamped`` as checked before)


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def file_identity(path) -> tuple:
    """``(device, inode, size, mtime_ns)``: changes whenever the file is replaced or rewritten
    by ordinary means (a rename, a write), which is what "already verified" memos key on."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class _ChunkHasher:
    """SHA-256 of consecutive ``CHUNK``-byte pieces of a byte stream fed in arbitrary parts."""

    def __init__(self):
        self.digests: list[str] = []
        self._h = hashlib.sha256()
        self._left = CHUNK

    def update(self, data: memoryview) -> None:
        while len(data):
            take = min(self._left, len(data))
            self._h.update(data[:take])
            data = data[take:]
            self._left -= take
            if not self._left:
                self.digests.append(self._h.hexdigest())
                self._h, self._left = hashlib.sha256(), CHUNK

    def finish(self) -> list[str]:
        if self._left != CHUNK:
            self.digests.append(self._h.hexdigest())
        return self.digests


def _layout(arrays: dict):
    """(table entries, [(offset, array)], data end) of ``arrays`` in a cache file."""
    entries, offset = [], _PREAMBLE.size
    parts = []
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        dt = a.dtype.str
        if dt not in _DTYPES:
            raise KeyCacheFormatError(f"array {name!r} has dtype {a.dtype}, not one the key cache stores")
        offset = _aligned(offset)
        entries.append({"name": name, "dtype": dt, "shape": list(a.shape), "offset": offset, "nbytes": a.nbytes})
        parts.append((offset, a))
        offset += a.nbytes
    return entries, parts, offset


def planned_size(arrays: dict, meta: dict) -> int:
    """An upper bound of the size :func:`write_keyfile` will give ``arrays`` and ``meta`` (what
    the key cache makes room for before writing).

    >>> planned_size({"x": np.zeros(10, np.uint64)}, {}) >= 80 + 80
    True
    """
    entries, _, data_end = _layout(arrays)
    chunks = -(-(data_end - _PREAMBLE.size) // CHUNK) + 1
    table = json.dumps({"meta": meta, "arrays": entries, "data_end": data_end, "chunk": CHUNK,
                        "chunks": ["0" * 64] * chunks}, sort_keys=True, default=str)
    return data_end + len(table.encode()) + 256  # + room for a longer number or two


def write_keyfile(path, arrays: dict, meta: dict, *, progress=None) -> int:
    """Write ``arrays`` (name -> numpy array) and ``meta`` (JSON-able dict) to ``path`` atomically.

    Args:
        path: the final file name; a temporary file in the same folder is renamed onto it, so a
            concurrent writer of the same path leaves one whole file (the last rename wins).
        arrays: arrays to store, in this order; any C-contiguous layout of the whitelisted
            dtypes (uint64, int64, int32, uint8).
        meta: JSON-serialisable metadata returned as ``KeyFile.meta``.
        progress: ``progress(done, total)`` in data bytes written, or None.

    Returns:
        The file's size in bytes.

    Raises:
        KeyCacheFormatError: an array of another dtype, or meta that is not JSON-serialisable.
        OSError: the folder is not writable, the disk is full, ...
    """
    entries, parts, data_end = _layout(arrays)
    # a temp file beside it, renamed; removed on any failure. Read-only (0444): processes map the
    # file, and an in-place write (cp onto it, rsync --inplace) by its owner then fails instead
    # of changing pages under their feet (cuzk itself only ever replaces or unlinks it)
    with atomic_write(path, fsync=True, perms=0o444) as out:
        out.write(bytes(_PREAMBLE.size))
        hasher, pos, total = _ChunkHasher(), _PREAMBLE.size, data_end - _PREAMBLE.size
        for off, a in parts:
            pad = memoryview(bytes(off - pos))
            hasher.update(pad)
            out.write(pad)
            view = memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")
            for i in range(0, len(view), CHUNK):  # bounded pieces: progress, and no big temporaries
                piece = view[i:i + CHUNK]
                hasher.update(piece)
                out.write(piece)
                if progress is not None:
                    progress(off + i + len(piece) - _PREAMBLE.size, total)
            pos = off + a.nbytes
        try:
            table = json.dumps({"meta": meta, "arrays": entries, "data_end": data_end, "chunk": CHUNK,
                                "chunks": hasher.finish()}, sort_keys=True, allow_nan=False).encode()
        except (TypeError, ValueError) as e:
            raise KeyCacheFormatError(f"key-cache metadata is not JSON-serialisable: {e}") from None
        out.write(table)
        out.seek(0)
        out.write(_PREAMBLE.pack(MAGIC, FORMAT_VERSION, 0, data_end, len(table), hashlib.sha256(table).digest()))
    return data_end + len(table)


def _bad(path, why: str) -> KeyCacheFormatError:
    return KeyCacheFormatError(f"{os.fspath(path)}: {why}")


def read_table(path) -> tuple[dict, int]:
    """``(table, file size)`` after checking the preamble, the table digest and the file length;
    the data is not touched (cheap, for listings).

    Raises:
        KeyCacheFormatError: not a key-cache file, another format version, damaged table,
            truncated or extended file.
        OSError: the file cannot be opened.
    """
    with open(path, "rb") as f:
        return _table_of(f, path)


def _table_of(f, path) -> tuple[dict, int]:
    size = os.fstat(f.fileno()).st_size
    head = f.read(_PREAMBLE.size)
    if len(head) < _PREAMBLE.size:
        raise _bad(path, f"{size} bytes, shorter than the {_PREAMBLE.size}-byte preamble")
    magic, version, reserved, t_off, t_len, t_digest = _PREAMBLE.unpack(head)
    if magic != MAGIC:
        raise _bad(path, "not a cuzk key-cache file (bad magic)")
    if version != FORMAT_VERSION or reserved:
        raise _bad(path, f"key-cache format version {version} (flags {reserved}), this cuzk reads {FORMAT_VERSION}")
    if t_len > _MAX_TABLE or t_off < _PREAMBLE.size or t_off + t_len != size:
        raise _bad(path, f"file is {size} bytes but its table says {t_off} + {t_len} (truncated or damaged)")
    f.seek(t_off)
    raw = f.read(t_len)
    if hashlib.sha256(raw).digest() != t_digest:
        raise _bad(path, "table checksum mismatch (damaged file)")
    raw = [raw]  # handed over: _parse_table drops the bytes before it parses
    table = _parse_table(path, raw.pop(), t_off)
    _check_table(path, table, t_off)
    return table, size


def _int(value, field: str, lo: int, hi: int) -> int:
    """``value`` when it is an int (not a bool) in [lo, hi], else a ValueError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{field} is {str(value)[:40]!r}, not an int in [{lo}, {hi}]")
    return value


def _field(obj: dict, name: str, where: str):
    if name not in obj:
        raise ValueError(f"{where}{name} is missing")
    return obj[name]


def _check_array(e, i: int, data_end: int, seen: set) -> None:
    """One ``arrays`` entry: a name not seen before, a whitelisted dtype, a shape whose size (in
    Python ints: no overflow) matches ``nbytes``, an aligned offset inside the data region."""
    where = f"arrays[{i}]"
    if not isinstance(e, dict):
        raise ValueError(f"{where} is a {type(e).__name__}, not an object")
    name = _field(e, "name", where + ".")
    if not isinstance(name, str) or name in seen:
        raise ValueError(f"{where}.name {str(name)[:40]!r} is not a new string")
    seen.add(name)
    dtype = _field(e, "dtype", where + ".")
    if not isinstance(dtype, str) or dtype not in _DTYPES:
        raise ValueError(f"{where}.dtype {str(dtype)[:40]!r} is not one of {sorted(_DTYPES)}")
    shape = _field(e, "shape", where + ".")
    # no dimension of a stored array exceeds the file's size (an empty array's other dimensions
    # are small too), and numpy takes at most 32 of them
    if not isinstance(shape, list) or len(shape) > 32:
        raise ValueError(f"{where}.shape is not a list of at most 32 ints")
    n = np.dtype(dtype).itemsize
    for k, dim in enumerate(shape):
        n *= _int(dim, f"{where}.shape[{k}]", 0, data_end)
    _int(_field(e, "nbytes", where + "."), f"{where}.nbytes", n, n)
    offset = _int(_field(e, "offset", where + "."), f"{where}.offset", _PREAMBLE.size, data_end - n)
    if offset % _ALIGN:
        raise ValueError(f"{where}.offset {offset} is not {_ALIGN}-byte aligned")


def _parse_table(path, raw: bytes, data_end: int):
    """The table's JSON, bounded as every reader's (a digest-valid table from a foreign or broken
    writer may still be nested 10^5 deep or hold a million values): depth checked in a streaming
    pass, values counted against what the data region can need (a few per array plus one digest
    per chunk), ASCII as ``json.dumps`` writes it (one byte per character in memory)."""
    where = f"{os.fspath(path)}: table"
    check_depth(raw, where, KeyCacheFormatError)
    check_items(raw, where, KeyCacheFormatError, 4096 + (data_end - _PREAMBLE.size) // 4096)
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise _bad(path, "table is not ASCII JSON (as cuzk writes it)") from None
    del raw  # the caller's reference goes when we return; parse from the text alone
    try:
        return json.loads(text)
    except ValueError as e:
        raise _bad(path, f"table is not JSON ({str(e)[:100]})") from None


def _check_table(path, table, data_end: int) -> None:
    """Every field a reader uses, checked for type and range: the table's digest shows it is
    the one written, not that its writer wrote sense (an old or foreign writer, a hand edit
    with the digest fixed up). Each failure names the field."""
    try:
        if not isinstance(table, dict):
            raise ValueError(f"the table is a {type(table).__name__}, not an object")
        _int(_field(table, "data_end", ""), "data_end", data_end, data_end)
        chunk = _int(_field(table, "chunk", ""), "chunk", 1, 1 << 40)
        want = -(-(data_end - _PREAMBLE.size) // chunk)
        chunks = _field(table, "chunks", "")
        if not isinstance(chunks, list) or len(chunks) != want or not all(isinstance(c, str) for c in chunks):
            raise ValueError(f"chunks is not a list of {want} digests")
        if not isinstance(_field(table, "meta", ""), dict):
            raise ValueError("meta is not an object")
        arrays = _field(table, "arrays", "")
        if not isinstance(arrays, list):
            raise ValueError("arrays is not a list")
        seen: set = set()
        for i, e in enumerate(arrays):
            _check_array(e, i, data_end, seen)
    except ValueError as e:
        raise _bad(path, f"inconsistent table: {e}") from None


def _threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _verify_chunks(path, mm: np.ndarray, table: dict, threads: int | None, sample: int | None = None) -> int:
    """Check every data chunk's SHA-256, or ``sample`` chunks picked at random; returns how many."""
    chunk, start, end = table["chunk"], _PREAMBLE.size, table["data_end"]
    picked = range(len(table["chunks"]))
    if sample is not None and sample < len(picked):  # a different sample each time: damage is found over loads
        picked = sorted(random.sample(picked, sample))
    spans = [(start + i * chunk, min(start + (i + 1) * chunk, end)) for i in picked]
    wants = [table["chunks"][i] for i in picked]

    def digest(span):  # hashlib releases the GIL on large buffers, so threads hash in parallel
        return hashlib.sha256(mm[span[0]:span[1]]).hexdigest()

    n = min(threads or _threads(), len(spans))
    if n > 1:
        with ThreadPoolExecutor(n, thread_name_prefix="cuzk-keyhash") as pool:
            got = list(pool.map(digest, spans))
    else:
        got = [digest(s) for s in spans]
    for i, (g, want) in enumerate(zip(got, wants)):
        if g != want:
            raise _bad(path, f"data checksum mismatch in bytes [{spans[i][0]}, {spans[i][1]}) (damaged file)")
    return len(spans)


def read_keyfile(path, *, verified=frozenset(), threads: int | None = None, stamped=frozenset(),
                 sample: int = 2) -> KeyFile:
    """Map a key-cache file read-only and return its arrays and metadata.

    Args:
        path: the file.
        verified: :func:`file_identity` tuples of files whose data this process has checked
            already; for those the data check is skipped.
        stamped: identities another process checked in full (the key cache's stamps): for
            those ``sample`` chunks picked at random are checked. Every other file gets every
            data chunk's SHA-256 checked (the whole file is read once, ~1.5 GB/s per thread).
        threads: threads hashing chunks (None: every core this process may use).
        sample: chunks checked of a ``stamped`` file.

    Raises:
        KeyCacheFormatError: see :func:`read_table`; also a data chunk whose digest differs.
        OSError: the file cannot be opened.
    """
    with open(path, "rb") as f:  # one open file for table, identity and mapping: one inode
        st = os.fstat(f.fileno())
        identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        table, size = _table_of(f, path)
        mm = np.memmap(f, dtype=np.uint8, mode="r", shape=(size,))
    check = identity not in verified
    sampled = 0
    if check and identity in stamped:
        sampled, check = _verify_chunks(path, mm, table, threads, sample), False
    elif check:
        _verify_chunks(path, mm, table, threads)
    arrays = {}
    for e in table["arrays"]:
        view = mm[e["offset"]:e["offset"] + e["nbytes"]].view(np.dtype(e["dtype"]))
        arrays[e["name"]] = view.reshape(tuple(e["shape"]))
    return KeyFile(path=os.fspath(path), meta=table["meta"], arrays=arrays, nbytes=size, identity=identity,
                   verified=check, sampled=sampled)


def read_stamp(path) -> frozenset:
    """The :func:`file_identity` recorded in the stamp file ``path`` by a process that checked a
    cache file's every chunk (``read_keyfile(..., stamped=)`` then samples instead); empty when
    there is no stamp, or a damaged one (nested 10^4 deep, a list, ...): that only costs a full check.
    """
    try:
        with open(path, "rb") as f:
            ident = loads_bounded(f.read(4096), str(path), KeyCacheFormatError)["identity"]
        if not (isinstance(ident, list) and len(ident) == 4 and all(type(x) is int for x in ident)):
            return frozenset()
        return frozenset({tuple(ident)})
    except (OSError, KeyCacheFormatError, KeyError, TypeError):
        return frozenset()


def write_stamp(path, identity: tuple) -> None:
    """Record ``identity`` (a :func:`file_identity`) in the stamp file ``path``, atomically.

    Raises:
        OSError: it cannot be written (a read-only cache: every process then checks in full).
    """
    path = Path(path)
    path.parent.mkdir(exist_ok=True, mode=0o700)
    with atomic_write(path, "w") as f:
        f.write(json.dumps({"identity": list(identity)}))
