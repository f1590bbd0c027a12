"""Radix-2 NTT over a curve's Fr on the CPU: the driver over the generated Numba kernels.

The kernels (bit reversal, butterflies, depth-first stages, coset scaling) are generated per
curve from one template (``cuzk.curves.<name>.ntt_kernels``); :class:`CpuNtt` drives any of
them, and ``cuzk.curves.get(name).kernels.ntt`` is a curve's. With
T threads, the input splits into T independent sub-transforms (each gathers its own
bit-reversed chunk; the low stages never cross a chunk boundary) and only the top log2(T)
stages synchronize, which keeps a loaded machine from stalling at every stage (NUMBA_NOTES
pitfall 4). Threads are Python threads running nogil kernels (see ``cpu_threads``).

Tables (twiddles, coset powers) are cached per (field, log n, generator/shift) under a lock,
within one byte budget shared by every field.

    >>> import numpy as np
    >>> from cuzk.curves import get
    >>> x = np.zeros((4, 4), np.uint64)
    >>> get("bls12_381").kernels.ntt(x).shape
    (4, 4)
"""

from __future__ import annotations

import numbers
import threading
from collections import OrderedDict
from types import ModuleType

import numpy as np

from cuzk.errors import FieldValueError
from cuzk.field.jit import readonly
from cuzk.field.params import FieldParams
from cuzk.kernels.checks import check_field_rows
from cuzk.kernels.cpu_threads import resolve_threads, run_phases

__all__ = ["CpuNtt", "clear_tables"]

# Below 2^12 elements thread start-up costs more than the transform.
MIN_PARALLEL_LOG = 12
# Cached tables may hold at most this many bytes (a 2^20 table is 32 MiB). The H computation of a
# proof uses four tables of its domain (forward and inverse twiddles, both coset tables): at
# 2^22 (a 2 KiB or 8 MiB PoRep partition) 512 MiB. With 256 MiB they evicted each other on
# every transform and each of the seven was rebuilt, 2.0 s of a 9.5 s H on 2 cores
# (docs/perf/kernels.md).
TABLE_BUDGET_BYTES = 640 * 2**20


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


