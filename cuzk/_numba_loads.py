"""Loading a kernel from Numba's on-disk cache without the work only a compile needs.

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

Second, the linking bitcode. A cached library is the function's machine code plus the LLVM
bitcode of the function and every callee linked into it, kept so that a later compile can link
the library into new code. Numba parses that bitcode at every load (2.6 MB for the ~25 kernels
of a ``cuzk groth16 prove``: ~0.26 s) and walks it to record the names it defines (~0.08 s).
Here the bitcode stays as bytes until something needs it:

* linking the library into a new compile (``_get_module_for_linking``) parses it then;
* the engine's "is this symbol defined" question (``JitEngine.is_symbol_defined``, asked for
  the entry point of every loaded function) is answered from the loaded machine code when
  the symbol is a function there, which is what the recorded names would have said; anything
  else first parses every pending library and answers from the names as Numba does.

Both patches are applied only when Numba's classes have the shape they were written against
(checked attribute by attribute); anything else keeps Numba's own methods. :func:`installed`
says whether they run.
"""

from __future__ import annotations

import threading

__all__ = ["install", "installed", "pending_libraries"]

_state = {"installed": False}
_lock = threading.RLock()  # pending lists and parses: loads run under Numba's compile lock, lookups may not


def _load_overload(self, sig, target_context):
    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)  # what the skipped refresh did first; idempotent
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)


def _unserialize(cls, codegen, state):
    name, kind, data = state
    if kind != "object":
        return _state["unserialize"](cls, codegen, state)
    object_code, shared_bitcode = data
    self = codegen.create_library(name)
    assert isinstance(self, cls)
    self.enable_object_caching()
    self._set_compiled_object(object_code)
    self._finalize_final_module()  # loads the machine code; needs none of the bitcode
    self._cuzk_bitcode = shared_bitcode
    engine = self._codegen._engine
    with _lock:
        engine.__dict__.setdefault("_cuzk_pending", []).append(self)
    return self


def _materialize(library) -> None:
    """Parse ``library``'s linking bitcode now (once) and record the names it defines."""
    import llvmlite.binding as ll

    with _lock:
        bitcode = library.__dict__.pop("_cuzk_bitcode", None)
        if bitcode is None:
            return
        if library._shared_module is None:
            library._shared_module = ll.parse_bitcode(bitcode)
        library._codegen._engine._load_defined_symbols(library._shared_module)


def _materialize_all(engine) -> None:
    with _lock:
        pending, engine.__dict__["_cuzk_pending"] = engine.__dict__.get("_cuzk_pending", []), []
    for library in pending:
        _materialize(library)


def _get_module_for_linking(self):
    if "_cuzk_bitcode" in self.__dict__:
        _materialize(self)
    return _state["for_linking"](self)


def _is_symbol_defined(self, name):
    if name in self._defined_symbols:
        return True
    if not self.__dict__.get("_cuzk_pending"):
        return False
    if self._ee.get_function_address(name):  # a function of the loaded machine code
        return True
    _materialize_all(self)
    return name in self._defined_symbols


def pending_libraries() -> int:
    """How many loaded libraries still hold their linking bitcode unparsed (for tests)."""
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine
    return len(engine.__dict__.get("_cuzk_pending", []))


def install() -> bool:
    """Make cache loads skip the registry refresh and defer parsing the linking bitcode (see the
    module docstring). Idempotent.

    Returns:
        Whether the faster loads are in place.
    """
    if _state["installed"]:
        return True
    try:
        from numba.core import caching, codegen
        from numba.core.runtime import rtsys
    except ImportError:
        return False
    cache, lib, engine = caching.Cache, codegen.CPUCodeLibrary, codegen.JitEngine
    shaped = (
        hasattr(cache, "_load_overload") and hasattr(cache, "_guard_against_spurious_io_errors")
        and hasattr(rtsys, "initialize") and "load_overload" in vars(cache)
        and isinstance(vars(lib).get("_unserialize"), classmethod) and "_get_module_for_linking" in vars(lib)
        and all(hasattr(lib, a) for a in ("enable_object_caching", "_set_compiled_object", "_finalize_final_module"))
        and "is_symbol_defined" in vars(engine) and hasattr(engine, "_load_defined_symbols")
    )
    if not shaped:
        return False
    cache.load_overload = _load_overload
    _state["unserialize"] = vars(lib)["_unserialize"].__func__
    _state["for_linking"] = vars(lib)["_get_module_for_linking"]
    lib._unserialize = classmethod(_unserialize)
    lib._get_module_for_linking = _get_module_for_linking
    engine.is_symbol_defined = _is_symbol_defined
    _state["installed"] = True
    return True


def installed() -> bool:
    """Whether :func:`install` replaced Numba's cache load."""
    return _state["installed"]
