"""Split MSM scalars by value: the rows that are 0, the rows that are 1, and the others.

Most of a SHA-256-heavy witness (Filecoin PoRep) is bits, and an MSM over them wastes its
windows: a 0 contributes nothing and a 1 contributes its point once. The bit-aware MSMs
(:mod:`cuzk.kernels.msm_bits`, the CUDA backend's ``msm_bits_g1/g2``) take a :class:`BitSplit`
of the scalars and add the "one" points directly, leaving only the others to Pippenger. The
split is a property of the scalars, not of a circuit: this module finds it by a scan of the
canonical scalar rows (two passes over int8 classes, chunked over ``threads`` like the other
CPU kernels; ~a memory read of the scalars).

    >>> import numpy as np
    >>> s = split_bits(np.array([[0, 0, 0, 0], [1, 0, 0, 0], [5, 0, 0, 0], [1, 0, 0, 0]], np.uint64))
    >>> s.zeros.tolist(), s.ones.tolist(), s.others.tolist(), s.bit_fraction
    ([0], [1, 3], [2], 0.75)
"""

from __future__ import annotations

import weakref

import attrs
import numpy as np
from numba import njit

from cuzk.errors import InputError
from cuzk.field.jit import frozen, readonly
from cuzk.kernels.cpu_threads import resolve_threads, run_phases

__all__ = ["BitSplit", "split_bits", "classify", "check_split", "ZERO", "ONE", "OTHER"]

ZERO, ONE, OTHER = 0, 1, 2  # the classes, as the scan writes them (int8)
# Rows per scan task: below this a helper thread costs more than the rows it reads (~30 ns each).
_SCAN_CHUNK = 1 << 16


@attrs.frozen(eq=False)
class BitSplit:
    """The rows of an (n, 4) scalar array by value.

    Attributes:
        n: rows of the scalar array the split is of.
        zeros, ones, others: int64 row indices (increasing) of the scalars equal to 0, equal to
            1 and anything else; together a partition of ``range(n)`` (:func:`split_bits` makes
            them consecutive views of one array of n indices).
    """

    n: int
    zeros: np.ndarray
    ones: np.ndarray
    others: np.ndarray
    # a weak reference to the frozen scalar array split_bits made this split from, else None
    _source: object = attrs.field(init=False, default=None, repr=False)

    def is_of(self, scalars) -> bool:
        """Whether :func:`split_bits` made this split from ``scalars`` itself, an array nothing can
        have written since (``cuzk.field.jit.frozen``): then the split holds for it without a
        check (a prover's own splits of its own read-only query scalars)."""
        return self._source is not None and self._source() is scalars and frozen(scalars)

    @property
    def bit_fraction(self) -> float:
        """The share of rows that are 0 or 1 (1.0 for an empty array)."""
        return 1.0 if self.n == 0 else (len(self.zeros) + len(self.ones)) / self.n

    def __repr__(self) -> str:
        return f"BitSplit(n={self.n}, zeros={len(self.zeros)}, ones={len(self.ones)}, others={len(self.others)})"


@njit(cache=True, nogil=True)
def classify_range(scalars, lo, hi, cls, counts, k):
    """cls[i] = ZERO, ONE or OTHER for the rows i in [lo, hi); counts[k] = how many of each.

    Without branches on the value: a witness's 0s and 1s come in no order a predictor could
    learn, and a mispredicted branch per row cost about as much as reading the row."""
    z = 0
    o = 0
    for i in range(lo, hi):
        s0 = scalars[i, 0]
        other = ((scalars[i, 1] | scalars[i, 2] | scalars[i, 3]) != 0) | (s0 > 1)
        c = np.int8(2) if other else np.int8(s0)
        cls[i] = c
        z += c == 0
        o += c == 1
    counts[k, 0] = z
    counts[k, 1] = o
    counts[k, 2] = (hi - lo) - z - o


