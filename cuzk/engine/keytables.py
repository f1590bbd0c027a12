"""Fixed-base tables in the key cache: built once per key and plan, memory-mapped after.

A resident key's fixed-base tables (:mod:`cuzk.groth16.fixed_base`, CPU backend) take seconds
to build (c·t·(m−1) doublings per point), so an Engine stores them with the key: a file beside
the key's entry, in the key cache's one format (:mod:`cuzk.engine.keyfile`: header, raw arrays
64-byte aligned, per-chunk SHA-256, written to a temporary file and renamed, never pickle),
named by the key's source digest and a digest of the plans::

    <kind>-<source sha256>-v<version>.tables-<plans sha256[:16]>.cuzkkey

Its metadata names the key (kind, source digest, curve) and every table's plan and base count;
a file that does not match them, or fails a checksum, is rebuilt, never used. A later process
maps the file instead of building. A key entry without tables (written before tables existed,
or with another plan) still loads: the tables are built then and their file written. The
tables files are cache entries like the keys: counted in the cache's cap, listed by
``cuzk keys list`` (kind ``tables``), least recently used ones removed to make room, and
pinned while an Engine of this process maps them.

    >>> tables, info = load_tables(cache, "params", digest, pk, plans)     # doctest: +SKIP
    >>> info.hit, info.bytes                                               # doctest: +SKIP
    (True, 50331648)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from pathlib import Path

import attrs

from cuzk.engine.keycache_cap import file_lock
from cuzk.engine.keyfile import FORMAT_VERSION
from cuzk.errors import KeyCacheError, KeyCacheFormatError
from cuzk.groth16.fixed_base import KeyTables, build_tables, tables_from_arrays, tables_to_arrays

__all__ = ["TablesInfo", "load_tables", "tables_path", "plans_meta"]

_log = logging.getLogger("cuzk.engine.keycache")


@attrs.frozen
class TablesInfo:
    """How :func:`load_tables` got a key's tables."""

    hit: bool  #: True: mapped an existing file; False: built them (and wrote the file when ``path``)
    path: str | None  #: the tables file, or None when it could not be written (``note`` says why)
    bytes: int  #: bytes of the tables
    seconds: float  #: wall time of the whole load (build included)
    build_seconds: float  #: time spent building (0 on a hit)
    note: str | None = None


def plans_meta(pk, plans: dict) -> dict:
    """Per query its plan and base count, as a tables file's metadata records them."""
    return {q: {**p.to_dict(), "n": int(getattr(pk, q).shape[0])} for q, p in sorted(plans.items())}


def tables_path(cache, kind: str, digest: str, pk, plans: dict) -> Path:
    """The file that holds (or would hold) the tables of ``plans`` for the key of source ``digest``."""
    tag = hashlib.sha256(json.dumps(plans_meta(pk, plans), sort_keys=True).encode()).hexdigest()[:16]
    return Path(cache.directory) / f"{kind}-{digest}-v{FORMAT_VERSION}.tables-{tag}.cuzkkey"


def load_tables(cache, kind: str, digest: str, pk, plans: dict, threads=None,
                source: str | None = None) -> tuple[KeyTables, TablesInfo]:
    """The tables of ``plans`` for ``pk`` (the key of source ``digest``): mapped from ``cache``
    when it holds them, else built and stored (within the cache's cap; ``source``, the key
    file's path, is recorded for listings).

    Raises:
        InputError: plans that do not fit the key (:func:`cuzk.groth16.fixed_base.build_tables`).
    """
    t0 = time.perf_counter()
    path = tables_path(cache, kind, digest, pk, plans)
    want = plans_meta(pk, plans)

    def make(kf):
        meta = kf.meta
        named = (meta.get("kind"), meta.get("key_kind"), meta.get("source_digest"), meta.get("curve"))
        if named != ("tables", kind, digest, pk.curve) or meta.get("tables") != want:
            raise KeyCacheFormatError(f"{path}: holds tables of {named} {meta.get('tables')}, expected "
                                      f"{('tables', kind, digest, pk.curve)} {want}")
        return tables_from_arrays(pk, kf.arrays, meta)

    def mapped():
        return cache.map_file(path, make, (ValueError,))  # InputError, KeyMismatchError, FieldValueError

    tables, _, note = mapped()
    built = 0.0
    stored = True
    if tables is None:
        if note:
            _log.warning("fixed-base tables file unusable, building them again: %s", note)
        with contextlib.suppress(OSError):
            Path(cache.directory).mkdir(parents=True, exist_ok=True, mode=0o700)
        with file_lock(Path(f"{path}.lock")):  # a second process waits, then maps the first one's file
            tables, _, _ = mapped()
            if tables is None:
                fresh = build_tables(pk, plans, threads)
                built = fresh.seconds
                arrays, meta = tables_to_arrays(fresh)
                meta.update(kind="tables", key_kind=kind, source_digest=digest, curve=pk.curve, source=source,
                            filled=time.time())
                try:
                    tables, why = cache.store_file(path, arrays, meta, mapped)
                except KeyCacheError as e:  # written but unreadable: serve the tables just built
                    tables, why = None, str(e)
                if tables is None:
                    tables, stored = fresh, False
                    note = "; ".join(x for x in (note, why) if x) or None
                else:
                    tables = attrs.evolve(tables, seconds=built)
                del fresh, arrays
    if built == 0.0:
        with contextlib.suppress(OSError):  # last use, for the cap's least-recently-used order
            os.utime(path, ns=(time.time_ns(), os.stat(path).st_mtime_ns))
    return tables, TablesInfo(hit=built == 0.0, path=str(path) if stored else None, bytes=tables.nbytes,
                              seconds=time.perf_counter() - t0, build_seconds=built, note=note)
