"""Python's cyclic garbage collector paused while a circuit compiles.

A trace allocates millions of small containers (a dict per row side, a Variable per variable)
that all stay alive until the PCE is built. The collector, triggered by those allocations,
walks ever more of them in each full collection without freeing any: on the 2 KiB PoRep
partition the trace took 1.55-1.69 s with it running and 1.19-1.29 s without, placement alike
(docs/perf/filecoin.md). Reference counting still frees everything that is not in a cycle; the
collector resumes when the last overlapping compile ends and then finds whatever cycles the
compile left.

    >>> import gc
    >>> with paused():
    ...     gc.isenabled()
    False
"""

from __future__ import annotations

import contextlib
import gc
import threading

__all__ = ["paused"]

_lock = threading.Lock()
_depth = 0  # compiles inside paused(), from any thread
_resume = False  # whether the collector was on when the first of them began


@contextlib.contextmanager
def paused():
    """Disable the cyclic collector for the block; compiles on several threads may overlap, and
    it is turned back on (if it was on) only when the last of them leaves."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
