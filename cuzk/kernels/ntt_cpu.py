"""Radix-2 NTT over Fr on the CPU (Numba): bit reversal, then Cooley-Tukey (DIT) stages.

Layout of the twiddle table: ``tw[m + j] = ω_{2m}^j`` for every stage half-size m = 2^s and
j < m (n entries, index 0 unused), so each stage reads its twiddles contiguously. Stages run
depth-first over leaves of 2^LEAF_LOG elements, finishing each block while it is still in
cache. With T threads, the input splits into T independent sub-transforms (each gathers its
own bit-reversed chunk; the low stages never cross a chunk boundary) and only the top log2(T)
stages synchronize, which keeps a loaded machine from stalling at every stage (NUMBA_NOTES
pitfall 4). Threads are Python threads running nogil kernels (see ``cpu_threads``).

Tables (twiddles, coset powers) are cached per (log n, generator/shift) under a lock, within a
byte budget.

    >>> import numpy as np
    >>> from cuzk.kernels.ntt_cpu import ntt
    >>> x = np.zeros((4, 4), np.uint64)
    >>> ntt(x).shape
    (4, 4)
"""

from __future__ import annotations

import numbers
import threading
from collections import OrderedDict

import numpy as np
from numba import njit

from cuzk.errors import FieldValueError
from cuzk.field import fr as F
from cuzk.field.params import FR
from cuzk.kernels.checks import check_field_rows
from cuzk.kernels.cpu_threads import resolve_threads, run_phases

__all__ = ["ntt", "h_pointwise", "mont_row", "powers", "twiddles", "clear_tables"]

# 2^10 Fr elements = 32 KiB: a leaf's low stages stay in L1.
LEAF_LOG = 10
# Below 2^12 elements thread start-up costs more than the transform.
MIN_PARALLEL_LOG = 12
# Cached tables may hold at most this many bytes (a 2^20 table is 32 MiB).
TABLE_BUDGET_BYTES = 256 * 2**20


def mont_row(x: int) -> np.ndarray:
    """A canonical Fr int as a (1, 4) uint64 Montgomery row (what the kernels load)."""
    v = x * FR.r % FR.modulus
    return np.array([[(v >> (64 * k)) & (2**64 - 1) for k in range(4)]], dtype=np.uint64)


F_ONE_ROW = mont_row(1)  # Montgomery 1

# ---------------------------------------------------------------------------------------------
# Numba kernels (one thread each; the parallel driver splits work among them)


@njit(cache=True, nogil=True)
def _rev(i, log_n):
    """Bit reversal of the low log_n bits of i (log_n <= 32), by swapping ever-larger groups."""
    i = ((i >> 1) & 0x55555555) | ((i & 0x55555555) << 1)
    i = ((i >> 2) & 0x33333333) | ((i & 0x33333333) << 2)
    i = ((i >> 4) & 0x0F0F0F0F) | ((i & 0x0F0F0F0F) << 4)
    i = ((i >> 8) & 0x00FF00FF) | ((i & 0x00FF00FF) << 8)
    i = ((i >> 16) & 0x0000FFFF) | ((i & 0x0000FFFF) << 16)
    return i >> (32 - log_n)


@njit(cache=True, nogil=True)
def _gather(src, dst, log_n, lo, hi, scale, scaled):
    """dst[i] = src[rev(i)] (times scale[rev(i)] when ``scaled``) for i in [lo, hi)."""
    for i in range(lo, hi):
        j = _rev(i, log_n)
        v = F.load(src, j)
        if scaled:
            v = F.mul(v, F.load(scale, j))
        F.store(dst, i, v)


@njit(cache=True, nogil=True)
def _stage(x, tw, base, m, j_lo, j_hi):
    """Butterflies j in [j_lo, j_hi) of the stage with half-size m on the block at ``base``."""
    for j in range(j_lo, j_hi):
        u = F.load(x, base + j)
        v = F.mul(F.load(x, base + j + m), F.load(tw, m + j))
        F.store(x, base + j, F.add(u, v))
        F.store(x, base + j + m, F.sub(u, v))


