"""Where each curve's generated modules live, and where they read their parameters from.

The generator writes, and the registry imports, the same module names for every curve: fields
``fr``, ``fq``, ``fr_array``, ``fq_array``, tower ``fq2``, ``fq6``, ``fq12``, points ``g1``,
``g2``, ``pairing``, kernels ``msm_kernels_g1``, ``msm_kernels_g2``, ``msm_vec_g1``,
``msm_vec_g2`` (AVX-512 IFMA), ``ntt_kernels``, ``synth_kernels``. Every curve, the default
BLS12-381 included, has one package, ``cuzk.curves.<name>``, holding all of them plus a
generated ``params`` module that hands the spec's numbers to the kernels.

    >>> from cuzk.curves import BN254, BLS12_381
    >>> layout(BN254).module("g1"), layout(BLS12_381).module("fr")
    ('cuzk.curves.bn254.g1', 'cuzk.curves.bls12_381.fr')
"""

from __future__ import annotations

import attrs

from cuzk.curves.spec import CurveSpec

__all__ = ["Layout", "layout", "FIELD_MODULES", "CURVE_MODULES", "KERNEL_MODULES", "MODULES"]

FIELD_MODULES = ("fr", "fq", "fr_array", "fq_array", "fq2", "fq6", "fq12")
CURVE_MODULES = ("g1", "g2", "pairing")
KERNEL_MODULES = ("msm_kernels_g1", "msm_kernels_g2", "msm_vec_g1", "msm_vec_g2", "ntt_kernels", "synth_kernels")
MODULES = FIELD_MODULES + CURVE_MODULES + KERNEL_MODULES


@attrs.frozen
class Layout:
    """Module locations of one curve.

    Attributes:
        package: the curve's package, ``cuzk.curves.<name>``.
        params_module: its generated parameter module (``FR``, ``FQ``, ``FQ2_NONRESIDUE``,
            ``FQ6_NONRESIDUE``, ``G1_PARAMS``, ``G2_PARAMS``, ``SEED``).
    """

    package: str

    @property
    def params_module(self) -> str:
        return f"{self.package}.params"

    def module(self, name: str) -> str:
        """Dotted name of the generated module ``name`` (one of :data:`MODULES`)."""
        if name not in MODULES:
            raise KeyError(name)
        return f"{self.package}.{name}"


def layout(spec: CurveSpec) -> Layout:
    """The :class:`Layout` of ``spec``'s generated modules."""
    return Layout(f"cuzk.curves.{spec.name}")
