"""NTT and MSM backends with one interface (docs/kernel-contracts.md).

``cpu`` (Numba) is always there; ``cuda`` (CuPy raw kernels) imports CuPy only when a kernel
runs, so ``import cuzk.kernels.cuda`` works without a GPU and ``cuda.is_available()`` says why not.

    >>> from cuzk.kernels import cpu
    >>> sorted(n for n in cpu.__all__ if n.startswith("msm"))
    ['msm', 'msm_bits_g1', 'msm_bits_g2', 'msm_g1', 'msm_g2', 'msm_precomputed']
"""

from cuzk.kernels import cpu

__all__ = ["cpu"]