@njit(cache=True, nogil=True)
def fill_range(cls, lo, hi, offsets, k, out):
    """Write each row of [lo, hi) at the next place of its class (chunk k's offsets into the one
    index array ``out`` that holds the zeros, then the ones, then the others): three cursors and
    a store at the selected one, no branch on the class."""
    pz = offsets[k, 0]
    po = offsets[k, 1]
    pr = offsets[k, 2]
    for i in range(lo, hi):
        c = cls[i]
        out[pz if c == 0 else po if c == 1 else pr] = i
        pz += c == 0
        po += c == 1
        pr += c == 2


def classify(scalars: np.ndarray, threads: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(cls, counts, cuts): each row's class (int8 ZERO, ONE or OTHER) of (n, 4) uint64 canonical
    rows, scanned in chunks [cuts[k], cuts[k + 1]) over ``threads`` threads, and each chunk's count
    of each class. The scan :func:`split_bits` places its rows by, and the MSMs check a given
    split against (:func:`cuzk.kernels.msm_bits.check_split_of`)."""
    sc = readonly(np.ascontiguousarray(scalars))
    n = sc.shape[0]
    chunks = max(1, min(4 * threads, n // _SCAN_CHUNK)) if threads > 1 else 1
    cuts = [k * n // chunks for k in range(chunks + 1)]
    cls = np.empty(n, np.int8)
    counts = np.zeros((chunks, 3), np.int64)
    run_phases(threads, [[(classify_range, (sc, cuts[k], cuts[k + 1], cls, counts, k)) for k in range(chunks)]])
    return cls, counts, cuts


def split_bits(scalars, threads=None) -> BitSplit:
    """The :class:`BitSplit` of an (n, 4) uint64 array of canonical scalars (MSM scalars: not
    Montgomery; a Montgomery 1 is not a bit). Only the classes are computed here; that every
    row is < r is the MSM's check.

    Args:
        scalars: (n, 4) uint64.
        threads: threads to use (None: all cores).

    Raises:
        InputError: not an (n, 4) uint64 numpy array, or a bad ``threads``.
    """
    if not isinstance(scalars, np.ndarray) or scalars.dtype != np.uint64 or scalars.ndim != 2 or scalars.shape[1] != 4:
        got = f"{scalars.shape} {scalars.dtype}" if isinstance(scalars, np.ndarray) else type(scalars).__name__
        raise InputError(f"scalars must be an (n, 4) uint64 numpy array of canonical Fr integers, got {got}")
    threads = resolve_threads(threads)
    n = scalars.shape[0]
    cls, counts, cuts = classify(scalars, threads)
    total = counts.sum(axis=0)
    base = np.concatenate([[0], np.cumsum(total)[:-1]])  # where each class starts in the one index array
    offsets = base + np.cumsum(counts, axis=0) - counts  # chunk k's first place of each class
    out = np.empty(n, np.int64)
    cls = readonly(cls)
    run_phases(threads, [[(fill_range, (cls, cuts[k], cuts[k + 1], offsets, k, out)) for k in range(len(cuts) - 1)]])
    z, o = int(total[0]), int(total[1])
    out.flags.writeable = False  # the parts are views of it: frozen, as is_of relies on
    split = BitSplit(n, out[:z], out[z:z + o], out[z + o:])
    if frozen(scalars):
        object.__setattr__(split, "_source", weakref.ref(scalars))
    return split


def check_split(split, n: int) -> BitSplit:
    """``split`` if it is a :class:`BitSplit` of n rows (what an MSM given one checks).

    Raises:
        InputError: not a BitSplit, or one of another length.
    """
    if not isinstance(split, BitSplit):
        raise InputError(f"split must be a cuzk.kernels.bit_split.BitSplit (split_bits(scalars)), got "
                         f"{type(split).__name__}")
    if split.n != n:
        raise InputError(f"the split is of {split.n} scalars, the MSM has {n}")
    return split
