"""Fixed-base precomputation for MSMs over the same bases many times (a resident proving key).

With window width c, a b-bit scalar has W = num_windows(c) signed digits, and a plain Pippenger
MSM of n points runs W windows: W bucket reductions (2^(c−1) buckets each) and c·W doublings
to combine them. If the bases' shifted copies 2^(c·t·j)·P_i (j = 0..m−1, m = ceil(W/t)) are
stored once, then

    k·P = Σ_j Σ_{u<t} d_{j·t+u}·2^(c·u)·(2^(c·t·j)·P)

so the MSM becomes one of m·n points (the table) with only t windows: point (j, i) takes the
digits j·t .. j·t+t−1 of scalar i. The bucket additions stay ~W·n, the reductions drop from W to
t, the combining doublings from c·W to c·t, and with fewer reductions to pay for, a wider window
(fewer additions) becomes the cheaper one. ``t`` is the memory/time knob: t = W keeps no table
(m = 1: the plain MSM), t = 1 stores all W copies (m·n points: W times the bases' bytes).
:func:`plan_for_bytes` picks (c, t) with the least modelled cost whose table fits a byte figure.

The table holds block 0 (the points themselves) too, so each window sums over one contiguous
array; it is built with the curve's point kernels (``mul_many`` by 2^(c·t), then one batched
inversion per chunk), chunked over threads, and the MSM runs the generated MSM kernels
(``window_into``, ``combine_slices``) unchanged, so it inherits their correctness and speed.

    >>> import numpy as np
    >>> from cuzk.curves import get
    >>> G1, g1 = get("bls12_381").G1, get("bls12_381").kernels.group("g1")
    >>> g = G1.generator()
    >>> pts = np.stack([g, G1.mul(g, 2), G1.mul(g, 5)])
    >>> table = precompute(g1, pts, FixedBasePlan(c=4, t=2))
    >>> table.plan.m, table.points.shape             # W = ceil(256 / 4) = 64 windows: 32 copies of 3 points
    (32, (96, 2, 6))
    >>> k = np.array([[3, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 0]], np.uint64)
    >>> bool(G1.eq(msm_precomputed(table, k), G1.mul(g, 3 + 2 + 10)))
    True
"""

from __future__ import annotations

import attrs
import numpy as np

from cuzk.errors import InputError
from cuzk.kernels.checks import check_field_rows, check_points
from cuzk.kernels.cpu_threads import resolve_threads, run_phases
from cuzk.kernels.msm_cost import IFMA_MIN_POINTS, MAX_WINDOW, msm_cost
from cuzk.kernels.msm_group import METHODS, MsmGroup, as_msm_group, ifma_phases
from cuzk.kernels.scalar_digits import SCALAR_BITS, num_windows, signed_digits_range

__all__ = ["FixedBasePlan", "FixedBaseTable", "precompute", "msm_precomputed", "plan_for_bytes", "trade_off",
           "plain_cost", "table_from_arrays", "point_bytes", "MAX_WINDOW"]

_MIN_WINDOW = 2
# A plan is taken only when the model says it saves at least this fraction of the plain MSM.
_MIN_GAIN = 0.05
# Slices of one window hold at least this many points per bucket (a slice costs one reduction).
_POINTS_PER_BUCKET = 8
# Precomputation chunks: one batched inversion each, a few per thread for dynamic scheduling.
_PRE_CHUNK = 4096
# The reduction of each extra slice, in the model's base-field multiplications per bucket.
_REDUCE = 24.0
# A batch-affine window gathers its points in bucket order into a fresh array. glibc serves
# blocks up to 32 MiB (its largest dynamic mmap threshold) from the heap, reused call after call,
# but maps larger ones anew each time, and every page of those then faults on first touch:
# 96 MiB of gather cost ~150 ms of faults per MSM here (G1 2^16, c=16, t=1: 0.94-1.01x the plain
# MSM with them, 0.77x without; docs/perf/kernels.md). So windows are cut into slices whose gather
# stays under this, and the model charges each extra slice its bucket reduction.
_GATHER_MAX = 24 << 20
# plain_cost's unit is a G1 coordinate multiplication; a G2 MSM's multiplications are in Fq2,
# and the G2 MSM measured ~2x the G1 MSM of the same size on one thread (2^14: 0.247 vs 0.126 s,
# docs/perf/kernels.md; benchmarks/fixed_base_bench.py prints both).
_DEGREE_WEIGHT = {1: 1.0, 2: 2.0}