@njit(cache=True, nogil=True)
def _ntt_block(x, tw, lo, log_size):
    """All stages of a transform of x[lo : lo + 2^log_size] (input already bit-reversed)."""
    if log_size == 0:
        return
    leaf = min(LEAF_LOG, log_size)
    size_leaf = 1 << leaf
    for b in range(1 << (log_size - leaf)):
        start = lo + b * size_leaf
        for base in range(start, start + size_leaf, 2):  # m = 1: twiddle is 1, no multiply
            u = F.load(x, base)
            v = F.load(x, base + 1)
            F.store(x, base, F.add(u, v))
            F.store(x, base + 1, F.sub(u, v))
        m = 2
        while m < size_leaf:
            for base in range(start, start + size_leaf, 2 * m):
                _stage(x, tw, base, m, 0, m)
            m *= 2
        # depth-first: finishing leaf b completes every enclosing block whose leaves are all done
        s = leaf
        while s < log_size and (b + 1) % (1 << (s + 1 - leaf)) == 0:
            block = 1 << (s + 1)
            _stage(x, tw, lo + (b + 1) * size_leaf - block, 1 << s, 0, 1 << s)
            s += 1


@njit(cache=True, nogil=True)
def _scale(x, lo, hi, scale, per_element):
    """x[i] *= scale[i] (per_element) or scale[0], for i in [lo, hi)."""
    c = F.load(scale, 0)
    for i in range(lo, hi):
        x_i = F.load(x, i)
        F.store(x, i, F.mul(x_i, F.load(scale, i) if per_element else c))


@njit(cache=True, nogil=True)
def _ntt_chunk(src, dst, tw, log_n, lo, log_size, pre, pre_on):
    """Bit-reversed gather of dst[lo : lo + 2^log_size], then every stage that stays inside it."""
    _gather(src, dst, log_n, lo, lo + (1 << log_size), pre, pre_on)
    _ntt_block(dst, tw, lo, log_size)


