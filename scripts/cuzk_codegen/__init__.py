"""Code generation for every curve in ``cuzk.curves.catalog``: one set of templates, one job list.

:func:`outputs` maps every generated file to its fresh text; ``scripts/generate.py`` writes or
checks them and tests/test_generated.py compares them with the files on disk. A *kind* groups
templates (the old per-kind scripts ``gen_field.py``, ``gen_curve.py``, ``gen_msm.py``,
``gen_cuda_params.py``, ``gen_cuda_asm.py`` render one kind each, for every curve). Kind ``cuda``
writes the CUDA kernels' parameter and PTX-block headers of each curve and ``curve.h``, which picks
one curve's pair at compile time.
"""

from __future__ import annotations

from pathlib import Path

from cuzk.curves.catalog import CURVES

from .common import ROOT, Target, layout_of
from .cuda_asm import render_cuda_asm
from .cuda_params import SELECT_PATH, asm_path, params_path, render_cuda_params, render_curve_select
from .field import render_kernels
from .field_arrays import render_array
from .msm import render_msm
from .msm_vec import render_msm_vec
from .ntt import render_ntt
from .package import render_init, render_params
from .pairing import render_pairing
from .points import render_points
from .synth import render_synth
from .tower import render_tower

__all__ = ["KINDS", "CURVES", "outputs", "targets", "ROOT"]


def _field(t: Target):
    for role in ("fr", "fq"):
        yield t.path(role), render_kernels(t, role)
        yield t.path(f"{role}_array"), render_array(t, role)


def _tower(t: Target):
    for name in ("fq2", "fq6", "fq12"):
        yield t.path(name), render_tower(t, name)


def _points(t: Target):
    for name in ("g1", "g2"):
        yield t.path(name), render_points(t, name)


def _pairing(t: Target):
    yield t.path("pairing"), render_pairing(t)


def _msm(t: Target):
    for name in ("g1", "g2"):
        yield t.path(f"msm_kernels_{name}"), render_msm(t, name)
        yield t.path(f"msm_vec_{name}"), render_msm_vec(t, name)


def _ntt(t: Target):
    yield t.path("ntt_kernels"), render_ntt(t)


def _synth(t: Target):
    yield t.path("synth_kernels"), render_synth(t)


def _package(t: Target):
    pkg = ROOT.joinpath(*t.layout.package.split("."))
    yield pkg / "__init__.py", render_init(t)
    yield pkg / "params.py", render_params(t)


def _cuda(t: Target):
    yield params_path(t.spec), render_cuda_params(t)
    yield asm_path(t.spec), render_cuda_asm(t)
    # the selector lists every catalog curve, whichever curves this run renders
    yield SELECT_PATH, render_curve_select(CURVES.values())


KINDS = {
    "package": _package, "field": _field, "tower": _tower, "points": _points, "pairing": _pairing,
    "msm": _msm, "ntt": _ntt, "synth": _synth, "cuda": _cuda,
}


def targets(curves=None) -> list[Target]:
    """The curves to render (default: every catalog entry), as :class:`Target` objects."""
    names = list(CURVES) if curves is None else list(curves)
    return [layout_of(CURVES[n]) for n in names]


def outputs(curves=None, kinds=None) -> dict[Path, str]:
    """Every generated file of ``curves`` x ``kinds`` (default: all) and its fresh text."""
    out = {}
    for t in targets(curves):
        for kind in (KINDS if kinds is None else kinds):
            out.update(KINDS[kind](t))
    return out
