"""NTT and MSM backends with one interface (docs/kernel-contracts.md).

``cpu`` (Numba) is always there; ``cuda`` (CuPy raw kernels) imports CuPy only when a kernel
runs, so ``import cuzk.kernels.cuda`` works without a GPU and ``cuda.is_available()`` says why not.

Both are curve-generic: a curve's functions are ``cuzk.curves.get(name).kernels`` (CPU) and
``cuda.kernels_for(cuzk.curves.get(name).cuda)`` (CUDA), over the generated kernel modules of
its package ``cuzk.curves.<name>``.

    >>> from cuzk.curves import get
    >>> sorted(n for n in dir(get("bls12_381").kernels) if n.startswith("msm"))
    ['msm', 'msm_bits_g1', 'msm_bits_g2', 'msm_g1', 'msm_g2', 'msm_precomputed']
"""

from cuzk.kernels import cpu

__all__ = ["cpu"]
