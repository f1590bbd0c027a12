"""The plain-sum kernels of ``msm_kernels_<g>`` (the bit-aware MSM's), appended to the MSM template.

``sum_rows`` adds the points of the rows whose scalar is 1 (or the signed sources a table of
block sums plans for them: ``cuzk.kernels.ones_blocks``); ``group_sums`` adds, for each value
that several "other" rows share, their points, so that the MSM after it has one row per value.
Both are batch-affine (one shared inversion per ``CHUNK`` additions) and reuse the MSM module's
own pair scheduling (``_round``, ``_chord``, ``_tangent``), so P + P, P + (−P) and the identity
are handled exactly as in a window. Rendered by ``msm.render_msm`` into the same module (kept in
its own template file for the length of the template).
"""

from __future__ import annotations

import string

__all__ = ["SUMS_TEMPLATE"]

SUMS_TEMPLATE = string.Template('''\

# ---------------------------------------------------------------- plain sums (cuzk.kernels.msm_bits)

_I = np.zeros(0, np.int64)  # "no index array": accumulator j and point j are row j
PREFETCH_AHEAD = 16  # sources hinted ahead of their load (8 to 160 measured alike)


@jit_kernel(cache=True, nogil=True)
def _accumulate(acc, got, rows, src, k, kind, den, pref):
    """acc[rows[j]] += got[src[j]] for j < k (rows[j] = src[j] = j where the arrays are empty),
    the k accumulators distinct, one shared inversion: sum_rows' steps and window_stream's
    batches. P + P, P + (−P) and the identity on either side are handled per pair."""
    prod = F.one()
    for j in range(k):
        kind[j] = KEEP
        q = C.load_affine(got, src[j] if src.shape[0] else j)
        if C.aff_is_identity(q):
            continue
        p = C.load_affine(acc, rows[j] if rows.shape[0] else j)
        if C.aff_is_identity(p):
            kind[j] = SET
            continue
        if F.eq(p[0], q[0]):
            d = F.dbl(p[1])
            if not F.eq(p[1], q[1]) or F.is_zero(d):
                kind[j] = ZERO  # P + (−P), or 2P of a 2-torsion point
                continue
            kind[j] = DBL
        else:
            kind[j] = ADD
            d = F.sub(q[0], p[0])
        F.store(pref, j, prod)
        F.store(den, j, d)
        prod = F.mul(prod, d)
    inv = F.inv(prod)
    for j in range(k - 1, -1, -1):
        t = kind[j]
        if t == KEEP:
            continue
        r = rows[j] if rows.shape[0] else j
        if t == ZERO:
            C.store_affine(acc, r, C.aff_identity())
            continue
        q = C.load_affine(got, src[j] if src.shape[0] else j)
        if t == SET:
            C.store_affine(acc, r, q)
            continue
        inv_d = F.mul(inv, F.load(pref, j))
        inv = F.mul(inv, F.load(den, j))
        p = C.load_affine(acc, r)
        C.store_affine(acc, r, _chord(p, q, inv_d) if t == ADD else _tangent(p, inv_d))

@njit(cache=True, nogil=True)
def _source(points, extra, r):
    """The point a source r names: points[r] for 0 <= r < n (n = len(points)), extra[r − n] from
    n on (a block sum), −points[−1 − r] below 0 (a zero's point taken off its block's sum)."""
    n = points.shape[0]
    if r < 0:
        return C.aff_neg(C.load_affine(points, -1 - r))
    return C.load_affine(points, r) if r < n else C.load_affine(extra, r - n)


@njit(cache=True, nogil=True)
def gather_sources(points, extra, rows, lo, hi, out):
    """out[i − lo] = the point of source rows[i] (as ``_source``) for i in [lo, hi): a step of
    ``sum_rows``, and the IFMA sums' gather. Each source is hinted into the cache
    ``PREFETCH_AHEAD`` sources before it is loaded: the rows skip at random, where the hardware
    prefetcher cannot follow (1.05-1.07x on the planned sources of block sums). The hints are
    written here, not through a helper per source: that measured ~5 % slower."""
    n = points.shape[0]
    for i in range(lo, hi):
        if i + PREFETCH_AHEAD < hi:
            r = rows[i + PREFETCH_AHEAD]
            if r < 0:
                prefetch_row(points, -1 - r, ${LINES})
            elif r < n:
                prefetch_row(points, r, ${LINES})
            else:
                prefetch_row(extra, r - n, ${LINES})
        C.store_affine(out, i - lo, _source(points, extra, rows[i]))


@njit(cache=True, nogil=True)
def sum_rows(points, extra, rows, lo, hi, sums, row):
    """sums[row] = Σ of the points of sources rows[i] for i in [lo, hi) (``_source``: a row of
    ``points``, a row of ``extra`` past them, or a negated row below 0), XYZZ: the "ones" of a
    bit-aware MSM. ``extra`` is empty where the sources are the ones' rows themselves.

    CHUNK affine accumulators each take the next point in turn, so the CHUNK additions of a step
    are independent and share one batch inversion; the step's points are first copied out of
    ``points`` (``gather_sources``: independent loads, the misses overlap, each hinted ahead)
    and the accumulators stay in cache. A window's in-place rounds would instead stream the whole
    gathered list through memory once per round (log2 of its length times)."""
    acc = np.zeros((CHUNK, 2, ${COORD}), np.uint64)  # all-zero limbs: the identity
    got = np.empty((CHUNK, 2, ${COORD}), np.uint64)
    kind = np.empty(CHUNK, np.int8)
    den = np.empty((CHUNK, ${COORD}), np.uint64)
    pref = np.empty((CHUNK, ${COORD}), np.uint64)
    for c0 in range(lo, hi, CHUNK):
        k = min(hi - c0, CHUNK)
        gather_sources(points, extra, rows, c0, c0 + k, got)
        _accumulate(acc, got, _I, _I, k, kind, den, pref)
    # the accumulators' sum in XYZZ: as cheap as pairwise batch-affine rounds over 2,048 points
    # (11 inversions), and the rounds inlined here took ~2 s more to compile per group
    total = C.xyzz_identity()
    for j in range(min(max(hi - lo, 0), CHUNK)):
        total = C.xyzz_madd(total, C.load_affine(acc, j))
    C.store_xyzz(sums, row, total)


@njit(cache=True, nogil=True)
def group_sums(points, rows, start, count, out):
    """out[b] = Σ points[rows[start[b] + t]] for t < count[b], affine (the identity for an empty
    sum): the points of the rows that share one scalar value, grouped (consecutive groups,
    start[b + 1] = start[b] + count[b]). Gathered in that order, then every group summed pairwise
    in place in rounds, as a window's buckets are."""
    nb = start.shape[0]
    total = rows.shape[0]
    pts = np.empty((max(total, 1), 2, ${COORD}), np.uint64)
    for i in range(total):
        C.store_affine(pts, i, C.load_affine(points, rows[i]))
    length = count.copy()
    kind = np.empty(CHUNK, np.int8)
    src = np.empty(CHUNK, np.int64)
    dst = np.empty(CHUNK, np.int64)
    den = np.empty((CHUNK, ${COORD}), np.uint64)
    pref = np.empty((CHUNK, ${COORD}), np.uint64)
    while _round(pts, start, length, I0, nb, kind, src, dst, den, pref):
        pass
    for b in range(nb):
        C.store_affine(out, b, C.load_affine(pts, start[b]) if length[b] == 1 else C.aff_identity())
''')
