"""Generate every curve's CPU MSM / fixed-base kernels (``msm_kernels_g1.py``, ``msm_kernels_g2.py``).

A thin entry point kept for habit and for the file headers that name it: the template lives in
``scripts/cuzk_codegen/msm.py``, and ``scripts/generate.py`` renders every kind of module for
every curve (see docs/curves.md).

    python3 scripts/gen_msm.py          # rewrite the stale modules
    python3 scripts/gen_msm.py --check  # exit 1 if they are stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuzk_codegen  # noqa: E402
from cuzk_codegen.common import layout_of  # noqa: E402
from cuzk_codegen.msm import render_msm  # noqa: E402
from generate import run  # noqa: E402

from cuzk.curves import BLS12_381  # noqa: E402

__all__ = ["render", "outputs", "main"]

KINDS = ("msm",)


def render(name: str) -> str:
    """The source of BLS12-381's ``cuzk/kernels/msm_kernels_<name>.py``."""
    return render_msm(layout_of(BLS12_381), name)


def outputs() -> dict[Path, str]:
    """Generated path -> expected text, for every group of every curve."""
    return cuzk_codegen.outputs(kinds=KINDS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated module is stale")
    return run(ap.parse_args(argv).check, kinds=KINDS, script="scripts/gen_msm.py")


if __name__ == "__main__":
    sys.exit(main())
