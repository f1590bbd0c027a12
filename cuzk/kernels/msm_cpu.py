"""Pippenger MSM and fixed-base batch multiplication on the CPU (drivers over Numba kernels).

``msm`` splits every scalar with the group's endomorphism (GLV on G1: 2 parts of ~128 bits with
bases P, φ(P); GLS on G2: 4 parts of ~64 bits with bases ψ^i(P); ``cuzk.kernels.glv``), picks
the bucket method and window width for the d·n-point, short-scalar MSM from a cost model counted
in field multiplications (calibrated on this project's kernels, see docs/perf/kernels.md), and
runs it in two phases on ``threads`` threads (``cpu_threads``, dynamic scheduling): point chunks
(split, ±endo^i(P), signed digits), then windows (cut into point slices when there are too few
windows to keep every thread busy). ``endo=False`` runs the plain 255-bit MSM (the baseline the
tests and benchmarks compare with).

Where the CPU has AVX-512 IFMA a third bucket method, ``"ifma"``, runs the batch-affine
additions 8 at a time (the generated ``msm_vec_<group>`` modules over ``cuzk.field.ifma``); the
model (:mod:`cuzk.kernels.msm_cost`) picks it from ``IFMA_MIN_POINTS`` points on, and it runs
unsplit by default.

The split halves (G1) or quarters (G2) the bucket reductions but not the bucket additions, and
the additions of its d·n-point windows measure dearer per addition as the windows grow: one
thread, split/unsplit (docs/perf/kernels.md) G1 0.86 at 2^10, 0.96 at 2^14, 0.98 at 2^15, 1.00
at 2^16; G2 0.80 at 2^10, 0.94 at 2^13, 1.01 at 2^14. So by default (``endo=None``) the split
runs while the d·n split points take at most ``_SPLIT_MAX_BYTES`` (G1 up to 2^15, G2 up to 2^13).

A curve's groups reach these drivers as :class:`MsmGroup` values, built by
``cuzk.curves.get(name).kernels`` (:class:`cuzk.kernels.cpu.CpuKernels`) over its generated
``msm_kernels_g1/g2`` modules.

    >>> import numpy as np
    >>> from cuzk.curves import get
    >>> bls = get("bls12_381")
    >>> g = bls.G1.generator()
    >>> k = np.array([[3, 0, 0, 0], [4, 0, 0, 0]], np.uint64)
    >>> bool(bls.G1.eq(msm(bls.kernels.group("g1"), np.stack([g, g]), k), bls.G1.mul(g, 7)))
    True
"""

from __future__ import annotations

import numpy as np

from cuzk.errors import InputError
from cuzk.field.jit import readonly
from cuzk.kernels import glv_kernels
from cuzk.kernels.checks import check_field_rows, check_points
from cuzk.kernels.cpu_threads import resolve_threads, run_phases
from cuzk.kernels.msm_cost import MAX_WINDOW, choose_msm, choose_window_for
from cuzk.kernels.msm_fixed import FixedBaseTable, msm_precomputed
from cuzk.kernels.msm_group import AVAILABLE, METHODS, VEC_METHODS, MsmGroup, as_msm_group, ifma_phases, vec_module
from cuzk.kernels.scalar_digits import SCALAR_BITS, num_windows, signed_digits, signed_digits_range, top_bits

# MsmGroup, the methods and choose_msm live in msm_group / msm_cost, below this module and msm_fixed,
# which both use them; the MSM's callers take them from here
__all__ = ["msm", "batch_mul", "choose_msm", "METHODS",
           "VEC_METHODS", "AVAILABLE", "MsmGroup", "vec_module", "ifma_phases"]

# Below this many points per thread, starting helper threads costs more than it saves.
_MIN_POINTS_PER_THREAD = 64
# Fixed base: a slice costs one inversion per window, so slices stay >= 1024 scalars.
_FIXED_BASE_CHUNK = 1024
# Preparation (split, endomorphism, digits) runs in chunks of at least this many points.
_PREP_CHUNK = 1024
# Window tasks per thread below which windows are cut into point slices.
_TASKS_PER_THREAD = 3
# endo=None splits while the d·n split points take at most this many bytes (see the docstring).
_SPLIT_MAX_BYTES = 8 << 20


