"""Generate the CUDA kernels' whole-operation PTX blocks (``cuzk/kernels/cu/mont_asm_<curve>.h``).

A thin entry point kept for habit: the template lives in ``scripts/cuzk_codegen/cuda_asm.py``
(Fr/Fq add, sub, mul, sqr per curve, from its spec), and ``scripts/generate.py`` renders every
kind of file for every curve (see docs/curves.md).

    python3 scripts/gen_cuda_asm.py            # rewrite the stale headers
    python3 scripts/gen_cuda_asm.py --check    # exit 1 if a header is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cuzk_codegen.common import layout_of  # noqa: E402
from cuzk_codegen.cuda_asm import OPS, render_cuda_asm  # noqa: E402
from cuzk_codegen.cuda_params import asm_path  # noqa: E402
from generate import run  # noqa: E402

from cuzk.curves import CURVES  # noqa: E402

__all__ = ["render", "output", "main", "OPS"]

KINDS = ("cuda",)


def render(curve: str = "bls12_381") -> str:
    """The text of ``cuzk/kernels/cu/mont_asm_<curve>.h``."""
    return render_cuda_asm(layout_of(CURVES[curve]))


def output(curve: str = "bls12_381") -> Path:
    """The path of ``curve``'s PTX-block header."""
    return asm_path(CURVES[curve])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated header is stale")
    return run(ap.parse_args(argv).check, kinds=KINDS, script="scripts/gen_cuda_asm.py")


if __name__ == "__main__":
    sys.exit(main())
