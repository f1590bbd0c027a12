"""What every template renderer shares: repository paths, the job list entry, name helpers."""

from __future__ import annotations

from pathlib import Path

import attrs

from cuzk.curves.layout import Layout, layout
from cuzk.curves.spec import CurveSpec

__all__ = ["ROOT", "JIT", "Target", "path_of", "layout_of"]

ROOT = Path(__file__).resolve().parents[2]
JIT = "@njit(cache=True, nogil=True)"


@attrs.frozen
class Target:
    """One curve as a renderer sees it: its spec and where its modules go."""

    spec: CurveSpec
    layout: Layout

    def path(self, module: str) -> Path:
        """File of the generated module ``module`` ("fr", "g1", ...)."""
        return path_of(self.layout.module(module))


def layout_of(spec: CurveSpec) -> Target:
    return Target(spec, layout(spec))


def path_of(dotted: str) -> Path:
    """cuzk.curves.bn254.g1 -> <repo>/cuzk/curves/bn254/g1.py."""
    return ROOT.joinpath(*dotted.split(".")).with_suffix(".py")
