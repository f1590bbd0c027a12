"""Process-wide Numba set-up, done once when ``cuzk`` is imported (before any kernel is compiled).

Two things from NUMBA_NOTES are fixed here:

* Threading layer. With ``workqueue`` two Python threads entering ``parallel=True`` kernels at
  the same time abort the process, and a pipeline does exactly that. We pick ``tbb`` when Numba's
  tbb pool loads (pip package ``tbb``), else ``omp``; ``cuzk info`` reports the choice.
* Stale cache. Numba invalidates a cached function only when its own file changes, so an edit
  to an intrinsic in another module would leave old machine code in callers. We stamp a hash
  of every cuzk source file into the cache directory name, so any source change starts a
  fresh cache.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["configure_numba", "threading_layer_choice", "cache_dir", "source_stamp"]

_PACKAGE_DIR = Path(__file__).resolve().parent
_state: dict = {}


# Packages whose sources can reach compiled code (kernels, the constants and op codes they
# read as globals). The rest (pipeline, timeline, reference, formats, cli) never does, and
# leaving it out keeps an edit there from throwing the whole cache away.
_JIT_PACKAGES = ("field", "curve", "curves", "kernels", "circuit", "synth", "groth16")


def source_stamp() -> str:
    """Short hash of the sources of the packages that hold (or feed) Numba kernels."""
    if "stamp" not in _state:
        h = hashlib.sha256()
        paths = [p for pkg in _JIT_PACKAGES for p in (_PACKAGE_DIR / pkg).rglob("*.py")]
        for path in sorted(paths + [_PACKAGE_DIR / "_runtime.py"]):
            h.update(str(path.relative_to(_PACKAGE_DIR)).encode())
            h.update(path.read_bytes())
        _state["stamp"] = h.hexdigest()[:16]
    return _state["stamp"]


def threading_layer_choice() -> str:
    """The threading layer cuzk asks Numba for: ``"tbb"`` if available, else ``"omp"``."""
    if os.environ.get("NUMBA_THREADING_LAYER"):
        return os.environ["NUMBA_THREADING_LAYER"]
    # The pip package 'tbb' puts libtbb.so.12 in <prefix>/lib, which the dynamic loader does not
    # search inside a virtual environment; preloading it by path lets Numba's tbbpool resolve it.
    for prefix in {sys.prefix, sys.base_prefix}:
        lib = Path(prefix) / "lib" / "libtbb.so.12"
        if lib.exists():
            try:
                ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                pass
    try:
        importlib.import_module("numba.np.ufunc.tbbpool")
        return "tbb"
    except ImportError:
        return "omp"


def cache_dir() -> Path:
    """Where Numba's on-disk cache for this exact cuzk source tree lives."""
    base = os.environ.get("CUZK_NUMBA_CACHE_DIR") or os.environ.get("NUMBA_CACHE_DIR")
    root = Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cuzk" / "numba"
    return root / source_stamp()


def configure_numba() -> None:
    """Apply the threading layer and the stamped cache dir. Idempotent."""
    if _state.get("configured"):
        return
    import numba

    numba.config.THREADING_LAYER = threading_layer_choice()
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        numba.config.CACHE_DIR = str(d)
    except OSError:
        pass  # read-only home: Numba falls back to __pycache__ next to the sources
    _state["configured"] = True
