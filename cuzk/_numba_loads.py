"""Loading a kernel from Numba's on-disk cache without importing Numba's compiler registries.

Numba's ``Cache.load_overload`` refreshes the target context before it rebuilds a cached
function: that imports and installs every lowering and typing registry Numba has (the numpy
implementation modules, typed containers, random, linalg, ...), ~0.5 s on the AMD host and
the largest single cost of a fresh ``cuzk groth16 prove`` with a warm cache
(docs/perf/cold-start.md, "Warm-cache start-up"). Rebuilding a cached function needs none of
them: it links object code and reads back the function's environment. What it does need from
that refresh is the Numba runtime (NRT: its allocation symbols are resolved at link time),
which :func:`_load_overload` still initializes.

A compile is unaffected: Numba's compiler refreshes both contexts itself before it types or
lowers anything (``numba.core.compiler.CompilerBase``), so a cache miss later in the same
process still finds every registry.

The patch is applied only when Numba's cache class has the shape it was written against
(``_load_overload`` and ``_guard_against_spurious_io_errors``); anything else keeps Numba's own
method. :func:`installed` says which one runs.
"""

from __future__ import annotations

__all__ = ["install", "installed"]

_state = {"installed": False}


def _load_overload(self, sig, target_context):
    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)  # what the skipped refresh did first; idempotent
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)


def install() -> bool:
    """Make cache loads skip the registry refresh (see the module docstring). Idempotent.

    Returns:
        Whether the faster load is in place.
    """
    if _state["installed"]:
        return True
    try:
        from numba.core import caching
        from numba.core.runtime import rtsys
    except ImportError:
        return False
    cache = caching.Cache
    if not (hasattr(cache, "_load_overload") and hasattr(cache, "_guard_against_spurious_io_errors")
            and hasattr(rtsys, "initialize") and "load_overload" in vars(cache)):
        return False
    cache.load_overload = _load_overload
    _state["installed"] = True
    return True


def installed() -> bool:
    """Whether :func:`install` replaced Numba's cache load."""
    return _state["installed"]
