"""How a ``cuzk`` command-line process ends.

A command that starts nothing needing a tear-down (``groth16 prove``/``verify``, ``porep
seal``/``verify``: no engine, no worker processes, no threads left once it returns; its output
files are in place, renamed, before it returns) marks itself with ``fast_exit=True`` in its parser defaults. Such a process then ends
with ``os._exit`` once logging and the standard streams are flushed, instead of going through the
interpreter's finalization: with Numba and the kernel modules loaded, that finalization (module
clean-up and the garbage collections over Numba's type and dispatcher objects) measured ~0.5 s,
a tenth of a whole ``cuzk groth16 prove`` at 2^16 (docs/perf/cold-start.md, "Warm-cache
start-up"). Every other command exits normally, so its ``atexit`` hooks (an Engine's close,
multiprocessing's clean-up, Ray) run.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["exit_process"]


def exit_process(status: int, args=None) -> None:
    """End the process with ``status``: at once when ``args.fast_exit`` (see the module
    docstring), else through ``sys.exit``."""
    if not getattr(args, "fast_exit", False):
        sys.exit(status)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            status = status or 1
    os._exit(status)
