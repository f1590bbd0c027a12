"""``get(name)``: a curve's spec plus its kernels, imported on first use.

A :class:`CurveBundle` is what generic code receives instead of importing a curve's constants
(DESIGN §8): the spec (pure data), the array-level fields and groups, the pairing module and
the CPU kernels, each imported the first time it is asked for (a BN254 pairing never loads
BLS12-381's MSM kernels), every curve's built the same way over its generated package
``cuzk.curves.<name>``. The default curve's objects also answer to their short names
(``cuzk.field.Fr``, ``cuzk.curve.G1``: ``cuzk/curves/default.py``).

    >>> from cuzk import curves
    >>> curves.get("bn128").name, curves.get("BLS12381").spec.title
    ('bn254', 'BLS12-381')
    >>> curves.get("bls12_381").G1 is __import__("cuzk").curve.G1
    True
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

from cuzk.curves.catalog import CURVES
from cuzk.curves.layout import layout
from cuzk.curves.spec import CurveSpec
from cuzk.errors import UnsupportedCurveError

__all__ = ["CurveBundle", "get", "resolve", "names", "canonical", "DEFAULT"]

DEFAULT = "bls12_381"  # the curve of every call that names none (DESIGN §8)

_ALIASES = {alias: spec.name for spec in CURVES.values() for alias in (spec.name, *spec.aliases)}


def _key(name: str) -> str:
    # "BLS12-381", "bls12_381", "bls12381" all name one curve
    return name.strip().lower().replace("-", "_")


def resolve(name: str) -> CurveSpec:
    """The :class:`CurveSpec` for ``name`` or an alias (no kernel is imported).

    Raises:
        UnsupportedCurveError: no such curve.
    """
    if not isinstance(name, str):
        raise UnsupportedCurveError(f"a curve name must be a str, got {type(name).__name__}")
    key = _key(name)
    if key not in _ALIASES:
        raise UnsupportedCurveError(f"unknown curve {name!r}; cuzk knows {', '.join(sorted(_ALIASES))}")
    return CURVES[_ALIASES[key]]


def canonical(name) -> str:
    """The canonical name of ``name`` or an alias; ``None`` means :data:`DEFAULT`.

    >>> canonical("bn128"), canonical("BLS12-381"), canonical(None)
    ('bn254', 'bls12_381', 'bls12_381')

    Raises:
        UnsupportedCurveError: no such curve.
    """
    return resolve(DEFAULT if name is None else name).name


def names() -> tuple[str, ...]:
    """The canonical names of every known curve.

    >>> names()
    ('bls12_381', 'bn254', 'bls12_377')
    """
    return tuple(CURVES)


class CurveBundle:
    """One curve: its spec and, loaded on first access, its kernels.

    Attributes (lazy):
        Fr, Fq: array-level fields (:class:`cuzk.field.PrimeField`).
        G1, G2: array-level groups (:class:`cuzk.curve.Group`).
        pairing: the pairing module (``pairing``, ``pairing_check``, ``prepare_g2``, ...).
        kernels: the CPU NTT/MSM functions (``ntt``, ``msm_g1``, ...: :class:`cuzk.kernels.cpu.CpuKernels`).
        cuda: the curve as the CUDA launch plans see it (``cuzk.kernels.cuda_curve.CudaCurve``).
    """

    def __init__(self, spec: CurveSpec):
        self.spec = spec
        self.layout = layout(spec)
        self._lock = threading.RLock()
        self._loaded: dict = {}

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:
        return f"<cuzk curve {self.spec.name} ({self.spec.title})>"

    def module(self, name: str) -> ModuleType:
        """A generated kernel module of this curve by its generic name ("fr", "g1", "fq12", ...)."""
        return importlib.import_module(self.layout.module(name))

    def _get(self, key: str, make):
        # hot path (every prove/verify asks): a built object is read without the lock (a dict
        # read is atomic); only building takes it
        got = self._loaded.get(key)
        if got is not None:
            return got
        with self._lock:  # two threads asking at once build one object
            if key not in self._loaded:
                self._loaded[key] = make()
            return self._loaded[key]

    def _field(self, role: str):
        from cuzk.field.prime_field import PrimeField

        params = self.spec.fr if role == "fr" else self.spec.fq
        return PrimeField(params, self.module(role), self.module(f"{role}_array"))

    def _group(self, name: str):
        from cuzk.curve.group import Group

        params = self.spec.g1 if name == "g1" else self.spec.g2
        return Group(params, self.module(name), field=self.spec.fq, curve=self.spec.name)

    @property
    def Fr(self):  # noqa: N802 (the field's name)
        return self._get("Fr", lambda: self._field("fr"))

    @property
    def Fq(self):  # noqa: N802
        return self._get("Fq", lambda: self._field("fq"))

    @property
    def G1(self):  # noqa: N802
        return self._get("G1", lambda: self._group("g1"))

    @property
    def G2(self):  # noqa: N802
        return self._get("G2", lambda: self._group("g2"))

    @property
    def pairing(self) -> ModuleType:
        return self._get("pairing", lambda: self.module("pairing"))

    @property
    def kernels(self):
        def make():
            from cuzk.kernels import cpu
            from cuzk.kernels.msm_cpu import vec_module

            pkg = self.layout.package
            return cpu.CpuKernels(self.Fr, self.spec.fq, self.module("msm_kernels_g1"),
                                  self.module("msm_kernels_g2"), self.module("ntt_kernels"), self.spec.name,
                                  g1=self.spec.g1, g2=self.spec.g2, fq2_nonresidue=self.spec.fq2_nonresidue,
                                  vec_g1=vec_module(pkg, "g1"), vec_g2=vec_module(pkg, "g2"))

        return self._get("kernels", make)

    @property
    def cuda(self):
        """What the CUDA launch plans need of this curve (:class:`cuzk.kernels.cuda_curve.CudaCurve`):
        its fields, Fq2 non-residue and host MSM combine kernels; a runtime built for the curve
        carries it as ``rt.curve``. Importing it needs no GPU and no CuPy."""
        def make():
            from cuzk.kernels import cuda_curve

            g1, g2 = self.module("msm_kernels_g1"), self.module("msm_kernels_g2")
            return cuda_curve.CudaCurve(self.spec.name, self.spec.fr, self.spec.fq, self.spec.fq2_nonresidue,
                                        g1.combine, g2.combine, self.Fr.from_mont)

        return self._get("cuda", make)


_BUNDLES = {name: CurveBundle(spec) for name, spec in CURVES.items()}


def get(name) -> CurveBundle:
    """The :class:`CurveBundle` of ``name``: "bls12_381" | "bn254" or an alias ("bls12381", "bn128").

    Raises:
        UnsupportedCurveError: no such curve.
    """
    if isinstance(name, CurveBundle):
        return name
    bundle = _BUNDLES.get(name) if isinstance(name, str) else None  # canonical names: no parsing
    return bundle if bundle is not None else _BUNDLES[resolve(name).name]
