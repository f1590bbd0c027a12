"""``@jit_kernel``: the decorator of in-JIT kernels, ``@njit`` without the two call wrappers.

Numba compiles every specialization of an ``@njit`` function with a CPython wrapper (unboxing
the Python arguments, boxing the result) and a C wrapper (``cfunc``), whether or not it is
ever called from Python. The field, tower and point kernels take and return tuples of uint64
limbs (an Fq12 value is 72 of them), so these wrappers are large: measured here, they are ~60 %
of the compile time of a small Fq kernel and ~35 % of compiling the pairing stack (cold cache,
docs/perf/cold-start.md). Kernels only other kernels call never use them.

A :class:`JitKernel` holds the ``@njit`` dispatcher compiled without the wrappers; Numba code
that names it (``fq.mul(a, b)`` inside another kernel) calls that dispatcher exactly like a
plain ``@njit`` function (same machine code, same on-disk cache). Calling it from Python works
too: the first such call compiles a separate, wrapped copy (not cached on disk, since Numba's
cache index does not tell the two apart), so tests and doctests can still call any kernel.

    >>> import numpy as np
    >>> from numba import njit
    >>> @jit_kernel(nogil=True)           # (cache=True needs a file: the generated modules pass it)
    ... def add1(x):
    ...     return x + np.uint64(1)
    >>> @njit
    ... def twice(x):
    ...     return add1(add1(x))
    >>> int(twice(np.uint64(5))), int(add1(np.uint64(1)))
    (7, 2)
    >>> add1.targetoptions["nogil"], add1.targetoptions["no_cpython_wrapper"]
    (True, True)
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit, types
from numba.extending import typeof_impl

__all__ = ["JitKernel", "jit_kernel", "readonly", "frozen", "I0", "I1", "I2", "I3"]

# Row and coefficient indices for kernel calls, typed int64. A literal ``0`` passed to a kernel
# types as ``Literal[int](0)``, and every literal value compiles a specialization of its own
# (``fq2.load(q, 0)`` and ``fq2.load(q, 1)`` were two compiles); a global np.int64 types as int64.
I0, I1, I2, I3 = (np.int64(k) for k in range(4))


class JitKernel:
    """A kernel for other Numba code (see the module docstring).

    Attributes:
        dispatcher: the ``@njit`` dispatcher (no CPython or C wrapper) Numba code calls.
        py_func: the Python function.
    """

    def __init__(self, py_func, options: dict):
        self.py_func = py_func
        self.options = dict(options)
        self._dispatcher = None
        self._python = None
        self._lock = threading.Lock()
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(self, name, getattr(py_func, name))
        self.__wrapped__ = py_func

    @property
    def dispatcher(self):
        # Made when Numba first types a call to the kernel, i.e. when something that calls it
        # compiles. A process whose kernels all come from the on-disk cache never does, and the
        # ~220 of these cost ~0.3 ms each to make at import (docs/perf/cold-start.md).
        if self._dispatcher is None:
            with self._lock:
                if self._dispatcher is None:
                    self._dispatcher = njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, **self.options)(self.py_func)
        return self._dispatcher

    def __repr__(self) -> str:
        return f"<jit_kernel {self.__module__}.{self.__qualname__}>"

    def __call__(self, *args, **kwargs):
        # From Python: a wrapped copy, made on first use. It may not share the on-disk cache:
        # an entry there is keyed on the function and the argument types only, and loading the
        # wrapper-less code as this copy would crash the call.
        if self._python is None:
            with self._lock:
                if self._python is None:
                    self._python = njit(**{**self.options, "cache": False})(self.py_func)
        return self._python(*args, **kwargs)

    def __getattr__(self, name):
        # signatures, targetoptions, stats, overloads, ...: the kernel's own dispatcher
        if "_lock" not in self.__dict__ or name.startswith("__"):  # half-built (unpickling) or a dunder probe
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self):
        # by name, like a module-level function (the lock and dispatchers are per process)
        return _by_name, (self.__module__, self.__qualname__)


def _by_name(module: str, qualname: str):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@typeof_impl.register(JitKernel)
def _typeof_jit_kernel(val, c):
    # Numba code sees the wrapper-less dispatcher itself: calls to it compile and link as usual
    return types.Dispatcher(val.dispatcher)


def jit_kernel(py_func=None, **options):
    """``@jit_kernel(cache=True, nogil=True)``: like ``@njit(...)`` for functions Numba code calls.

    Returns:
        A :class:`JitKernel` (or a decorator making one, when called with options only).
    """
    if py_func is None:
        return lambda f: JitKernel(f, options)
    return JitKernel(py_func, options)


def readonly(arr: np.ndarray) -> np.ndarray:
    """``arr`` as a read-only array: itself when it is one, else a read-only view (no copy).

    Numba compiles a kernel once per argument *type*, and a read-only array is another type
    than a writable one: the same MSM or field kernel used to compile twice, once for a key's
    read-only points and once for a fresh writable array. Python edges pass every array a
    kernel only reads through this, so each kernel has one specialization.

    >>> a = np.zeros(3); v = readonly(a)
    >>> v.flags.writeable, a.flags.writeable, readonly(v) is v, bool(np.shares_memory(a, v))
    (False, True, True, True)
    """
    if not arr.flags.writeable:
        return arr
    view = arr.view()
    view.flags.writeable = False
    return view


def frozen(arr: np.ndarray) -> bool:
    """Whether no numpy array can write ``arr``'s memory unless its owner is first made writable
    again: ``arr`` and every array it views are read-only, and the memory belongs to one of them
    or to a read-only buffer (bytes, a read-only mapping). A proving key's queries are, a
    read-only view of a writable array is not. What is checked of a frozen array stays true.

    >>> a = np.zeros(3); a.flags.writeable = False
    >>> frozen(a), frozen(readonly(np.zeros(3))), frozen(np.frombuffer(bytes(8), np.uint8))
    (True, False, True)
    """
    while isinstance(arr, np.ndarray):
        if arr.flags.writeable:
            return False
        arr = arr.base
    if arr is None:
        return True
    try:
        return memoryview(arr).readonly
    except TypeError:  # a base numpy cannot tell the mutability of
        return False