@njit(cache=True, nogil=True)
def _stage_part(x, tw, log_n, s, k, t):
    """Part k of t of the stage with half-size 2^s over the whole array (2^s >= n/t)."""
    m = 1 << s
    per = (1 << (log_n - 1)) // t  # butterflies per part; divides m, so a part is one block's run
    g = k * per
    _stage(x, tw, (g // m) * 2 * m, m, g % m, g % m + per)


@njit(cache=True, nogil=True)
def _powers(c, g, n):
    """Rows c * g^i for i < n."""
    out = np.empty((n, 4), dtype=np.uint64)
    acc = F.load(c, 0)
    gg = F.load(g, 0)
    for i in range(n):
        F.store(out, i, acc)
        acc = F.mul(acc, gg)
    return out


def powers(x: int, n: int, scale: int = 1) -> np.ndarray:
    """``[scale·x^0, ..., scale·x^(n-1)]`` as (n, 4) Montgomery Fr rows (twiddles, cosets, setup).

    >>> from cuzk.field import Fr
    >>> Fr.to_ints(powers(3, 4, scale=2))
    [2, 6, 18, 54]
    """
    return _powers(mont_row(scale % FR.modulus), mont_row(x % FR.modulus), n)


@njit(cache=True, nogil=True)
def _twiddle_table(w, log_n):
    n = 1 << log_n
    tw = np.zeros((max(n, 2), 4), dtype=np.uint64)
    if n < 2:
        return tw
    half = n // 2
    tw[half:n] = _powers(F_ONE_ROW, w, half)
    m = half // 2
    while m >= 1:  # ω_{2m}^j = ω_{4m}^{2j}
        for j in range(m):
            F.store(tw, m + j, F.load(tw, 2 * m + 2 * j))
        m //= 2
    return tw


@njit(cache=True, nogil=True)
def _h_pointwise(a, b, c, z):
    out = np.empty_like(a)
    zz = F.load(z, 0)
    for i in range(a.shape[0]):
        ab = F.mul(F.load(a, i), F.load(b, i))
        F.store(out, i, F.mul(F.sub(ab, F.load(c, i)), zz))
    return out


_EMPTY = np.zeros((0, 4), dtype=np.uint64)

# ---------------------------------------------------------------------------------------------
# Table cache


class _TableCache:
    """LRU of read-only tables keyed by tuples, bounded in bytes; safe to share between threads."""

    def __init__(self, budget: int):
        self._budget = budget
        self._tables: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, make):
        with self._lock:  # compute under the lock: two threads never build the same table twice
            table = self._tables.get(key)
            if table is None:
                table = make()
                table.flags.writeable = False
                self._tables[key] = table
                total = sum(t.nbytes for t in self._tables.values())
                while total > self._budget and len(self._tables) > 1:
                    _, old = self._tables.popitem(last=False)
                    total -= old.nbytes
            else:
                self._tables.move_to_end(key)
            return table

    def clear(self):
        with self._lock:
            self._tables.clear()


_TABLES = _TableCache(TABLE_BUDGET_BYTES)


def clear_tables() -> None:
    """Drop every cached twiddle/coset table (frees memory; they are rebuilt on demand)."""
    _TABLES.clear()


def _check_generator(generator) -> int:
    if isinstance(generator, bool) or not isinstance(generator, numbers.Integral) or not 1 < generator < FR.modulus:
        raise FieldValueError(f"root_generator must be an integer 1 < g < r, got {generator!r}")
    return int(generator)


def _root(log_n: int, generator) -> int:
    generator = _check_generator(generator)
    w = FR.root_of_unity_for(log_n, int(generator))
    if log_n > 0 and pow(w, 1 << (log_n - 1), FR.modulus) == 1:
        raise FieldValueError(f"root_generator {generator} is a quadratic residue: it gives no primitive 2^{log_n}-th root")
    return w


def twiddles(log_n: int, generator: int = 7, inverse: bool = False) -> np.ndarray:
    """The cached table ``tw[m + j] = ω_{2m}^j`` (ω inverted for the inverse transform).

    >>> twiddles(3).shape
    (8, 4)
    """
    def make():
        w = _root(log_n, generator)
        if inverse:
            w = pow(w, -1, FR.modulus)
        return _twiddle_table(mont_row(w), log_n)

    # checked before the lookup: 7.0 or '7' hashed like 7 and was served the cached table
    return _TABLES.get(("tw", log_n, _check_generator(generator), bool(inverse)), make)


def _coset_table(log_n: int, shift: int, inverse: bool) -> np.ndarray:
    """Forward: shift^i. Inverse: n^-1 * shift^-i (the iNTT's 1/n folded in)."""
    def make():
        if inverse:
            c = pow(1 << log_n, -1, FR.modulus)
            return _powers(mont_row(c), mont_row(pow(shift, -1, FR.modulus)), 1 << log_n)
        return _powers(F_ONE_ROW, mont_row(shift), 1 << log_n)

    return _TABLES.get(("coset", log_n, shift, inverse), make)


# ---------------------------------------------------------------------------------------------
# Public API


def _check_shift(shift):
    if shift is None:
        return None
    if isinstance(shift, bool) or not isinstance(shift, numbers.Integral) or not 0 < shift < FR.modulus:
        raise FieldValueError(f"shift must be an Fr integer 0 < shift < r (canonical), got {shift!r}")
    return int(shift)


def ntt(values, *, inverse=False, shift=None, root_generator=7, threads=None) -> np.ndarray:
    """Number-theoretic transform of ``values`` (n, 4) uint64 Montgomery Fr, n a power of two.

    Forward: out[i] = Σ_j values[j]·(shift·ω^i)^j, the evaluations at shift·ω^i of the polynomial
    with coefficients ``values``; ``inverse=True`` computes the exact inverse of that map.
    ω = ``FR.root_of_unity_for(log2 n, root_generator)``. Natural order in and out; the input is
    not modified.

    Args:
        values: (n, 4) uint64 Montgomery Fr elements, n = 2^k with k <= 32.
        inverse: compute the inverse transform.
        shift: coset shift as a canonical Fr int (None means 1).
        root_generator: multiplicative generator that fixes ω (7 bellperson, 5 snarkjs).
        threads: threads to use (None: all cores).

    Returns:
        A new (n, 4) uint64 array.

    Raises:
        FieldValueError: bad dtype/shape, n not a power of two, unreduced element, bad shift or
            generator.

    >>> from cuzk.field.params import FR
    >>> x = np.concatenate([mont_row(3), mont_row(1)])          # 3 + X
    >>> y = ntt(x, shift=7)                                     # at 7·ω^i for ω = -1
    >>> [FR.from_mont_int(int.from_bytes(r.tobytes(), "little")) for r in y] == [10, FR.modulus - 4]
    True
    >>> bool((ntt(y, inverse=True, shift=7) == x).all())
    True
    """
    values = check_field_rows(values, "values", (4,), FR.modulus)
    n = values.shape[0]
    if n == 0 or n & (n - 1):
        raise FieldValueError(f"NTT length must be a power of two >= 1, got {n}")
    log_n = n.bit_length() - 1
    if log_n > FR.two_adicity:
        raise FieldValueError(f"NTT length 2^{log_n} exceeds Fr's 2-adicity {FR.two_adicity}")
    shift = _check_shift(shift)
    threads = resolve_threads(threads)
    tw = twiddles(log_n, root_generator, inverse)
    if not inverse:
        pre = _EMPTY if shift is None else _coset_table(log_n, shift, False)
        post, post_each = _EMPTY, False
    else:
        pre = _EMPTY
        if shift is None:
            post, post_each = mont_row(pow(n, -1, FR.modulus)), False
        else:
            post, post_each = _coset_table(log_n, shift, True), True
    pre_on = pre.shape[0] > 0
    if pre.shape[0] == 0:
        pre = F_ONE_ROW  # never read; keeps one array type for Numba
    out = np.empty_like(values)
    # T = 2^log_t independent chunks (each >= one leaf), then log_t shared top stages
    log_t = 0 if log_n < MIN_PARALLEL_LOG else min(threads.bit_length() - 1, log_n - LEAF_LOG)
    t = 1 << log_t
    chunk_log = log_n - log_t
    phases = [[(_ntt_chunk, (values, out, tw, log_n, k << chunk_log, chunk_log, pre, pre_on)) for k in range(t)]]
    phases += [[(_stage_part, (out, tw, log_n, s, k, t)) for k in range(t)] for s in range(chunk_log, log_n)]
    if post.shape[0] > 0:
        size = n // t
        phases.append([(_scale, (out, k * size, (k + 1) * size, post, post_each)) for k in range(t)])
    run_phases(t, phases)
    return out


def h_pointwise(a, b, c, z_inv) -> np.ndarray:
    """(a·b − c)·z_inv elementwise over (n, 4) Montgomery Fr arrays; z_inv a canonical Fr int.

    Raises:
        FieldValueError: bad arrays, different lengths, or z_inv not in [0, r).

    >>> one, two = mont_row(1), mont_row(2)
    >>> bool((h_pointwise(two, two, one, 3) == mont_row(9)).all())   # (2·2 − 1)·3
    True
    """
    a = check_field_rows(a, "a", (4,), FR.modulus)
    b = check_field_rows(b, "b", (4,), FR.modulus)
    c = check_field_rows(c, "c", (4,), FR.modulus)
    if not a.shape[0] == b.shape[0] == c.shape[0]:
        raise FieldValueError(f"a, b, c must have the same length, got {a.shape[0]}, {b.shape[0]}, {c.shape[0]}")
    if isinstance(z_inv, bool) or not isinstance(z_inv, numbers.Integral):
        raise FieldValueError(f"z_inv must be a canonical Fr int, got {type(z_inv).__name__}")
    FR.check_canonical(int(z_inv))
    return _h_pointwise(a, b, c, mont_row(int(z_inv)))