@attrs.frozen
class FixedBasePlan:
    """Window width ``c`` and windows kept ``t``; ``m`` = ceil(W/t) stored copies of the bases.

    Attributes:
        c: window width (2..16).
        t: windows the precomputed MSM runs (1..W, W = num_windows(c)); t = W means no table.
        method: bucket method of the windows ("affine" or "xyzz").

    Raises:
        InputError: c or t out of range, or an unknown method.

    >>> FixedBasePlan(c=13, t=5).m, FixedBasePlan(c=13, t=20).m
    (4, 1)
    """

    c: int
    t: int
    method: str = "affine"

    def __attrs_post_init__(self):
        if isinstance(self.c, bool) or not isinstance(self.c, int) or not _MIN_WINDOW <= self.c <= MAX_WINDOW:
            raise InputError(f"precompute window c must be an int in {_MIN_WINDOW}..{MAX_WINDOW}, got {self.c!r}")
        w = num_windows(self.c)
        if isinstance(self.t, bool) or not isinstance(self.t, int) or not 1 <= self.t <= w:
            raise InputError(f"precompute windows t must be an int in 1..{w} (window {self.c}), got {self.t!r}")
        if self.method not in METHODS:
            raise InputError(f"precompute method must be one of {METHODS}, got {self.method!r}")

    @property
    def windows(self) -> int:
        """W: the plain MSM's windows at this width."""
        return num_windows(self.c)

    @property
    def m(self) -> int:
        """Copies of the bases in the table (1: no table)."""
        return -(-self.windows // self.t)

    @property
    def shift(self) -> int:
        """Bits between consecutive copies: c·t."""
        return self.c * self.t

    def table_bytes(self, n: int, bytes_per_point: int) -> int:
        """Bytes of the table for n bases (0 when m = 1: the bases are used as they are)."""
        return self.m * n * bytes_per_point if self.m > 1 else 0

    def to_dict(self) -> dict:
        return {"c": self.c, "t": self.t, "method": self.method}


@attrs.frozen(eq=False)
class FixedBaseTable:
    """The shifted copies of n bases: ``points[j·n + i] = 2^(c·t·j)·P_i`` (affine Montgomery).

    Attributes:
        group: the :class:`~cuzk.kernels.msm_cpu.MsmGroup` (``cuzk.curves.get(name).kernels.group("g1")``).
        plan: the plan it was built for.
        n: number of bases.
        points: (m·n, 2, *coord) uint64 array (may be a read-only memory map).
        skip: (n,) bool, True where P_i is the identity (its digits stay zero).
    """

    group: object
    plan: FixedBasePlan
    n: int
    points: np.ndarray
    skip: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.points.nbytes + self.skip.nbytes)


def point_bytes(group) -> int:
    """Bytes of one affine point of ``group`` (G1: 2·L·8, G2: 4·L·8)."""
    g = as_msm_group(group)
    return 2 * int(np.prod(g.coord)) * 8


