"""One registered circuit: its synthesis executor, its key in tiers, and its provers per device.

A :class:`CircuitRoute` is the :class:`cuzk.pipeline.core.Route` of a circuit inside an
:class:`cuzk.Engine`. Its key moves through tiers (docs/engine.md):

* ``cold``: a key file nobody has read yet (no cache entry);
* ``disk``: a prover-ready cache file exists (:class:`cuzk.engine.keycache.KeyCache`);
* ``host``: prover-ready arrays in memory (memory-mapped from the cache file, or the
  ``ProvingKey`` the host registered), counted in the engine's memory budget;
* ``device``: a :class:`cuzk.GpuProver` per device that proved it (on CUDA its bases are
  resident on that GPU, within that device's budget: :mod:`cuzk.engine.devices`; on the CPU
  backend the prover is the host arrays plus a prepared vk, and with ``precompute`` the key's
  fixed-base tables: :mod:`cuzk.engine.keytables`, counted in the budget with the key and
  evicted with it).

A custom prover (any object with ``prove``) has the tier ``custom`` and loads nothing.
``prover_for`` runs on the prove worker before ``GPU_START``, so a key load is its own span
(``KEY_LOAD_START``/``KEY_LOAD_END``), never GPU time.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import attrs
import numpy as np

from cuzk.engine.budget import physical_memory
from cuzk.engine.devices import key_device_bytes
from cuzk.engine.keycache_cap import pin
from cuzk.errors import DeviceOutOfMemoryError, InputError, KeyMismatchError
from cuzk.groth16 import bit_msm, fixed_base
from cuzk.groth16.keys import ProvingKey
from cuzk.pipeline.core import Route
from cuzk.pipeline.scheduler import Priority, estimate_synthesized_bytes
from cuzk.timeline.events import EventKind as K

__all__ = ["CircuitRoute", "key_kind", "pce_bytes", "check_key_fits"]

_KEY_SUFFIXES = {".params": "params", ".zkey": "zkey"}


def key_kind(key, *, must_exist: bool = True) -> str:
    """``"custom"``, ``"object"`` (a ProvingKey) or the file kind (``"params"``/``"zkey"``).

    Raises:
        cuzk.errors.InputError: not a ProvingKey, a prover, or a path to an existing key file.
    """
    if isinstance(key, ProvingKey):
        return "object"
    if isinstance(key, (str, os.PathLike)):
        path = os.fspath(key)
        kind = _KEY_SUFFIXES.get(os.path.splitext(path)[1].lower())
        if kind is None:
            raise InputError(f"key file {path!r}: expected a bellperson .params or a snarkjs .zkey")
        if must_exist and not os.path.isfile(path):  # a cluster's workers check their own nodes instead
            raise InputError(f"key file {path!r} does not exist")
        return kind
    if callable(getattr(key, "prove", None)):
        return "custom"
    raise InputError(f"key must be a cuzk.groth16.ProvingKey, a path to a .params/.zkey file or an object with "
                     f"prove(synthesized), got {type(key).__name__}")


def pce_bytes(synthesizer) -> int:
    """Bytes of the arrays of a synthesizer's pre-compiled circuit: its R1CS (CSR matrices) and
    witness program (``synthesizer.r1cs``, ``synthesizer.program``; 0 for other synthesizers)."""
    return sum(_arrays_nbytes(getattr(synthesizer, name, None)) for name in ("r1cs", "program"))


def _arrays_nbytes(obj, depth: int = 3) -> int:
    """numpy bytes reachable from ``obj`` through attributes (attrs or plain) and sequences."""
    if obj is None or depth < 0 or isinstance(obj, (str, bytes, int, float)):
        return 0
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(_arrays_nbytes(v, depth - 1) for v in obj)
    if attrs.has(type(obj)):
        return sum(_arrays_nbytes(getattr(obj, f.name), depth - 1) for f in attrs.fields(type(obj)))
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return sum(_arrays_nbytes(v, depth - 1) for v in vars(obj).values())
    return 0


def check_key_fits(name: str, synthesizer, pk: ProvingKey) -> None:
    """Refuse a key of another circuit: digest when both know it, else the shapes.

    Raises:
        cuzk.errors.KeyMismatchError: naming the circuit and what differs.
    """
    r1cs = getattr(synthesizer, "r1cs", None)
    if r1cs is None:
        return  # a custom synthesizer: the prover's own check_compatible guards each proof
    digest = getattr(r1cs, "digest", None)
    if pk.digest is not None and digest is not None and pk.digest != digest:
        raise KeyMismatchError(f"circuit {name!r}: the key is for circuit {pk.digest[:16]}…, "
                               f"the synthesizer's R1CS is {digest[:16]}…")
    n_vars, n_public = getattr(r1cs, "n_vars", None), getattr(r1cs, "n_public", None)
    if isinstance(n_vars, int) and n_vars != pk.n_vars:
        raise KeyMismatchError(f"circuit {name!r}: the key has {pk.n_vars} variables, the R1CS {n_vars}")
    if isinstance(n_public, int) and n_public + 1 != pk.n_inputs:
        raise KeyMismatchError(f"circuit {name!r}: the key has {pk.n_inputs - 1} public inputs, the R1CS {n_public}")


class CircuitRoute(Route):
    """A registered circuit (see the module docstring). Created by :meth:`cuzk.Engine.register`."""

    def __init__(self, engine, name: str, synthesizer, executor, key, *, priority: Priority, synthesis: str,
                 concurrency: int, precompute=None, ones_blocks=None):
        super().__init__(synthesizer, None, name)
        self.engine, self.executor, self.key = engine, executor, key
        self.kind = key_kind(key)
        self.priority, self.synthesis, self.concurrency = priority, synthesis, concurrency
        self.unit_bytes = estimate_synthesized_bytes(synthesizer) or 0
        self.pce_bytes = pce_bytes(synthesizer)
        # Held for a whole load (a second worker waits for it) and for an eviction. Lock order
        # (docs/engine.md, "Locking"): this lock, then the engine's; the engine's room-making
        # only try-takes other circuits' key locks, so it never waits on one while holding its own.
        self.key_lock = threading.RLock()
        self._pk: ProvingKey | None = key if self.kind == "object" else None
        self._provers: dict[Any, Any] = {}
        self.key_bytes_reserved = 0
        # the key file's size when last seen: status() keeps answering if the file goes away
        self._file_size = os.path.getsize(key) if self.kind in ("params", "zkey") else 0
        self.cache_path: str | None = None  # the key-cache file this engine loaded the key from
        self._digest: str | None = None  # its source digest (names the key's tables file)
        self._unpin = None  # releases the pin on that file (cuzk/engine/keycache_cap.py)
        self.last_load_s = 0.0
        self.last_use: float | None = None
        self.precompute = _check_precompute(name, precompute, self.kind)  # fixed-base tables (CPU backend)
        self.tables = None  # the key's KeyTables once loaded
        self.tables_info = None  # how they were loaded (cuzk.engine.keytables.TablesInfo)
        self._plans: dict | None = None  # planned tables of the loaded key
        self._tables_unpin = None
        self.ones_blocks = _check_ones_blocks(name, ones_blocks, self.kind)  # block sums (CPU backend)
        if self.kind == "object":
            check_key_fits(name, synthesizer, key)

    # -- stages -------------------------------------------------------------------------------
    def synthesize(self, **inputs):
        return self.executor.synthesize(**inputs)

    def prover_for(self, worker, unit):
        if self.kind == "custom":  # nothing to load: key_load_s stays 0
            self.last_use = time.time()
            return self.key
        device = getattr(worker, "device", None)
        prover = self._provers.get(device)
        if prover is None:
            t0 = time.perf_counter()
            prover, loaded = self._load(device, unit, getattr(worker, "name", None))
            unit.marks["key_load_s"] = self.last_load_s if not loaded else time.perf_counter() - t0
        self.last_use = time.time()
        return prover

    # -- key tiers ----------------------------------------------------------------------------
    def estimated_key_bytes(self, *, strict: bool = False) -> int:
        """Host bytes of the key once loaded, its fixed-base tables included (before the first
        load of a key file: the file's size plus the most its tables may take).

        Raises:
            cuzk.errors.InputError: with ``strict`` (a submit, a load), the key file is gone or
                unreadable; without it (status) its last known size is used instead.
        """
        if self.kind == "custom":
            return 0
        if self._pk is not None:
            return _key_nbytes(self._pk) + self.table_bytes() + self.blocks_bytes()
        try:
            self._file_size = os.path.getsize(self.key)
        except OSError as e:
            if strict:
                raise InputError(f"circuit {self.name!r}: key file {os.fspath(self.key)!r} cannot be read "
                                 f"({e.strerror or e}); it was moved or deleted after register") from e
        size = self._file_size
        return size + self._table_cap(size) + self.blocks_bytes(size)

    def fixed_bytes(self) -> int:
        """Host bytes of this circuit no eviction frees: its PCE and a registered ProvingKey."""
        return self.pce_bytes + (_key_nbytes(self._pk) if self.kind == "object" else 0)

    def evictable_bytes(self) -> int:
        """Host bytes :meth:`evict` would free now (for a registered ProvingKey only its tables
        and block sums: the key stays the host's). A key file's load in progress counts what it
        reserved: its key lock, taken, is what keeps it from being evicted."""
        if self.kind in ("params", "zkey"):
            return self.key_bytes_reserved
        if self.kind != "object":
            return 0
        freed = (self.table_bytes() if self.tables is not None else 0) + (self.blocks_bytes() if self._provers else 0)
        return min(freed, self.key_bytes_reserved)

    def blocks_bytes(self, file_bytes: int = 0) -> int:
        """Bytes of the key's block sums (``ones_blocks``; CPU backend): exact once the key is
        loaded, else at most 1/block of its file."""
        if not self.ones_blocks or self.engine.backend != "cpu":
            return 0
        if self._pk is None:
            return file_bytes // self.ones_blocks
        return bit_msm.blocks_bytes(self._pk, self.ones_blocks)

    def _table_cap(self, query_bytes: int) -> int:
        """The bytes this key's tables may take: the ``precompute`` figure, or for ``"auto"``
        auto_factor() x the query bytes (0 on AVX-512 IFMA CPUs), at most a quarter of the
        budget and at most what one witness, the key, the PCE and what the other circuits hold
        for good (PCEs, registered keys) leave of it (docs/engine.md, "Memory budget")."""
        if self.precompute is None or self.engine.backend != "cpu":
            return 0
        if self.precompute != "auto":
            return self.precompute
        budget = self.engine.memory_budget
        cap = min(fixed_base.auto_factor() * query_bytes, (budget or physical_memory()) // 4)
        if budget is not None:
            key = _key_nbytes(self._pk) if self._pk is not None else query_bytes
            others = self.engine.fixed_bytes(excluding=self)
            cap = min(cap, max(0, budget - self.unit_bytes - self.pce_bytes - key - others))
        return cap

    def table_plans(self) -> dict:
        """The loaded key's planned tables (query -> plan; empty: none)."""
        if self._plans is None:
            pk = self._pk
            qbytes = sum(getattr(pk, q).nbytes for q in fixed_base.QUERY_GROUPS)
            cap = self._table_cap(qbytes)
            self._plans = fixed_base.plan_tables(pk, cap) if cap else {}
        return self._plans

    def table_bytes(self) -> int:
        """Bytes of the key's tables: built, or planned (the budget holds them from the load on)."""
        if self.tables is not None:
            return self.tables.nbytes
        return fixed_base.tables_bytes(self._pk, self.table_plans()) if self._pk is not None else 0

    @property
    def tier(self) -> str:
        if self.kind == "custom":
            return "custom"
        if self._provers and self.engine.backend == "cuda":
            return "device"
        if self._pk is not None:
            return "host"
        # status() must stay cheap: no hashing of the source here. "disk" once this engine has
        # loaded (so filled or found) the cache entry; "cold" before, even if another process filled it.
        return "disk" if self.cache_path is not None and os.path.exists(self.cache_path) else "cold"

    def _load(self, device, unit=None, worker=None) -> tuple[Any, bool]:
        """The prover for ``device``, loading the key as needed; ``(prover, loaded_here)``."""
        with self.key_lock:
            prover = self._provers.get(device)
            if prover is not None:  # another worker loaded it while this one waited
                return prover, False
            t0 = time.perf_counter()
            tl = self.engine.timeline
            job, part = (unit.job.id, unit.partition) if unit is not None else (None, None)
            tl.record(K.KEY_LOAD_START, job, part, worker, circuit=self.name, tier=self.tier)
            try:
                prover = self._make_prover(device)
            except BaseException as exc:
                tl.record(K.KEY_LOAD_END, job, part, worker, circuit=self.name, error=type(exc).__name__)
                raise
            self.last_load_s = time.perf_counter() - t0
            extra = {"tables_bytes": self.tables.nbytes, "tables_hit": self.tables_info.hit} \
                if self.tables is not None and self.tables_info is not None else {}
            tl.record(K.KEY_LOAD_END, job, part, worker, circuit=self.name, tier=self.tier,
                      seconds=round(self.last_load_s, 6), **extra)
            self._provers[device] = prover
            return prover, True

    def _make_prover(self, device):
        if self.kind == "custom":
            return self.key
        if self._pk is None:
            self.engine.make_room(self, self.estimated_key_bytes(strict=True))
            try:
                pk, info = self.engine.key_cache.load(self.key, kind=self.kind,
                                                      r1cs=getattr(self.synthesizer, "r1cs", None),
                                                      progress=self.engine.progress_for(self.name))
                check_key_fits(self.name, self.synthesizer, pk)
            except BaseException:
                self.engine.resize_reservation(self, 0)  # a failed load holds no room in the budget
                raise
            self.cache_path, self._digest = info.path, info.digest
            if info.path is not None:  # the cache's cap never removes the entry this key is mapped from
                self._unpin = pin(info.path, self)
            self._pk, self._plans = pk, None
            self.engine.make_room(self, self.estimated_key_bytes())  # the real key and tables
        from cuzk.prover import GpuProver

        if device is None:  # the CPU backend: the "device" tier is the host arrays and a prepared vk
            # "auto": a witness of bits (PoRep, SnapDeals: SHA-256) skips its 0s and adds its 1s in the
            # A, B and L MSMs; any other keeps the general MSMs (cuzk/groth16/bit_msm.py), same bytes
            need = self.estimated_key_bytes()
            if need > self.key_bytes_reserved:  # an object key whose tables or block sums were evicted
                self.engine.make_room(self, need)
            return GpuProver(self._pk, device=self.engine.backend, precompute=self._load_tables(), bit_msm="auto",
                             ones_blocks=self.ones_blocks)  # GpuProver builds them on the CPU backend only
        return self._make_resident(GpuProver, device)

    def _load_tables(self):
        """The key's fixed-base tables (None: none planned): from the key cache beside the key's
        entry when the key came from one (mapped, or built and stored), else built in memory.
        Their bytes are reserved in the budget before they are built (by the caller)."""
        if self.tables is not None or not self.table_plans():
            return self.tables
        plans, pk = self.table_plans(), self._pk
        if self.cache_path is not None and self._digest is not None:
            from cuzk.engine.keytables import load_tables

            tables, info = load_tables(self.engine.key_cache, self.kind, self._digest, pk, plans,
                                       source=os.path.realpath(self.key))
            if info.path is not None:  # pinned like the key's entry while this key is loaded
                self._tables_unpin = pin(info.path, self)
        else:
            from cuzk.engine.keytables import TablesInfo

            tables = fixed_base.build_tables(pk, plans)
            info = TablesInfo(hit=False, path=None, bytes=tables.nbytes, seconds=tables.seconds,
                              build_seconds=tables.seconds, note="built in memory: the key has no cache entry")
        self.tables, self.tables_info = tables, info
        return tables

    def _make_resident(self, make, device):
        """A prover with the key resident on CUDA ``device``, within the device's budget
        (cuzk/engine/devices.py): idle keys there are evicted first; an upload that still runs
        out of device memory is retried once after dropping every idle key on the device."""
        engine, nbytes = self.engine, key_device_bytes(self._pk)
        engine.make_device_room(self, device, nbytes)
        try:  # MemoryError: DeviceOutOfMemoryError, or CuPy's own from a step the kernels don't wrap (warm-up)
            prover = make(self._pk, device="cuda", device_id=device)
        except MemoryError as first:
            freed = engine.make_device_room(self, device, nbytes, every_idle=True)
            try:
                prover = make(self._pk, device="cuda", device_id=device)
            except MemoryError as e:
                others = engine.device_tier.resident(device)
                raise DeviceOutOfMemoryError(
                    f"circuit {self.name!r}: its key needs {nbytes:,} bytes on CUDA device {device} and the device "
                    f"is out of memory ({e}); {freed:,} bytes of idle keys were dropped there and keys in use "
                    f"stay: {others or 'none'}") from first
        engine.device_tier.add(device, self.name, nbytes)
        return prover

    def resident_devices(self) -> tuple:
        return tuple(self._provers)

    def drop_device(self, device, *, blocking: bool = True) -> int | None:
        """Forget the prover of ``device`` (its resident key is freed with it); returns its bytes,
        or None when ``blocking`` is False and the key lock is taken (a load or eviction runs)."""
        if not self.key_lock.acquire(blocking):
            return None
        try:
            self._provers.pop(device, None)
            return self.engine.device_tier.remove(device, self.name) if self.engine.device_tier else 0
        finally:
            self.key_lock.release()

    def preload(self) -> None:
        """Load the key into the host tier and make it resident on every device of the engine."""
        for device in self.engine.devices:
            self._load(device)

    def evict(self, *, blocking: bool = True) -> int | None:
        """Drop provers and (for key files) the host arrays; returns the bytes freed, or None when
        ``blocking`` is False and the key lock is taken (the key is loading or being evicted)."""
        if not self.key_lock.acquire(blocking):
            return None
        try:
            blocks = self.blocks_bytes() if self._provers else 0  # the provers hold the block sums
            for device in list(self._provers):
                self.drop_device(device)
            tables = self.table_bytes() if self.tables is not None else 0
            self.tables = self.tables_info = None
            if self._tables_unpin is not None:
                self._tables_unpin()
                self._tables_unpin = None
            if self.kind in ("params", "zkey") and self._pk is not None:
                self._pk, self._plans = None, None
                if self._unpin is not None:
                    self._unpin()
                    self._unpin = None
                freed, self.key_bytes_reserved = self.key_bytes_reserved, 0
                return freed
            if tables or blocks:  # an object key stays the host's; its tables and block sums go
                freed = min(tables + blocks, self.key_bytes_reserved)
                self.key_bytes_reserved -= freed
                return freed
            return 0
        finally:
            self.key_lock.release()

    def status(self) -> dict:
        return {"tier": self.tier, "kind": self.kind, "bytes": self.estimated_key_bytes(),
                "last_use": self.last_use, "last_load_s": round(self.last_load_s, 6),
                "source": os.fspath(self.key) if self.kind in ("params", "zkey") else None,
                "devices": sorted(str(d) for d in self._provers),
                "tables": None if self.tables is None else {
                    "bytes": self.tables.nbytes, "queries": self.tables.describe(), "hit": self.tables_info.hit,
                    "build_s": round(self.tables_info.build_seconds, 6), "path": self.tables_info.path}}


def _check_ones_blocks(name: str, value, kind: str):
    """Register's ``ones_blocks``: None or a block size, and only with a key."""
    if value is None:
        return None
    try:
        block = bit_msm.check_ones_blocks(value, "auto")  # the Engine's provers run bit_msm="auto"
    except InputError as e:
        raise InputError(f"circuit {name!r}: ones_blocks: {e}") from None
    if kind == "custom":
        raise InputError(f"circuit {name!r}: ones_blocks needs a proving key; a custom prover keeps its own bases")
    return block


def _check_precompute(name: str, value, kind: str):
    """Register's ``precompute``: None, "auto" or an int of bytes >= 0, and only with a key."""
    try:
        if isinstance(value, fixed_base.KeyTables):  # a prover's option, not a circuit's
            raise InputError("KeyTables")
        checked = fixed_base.check_precompute(value)
    except InputError:
        raise InputError(f"circuit {name!r}: precompute must be None, 'auto' or an int of bytes >= 0, "
                         f"got {value!r}") from None
    if checked is not None and kind == "custom":
        raise InputError(f"circuit {name!r}: precompute needs a proving key; a custom prover keeps its own bases")
    return checked


def _key_nbytes(pk: ProvingKey) -> int:
    """Host bytes of a key's arrays, as the key cache stores them."""
    from cuzk.engine.keyarrays import key_to_arrays

    return sum(a.nbytes for a in key_to_arrays(pk)[0].values())
