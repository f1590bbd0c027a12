"""``python -m cuzk`` runs the ``cuzk`` command line (see :mod:`cuzk.cli`)."""

from cuzk.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