def _gather_slices(rows: int, pb: int, method: str) -> int:
    """Slices per window that keep a batch-affine window's gather under ``_GATHER_MAX``."""
    return max(1, -(-rows * pb // _GATHER_MAX)) if method == "affine" else 1


def _plan_cost(n: int, plan: FixedBasePlan, fq_bits: int, pb: int) -> float:
    """Modelled field multiplications of one precomputed MSM (one thread): t windows of m·n
    points over scalars cut to t·c bits (so num_windows gives t), plus the reductions of the
    slices that bound each window's gather (pb: bytes per point)."""
    rows = plan.m * max(n, 1)
    extra = (_gather_slices(rows, pb, plan.method) - 1) * plan.t * (1 << (plan.c - 1)) * _REDUCE
    return msm_cost(rows, plan.c, plan.method, fq_bits, plan.t * plan.c - 1) + extra


def _plain_cost(n: int, fq_bits: int) -> float:
    return min(msm_cost(max(n, 1), c, m, fq_bits, SCALAR_BITS) for m in METHODS for c in range(1, MAX_WINDOW + 1))


def plain_cost(group, n: int) -> float:
    """Modelled cost of the plain (unsplit) MSM of n points of ``group``, in G1 coordinate-field
    multiplications (a G2 one weighted by its measured factor), so costs of the two groups add:
    a prover's planner weighs ``trade_off`` ratios by it.

    >>> from cuzk.curves import get
    >>> k = get("bls12_381").kernels
    >>> plain_cost(k.group("g2"), 1 << 16) > 1.5 * plain_cost(k.group("g1"), 1 << 16) > 0
    True
    """
    g = as_msm_group(group)
    return _plain_cost(n, g.fq.bits) * _DEGREE_WEIGHT[g.degree]


def trade_off(group, n: int) -> list[tuple[int, float, FixedBasePlan]]:
    """The Pareto front of plans for n bases: ``(table bytes, modelled cost / plain MSM, plan)``,
    sorted by bytes, each cheaper in the model than every smaller one. The first entry is the
    plain MSM (0 bytes, ratio 1.0, t = W).

    >>> from cuzk.curves import get
    >>> front = trade_off(get("bls12_381").kernels.group("g1"), 1 << 16)
    >>> front[0][:2], all(b1 < b2 and r1 > r2 for (b1, r1, _), (b2, r2, _) in zip(front, front[1:]))
    ((0, 1.0), True)
    """
    g = as_msm_group(group)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InputError(f"n must be an int >= 0, got {n!r}")
    pb = point_bytes(g)
    base = _plain_cost(n, g.fq.bits)
    options = []
    for c in range(_MIN_WINDOW, MAX_WINDOW + 1):
        w = num_windows(c)
        for m in sorted({-(-w // t) for t in range(1, w)}):
            t = -(-w // m)  # the fewest windows m copies allow
            for method in METHODS:
                plan = FixedBasePlan(c, t, method)
                options.append((plan.table_bytes(n, pb), _plan_cost(n, plan, g.fq.bits, pb) / base, plan))
    w = num_windows(13)
    front = [(0, 1.0, FixedBasePlan(13, w))]
    for nbytes, ratio, plan in sorted(options, key=lambda o: (o[0], o[1])):
        if ratio < front[-1][1]:
            if nbytes == front[-1][0]:
                front[-1] = (nbytes, ratio, plan)
            else:
                front.append((nbytes, ratio, plan))
    return front


def plan_for_bytes(group, n: int, max_bytes: int) -> FixedBasePlan | None:
    """The plan with the least modelled cost whose table takes at most ``max_bytes`` for n
    bases, or None when none saves at least 5% in the model (keep the plain MSM).

    Raises:
        InputError: max_bytes not an int >= 0.

    >>> from cuzk.curves import get
    >>> g1 = get("bls12_381").kernels.group("g1")
    >>> plan_for_bytes(g1, 1 << 16, 0) is None
    True
    >>> p = plan_for_bytes(g1, 1 << 16, 64 << 20); p.m * (1 << 16) * 96 <= 64 << 20
    True
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 0:
        raise InputError(f"max_bytes must be an int >= 0, got {max_bytes!r}")
    best = None
    for nbytes, ratio, plan in trade_off(group, n):
        if nbytes <= max_bytes and plan.m > 1 and ratio <= 1 - _MIN_GAIN:
            best = plan
    return best


def table_from_arrays(group, plan: FixedBasePlan, points, skip) -> FixedBaseTable:
    """A table stored earlier (e.g. a key-cache file's arrays, read-only memory maps are kept as
    they are): ``points`` as :class:`FixedBaseTable` holds them, ``skip`` (bool, or uint8 0/1).

    Checks the shapes against the plan, every coordinate < p, and that ``skip`` marks exactly
    the identities of block 0; that the blocks are the shifted copies is not re-checked (a
    prover verifies its proofs).

    Raises:
        InputError: a wrong type, dtype or shape, or a ``skip`` that disagrees with block 0.
        FieldValueError: a coordinate >= p.
    """
    g = as_msm_group(group)
    if not isinstance(plan, FixedBasePlan):
        raise InputError(f"plan must be a FixedBasePlan, got {type(plan).__name__}")
    points = check_points(points, "table points", (2,) + g.coord, g.fq.modulus)
    if points.shape[0] % plan.m:
        raise InputError(f"a table of plan (c={plan.c}, t={plan.t}) holds a multiple of {plan.m} points, "
                         f"got {points.shape[0]}")
    n = points.shape[0] // plan.m
    if not isinstance(skip, np.ndarray) or skip.shape != (n,) or skip.dtype not in (np.bool_, np.uint8):
        raise InputError(f"table skip must be a bool array of shape ({n},), got "
                         f"{getattr(skip, 'shape', type(skip).__name__)} {getattr(skip, 'dtype', '')}")
    skip = skip.view(np.bool_) if skip.dtype == np.uint8 else skip
    if not np.array_equal(skip, ~points[:n].reshape(n, -1 if n else 1).any(axis=1)):
        raise InputError("table skip does not mark the identities of its first block")
    return FixedBaseTable(group=g, plan=plan, n=n, points=points, skip=skip)


def _shift_chunk(kern, table, scalar, jac, j, n, lo, hi):
    """table[j·n + i] = 2^(c·t)·table[(j−1)·n + i] for i in [lo, hi): double-and-add by the
    one-bit scalar (only doublings after the first bit), then one batched inversion."""
    src = table[(j - 1) * n + lo:(j - 1) * n + hi]
    kern.mul_many(src, scalar[:hi - lo], jac[lo:hi])
    kern.batch_to_affine(jac[lo:hi], table[j * n + lo:j * n + hi])


def precompute(group, points, plan: FixedBasePlan, threads=None) -> FixedBaseTable:
    """The table of ``plan.m`` shifted copies of ``points`` for :func:`msm_precomputed`.

    Costs about c·t·(m−1) ≤ 255 doublings per point, once (threads share the points).

    Args:
        group: the :class:`~cuzk.kernels.msm_cpu.MsmGroup`.
        points: (n, 2, *coord) affine Montgomery points (all-zero rows = identity).
        plan: a :class:`FixedBasePlan`.
        threads: threads to use (None: all cores).

    Raises:
        InputError: wrong shapes/dtypes, a plan that is not a FixedBasePlan, bad threads.
        FieldValueError: a coordinate >= p.
    """
    g = as_msm_group(group)
    if not isinstance(plan, FixedBasePlan):
        raise InputError(f"plan must be a FixedBasePlan, got {type(plan).__name__}")
    points = check_points(points, "points", (2,) + g.coord, g.fq.modulus)
    threads = resolve_threads(threads)
    n, m = points.shape[0], plan.m
    table = np.empty((m * n, 2) + g.coord, np.uint64)
    table[:n] = points
    skip = ~points.reshape(n, -1 if n else 1).any(axis=1)
    if n and m > 1:
        kern = g.kernels.C  # the group's point kernels, which its generated MSM kernels use
        chunks = max(1, min(4 * threads, -(-n // _PRE_CHUNK))) if threads > 1 else 1
        cuts = [k * n // chunks for k in range(chunks + 1)]
        size = max(b - a for a, b in zip(cuts, cuts[1:]))
        scalar = np.zeros((size, 4), np.uint64)
        scalar[:, plan.shift // 64] = np.uint64(1) << np.uint64(plan.shift % 64)
        jac = np.empty((n, 3) + g.coord, np.uint64)
        phases = [[(_shift_chunk, (kern, table, scalar, jac, j, n, cuts[k], cuts[k + 1])) for k in range(chunks)]
                  for j in range(1, m)]
        run_phases(threads, phases)
    return FixedBaseTable(group=g, plan=plan, n=n, points=table, skip=skip)


def msm_precomputed(table: FixedBaseTable, scalars, threads=None) -> np.ndarray:
    """Σ scalars[i]·P_i over the bases of ``table`` (built by :func:`precompute`): the same
    point as ``msm(group, points, scalars)``, with t windows over the m·n table points.

    Args:
        table: a :class:`FixedBaseTable`.
        scalars: (n, 4) uint64 canonical Fr scalars (< r), one per base.
        threads: threads to use (None: all cores).

    Returns:
        (2, *coord) affine Montgomery point; zeros for the identity.

    Raises:
        InputError: not a table, a table whose arrays do not match its plan, a scalar count
            other than the table's n, bad threads.
        FieldValueError: a scalar >= r.
    """
    if not isinstance(table, FixedBaseTable):
        raise InputError(f"table must be a FixedBaseTable (precompute(...)), got {type(table).__name__}")
    g: MsmGroup = as_msm_group(table.group)
    plan, n = table.plan, table.n
    m, t, c = plan.m, plan.t, plan.c
    shape = (m * n, 2) + g.coord
    pts = table.points
    if not isinstance(pts, np.ndarray) or pts.shape != shape or pts.dtype != np.uint64 \
            or table.skip.shape != (n,) or table.skip.dtype != np.bool_:
        got = getattr(pts, "shape", type(pts).__name__)
        raise InputError(f"the precomputed table's points must be a uint64 array of shape {shape} for its plan "
                         f"(c={c}, t={t}, n={n}), got {got}")
    scalars = check_field_rows(scalars, "scalars", (4,), g.fr.modulus)
    if scalars.shape[0] != n:
        raise InputError(f"need one scalar per base: the table has {n} bases, got {scalars.shape[0]} scalars")
    threads = resolve_threads(threads)
    if n == 0:
        return np.zeros((2,) + g.coord, np.uint64)
    rows = m * n
    width = threads if rows >= 64 * threads else 1
    full = np.zeros((m * t, n), np.int32)  # digit w of scalar i: full[w, i]; windows past W stay 0
    chunks = min(4 * width, max(1, n // 1024)) if width > 1 else 1
    cuts = [k * n // chunks for k in range(chunks + 1)]
    run_phases(width, [[(signed_digits_range, (scalars, c, table.skip, cuts[k], cuts[k + 1], full))
                        for k in range(chunks)]])
    # digits[u, j·n + i] = full[j·t + u, i]: window u of the table MSM
    digits = np.ascontiguousarray(full.reshape(m, t, n).transpose(1, 0, 2).reshape(t, rows))
    nb = 1 << (c - 1)
    cap = max(1, rows // (_POINTS_PER_BUCKET * nb))
    slices = 1 if width == 1 else max(1, min(-(-2 * width // t), cap))
    slices = max(slices, _gather_slices(rows, point_bytes(g), plan.method))
    bounds = [k * rows // slices for k in range(slices + 1)]
    sums = np.zeros((slices * t, 4) + g.coord, np.uint64)
    affine = plan.method == "affine"
    # every window may hold full digits (window t−1 of block j is window j·t+t−1 of the scalar)
    if g.vec is not None and plan.method == "affine" and rows >= IFMA_MIN_POINTS:
        # where the CPU has IFMA the table's batch-affine windows run 8 additions at a time too
        # (the scalar ones measured 1.5-1.8x slower than a plain "ifma" MSM, docs/perf/kernels.md)
        run_phases(width, ifma_phases(g, pts, digits, c, nb, bounds, sums, max(1, min(4 * width, rows // 1024))))
        return g.kernels.combine_slices(sums, c, slices)
    tasks = [(g.kernels.window_into, (pts, digits, u, c, nb, affine, bounds[s], bounds[s + 1], sums, s * t + u))
             for u in range(t) for s in range(slices)]
    run_phases(width, [tasks])
    return g.kernels.combine_slices(sums, c, slices)
