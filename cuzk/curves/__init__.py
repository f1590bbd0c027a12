"""Curves as data: :class:`CurveSpec` entries and the registry ``get(name)`` (DESIGN §8, docs/curves.md).

A curve is one spec entry in ``cuzk.curves.catalog``; ``scripts/generate.py`` renders its kernel
modules from the same templates as every other curve's, and :func:`get` hands out a bundle of
its fields, groups, pairing and CPU kernels, imported on first use. Known: BLS12-381 (the
default everywhere), BN254 (circom/snarkjs' "bn128", Ethereum's alt_bn128) and BLS12-377 (Zexe, ZPrize).

    >>> from cuzk import curves
    >>> bn = curves.get("bn254")
    >>> bn.spec.fr.two_adicity, bn.spec.encoding.g1_uncompressed
    (28, 64)
"""

from cuzk.curves.catalog import BLS12_377, BLS12_381, BN254, CURVES
from cuzk.curves.registry import DEFAULT, CurveBundle, canonical, get, names, resolve
from cuzk.curves.spec import CurveSpec, EncodingFacts

__all__ = ["CurveSpec", "EncodingFacts", "CurveBundle", "get", "resolve", "canonical", "names", "DEFAULT", "CURVES", "BLS12_381", "BN254", "BLS12_377"]
