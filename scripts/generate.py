"""Generate every curve's kernel modules from the templates in ``scripts/cuzk_codegen/``.

One generator for all curves (``cuzk.curves.catalog.CURVES``) and all kinds of module: prime
fields, extension tower, points, pairing, MSM and NTT kernels, and a new curve's package files.
Limb counts, byte lengths and every constant come from the curve's spec; the generated modules
compute their Montgomery constants from their parameter module at import. Numba cannot cache
``exec``'d code, so real files are written; tests/test_generated.py fails when any differs from
a fresh rendering. See docs/curves.md.

    python scripts/generate.py                 # write every stale file
    python scripts/generate.py --check         # exit 1 if any file is stale
    python scripts/generate.py --curve bn254 --kind pairing
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/ itself: the cuzk_codegen package

import cuzk_codegen  # noqa: E402

__all__ = ["main", "run"]


def run(check: bool, curves=None, kinds=None, script: str = "scripts/generate.py") -> int:
    """Write (or with ``check`` only list) the stale outputs; 1 when ``check`` found any."""
    stale = []
    for path, text in cuzk_codegen.outputs(curves, kinds).items():
        old = path.read_text() if path.exists() else None
        if old != text:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    for p in stale:
        rel = p.relative_to(cuzk_codegen.ROOT)
        print(f"stale: {rel} (run python {script})" if check else f"wrote: {rel}")
    return 1 if (check and stale) else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    ap.add_argument("--curve", action="append", choices=sorted(cuzk_codegen.CURVES),
                    help="only this curve (repeatable; default all)")
    ap.add_argument("--kind", action="append", choices=sorted(cuzk_codegen.KINDS),
                    help="only this kind of module (repeatable; default all)")
    args = ap.parse_args(argv)
    return run(args.check, args.curve, args.kind)


if __name__ == "__main__":
    sys.exit(main())
