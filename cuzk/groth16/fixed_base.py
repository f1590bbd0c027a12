"""Fixed-base tables of a proving key's queries: a resident key's MSMs with fewer windows.

A key's query points (A, B in G1 and G2, L, H) are the same in every proof, so their shifted
copies 2^(c·t·j)·P can be made once (:mod:`cuzk.kernels.msm_fixed`); each proof's MSM over a
query then runs t windows instead of ~20. Memory buys time: :func:`plan_tables` shares a byte
figure among the queries, greedily, by the modelled cost saved per byte (``trade_off`` ratios
times ``plain_cost``, so G1 and G2 compare in one unit), keeping only steps that save at least
5% of a query's MSM and skipping queries under :data:`MIN_POINTS` points (their plain MSMs are
milliseconds, and split by GLV/GLS by default). The CPU MSMs take a table where they take points
(``kernels.msm_g1(table, scalars)``), so :meth:`KeyTables.bases` is all a prover needs.

What ``"auto"`` means: tables up to :data:`AUTO_FACTOR` times the bytes of the key's query
points (none where the MSMs run on AVX-512 IFMA: :func:`auto_factor`), and at most a quarter of
the machine's physical memory (an Engine passes a byte figure
from its memory budget instead: docs/engine.md). The measured curve behind the factor is in
docs/perf/kernels.md ("Fixed-base precomputation for resident keys").

    >>> tables = build_tables(pk, plan_tables(pk, 64 << 20))       # doctest: +SKIP
    >>> bases = tables.bases(Bases.of(pk))                          # doctest: +SKIP
"""

from __future__ import annotations

import numbers
import os
import time

import attrs
import numpy as np

from cuzk import curves
from cuzk.errors import InputError, KeyMismatchError
from cuzk.groth16.keys import ProvingKey
from cuzk.kernels.msm_cpu import AVAILABLE, VEC_METHODS

__all__ = ["KeyTables", "QUERY_GROUPS", "AUTO_FACTOR", "MIN_POINTS", "plan_tables", "build_tables", "tables_bytes",
           "auto_bytes", "auto_factor", "check_precompute", "tables_for", "tables_to_arrays", "tables_from_arrays", "check_tables"]

#: the group of each query's points
QUERY_GROUPS = {"a": "g1", "b_g1": "g1", "b_g2": "g2", "l": "g1", "h": "g1"}
#: "auto": tables of at most this many times the key's query bytes: past the planner's first
#: steps (its best saving per byte) the measured prove gained nothing more (docs/perf/kernels.md)
AUTO_FACTOR = 2
#: queries with fewer points get no table
MIN_POINTS = 1 << 12
_MIN_GAIN = 0.05  # a step of the plan must save at least this share of the query's plain MSM
_SAMPLE_ROWS = 65  # rows of block 0 compared with the key's points when a table is handed in


@attrs.frozen(eq=False)
class KeyTables:
    """The fixed-base tables of one proving key: query name -> :class:`~cuzk.kernels.msm_fixed.FixedBaseTable`.

    Attributes:
        tables: the tables, for the queries that have one (a subset of ``QUERY_GROUPS``).
        seconds: wall time it took to build them (0 when they were mapped from a file).
    """

    tables: dict
    seconds: float = 0.0

    @property
    def nbytes(self) -> int:
        """Bytes of every table (points and identity flags)."""
        return sum(t.nbytes for t in self.tables.values())

    @property
    def plans(self) -> dict:
        return {q: t.plan for q, t in self.tables.items()}

    def bases(self, bases):
        """``bases`` (a :class:`~cuzk.groth16.prove.Bases`) with the tables in place of their queries' points."""
        return attrs.evolve(bases, **self.tables)

    def describe(self) -> dict:
        """JSON-able summary: per query its plan, bases and bytes."""
        return {q: {**t.plan.to_dict(), "n": t.n, "bytes": t.nbytes} for q, t in self.tables.items()}


def _kernels(pk: ProvingKey):
    return curves.get(pk.curve).kernels


def _query_bytes(pk: ProvingKey) -> int:
    return sum(getattr(pk, q).nbytes for q in QUERY_GROUPS)


