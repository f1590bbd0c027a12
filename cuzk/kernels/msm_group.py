"""The groups the CPU MSM drivers run over: :class:`MsmGroup` (a curve group's generated kernels
and its two fields), the bucket methods a group can run, and the phases of the "ifma" windows.

:mod:`cuzk.kernels.msm_cpu` (the general MSM), :mod:`cuzk.kernels.msm_fixed` (the MSM over
precomputed tables, which ``msm_cpu.msm`` hands a table to) and :mod:`cuzk.kernels.msm_bits`
all build on this module.

    >>> from cuzk.curves import get
    >>> g1 = get("bls12_381").kernels.group("g1")
    >>> as_msm_group(g1) is g1, g1.coord, set(METHODS) <= set(g1.methods)
    (True, (6,), True)
"""

from __future__ import annotations

import importlib
from types import ModuleType

import attrs
import numpy as np

from cuzk.curve.params import CurveParams
from cuzk.errors import InputError
from cuzk.field import ifma
from cuzk.field.jit import readonly
from cuzk.field.params import FieldParams
from cuzk.kernels import glv
from cuzk.kernels.scalar_digits import SCALAR_BITS

__all__ = ["MsmGroup", "as_msm_group", "vec_module", "ifma_phases", "METHODS", "VEC_METHODS", "AVAILABLE"]

METHODS = ("affine", "xyzz")  # scalar bucket methods: any CPU, and the fixed-base tables' (msm_fixed)
VEC_METHODS = ("ifma",)  # batch-affine buckets 8 additions at a time (msm_vec_*): AVX-512 IFMA only
AVAILABLE = METHODS + VEC_METHODS if ifma.HAVE_IFMA else METHODS  # what msm() can run on this CPU


@attrs.frozen
class MsmGroup:
    """One curve group as the MSM drivers see it: its generated kernels and its two fields.

    Attributes:
        name: "g1" or "g2" (messages).
        kernels: the group's generated ``msm_kernels_<name>`` module.
        degree: 1 (coordinates in Fq) or 2 (in Fq2).
        fq, fr: the base field (coordinates) and the scalar field (scalars, 4 limbs).
        curve, fq2_nonresidue: the group's parameters and the curve's Fq2 non-residue, from
            which the endomorphism split is derived (None: no split, plain MSMs only).
        vec: the group's generated ``msm_vec_<name>`` module (AVX-512 IFMA windows), given only
            where the CPU has IFMA (``cuzk.field.ifma.HAVE_IFMA``); None: method "ifma" is off.
    """

    name: str
    kernels: ModuleType
    degree: int
    fq: FieldParams
    fr: FieldParams
    curve: CurveParams | None = None
    fq2_nonresidue: int | None = None
    vec: ModuleType | None = None

    def __attrs_post_init__(self):
        # signed_digits reads 4-limb scalars and sizes the top window for scalars < 2^SCALAR_BITS
        if self.fr.limbs != 4 or self.fr.modulus >= 1 << SCALAR_BITS:
            raise InputError(f"MSM scalars must be 4-limb values below 2^{SCALAR_BITS}; {self.fr.bits}-bit r given")

    def plan(self) -> glv.EndoPlan | None:
        """The group's GLV/GLS split (derived on first use, once per process), or None."""
        if self.curve is None:
            return None
        return glv.plan_for(self.curve, self.fq, self.fr, self.fq2_nonresidue)

    @property
    def methods(self) -> tuple[str, ...]:
        """The bucket methods this group can run here."""
        return METHODS + VEC_METHODS if self.vec is not None else METHODS

    @property
    def coord(self) -> tuple:
        """Shape of one coordinate: (L,) or (2, L)."""
        return (self.fq.limbs,) if self.degree == 1 else (self.degree, self.fq.limbs)


def vec_module(kernels_pkg: str, name: str) -> ModuleType | None:
    """``<kernels_pkg>.msm_vec_<name>`` where the CPU has AVX-512 IFMA, else None (not imported)."""
    if not ifma.HAVE_IFMA:
        return None
    return importlib.import_module(f"{kernels_pkg}.msm_vec_{name}")


def as_msm_group(group) -> MsmGroup:
    """``group`` itself when it is an :class:`MsmGroup`; anything else is refused."""
    if isinstance(group, MsmGroup):
        return group
    raise InputError(f"group must be an MsmGroup (a curve's: cuzk.curves.get(name).kernels.group('g1')), got {group!r:.60}")


def ifma_phases(g: MsmGroup, pts, digits, c: int, nb_top: int, bounds, sums, chunks: int) -> list:
    """The ``run_phases`` phases of the "ifma" windows: convert the rows of ``pts`` to the IFMA
    form in ``chunks`` tasks, then one task per window and slice (bounds), writing
    sums[slice·nwin + window] as ``window_into`` does."""
    rows, nwin, slices = pts.shape[0], digits.shape[0], len(bounds) - 1
    pts = readonly(np.ascontiguousarray(pts))
    pts52 = np.empty((rows, g.vec.W), np.uint64)
    cut = [k * rows // chunks for k in range(chunks + 1)]
    convert = [(g.vec.to52_rows, (pts, pts52, cut[k], cut[k + 1])) for k in range(chunks)]
    tasks = [(g.vec.window_into_vec, (pts52, digits, w, c, nb_top, bounds[s], bounds[s + 1], sums, s * nwin + w))
             for w in range(nwin) for s in range(slices)]
    return [convert, tasks]