def msm(group, points, scalars, threads=None, *, method=None, window=None, endo=None) -> np.ndarray:
    """Σ scalars[i]·points[i] for ``group``, an :class:`MsmGroup` of any curve;
    ``method``/``window`` override the model.

    Args:
        points: (n, 2, *coord) affine Montgomery points (all-zero rows = identity) of the
            order-r subgroup (the endomorphism split relies on it; keys are subgroup-checked),
            or a :class:`~cuzk.kernels.msm_fixed.FixedBaseTable` of this group (a resident
            key's precomputed bases): then the precomputed MSM runs, with the table's own plan
            (``method``, ``window`` and ``endo`` must stay None).
        scalars: (n, 4) uint64 canonical Fr scalars (< r).
        threads: threads to use (None: all cores).
        method: "affine" (batch-affine buckets), "xyzz" (XYZZ buckets) or "ifma" (batch-affine
            buckets 8 additions at a time on AVX-512 IFMA; only where the CPU has it); None
            chooses among those this CPU can run.
        window: window width c in 1..16; None chooses.
        endo: True splits the scalars with the group's endomorphism when it has one (GLV/GLS),
            False never does (plain MSM over 255-bit scalars), None (default) splits while the
            split points fit in ``_SPLIT_MAX_BYTES`` (where the split measured faster), except
            for method "ifma" (unsplit measured faster).

    Returns:
        (2, *coord) affine Montgomery point; zeros for the identity.

    Raises:
        InputError: wrong shapes/dtypes, length mismatch, bad method/window/threads.
        FieldValueError: a scalar >= r or a coordinate >= p.
    """
    g = as_msm_group(group)
    if not isinstance(points, np.ndarray) and hasattr(points, "plan"):
        return _msm_table(g, points, scalars, threads, (method, window, endo))
    kernels, coord = g.kernels, g.coord
    threads = resolve_threads(threads)
    points = check_points(points, "points", (2,) + coord, g.fq.modulus, threads)
    scalars = check_field_rows(scalars, "scalars", (4,), g.fr.modulus, threads)
    n = points.shape[0]
    if scalars.shape[0] != n:
        raise InputError(f"need one scalar per point: {n} points, {scalars.shape[0]} scalars")
    plan = g.plan() if endo or endo is None else None
    if endo is None and plan is not None and (plan.dim * n * points[:1].nbytes > _SPLIT_MAX_BYTES
                                              or _ifma_unsplit(g, n, method)):
        plan = None
    rows, bits = (plan.dim * n, plan.bits) if plan is not None else (n, SCALAR_BITS)
    method = choose_msm(rows, g.fq.bits, bits, g.methods)[0] if method is None else method
    if method not in METHODS + VEC_METHODS:
        raise InputError(f"method must be one of {METHODS + VEC_METHODS}, got {method!r}")
    if method not in g.methods:
        raise InputError("method 'ifma' needs a CPU with AVX-512 IFMA (cuzk.field.ifma.HAVE_IFMA is False here)")
    c = choose_window_for(rows, method, g.fq.bits, bits) if window is None else window
    if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= MAX_WINDOW:
        raise InputError(f"window must be an int in 1..{MAX_WINDOW}, got {c!r}")
    if n == 0:
        return np.zeros((2,) + coord, np.uint64)
    width = threads if rows >= _MIN_POINTS_PER_THREAD * threads else 1
    skip = ~points.reshape(n, -1).any(axis=1)  # identity points contribute nothing
    nwin = num_windows(c, bits)
    digits = np.zeros((nwin, rows), np.int32)
    chunks = min(4 * width, max(1, n // _PREP_CHUNK)) if width > 1 else 1
    cuts = [k * n // chunks for k in range(chunks + 1)]
    if plan is None:
        pts = points
        prep = [(signed_digits_range, (scalars, c, skip, cuts[k], cuts[k + 1], digits)) for k in range(chunks)]
    else:
        pts = np.empty((rows, 2) + coord, np.uint64)
        parts = (np.empty((rows, 4), np.uint64), np.empty(rows, np.bool_))
        skip = np.tile(skip, plan.dim)
        prep = [(_prepare, (kernels, plan, points, scalars, cuts[k], cuts[k + 1], parts, pts, skip, c, digits))
                for k in range(chunks)]
    # too few windows for the threads: each window's points are cut into slices (one sum each)
    slices = 1 if width == 1 else max(1, min(-(-_TASKS_PER_THREAD * width // nwin), rows // 4096))
    bounds = [k * rows // slices for k in range(slices + 1)]
    sums = np.zeros((slices * nwin, 4) + coord, np.uint64)
    nb_top, affine = 1 << top_bits(c, bits), method == "affine"
    pts = readonly(pts)  # the key's read-only points or the split's fresh ones: one window_into
    if method == "ifma":
        run_phases(width, [prep, *ifma_phases(g, pts, digits, c, nb_top, bounds, sums, chunks)])
        return kernels.combine_slices(sums, c, slices)
    tasks = [(kernels.window_into, (pts, digits, w, c, nb_top, affine, bounds[s], bounds[s + 1], sums, s * nwin + w))
             for w in range(nwin) for s in range(slices)]
    run_phases(width, [prep, tasks])
    return kernels.combine_slices(sums, c, slices)


def _ifma_unsplit(g: MsmGroup, n: int, method) -> bool:
    """Whether an n-point MSM runs "ifma" and so, by default, unsplit: there the split's fewer
    bucket reductions do not pay for converting and gathering twice the rows (BN254 G1 2^16,
    one thread: 148 ms split vs 141 ms unsplit at the best window of each, docs/perf/kernels.md)."""
    if method is None and VEC_METHODS[0] in g.methods:
        method = choose_msm(n, g.fq.bits, SCALAR_BITS, g.methods)[0]
    return method in VEC_METHODS


def _msm_table(g: MsmGroup, table, scalars, threads, options) -> np.ndarray:
    """msm() over a FixedBaseTable: the same point as over the table's bases."""
    if not isinstance(table, FixedBaseTable):
        raise InputError(f"points must be a uint64 array or a FixedBaseTable, got {type(table).__name__}")
    if table.group != g:
        raise InputError(f"the precomputed table is of {table.group.name.upper()} ({table.group.fq.bits}-bit Fq), "
                         f"the MSM of {g.name.upper()} ({g.fq.bits}-bit Fq)")
    if any(o is not None for o in options):
        raise InputError("method, window and endo are the table's plan's: pass None with a FixedBaseTable")
    return msm_precomputed(table, scalars, threads)


def _prepare(kernels, plan, points, scalars, lo, hi, parts, pts, skip, c, digits):
    """One chunk [lo, hi) of the points: split its scalars, write ±endo^j(P_i), their digits."""
    mags, neg = parts
    glv_kernels.split(plan, scalars, lo, hi, mags, neg)
    kernels.endo_expand(points, plan.ex, plan.ey, neg, lo, hi, pts)
    n = points.shape[0]
    for j in range(plan.dim):
        signed_digits_range(readonly(mags), c, skip, j * n + lo, j * n + hi, digits)  # as the unsplit path's


# ------------------------------------------------------------------------- fixed base

def _fixed_base_window(n: int) -> int:
    # table: nwin·2^(c−1) Jacobian adds (~2x a batch-affine add); per scalar: nwin batch-affine adds
    return min(range(2, MAX_WINDOW + 1), key=lambda c: num_windows(c) * (n + 2 ** (c - 1) * 2.0))


def batch_mul(group, base, scalars, threads=None, *, window=None) -> np.ndarray:
    """k_i·base for every scalar k_i (fixed-base windowed multiplication), affine (n, 2, *coord).

    One table of d·2^(c·w)·base (signed digits, 2^(c−1) entries per window) serves all scalars,
    so each product costs ceil(256/c) additions, done batch-affine (the n accumulators are
    independent, so each window's additions share inversions).

    Raises:
        InputError: wrong shapes/dtypes, bad window/threads.
        FieldValueError: a scalar >= r or a coordinate >= p.
    """
    g = as_msm_group(group)
    kernels, coord = g.kernels, g.coord
    if not isinstance(base, np.ndarray) or base.shape != (2,) + coord:
        got = base.shape if isinstance(base, np.ndarray) else type(base).__name__
        raise InputError(f"base must be one affine point, a uint64 array of shape {(2,) + coord}, got {got}")
    base = check_points(base[None], "base", (2,) + coord, g.fq.modulus)
    scalars = check_field_rows(scalars, "scalars", (4,), g.fr.modulus)
    n = scalars.shape[0]
    threads = resolve_threads(threads)
    c = _fixed_base_window(n) if window is None else window
    if isinstance(c, bool) or not isinstance(c, int) or not 2 <= c <= MAX_WINDOW:
        raise InputError(f"window must be an int in 2..{MAX_WINDOW}, got {c!r}")
    out = np.zeros((n, 2) + coord, np.uint64)
    if n == 0:
        return out
    nwin = num_windows(c)
    table = kernels.fixed_base_table(base, c, nwin)
    digits = signed_digits(scalars, c, nwin, np.zeros(n, np.bool_))
    # a few chunks per thread so a thread slowed by another process hands work to the others
    chunks = min(4 * threads, max(1, n // _FIXED_BASE_CHUNK)) if threads > 1 else 1
    bounds = [k * n // chunks for k in range(chunks + 1)]
    tasks = [(kernels.fixed_base_mul, (table, digits, c, bounds[k], bounds[k + 1], out)) for k in range(chunks)]
    run_phases(threads, [tasks])
    return out