def tables_bytes(pk: ProvingKey, plans: dict) -> int:
    """Bytes the tables of ``plans`` will take for ``pk`` (:attr:`KeyTables.nbytes` once built:
    the points and one identity flag per base)."""
    total = 0
    for q, plan in plans.items():
        pts = getattr(pk, q)
        total += plan.m * pts.shape[0] * pts[:1].nbytes + pts.shape[0]
    return total


def plan_tables(pk: ProvingKey, max_bytes: int, queries=tuple(QUERY_GROUPS)) -> dict:
    """Plans (query -> FixedBasePlan) whose tables take at most ``max_bytes`` for ``pk``, chosen
    greedily by modelled cost saved per byte; empty when nothing is worth it.

    Raises:
        InputError: max_bytes not an int >= 0, or an unknown query name.
    """
    max_bytes = _check_bytes(max_bytes, "max_bytes")
    kern = _kernels(pk)
    fronts = {}
    for q in queries:
        if q not in QUERY_GROUPS:
            raise InputError(f"unknown query {q!r}; the queries are {tuple(QUERY_GROUPS)}")
        pts = getattr(pk, q)
        n, pb, group = pts.shape[0], pts[:1].nbytes, QUERY_GROUPS[q]
        if n < MIN_POINTS:
            continue
        base = kern.plain_cost(group, n)
        # bytes as tables_bytes counts them: the points and one identity flag per base
        front = [(plan.table_bytes(n, pb) + (n if plan.m > 1 else 0), ratio * base, plan)
                 for _, ratio, plan in kern.trade_off(group, n) if plan.m == 1 or ratio <= 1 - _MIN_GAIN]
        fronts[q] = front
    pick = {q: 0 for q in fronts}
    left = max_bytes
    while True:
        best = None  # (saved per byte, query, index in its front, extra bytes)
        for q, front in fronts.items():
            b0, c0, _ = front[pick[q]]
            for j in range(pick[q] + 1, len(front)):
                extra = front[j][0] - b0
                if extra <= left and (best is None or (c0 - front[j][1]) / extra > best[0]):
                    best = ((c0 - front[j][1]) / extra, q, j, extra)
        if best is None:
            break
        _, q, j, extra = best
        pick[q], left = j, left - extra
    return {q: fronts[q][i][2] for q, i in pick.items() if i > 0}


def build_tables(pk: ProvingKey, plans: dict, threads=None) -> KeyTables:
    """The tables of ``plans`` (from :func:`plan_tables`) for ``pk``'s query points.

    Costs about c·t·(m−1) ≤ 255 doublings per point of every planned query, once.
    """
    kern = _kernels(pk)
    t0 = time.perf_counter()
    tables = {q: kern.precompute(QUERY_GROUPS[q], getattr(pk, q), plan, threads) for q, plan in plans.items()}
    return KeyTables(tables, seconds=time.perf_counter() - t0)


