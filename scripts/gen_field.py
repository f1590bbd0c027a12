"""Generate every curve's prime-field kernels (``fr.py``, ``fq.py``) and array loops (``*_array.py``).

A thin entry point kept for habit and for the file headers that name it: the templates live in
``scripts/cuzk_codegen/field.py`` and ``field_arrays.py``, and ``scripts/generate.py`` renders
every kind of module for every curve (see docs/curves.md).

Usage::

    python3 scripts/gen_field.py          # rewrite the stale files
    python3 scripts/gen_field.py --check  # exit 1 if any file is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuzk_codegen  # noqa: E402
from generate import run  # noqa: E402

__all__ = ["outputs", "main"]

KINDS = ("field",)


def outputs() -> dict[Path, str]:
    """Every generated field file (all curves) and its fresh content."""
    return cuzk_codegen.outputs(kinds=KINDS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    return run(ap.parse_args(argv).check, kinds=KINDS, script="scripts/gen_field.py")


if __name__ == "__main__":
    sys.exit(main())
