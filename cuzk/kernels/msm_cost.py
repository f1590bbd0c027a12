"""The CPU MSM's cost model: the modelled field multiplications of a bucket method at a window
width, and the method and width it makes least (calibrated on this project's kernels, see
docs/perf/kernels.md). :mod:`cuzk.kernels.msm_cpu` chooses its windows with it and
:mod:`cuzk.kernels.msm_fixed` weighs its precomputed plans against the plain MSM with it.

    >>> choose_window_for(1 << 16, "affine", 381) == choose_msm(1 << 16, 381)[1]
    True
"""

from __future__ import annotations

import functools
import math

from cuzk.kernels.msm_group import METHODS, VEC_METHODS
from cuzk.kernels.scalar_digits import SCALAR_BITS, num_windows

__all__ = ["msm_cost", "choose_msm", "choose_window_for", "IFMA_MIN_POINTS", "MAX_WINDOW"]

# Cost model, in base-field multiplications per operation (squarings count as one).
_AFFINE_ADD = 6.5  # batch-affine addition: λ, λ², λ·(x1 − x3) + 3 for the shared inversion
_XYZZ_MADD = 10.0  # madd-2008-s: 8M + 2S
_BUCKET_REDUCE = 24.0  # per bucket: one mixed add (running) + one full XYZZ add (acc)
_INVERSION = 600.0  # Fermat inversion in a 381-bit Fq: ~381 squarings + ~190 multiplications
_INVERSION_BITS = 381  # ... so a b-bit field's inversion costs about _INVERSION·b/381
# IFMA windows (msm_vec_*), measured one thread at 2^16 (docs/perf/kernels.md): an addition
# 8 lanes at a time costs ~3-3.4 scalar field products of the same field (BN254 G1 ~63 ns per
# pair against a ~20 ns Fq product), and each flush's 8-lane Fermat inversion ~2·b products of
# 8 lanes (~4 scalar products per exponent bit). 3.0 places the window where the sweeps found
# the least time (c = 11 at 2^16 for both curves' G2; G1 is flat over c = 10-12).
_IFMA_ADD = 3.0
_IFMA_INVERSION_PER_BIT = 4.0
_IFMA_CHUNK = 8192  # pairs per batch inversion in the msm_vec_* modules (their CHUNK)
_AFFINE_CHUNK = 2048  # additions per batch inversion in the msm_kernels_* modules (their CHUNK)
# Below this many points the flushes are too short to amortize the 8-lane inversions and
# "ifma" measured slower than "affine" (2^10: 0.85-1.08x; 2^12: 1.31-1.50x faster, one thread).
IFMA_MIN_POINTS = 2048
MAX_WINDOW = 16  # the MSM kernels' bucket index range


def msm_cost(n: int, c: int, method: str, fq_bits: int, bits: int = SCALAR_BITS) -> float:
    """Modelled base-field multiplications of an n-point MSM with scalars below 2^bits, by
    ``method`` at window width c over a ``fq_bits``-bit base field."""
    nwin = num_windows(c, bits)
    buckets = 2 ** (c - 1)
    if method == "xyzz":
        return nwin * (n * _XYZZ_MADD + buckets * _BUCKET_REDUCE)
    rounds = max(1, math.ceil(math.log2(max(2.0, n / buckets))))
    if method == "ifma":
        inversions = rounds + n / _IFMA_CHUNK
        return nwin * (n * _IFMA_ADD + inversions * _IFMA_INVERSION_PER_BIT * fq_bits + buckets * _BUCKET_REDUCE)
    inversions = rounds + n / _AFFINE_CHUNK
    inversion = _INVERSION * fq_bits / _INVERSION_BITS
    return nwin * (n * _AFFINE_ADD + inversions * inversion + buckets * _BUCKET_REDUCE)


# The choices are pure functions of small ints and are cached: a proof of a tiny circuit runs ten
# MSMs whose plans, modelled afresh, were a seventh of its create_proof (Cube: 3.34 -> 2.89 ms,
# 1.16x, benchmarks/tiny_prove_bench.py).
@functools.lru_cache(maxsize=4096)
def choose_msm(n: int, fq_bits: int, bits: int = SCALAR_BITS,
               methods: tuple[str, ...] = METHODS) -> tuple[str, int]:
    """(method, window width c) with the least modelled cost for an n-point MSM with scalars
    below 2^bits over a ``fq_bits``-bit base field (BLS12-381's: 381), among ``methods``.

    >>> choose_msm(1 << 16, 381), choose_msm(1 << 17, 381, bits=128)
    (('affine', 13), ('affine', 13))
    >>> choose_msm(1 << 16, 254, methods=METHODS + VEC_METHODS), choose_msm(64, 254, methods=METHODS + VEC_METHODS)[0]
    (('ifma', 11), 'xyzz')
    """
    if n < IFMA_MIN_POINTS:
        methods = tuple(m for m in methods if m not in VEC_METHODS)
    options = [(msm_cost(max(n, 1), c, m, fq_bits, bits), m, c) for m in methods for c in range(1, MAX_WINDOW + 1)]
    _, method, c = min(options)
    return method, c


@functools.lru_cache(maxsize=4096)
def choose_window_for(n: int, method: str, fq_bits: int, bits: int = SCALAR_BITS) -> int:
    """The modelled best window width for ``method`` at n points with scalars below 2^bits."""
    return min(range(1, MAX_WINDOW + 1), key=lambda c: msm_cost(max(n, 1), c, method, fq_bits, bits))