def _check_bytes(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InputError(f"{what} must be an int of bytes >= 0, got {value!r}")
    return int(value)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf: no memory bound beyond the factor
        return 1 << 62


def auto_factor() -> int:
    """The factor ``precompute="auto"`` applies to a key's query bytes on this CPU:
    :data:`AUTO_FACTOR`, or 0 where the CPU MSMs run method "ifma" (AVX-512 IFMA): there the
    tables measured no faster than the plain MSM (G1 2^16 1.10-1.41x its time, G2 2^14 0.95x;
    docs/perf/kernels.md), so "auto" builds none. An explicit byte figure still builds them."""
    return 0 if VEC_METHODS[0] in AVAILABLE else AUTO_FACTOR


def auto_bytes(pk: ProvingKey, memory: int | None = None) -> int:
    """What ``precompute="auto"`` allows for ``pk``: :func:`auto_factor` times its query bytes,
    at most a quarter of ``memory`` (default: the machine's physical memory)."""
    memory = _physical_memory() if memory is None else memory
    return min(auto_factor() * _query_bytes(pk), memory // 4)


def check_precompute(value):
    """``value`` if it is a valid ``precompute`` option: None, ``"auto"``, an int of bytes >= 0
    or a :class:`KeyTables`.

    Raises:
        InputError: anything else.
    """
    if value is None or isinstance(value, KeyTables) or (isinstance(value, str) and value == "auto"):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InputError(f"precompute must be None, 'auto', an int of bytes >= 0 or KeyTables, got {value!r}")
    return int(value)


def tables_for(pk: ProvingKey, precompute, threads=None) -> KeyTables | None:
    """The tables a prover of ``pk`` uses for the ``precompute`` option (None: none to use).

    Raises:
        InputError: a bad option (:func:`check_precompute`).
        KeyMismatchError: tables handed in that are not this key's.
    """
    precompute = check_precompute(precompute)
    if precompute is None:
        return None
    if isinstance(precompute, KeyTables):
        check_tables(pk, precompute)
        return precompute if precompute.tables else None
    plans = plan_tables(pk, auto_bytes(pk) if precompute == "auto" else precompute)
    return build_tables(pk, plans, threads) if plans else None


def check_tables(pk: ProvingKey, tables: KeyTables) -> None:
    """Refuse tables of another key: each table's group and curve, its base count, and a sample
    of its first block (the points themselves) against the key's points.

    Raises:
        KeyMismatchError: naming the query and what differs.
    """
    fq = curves.resolve(pk.curve).fq.modulus
    for q, table in tables.tables.items():
        if q not in QUERY_GROUPS:
            raise KeyMismatchError(f"fixed-base tables name an unknown query {q!r}")
        pts = getattr(pk, q)
        group = getattr(table, "group", None)
        if (getattr(group, "name", None) != QUERY_GROUPS[q] or group.fq.modulus != fq
                or pts[:1].nbytes != _point_bytes(table)):
            raise KeyMismatchError(f"the fixed-base table of query {q!r} is not of the key's {QUERY_GROUPS[q].upper()} "
                                   f"over {pk.curve}")
        if table.n != pts.shape[0]:
            raise KeyMismatchError(f"the fixed-base table of query {q!r} has {table.n} bases, the key {pts.shape[0]}")
        rows = np.unique(np.linspace(0, max(table.n - 1, 0), _SAMPLE_ROWS).astype(np.int64)) if table.n else []
        if len(rows) and not np.array_equal(np.asarray(table.points[rows]), np.asarray(pts[rows])):
            raise KeyMismatchError(f"the fixed-base table of query {q!r} holds other points than the key's")


def _point_bytes(table) -> int:
    return int(np.prod(table.points.shape[1:])) * table.points.itemsize


def tables_to_arrays(tables: KeyTables) -> tuple[dict, dict]:
    """``(arrays, meta)`` of ``tables`` for a key-cache file: ``<query>.points`` (uint64),
    ``<query>.skip`` (uint8 0/1), and per query its plan and base count."""
    arrays, meta = {}, {}
    for q, t in tables.tables.items():
        arrays[f"{q}.points"] = t.points
        arrays[f"{q}.skip"] = np.ascontiguousarray(t.skip).view(np.uint8)
        meta[q] = {**t.plan.to_dict(), "n": t.n}
    return arrays, {"tables": meta}


def tables_from_arrays(pk: ProvingKey, arrays: dict, meta: dict) -> KeyTables:
    """The tables :func:`tables_to_arrays` flattened, for ``pk`` (arrays used as given: memory
    maps stay mapped), checked with :func:`check_tables` and each table's own shape checks.

    Raises:
        InputError, FieldValueError: arrays that do not make the tables the metadata names.
        KeyMismatchError: tables of another key.
    """
    kern = _kernels(pk)
    tables = {}
    try:
        for q, d in meta["tables"].items():
            if q not in QUERY_GROUPS:
                raise InputError(f"unknown query {q!r}")
            plan = kern.FixedBasePlan(d["c"], d["t"], d["method"])
            tables[q] = kern.table_from_arrays(QUERY_GROUPS[q], plan, arrays[f"{q}.points"], arrays[f"{q}.skip"])
            if tables[q].n != d["n"]:
                raise InputError(f"query {q!r}: {tables[q].n} bases, the metadata says {d['n']}")
    except (KeyError, TypeError, AttributeError) as e:
        raise InputError(f"fixed-base table arrays incomplete or malformed: {e!r}") from None
    out = KeyTables(tables)
    check_tables(pk, out)
    return out
