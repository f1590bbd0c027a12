"""The streamed batch-affine window of ``msm_kernels_<g>``, appended to the MSM template.

``window_affine`` counting-sorts a window's points by bucket into a fresh array and then sums
every bucket in place in rounds: at 2^22 points the scatter of the sort (96 B per G1 point to one
of 2^15 places) took 0.40 s of a 1.79 s window, and every round streamed the sorted array through
memory again. With many buckets there is a cheaper order: keep the buckets themselves affine (2^15
G1 buckets are 3 MiB, in cache), read the points once in order, and schedule each point's addition
to its bucket in a batch of ``CHUNK`` whose additions share one inversion. A point whose bucket is
already in the batch waits for a later pass (about CHUNK²/(2·nb) per batch: 3 % at nb = 2^15);
when a pass leaves more than half its rows waiting (few buckets hold most rows: a witness of
bits), the rest is sorted and summed in rounds as ``window_affine`` does.
The result is the same group element. ``window_into`` takes this path for windows of at least
``STREAM_MIN_BUCKETS`` buckets (docs/perf/kernels.md has the measurements that chose it).
Rendered by ``msm.render_msm`` into the same module.
"""

from __future__ import annotations

import string

__all__ = ["STREAM_TEMPLATE"]

STREAM_TEMPLATE = string.Template('''\

# ---------------------------------------------------------------- streamed batch-affine windows

# Windows with at least this many buckets stream their points into affine buckets (below, a
# batch of CHUNK distinct buckets would wait on conflicts too often).
STREAM_MIN_BUCKETS = 1 << 14


@jit_kernel(cache=True, nogil=True)
def _bucket_batch(points, digits, buckets, bkt, src, kind, got, cur, den, pref, k):
    """Add the k scheduled points (rows src[j], negated for a negative digit) to their distinct
    buckets bkt[j], sharing one inversion. The buckets are copied into ``cur`` in the loop that
    loads the points, summed there and written back: loads with no product between them keep
    their cache misses in flight together (2^15 buckets, 3 MiB, live in L3 at best), where the
    products' loop would take them one at a time (one 2.67M-point window: 8-10 % faster)."""
    for j in range(k):
        q = C.load_affine(points, src[j])
        C.store_affine(got, j, C.aff_neg(q) if digits[src[j]] < 0 else q)
        C.store_affine(cur, j, C.load_affine(buckets, bkt[j]))
    _accumulate(cur, got, _I, _I, k, kind, den, pref)
    for j in range(k):
        C.store_affine(buckets, bkt[j], C.load_affine(cur, j))


@jit_kernel(cache=True, nogil=True)
def _stream_pass(points, digits, rows, lo, hi, buckets, mark, epoch, bkt, src, kind, got, cur, den, pref, later):
    """Schedule rows lo..hi−1 (``rows[lo:hi]`` when ``rows`` is not empty) into batches of
    distinct buckets, running each full batch; a row whose bucket the open batch already holds
    goes to ``later``. Runs the last batch; returns (rows put in ``later``, the next epoch)."""
    k = I0  # int64 from the start: a literal 0 would compile _bucket_batch for Literal[int](0) too
    n_later = 0
    for t in range(lo, hi):
        i = rows[t] if rows.shape[0] > 0 else t
        d = digits[i]
        if d == 0:
            continue
        b = abs(d) - 1
        if mark[b] == epoch:
            later[n_later] = i
            n_later += 1
            continue
        mark[b] = epoch
        bkt[k] = b
        src[k] = i
        k += 1
        if k == CHUNK:
            _bucket_batch(points, digits, buckets, bkt, src, kind, got, cur, den, pref, k)
            k = I0
            epoch += 1
    _bucket_batch(points, digits, buckets, bkt, src, kind, got, cur, den, pref, k)
    return n_later, epoch + 1


@jit_kernel(cache=True, nogil=True)
def _sorted_rest(points, digits, rows, buckets, nb, kind, src, dst, den, pref):
    """Add ``rows`` to their buckets as :func:`window_affine` adds a window: sorted by bucket
    behind the bucket's own value, then summed pairwise in rounds (log2 of a bucket's rows
    rounds, where streaming would take one pass per row of the fullest bucket)."""
    pts, start, count = _bucket_lists(points, digits, rows, I0, rows.shape[0], nb, buckets)
    while _round(pts, start, count, I0, nb, kind, src, dst, den, pref):
        pass
    for b in range(nb):
        C.store_affine(buckets, b, C.load_affine(pts, start[b]))


# One caller: inlined into it (Numba IR), so no library of its own is compiled and optimized (cold start)
@jit_kernel(cache=True, nogil=True, inline="always")
def window_stream(points, digits, nb, lo, hi):
    """Same sum as :func:`window_affine`: affine buckets in cache, the points read in order."""
    buckets = np.zeros((nb, 2, ${COORD}), np.uint64)  # all-zero limbs: the identity
    mark = np.full(nb, -1, np.int64)
    bkt = np.empty(CHUNK, np.int64)
    src = np.empty(CHUNK, np.int64)
    dst = np.empty(CHUNK, np.int64)
    kind = np.empty(CHUNK, np.int8)
    got = np.empty((CHUNK, 2, ${COORD}), np.uint64)
    cur = np.empty((CHUNK, 2, ${COORD}), np.uint64)
    den = np.empty((CHUNK, ${COORD}), np.uint64)
    pref = np.empty((CHUNK, ${COORD}), np.uint64)
    later = np.empty(max(hi - lo, 1), np.int64)
    n_in = hi - lo
    n_later, epoch = _stream_pass(points, digits, later[:0], lo, hi, buckets, mark, I0, bkt, src, kind, got,
                                  cur, den, pref, later)
    while n_later > 0:
        again = later[:n_later].copy()
        if 2 * n_later > n_in:  # few buckets hold most rows (say every digit 1): one pass each would be O(n²)
            _sorted_rest(points, digits, again, buckets, nb, kind, src, dst, den, pref)
            break
        n_in = n_later
        n_later, epoch = _stream_pass(points, digits, again, I0, again.shape[0], buckets, mark, epoch, bkt, src,
                                      kind, got, cur, den, pref, later)
    running = C.xyzz_identity()
    acc = C.xyzz_identity()
    for b in range(nb - 1, -1, -1):
        running = C.xyzz_madd(running, C.load_affine(buckets, b))  # the identity adds nothing
        acc = C.xyzz_add(acc, running)
    return acc
''')