class CpuNtt:
    """NTT, coset tables and ``h_pointwise`` over one prime field, on its generated kernels.

    Args:
        field: the field's :class:`~cuzk.field.params.FieldParams` (a curve's Fr).
        kernels: its generated ``ntt_kernels`` module.

    The default ``root_generator`` is the field's own generator (BLS12-381: 7, bellperson's;
    BN254: 5, snarkjs'), so ω = generator^((r−1)/2^k).
    """

    def __init__(self, field: FieldParams, kernels: ModuleType):
        if kernels.L != field.limbs:
            raise FieldValueError(f"NTT kernels for {kernels.L} limbs cannot serve a {field.limbs}-limb field")
        self.field = field
        self.kernels = kernels
        self.limbs = field.limbs
        self._empty = readonly(np.zeros((0, field.limbs), dtype=np.uint64))
        self._one_row = readonly(kernels.F_ONE_ROW)

    def __repr__(self) -> str:
        return f"CpuNtt(r=0x{self.field.modulus:x})"

    # ---------------------------------------------------------------- rows and tables
    def mont_row(self, x: int) -> np.ndarray:
        """A canonical int as a (1, L) uint64 Montgomery row (what the kernels load), read-only
        like every table the kernels read (one specialization each: ``cuzk.field.jit.readonly``)."""
        v = x * self.field.r % self.field.modulus
        return readonly(np.array([[(v >> (64 * k)) & (2**64 - 1) for k in range(self.limbs)]], dtype=np.uint64))

    def powers(self, x: int, n: int, scale: int = 1) -> np.ndarray:
        """``[scale·x^0, ..., scale·x^(n-1)]`` as (n, L) Montgomery rows (twiddles, cosets, setup)."""
        r = self.field.modulus
        return self.kernels.powers(self.mont_row(scale % r), self.mont_row(x % r), n)

    def _check_generator(self, generator) -> int:
        if generator is None:
            return self.field.generator
        if isinstance(generator, bool) or not isinstance(generator, numbers.Integral) or not 1 < generator < self.field.modulus:
            raise FieldValueError(f"root_generator must be an integer 1 < g < r, got {generator!r}")
        return int(generator)

    def _root(self, log_n: int, generator: int) -> int:
        w = self.field.root_of_unity_for(log_n, generator)
        if log_n > 0 and pow(w, 1 << (log_n - 1), self.field.modulus) == 1:
            raise FieldValueError(f"root_generator {generator} is a quadratic residue: it gives no primitive 2^{log_n}-th root")
        return w

    def twiddles(self, log_n: int, generator: int | None = None, inverse: bool = False) -> np.ndarray:
        """The cached table ``tw[m + j] = ω_{2m}^j`` (ω inverted for the inverse transform)."""
        # checked before the lookup: 7.0 or '7' hashed like 7 and was served the cached table
        g = self._check_generator(generator)
        r = self.field.modulus

        def make():
            w = self._root(log_n, g)
            if inverse:
                w = pow(w, -1, r)
            return self.kernels.twiddle_table(self.mont_row(w), log_n)

        return _TABLES.get(("tw", r, log_n, g, bool(inverse)), make)

    def _coset_table(self, log_n: int, shift: int, inverse: bool) -> np.ndarray:
        """Forward: shift^rev(i), in the bit-reversed order the gather writes (it scales row i of
        its output, so it reads the table in order). Inverse: n^-1 * shift^-i (the iNTT's 1/n
        folded in), natural order like the output it scales."""
        r = self.field.modulus
        K = self.kernels

        def make():
            if inverse:
                c = pow(1 << log_n, -1, r)
                return K.powers(self.mont_row(c), self.mont_row(pow(shift, -1, r)), 1 << log_n)
            natural = K.powers(self._one_row, self.mont_row(shift), 1 << log_n)
            table = np.empty_like(natural)
            K.bit_reverse(natural, table, log_n)
            return table

        return _TABLES.get(("coset", r, log_n, shift, inverse), make)

    def _check_shift(self, shift):
        if shift is None:
            return None
        if isinstance(shift, bool) or not isinstance(shift, numbers.Integral) or not 0 < shift < self.field.modulus:
            raise FieldValueError(f"shift must be an Fr integer 0 < shift < r (canonical), got {shift!r}")
        return int(shift)

    # ---------------------------------------------------------------- transforms
    def ntt(self, values, *, inverse=False, shift=None, root_generator=None, threads=None) -> np.ndarray:
        """Number-theoretic transform of ``values`` (n, L) uint64 Montgomery, n a power of two.

        Forward: out[i] = Σ_j values[j]·(shift·ω^i)^j, the evaluations at shift·ω^i of the
        polynomial with coefficients ``values``; ``inverse=True`` computes the exact inverse of
        that map. ω = ``field.root_of_unity_for(log2 n, root_generator)``. Natural order in and
        out; the input is not modified.

        Args:
            values: (n, L) uint64 Montgomery Fr elements, n = 2^k with k <= the 2-adicity.
            inverse: compute the inverse transform.
            shift: coset shift as a canonical Fr int (None means 1).
            root_generator: multiplicative generator that fixes ω (BLS12-381: 7 bellperson,
                5 snarkjs); None: the field's.
            threads: threads to use (None: all cores).

        Returns:
            A new (n, L) uint64 array.

        Raises:
            FieldValueError: bad dtype/shape, n not a power of two, unreduced element, bad shift
                or generator.

        >>> from cuzk.curves import get
        >>> bls = get("bls12_381")
        >>> FR, k = bls.spec.fr, bls.kernels
        >>> x = bls.Fr.from_ints([3, 1])                            # 3 + X
        >>> y = k.ntt(x, shift=7)                                   # at 7·ω^i for ω = -1
        >>> bls.Fr.to_ints(y) == [10, FR.modulus - 4]
        True
        >>> bool((k.ntt(y, inverse=True, shift=7) == x).all())
        True
        """
        f, K = self.field, self.kernels
        values = check_field_rows(values, "values", (self.limbs,), f.modulus)
        n = values.shape[0]
        if n == 0 or n & (n - 1):
            raise FieldValueError(f"NTT length must be a power of two >= 1, got {n}")
        log_n = n.bit_length() - 1
        if log_n > f.two_adicity:
            raise FieldValueError(f"NTT length 2^{log_n} exceeds Fr's 2-adicity {f.two_adicity}")
        shift = self._check_shift(shift)
        threads = resolve_threads(threads)
        tw = self.twiddles(log_n, root_generator, inverse)
        if not inverse:
            pre = self._empty if shift is None else self._coset_table(log_n, shift, False)
            post, post_each = self._empty, False
        else:
            pre = self._empty
            if shift is None:
                post, post_each = self.mont_row(pow(n, -1, f.modulus)), False
            else:
                post, post_each = self._coset_table(log_n, shift, True), True
        pre_on = pre.shape[0] > 0
        if pre.shape[0] == 0:
            pre = self._one_row  # never read; keeps one array type for Numba
        out = np.empty_like(values)
        # T = 2^log_t independent chunks (each >= one leaf), then log_t shared top stages
        log_t = 0 if log_n < MIN_PARALLEL_LOG else min(threads.bit_length() - 1, log_n - K.LEAF_LOG)
        t = 1 << log_t
        chunk_log = log_n - log_t
        phases = [[(K.ntt_chunk, (values, out, tw, log_n, k << chunk_log, chunk_log, pre, pre_on)) for k in range(t)]]
        phases += [[(K.stage_part, (out, tw, log_n, s, k, t)) for k in range(t)] for s in range(chunk_log, log_n)]
        if post.shape[0] > 0:
            size = n // t
            phases.append([(K.scale, (out, k * size, (k + 1) * size, post, post_each)) for k in range(t)])
        run_phases(t, phases)
        return out

    def h_pointwise(self, a, b, c, z_inv) -> np.ndarray:
        """(a·b − c)·z_inv elementwise over (n, L) Montgomery arrays; z_inv a canonical int."""
        f = self.field
        a = check_field_rows(a, "a", (self.limbs,), f.modulus)
        b = check_field_rows(b, "b", (self.limbs,), f.modulus)
        c = check_field_rows(c, "c", (self.limbs,), f.modulus)
        if not a.shape[0] == b.shape[0] == c.shape[0]:
            raise FieldValueError(f"a, b, c must have the same length, got {a.shape[0]}, {b.shape[0]}, {c.shape[0]}")
        if isinstance(z_inv, bool) or not isinstance(z_inv, numbers.Integral):
            raise FieldValueError(f"z_inv must be a canonical Fr int, got {type(z_inv).__name__}")
        f.check_canonical(int(z_inv))
        n, z = a.shape[0], self.mont_row(int(z_inv))
        out = np.empty_like(a)
        # 2^22 rows: 0.30 s on one thread, a tenth of an H's transforms; in parts on every core
        t = resolve_threads(None) if n >= 1 << MIN_PARALLEL_LOG else 1
        run_phases(t, [[(self.kernels.h_pointwise_into, (a, b, c, z, out, k * n // t, (k + 1) * n // t))
                        for k in range(t)]])
        return out
