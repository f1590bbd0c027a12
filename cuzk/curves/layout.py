"""Where each curve's generated modules live, and where they read their parameters from.

The generator writes, and the registry imports, the same module names for every curve: fields
``fr``, ``fq``, ``fr_array``, ``fq_array``, tower ``fq2``, ``fq6``, ``fq12``, points ``g1``,
``g2``, ``pairing``, kernels ``msm_kernels_g1``, ``msm_kernels_g2``, ``msm_vec_g1``,
``msm_vec_g2`` (AVX-512 IFMA), ``ntt_kernels``, ``synth_kernels``. A new
curve gets one package, ``cuzk.curves.<name>``, holding all of them plus a generated
``params`` module that hands the spec's numbers to the kernels. BLS12-381's modules stay where
they were written before curves were data (``cuzk.field``, ``cuzk.curve``, ``cuzk.kernels``,
reading ``cuzk.field.params`` / ``cuzk.curve.params``), so no existing import changes.

    >>> from cuzk.curves import BN254
    >>> layout(BN254).module("g1")
    'cuzk.curves.bn254.g1'
"""

from __future__ import annotations

import attrs

from cuzk.curves.spec import CurveSpec

__all__ = ["Layout", "layout", "FIELD_MODULES", "CURVE_MODULES", "KERNEL_MODULES"]

FIELD_MODULES = ("fr", "fq", "fr_array", "fq_array", "fq2", "fq6", "fq12")
CURVE_MODULES = ("g1", "g2", "pairing")
KERNEL_MODULES = ("msm_kernels_g1", "msm_kernels_g2", "msm_vec_g1", "msm_vec_g2", "ntt_kernels", "synth_kernels")


@attrs.frozen
class Layout:
    """Module locations of one curve.

    Attributes:
        field_pkg, curve_pkg, kernels_pkg: packages of the field/tower, point/pairing and
            MSM/NTT kernel modules.
        field_params: module exporting ``FR``, ``FQ``, ``FQ2_NONRESIDUE``, ``FQ6_NONRESIDUE``.
        curve_params: module exporting ``G1_PARAMS``, ``G2_PARAMS`` and the seed.
        seed_name: the seed's name in ``curve_params``.
        params_module: the generated parameter module (None for BLS12-381, whose are hand-written).
    """

    field_pkg: str
    curve_pkg: str
    kernels_pkg: str
    field_params: str
    curve_params: str
    seed_name: str
    params_module: str | None

    def module(self, name: str) -> str:
        """Dotted name of the generated module ``name`` (one of the *_MODULES)."""
        if name in FIELD_MODULES:
            return f"{self.field_pkg}.{name}"
        if name in CURVE_MODULES:
            return f"{self.curve_pkg}.{name}"
        if name in KERNEL_MODULES:
            return f"{self.kernels_pkg}.{name}"
        raise KeyError(name)


_BLS12_381 = Layout("cuzk.field", "cuzk.curve", "cuzk.kernels", "cuzk.field.params", "cuzk.curve.params", "BLS_X", None)


def layout(spec: CurveSpec) -> Layout:
    """The :class:`Layout` of ``spec``'s generated modules."""
    if spec.name == "bls12_381":
        return _BLS12_381
    pkg = f"cuzk.curves.{spec.name}"
    return Layout(pkg, pkg, pkg, f"{pkg}.params", f"{pkg}.params", "SEED", f"{pkg}.params")
