"""The disk tier of proving keys: read a key file once with every point checked, then serve it
from a prover-ready, memory-mapped cache file.

A source key is a bellperson ``.params`` file (read by :func:`cuzk.formats.bellperson.read_params`)
or a snarkjs ``.zkey`` (:func:`cuzk.formats.snarkjs.read_zkey`). The first :meth:`KeyCache.load`
of a source does that checked read and writes the key's arrays to a cache file
(:mod:`cuzk.engine.keyfile`), named by the SHA-256 of the source's bytes and the cache format
version; every later load maps that file read-only and skips the per-point curve and subgroup
checks: the digest shows the bytes are the ones that were checked.

What a load from the disk tier checks (and what it trusts):

* the source file is the one hashed: size, mtime_ns, inode and device as recorded, and a sampled
  digest of fixed pieces (see :mod:`cuzk.engine.keysource` for exactly what that trusts); else
  the source is hashed in full and looked up again;
* the cache file's table checksum, its length, its layout, and the SHA-256 of every 8 MiB
  chunk of its data — the full data check runs the first time any process maps a given file
  (identified by device, inode, size, mtime_ns), which then leaves a *stamp* of that identity
  under ``verified/``; a later process that finds the stamp matching checks
  ``SAMPLE_CHUNKS`` chunks picked at random instead of all (the same trust as the source
  record: damage that keeps size and mtime is found by a later sample or by the proof's own
  verification, never used silently); within one ``KeyCache`` a file checked once is not
  checked again; ``verify="always"`` checks every chunk on every load. The full check reads the
  file at ~1.5 GB/s per core (chunks hashed in parallel): tens of seconds for a production key,
  which every ``cuzk groth16 prove`` process paid before the stamps;
* a file that fails any check, or names another source digest or kind, is rebuilt from the
  source with a fresh checked read, never used.

Beyond that, each proof is verified before the prover returns it (``GpuProver(verify=True)``,
the default): a key damaged in memory after the check yields an error, not a bad proof. The
cache directory itself is trusted like the code: whoever can write it can replace keys (the
checksums detect damage, not tampering). It is created ``0700``.

Cache files are never modified in place: they are written read-only (0444), replaced by rename
or removed (both safe while a process has the old file mapped). An in-place edit anyway (root,
or after a chmod) cannot make a live process read outside its mapping (the synthesis kernels
bound every index): it gives a proof that fails verification, a ``cuzk.errors`` exception.
Truncating one in place is the one thing that cannot be made safe: a mapped page past the new
end raises SIGBUS in every process that touches it; a later load detects the short file and
rebuilds it (docs/engine.md, "Cache files under a live mapping").

Concurrency: a fill holds an ``flock`` on ``<entry>.lock``, so a second process loading the same
source waits and then maps the first one's file instead of repeating an hours-long checked read;
the file is written to a temporary file and renamed, so even without the lock (a filesystem
without ``flock``) readers see a whole file or none, and the last rename wins.

Size: the entries stay under a byte cap (``max_bytes``, ``$CUZK_CACHE_MAX_BYTES``, default half
the filesystem): a fill that would exceed it first removes least recently used entries, never
one a live Engine of this process uses (:mod:`cuzk.engine.keycache_cap`).

Entries live under ``$CUZK_CACHE_DIR/keys`` (default ``$XDG_CACHE_HOME/cuzk/keys``, else
``~/.cache/cuzk/keys``): ``<kind>-<sha256>-v<version>.cuzkkey`` files, their ``.lock`` files, and
one small record per source path under ``sources/``, under ``matched/`` one empty marker per
(zkey, R1CS) pair whose matrices were compared and found equal, and under ``verified/`` one stamp
per entry checked in full.

    >>> cache = KeyCache("/tmp/cuzk-keys")                           # doctest: +SKIP
    >>> pk, info = cache.load("porep.params", r1cs=synth.r1cs)        # doctest: +SKIP
    >>> info.hit, info.seconds                                      # doctest: +SKIP
    (True, 0.004)
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path

import attrs

from cuzk.engine.keyarrays import key_from_arrays, key_to_arrays
from cuzk.engine.keycache_cap import cap_lock, choose_victims, file_lock, pinned, remove_unheld_lock, resolve_cap
from cuzk.engine.keyfile import (FORMAT_VERSION, planned_size, read_keyfile, read_stamp, read_table,
                                 write_keyfile, write_stamp)
from cuzk.engine.keysource import (SourceRecord, check_header, checked_read, full_digest, open_regular, sampled_digest,
                                   sniff_kind)
from cuzk.errors import InputError, KeyCacheFormatError

__all__ = ["KeyCache", "LoadInfo", "EntryInfo", "default_cache_dir", "KINDS"]

KINDS = ("params", "zkey")
_SUFFIX = ".cuzkkey"
_VERIFY = ("first", "always")
#: data chunks (8 MiB each) checked at random when another process checked the whole file
SAMPLE_CHUNKS = 2
#: a record's or stamp's temporary file older than this is a dead writer's leftover (clear removes it)
STALE_TMP_SECONDS = 600
_log = logging.getLogger("cuzk.engine.keycache")


def default_cache_dir() -> Path:
    """``$CUZK_CACHE_DIR/keys``, else ``$XDG_CACHE_HOME/cuzk/keys``, else ``~/.cache/cuzk/keys``."""
    root = os.environ.get("CUZK_CACHE_DIR")
    if root:
        return Path(root) / "keys"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cuzk" / "keys"


@attrs.frozen
class LoadInfo:
    """How :meth:`KeyCache.load` got its key."""

    source: str  #: the source file (real path)
    kind: str  #: "params" or "zkey"
    hit: bool  #: True: mapped an existing cache file; False: did the checked read (and filled)
    path: str | None  #: the cache file served, or None when it could not be written (see ``note``)
    bytes: int  #: size of the cache file (or the source, when not cached)
    seconds: float  #: wall time of the whole load
    source_check: str  #: "record+samples" (stat and samples matched) or "full hash"
    data_check: str  #: "full" (every chunk hashed now), "sampled" (stamped: some chunks), "earlier" (this KeyCache did it) or "read" (fresh checked read)
    note: str | None = None  #: why an existing entry was rebuilt, or why nothing was cached
    digest: str | None = None  #: SHA-256 of the source's bytes (names the entry and its tables)


@attrs.frozen
class EntryInfo:
    """One cache file, as :meth:`KeyCache.entries` lists it."""

    path: str
    kind: str | None  #: None when the file is damaged
    digest: str | None  #: SHA-256 of the source bytes
    source: str | None  #: the source path recorded when the entry was filled
    bytes: int
    last_use: float  #: seconds since the epoch (the file's atime, set on every load)
    error: str | None = None  #: why the file is unusable (it will be rebuilt), or None


class KeyCache:
    """Proving keys read once with every check, then memory-mapped from a cache directory.

    Args:
        directory: where entries live (None: :func:`default_cache_dir`); created on first use.
        verify: ``"first"`` (default): hash a cache file's data in full the first time any
            process maps it, then a random sample of chunks per process (see above);
            ``"always"``: every chunk on every load.
        threads: threads for checked reads and checksums (None: every core).
        max_bytes: the cap on the entries' bytes (an int, a size such as ``"100G"``, or
            ``"unlimited"``); None: ``$CUZK_CACHE_MAX_BYTES``, else half the filesystem
            (:mod:`cuzk.engine.keycache_cap`).

    Raises:
        InputError: ``verify`` is not one of ``"first"``, ``"always"``; a malformed ``max_bytes``
            or ``$CUZK_CACHE_MAX_BYTES``; ``directory`` (or the nearest existing folder above
            it) is a file: listing it would show an empty cache, filling it would fail later.
    """

    def __init__(self, directory=None, *, verify: str = "first", threads: int | None = None, max_bytes=None):
        if verify not in _VERIFY:
            raise InputError(f"verify must be one of {_VERIFY}, got {verify!r}")
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        _refuse_non_directory(self.directory)
        self.max_bytes = resolve_cap(max_bytes, self.directory)
        self.verify = verify
        self.threads = threads
        self._verified: set[tuple] = set()

    def __repr__(self) -> str:
        return f"KeyCache({str(self.directory)!r})"

    @property
    def _sources(self) -> Path:
        return self.directory / "sources"

    def _entry_path(self, digest: str, kind: str) -> Path:
        return self.directory / f"{kind}-{digest}-v{FORMAT_VERSION}{_SUFFIX}"

    # -- public API --------------------------------------------------------------------------
    def path_for(self, source, *, kind: str | None = None) -> Path:
        """The cache file that holds (or would hold) ``source``'s key; hashes the source unless
        its record still matches.

        Raises:
            OSError: the source cannot be read.
        """
        src = os.path.realpath(os.fspath(source))
        kind = self._kind(src, kind)
        return self._entry_path(self._identify(src, kind, None)[0], kind)

    def load(self, source, *, kind: str | None = None, r1cs=None, progress=None):
        """The proving key of ``source``, from the cache when it holds it; ``(key, LoadInfo)``.

        Args:
            source: path of a bellperson ``.params`` file or a snarkjs ``.zkey``.
            kind: ``"params"`` or ``"zkey"`` (None: a file starting with ``zkey`` is a zkey).
            r1cs: the circuit's :class:`~cuzk.synth.R1CS`, attached after loading exactly as the
                checked read does (``.params``: density and digest; ``.zkey``: matrices compared).
            progress: ``progress(stage, done, total)`` with stage ``"hash"`` (source bytes
                hashed), ``"read"`` (source bytes read and checked: the long one) or
                ``"write"`` (cache bytes written); called only when there is such work.

        Returns:
            ``(key, info)``: a :class:`~cuzk.groth16.ProvingKey` (``SnarkjsProvingKey`` for a
            zkey) equal array for array to the checked read's, its large arrays read-only
            memory maps of the cache file; and a :class:`LoadInfo`.

        Raises:
            ParamsFormatError, SnarkjsFormatError: the source is not a valid key (first read).
            KeyMismatchError: ``r1cs`` does not fit the key.
            KeyCacheError: the source changed while it was being read.
            InputError: unknown ``kind``.
            OSError: the source cannot be read.
        """
        t0 = time.perf_counter()
        src = os.path.realpath(os.fspath(source))
        kind = self._kind(src, kind)
        digest, st, source_check = self._identify(src, kind, progress)
        entry = self._entry_path(digest, kind)
        key, data_check, note = self._map(entry, digest, kind)
        hit, stored = key is not None, True
        if note:
            _log.warning("key cache entry unusable, rebuilding it from the source: %s", note)
        if not hit:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            with self._fill_lock(entry):
                key, data_check, _ = self._map(entry, digest, kind)  # another process filled it meanwhile
                hit = key is not None
                if not hit:
                    key, stored, why = self._fill(src, st, digest, kind, entry, progress)
                    data_check = "read"
                    note = "; ".join(x for x in (note, why) if x) or None
        if hit:
            with contextlib.suppress(OSError):  # last use for entries(): atime, set explicitly (noatime mounts)
                # ns, so mtime_ns (part of the file identity "verified earlier" keys on) stays exact
                os.utime(entry, ns=(time.time_ns(), os.stat(entry).st_mtime_ns))
        key = self._attach(key, r1cs, src, digest)
        return key, LoadInfo(source=src, kind=kind, hit=hit, path=str(entry) if stored else None,
                             bytes=_size(entry) if stored else st.st_size,
                             seconds=time.perf_counter() - t0, source_check=source_check, data_check=data_check,
                             note=note, digest=digest)

    def entries(self) -> list[EntryInfo]:
        """Every cache file, least recently used first (damaged ones included, with ``error``)."""
        out = []
        for p in sorted(self.directory.glob(f"*{_SUFFIX}")):
            try:
                st = p.stat()
            except FileNotFoundError:  # removed by another process meanwhile
                continue
            try:
                table, _ = read_table(p)
                meta = table["meta"]
                out.append(EntryInfo(str(p), meta.get("kind"), meta.get("source_digest"), meta.get("source"),
                                     st.st_size, st.st_atime))
            except (KeyCacheFormatError, OSError) as e:
                out.append(EntryInfo(str(p), None, None, None, st.st_size, st.st_atime, error=str(e)))
        return sorted(out, key=lambda e: e.last_use)

    def usage(self) -> int:
        """Bytes of every entry now."""
        return sum(e.bytes for e in self.entries())

    def prune(self, max_bytes: int) -> list[EntryInfo]:
        """Remove damaged entries, then least recently used ones until the entries take at most
        ``max_bytes``; returns what was removed. Entries a live Engine of this process uses stay
        (so the result may stay above ``max_bytes``); mapped keys stay valid (as for :meth:`clear`).

        Raises:
            InputError: ``max_bytes`` is not an int >= 0.
        """
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise InputError(f"max_bytes must be an int >= 0, got {max_bytes!r}")
        removed = []
        with cap_lock(self.directory) if self.directory.is_dir() else contextlib.nullcontext():  # as clear()
            entries = self.entries()
            total = sum(e.bytes for e in entries)
            for e in sorted(entries, key=lambda e: (e.error is None, e.last_use)):  # damaged first, then LRU
                if e.error is None and total <= max_bytes:
                    break
                if pinned(e.path):
                    continue
                self._unlink(e.path)
                total -= e.bytes
                removed.append(e)
        return removed

    def clear(self) -> tuple[int, int]:
        """Remove every entry, unheld lock, source record and leftover temporary file;
        ``(files, bytes)`` removed. Keys already mapped by a process stay valid (POSIX keeps
        unlinked files open).

        It holds the cap's lock, which every writer of an entry holds from making room until it
        has mapped the new file back: no entry is half written or about to be mapped meanwhile
        (a clear waits for a fill's write). A ``.lock`` someone holds stays (a fill in progress);
        temporary files of records and stamps (written without the lock) go only when older
        than :data:`STALE_TMP_SECONDS`.
        """
        files = size = 0
        if not self.directory.is_dir():
            return 0, 0

        def remove(p: Path) -> None:
            nonlocal files, size
            with contextlib.suppress(FileNotFoundError):
                n = p.stat().st_size
                p.unlink()
                files, size = files + 1, size + n

        with cap_lock(self.directory):
            for p in list(self.directory.glob("*")):
                if not p.is_file() or p.name == "cap.lock":
                    continue
                if p.suffix in (_SUFFIX, ".tmp"):
                    remove(p)
                elif p.suffix == ".lock" and remove_unheld_lock(p):
                    files += 1
            old = time.time() - STALE_TMP_SECONDS
            for folder in (self._sources, self.directory / "verified", self.directory / "matched"):
                for p in list(folder.glob("*")) if folder.is_dir() else []:
                    with contextlib.suppress(FileNotFoundError):
                        if not p.is_file() or (p.suffix == ".tmp" and p.stat().st_mtime > old):
                            continue
                    if folder.name == "matched" or p.suffix in (".json", ".tmp"):
                        remove(p)
            self._verified.clear()
        return files, size

    # -- steps --------------------------------------------------------------------------------
    @staticmethod
    def _kind(src: str, kind: str | None) -> str:
        if kind is None:
            return sniff_kind(src)
        if kind not in KINDS:
            raise InputError(f"kind must be one of {KINDS} or None, got {kind!r}")
        return kind

    def _identify(self, src: str, kind: str, progress):
        """(digest of the source bytes, its stat, how the digest was established); refreshes the
        source record. Stat and digests come from one open file, so they describe one inode."""
        rec = SourceRecord.load(self._sources, src)
        f, _ = open_regular(src)  # a pipe is refused, not waited on for a writer
        with f:
            st = os.fstat(f.fileno())
            sampled = sampled_digest(f)
            if rec is not None and rec.kind == kind and rec.same_stat(st) and sampled == rec.sampled:
                return rec.digest, st, "record+samples"
            check_header(f, kind, src)  # a file of another kind is refused before a full hash
            digest = full_digest(f, progress=_stage(progress, "hash"))
        self._remember(SourceRecord.of(src, st, digest, sampled, kind))
        return digest, st, "full hash"

    def _attach(self, key, r1cs, src: str, digest: str):
        """Attach the circuit as the checked read would with ``r1cs=`` (an R1CS or a ``.r1cs`` path).

        For a zkey that means comparing the zkey's A and B matrices with the R1CS's (sorting
        every coefficient: 24 ms at 2^12). Once a pair (zkey digest, R1CS digest — a SHA-256 of
        the R1CS's counts and matrices) has matched, a marker under ``matched/`` records it and
        later loads attach without comparing again: the pair of digests names the same bytes.
        """
        if r1cs is None:
            return key
        from cuzk.formats.snarkjs import SnarkjsProvingKey, _attach_r1cs, read_r1cs  # read_zkey's own attach step

        if isinstance(r1cs, (str, os.PathLike)):
            r1cs = read_r1cs(r1cs)
        if not isinstance(key, SnarkjsProvingKey):
            return key.with_circuit(r1cs)
        marker = self.directory / "matched" / f"{digest}-{r1cs.digest}"
        if marker.exists() and (r1cs.n_vars, r1cs.n_public) == (key.n_vars, key.n_inputs - 1):
            return attrs.evolve(key, r1cs=r1cs, digest=r1cs.digest)
        key = _attach_r1cs(key, r1cs, src)
        with contextlib.suppress(OSError):  # only a speed-up: a read-only cache compares every time
            marker.parent.mkdir(exist_ok=True, mode=0o700)
            marker.touch()
        return key

    def _remember(self, rec: SourceRecord) -> None:
        try:
            self._sources.mkdir(parents=True, exist_ok=True, mode=0o700)
            rec.save(self._sources)
        except OSError as e:  # a read-only cache only costs a full hash next time
            _log.warning("cannot record source %s in the key cache: %s", rec.source, e)

    def _stamp_path(self, entry) -> Path:
        return self.directory / "verified" / (Path(entry).name + ".json")

    def _stamped(self, entry: Path) -> frozenset:
        """The identity a process recorded after checking ``entry`` in full (empty if none)."""
        return read_stamp(self._stamp_path(entry))

    def _stamp(self, entry: Path, identity: tuple) -> None:
        try:
            write_stamp(self._stamp_path(entry), identity)
        except OSError as e:  # a read-only cache: every process checks in full
            _log.debug("cannot stamp %s as checked: %s", entry, e)

    def _unlink(self, path) -> None:
        """Remove an entry and its stamp (missing ones are fine)."""
        for p in (path, self._stamp_path(path)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(p)

    def _map(self, entry: Path, digest: str, kind: str):
        """(key, data check, None) from an existing entry; (None, None, reason) if absent or unusable."""
        def make(kf):
            meta = kf.meta
            if meta.get("source_digest") != digest or meta.get("kind") != kind:
                raise KeyCacheFormatError(f"{entry}: holds {meta.get('kind')} {meta.get('source_digest')}, "
                                          f"expected {kind} {digest}")
            return key_from_arrays(kf.arrays, meta["key"])

        return self.map_file(entry, make)

    def map_file(self, entry, make, errors=()):
        """Map the cache file ``entry`` with this cache's data checks (``verify``, stamps) and
        return ``(make(keyfile), data check, None)``, or ``(None, None, reason)`` when the file
        is absent (reason None) or fails a check or ``make`` (which raises KeyCacheFormatError,
        KeyError, TypeError or one of ``errors`` for contents that are not what it expects).
        Used for key entries and for their fixed-base tables (:mod:`cuzk.engine.keytables`)."""
        first = self.verify == "first"
        entry = Path(entry)
        try:
            kf = read_keyfile(entry, verified=self._verified if first else (), threads=self.threads,
                              stamped=self._stamped(entry) if first else frozenset(), sample=SAMPLE_CHUNKS)
            obj = make(kf)
        except FileNotFoundError:
            return None, None, None
        except (KeyCacheFormatError, OSError, KeyError, TypeError, *errors) as e:
            return None, None, f"rebuilt: {e}"
        self._verified.add(kf.identity)
        if kf.verified and first:
            self._stamp(entry, kf.identity)
        return obj, "full" if kf.verified else ("sampled" if kf.sampled else "earlier"), None

    def _fill_lock(self, entry: Path):
        # without flock, concurrent fills both write and the last rename wins
        return file_lock(Path(f"{entry}.lock"))

    def _fill(self, src: str, st, digest: str, kind: str, entry: Path, progress):
        """Checked read of the source, tied to ``digest``; writes the entry and maps it back.
        ``(key, stored, note)``: when the entry cannot be written the checked key is returned."""
        key = checked_read(src, st, digest, kind, self.threads, _stage(progress, "read"))
        arrays, meta = key_to_arrays(key)
        meta = {"kind": kind, "source_digest": digest, "source": src, "filled": time.time(), "key": meta}
        mapped, why = self.store_file(entry, arrays, meta, lambda: self._map(entry, digest, kind), progress)
        del arrays
        if why is not None:
            return key, False, why
        return mapped, True, None

    def store_file(self, entry, arrays: dict, meta: dict, map_back, progress=None):
        """Write a cache file within the cap (least recently used entries make room, as for a
        fill) and map it back with ``map_back()`` (a :meth:`map_file` call) before the cap's lock
        is released; ``(mapped, None)``, or ``(None, why)`` when it was not written (over the
        cap, a full or read-only disk).

        A file removed or damaged between its rename and the mapping back (an operator's ``rm``
        or in-place edit) is not an error either: ``(None, why)``, and the caller serves what it
        wrote (a checked key, tables just built).
        """
        entry = Path(entry)
        try:
            with cap_lock(self.directory):  # room is made and taken by one writer at a time
                need = planned_size(arrays, meta)
                victims, fits = choose_victims(self.entries(), need, self.max_bytes, keep=str(entry))
                if not fits:
                    why = (f"not cached: the entry needs {need:,} bytes and the cache's cap is {self.max_bytes:,} "
                           f"bytes, the rest held by entries in use")
                    _log.warning("%s (%s)", why, entry)
                    return None, why
                for victim in victims:
                    _log.info("key cache over its cap of %d bytes: removing %s (%d bytes, least recently used)",
                              self.max_bytes, victim.path, victim.bytes)
                    self._unlink(victim.path)
                write_keyfile(entry, arrays, meta, progress=_stage(progress, "write"))
                # mapped before the lock goes: another writer may remove the file next (the mapping stays valid)
                mapped, _, why = map_back()
        except OSError as e:  # a full or read-only disk must not cost the caller the key itself
            _log.warning("cannot write key cache entry %s: %s", entry, e)
            return None, f"not cached: {e}"
        if mapped is None:  # removed or changed by hand (or a tool without the lock) since the rename
            why = (f"not cached: {entry} was removed right after it was written" if why is None else
                   f"not cached: {entry} fails its checks right after it was written ({why})")
            _log.warning("%s; serving the key just read", why)
            return None, why
        return mapped, None


def _refuse_non_directory(directory: Path) -> None:
    p = directory
    while not p.exists() and p != p.parent:
        p = p.parent
    if p.exists() and not p.is_dir():
        what = "is" if p == directory else f"lies under {p}, which is"
        raise InputError(f"key cache directory {directory} {what} not a directory")


def _size(path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:  # cleared by another process since: the mapping stays valid
        return 0


def _stage(progress, stage: str):
    return None if progress is None else (lambda done, total: progress(stage, done, total))
