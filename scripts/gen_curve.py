"""Generate every curve's point kernel modules (``g1.py``, ``g2.py``) from ONE set of formulas.

A thin entry point kept for habit and for the file headers that name it: the templates live in
``scripts/cuzk_codegen/points*.py``, and ``scripts/generate.py`` renders every kind of module
for every curve (see docs/curves.md).

    python3 scripts/gen_curve.py          # rewrite the stale modules
    python3 scripts/gen_curve.py --check  # exit 1 if they are stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuzk_codegen  # noqa: E402
from cuzk_codegen.common import layout_of  # noqa: E402
from cuzk_codegen.points import render_points  # noqa: E402
from generate import run  # noqa: E402

from cuzk.curves import BLS12_381  # noqa: E402

__all__ = ["render", "outputs", "main"]

KINDS = ("points",)


def render(name: str) -> str:
    """Source text of BLS12-381's ``cuzk/curves/bls12_381/<name>.py`` ("g1" | "g2")."""
    return render_points(layout_of(BLS12_381), name)


def outputs() -> dict[Path, str]:
    """Every generated point module (all curves) and its fresh content."""
    return cuzk_codegen.outputs(kinds=KINDS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated module is stale")
    return run(ap.parse_args(argv).check, kinds=KINDS, script="scripts/gen_curve.py")


if __name__ == "__main__":
    raise SystemExit(main())
