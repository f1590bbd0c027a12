"""``python -m cuzk`` runs the ``cuzk`` command line (see :mod:`cuzk.cli`)."""

from cuzk.cli import console_main, main

__all__ = ["main"]

if __name__ == "__main__":
    console_main()
