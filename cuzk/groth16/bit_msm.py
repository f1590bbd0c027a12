"""Which of a proof's MSMs run bit-aware: the A, B (G1 and G2) and L queries' scalars.

A witness of SHA-256 gadgets (Filecoin PoRep) is mostly bits. For each of those three scalar
vectors the prover scans the values (:func:`cuzk.kernels.bit_split.split_bits`) and, where the
mode says so, hands the backend's ``msm_bits_g1/g2`` the split: the ones are added directly,
the zeros skipped, the rest runs the general MSM. The result is the same group element, so the
proof is the same bytes either way. H's scalars (the quotient's coefficients) are not bits and
always run the general MSM.

Modes: ``False`` (never), ``True`` (always, for every query), ``"auto"`` (a query whose share of
0/1 scalars is at least :data:`AUTO_MIN_FRACTION` and that has at least :data:`AUTO_MIN_POINTS`
rows; measured by ``benchmarks/bit_msm_bench.py``, docs/kernel-contracts.md) on a backend whose
``AUTO_BIT_MSM`` is not False: the CUDA backend's is (its general MSM already skips the empty
digits of 0/1 scalars, and the host scan costs more than the ones' sum saves: docs/perf/cuda.md).

A resident key can also keep the sums of its bit-aware queries' points in blocks
(:func:`blocks_for`, :mod:`cuzk.kernels.ones_blocks`): a block of ones and zeros is then added as
its sum less its zeros' points where that is fewer additions (~0.79 of the ones' additions on a
PoRep witness for a table of a quarter of the query's points).

    >>> import numpy as np
    >>> from cuzk.curves import get
    >>> cpu = get("bls12_381").kernels
    >>> sc = np.zeros((1 << 12, 4), np.uint64); sc[::3, 0] = 7
    >>> [s is not None for s in splits_for("auto", cpu, (sc, sc, sc[:10]), threads=1)]
    [True, True, False]
"""

from __future__ import annotations

from cuzk import curves
from cuzk.errors import InputError
from cuzk.kernels.bit_split import split_bits
from cuzk.kernels.ones_blocks import check_block

__all__ = ["MODES", "AUTO_MIN_FRACTION", "AUTO_MIN_POINTS", "BIT_QUERIES", "check_mode", "supports", "splits_for",
           "check_ones_blocks", "blocks_for", "blocks_bytes"]

MODES = (False, True, "auto")
#: "auto" runs a query bit-aware from this share of 0/1 scalars on (benchmarks/bit_msm_bench.py
#: --sweep, BLS12-381 G1 2^16, one thread, CPU time general / bit-aware: 0.88x at 10 % bits,
#: 1.08-1.21x at 25-75 %, 1.89x at 95 %: below about half bits the gain is within the noise)
AUTO_MIN_FRACTION = 0.5
#: ... and from this many rows (below it the MSM costs too little for the scan to matter either way)
AUTO_MIN_POINTS = 1024
#: the queries whose MSMs may run bit-aware (H's never does), and their groups
BIT_QUERIES = {"a": "g1", "b_g1": "g1", "b_g2": "g2", "l": "g1"}


def check_mode(mode) -> object:
    """``mode`` if it is one of :data:`MODES`, else InputError."""
    if not any(mode is m or (isinstance(m, str) and mode == m) for m in MODES):
        raise InputError(f"bit_msm must be False, True or 'auto', got {mode!r}")
    return mode


def supports(kern) -> bool:
    """Whether a backend offers the bit-aware MSMs (both CPU and CUDA kernels do; a custom
    kernel module may not)."""
    return hasattr(kern, "msm_bits_g1") and hasattr(kern, "msm_bits_g2")


def splits_for(mode, kern, scalars, threads=None) -> tuple:
    """The :class:`~cuzk.kernels.bit_split.BitSplit` to use for each host scalar array of
    ``scalars`` (canonical (n, 4) uint64), or None where that MSM runs the general way.

    Raises:
        InputError: a bad mode, or ``True`` with a backend without bit-aware MSMs.
    """
    check_mode(mode)
    if mode is False:
        return (None,) * len(scalars)
    if not supports(kern):
        if mode is True:
            raise InputError(f"bit_msm=True but the backend {kern!r} has no msm_bits_g1/g2")
        return (None,) * len(scalars)
    if mode == "auto" and getattr(kern, "AUTO_BIT_MSM", True) is False:
        return (None,) * len(scalars)
    out = []
    for sc in scalars:
        if mode == "auto" and len(sc) < AUTO_MIN_POINTS:
            out.append(None)
            continue
        split = split_bits(sc, threads)
        out.append(split if mode is True or split.bit_fraction >= AUTO_MIN_FRACTION else None)
    return tuple(out)


def check_ones_blocks(block, mode) -> int | None:
    """A prover's ``ones_blocks``: None, or a block size (``cuzk.kernels.ones_blocks.BLOCK_SIZES``)
    with a bit-aware ``mode`` (the tables serve only the bit-aware MSMs).

    Raises:
        InputError: another value, or block sums with ``bit_msm=False``.
    """
    if block is None:
        return None
    block = check_block(block)
    if check_mode(mode) is False:
        raise InputError("ones_blocks needs bit_msm=True or 'auto': the block sums serve only the bit-aware MSMs")
    return block


def _block_queries(pk) -> dict:
    """query -> group of ``pk``'s bit-aware queries that get block sums: those of at least
    :data:`AUTO_MIN_POINTS` points."""
    return {q: g for q, g in BIT_QUERIES.items() if getattr(pk, q).shape[0] >= AUTO_MIN_POINTS}


def blocks_for(pk, block: int, threads=None) -> dict:
    """query -> :class:`~cuzk.kernels.ones_blocks.OnesBlocks` of ``pk``'s bit-aware queries with at
    least :data:`AUTO_MIN_POINTS` points, in blocks of ``block`` (~(block - 1)/block batch-affine
    additions per point, once; :func:`blocks_bytes` of memory)."""
    kern = curves.get(pk.curve).kernels
    return {q: kern.ones_blocks(g, getattr(pk, q), block, threads) for q, g in _block_queries(pk).items()}


def blocks_bytes(pk, block: int) -> int:
    """Bytes :func:`blocks_for` builds for ``pk`` (one sum per whole block of each query), without
    building them: what an Engine reserves for them."""
    return sum(getattr(pk, q)[:1].nbytes * (getattr(pk, q).shape[0] // block) for q in _block_queries(pk))
