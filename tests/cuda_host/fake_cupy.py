"""A stand-in for the slice of CuPy that ``cuzk.kernels.cuda_runtime.CupyRuntime`` uses, over numpy
and the host build of the kernels, so the GPU runtime's own code (per-thread streams, pinned
staging, events, timers, module loading) runs in CI.

Copies are lazy, like a real copy engine: ``copy_from_host_async`` only queues the copy on its
stream, and it happens when an event recorded after it is waited on (``wait_event``,
``Event.synchronize``) or the stream is synchronised. A plan that launched a kernel on a staged
array without waiting for its event would read the poison that fake ``empty`` fills new arrays
with, and the proof would not verify.

    >>> fake = make_fake_cupy(host_runtime)   # doctest: +SKIP
    >>> monkeypatch.setitem(sys.modules, "cupy", fake)   # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import threading
import time
import types

import numpy as np

__all__ = ["make_fake_cupy", "FakeArray"]


class _Device:
    def __init__(self, device_id: int = 0):
        self.id = device_id
        self.compute_capability = "90"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Event:
    def __init__(self, stream, upto: int):
        self.stream, self.upto, self.t = stream, upto, time.perf_counter()

    @property
    def done(self) -> bool:
        return self.stream.executed >= self.upto

    def synchronize(self) -> None:
        self.stream.flush(self.upto)


class _Stream:
    _current = threading.local()

    def __init__(self, non_blocking: bool = False):
        self.ops: list = []
        self.executed = 0
        self.lock = threading.Lock()

    def flush(self, upto: int | None = None) -> None:
        with self.lock:
            upto = len(self.ops) if upto is None else upto
            while self.executed < upto:
                self.ops[self.executed]()
                self.executed += 1

    def record(self) -> _Event:
        with self.lock:
            return _Event(self, len(self.ops))

    def wait_event(self, event: _Event) -> None:
        event.stream.flush(event.upto)  # kernels here run at once, so the wait happens now

    def synchronize(self) -> None:
        self.flush()

    def __enter__(self):  # per thread, like CuPy's current stream
        prev = getattr(_Stream._current, "stack", None)
        _Stream._current.stack = (prev or []) + [self]
        return self

    def __exit__(self, *exc):
        _Stream._current.stack.pop()
        return False


_NULL = _Stream()  # the legacy default stream: current where no `with stream:` is open


def _current_stream() -> _Stream:
    stack = getattr(_Stream._current, "stack", None)
    return stack[-1] if stack else _NULL


class _Ptr:
    def __init__(self, arr):
        self.arr = arr

    def copy_from_host_async(self, src: int, nbytes: int, stream=None) -> None:
        dst = self.arr.ctypes.data
        stream.ops.append(lambda: ctypes.memmove(dst, src, nbytes))


class FakeArray(np.ndarray):
    """A numpy array that answers CuPy's ``.data`` (a device pointer) and ``.device``."""

    @property
    def data(self):  # noqa: D401 - CuPy's MemoryPointer, for copy_from_host_async
        return _Ptr(self)

    @property
    def device(self):
        return _Device(0)


def _wrap(fn):
    def call(*args, **kw):
        out = fn(*args, **kw)
        return out.view(FakeArray) if isinstance(out, np.ndarray) else out

    return call


def make_fake_cupy(host_rt) -> types.ModuleType:
    """A module object named ``cupy`` whose kernels run on ``host_rt`` (tests' HostRuntime)."""
    cp = types.ModuleType("cupy")
    cp.__version__ = "fake-host"
    def empty(shape, dtype=float):  # poisoned, like uninitialised device memory, never zeros by luck
        out = np.empty(shape, dtype)
        out.view(np.uint8).fill(0xA5)
        return out.view(FakeArray)

    cp.empty = empty
    cp.empty_like = lambda a: empty(a.shape, a.dtype)
    for name in ("zeros", "ones", "array", "asarray", "ascontiguousarray", "arange", "concatenate",
                 "cumsum", "searchsorted", "minimum"):
        setattr(cp, name, _wrap(getattr(np, name)))
    cp.count_nonzero = np.count_nonzero
    cp.asnumpy = lambda a, stream=None: np.array(a, copy=True).view(np.ndarray)

    class RawKernel:
        """Rejects what real CuPy would pass wrongly: CuPy sends a Python int as an int64 and a
        numpy array by value (size 1) or not at all, and gives a kernel only an array's data
        pointer (a strided view would be misread); every cuzk kernel scalar is uint32_t."""

        def __init__(self, name):
            self.name = name
            self.max_dynamic_shared_size_bytes = 48 * 1024

        def __call__(self, grid, block, args, *, shared_mem=0):
            if not (isinstance(grid, tuple) and isinstance(block, tuple)):
                raise TypeError(f"{self.name}: grid and block must be tuples, got {grid!r}, {block!r}")
            for i, a in enumerate(args):
                if isinstance(a, FakeArray):
                    if not a.flags.c_contiguous:
                        raise ValueError(f"{self.name}: argument {i} is a strided device array")
                elif type(a) is not np.uint32:
                    raise TypeError(f"{self.name}: argument {i} is {type(a).__name__}, not np.uint32 or a device array")
            if shared_mem > self.max_dynamic_shared_size_bytes:
                raise RuntimeError(f"{self.name}: {shared_mem} B of dynamic shared memory without the opt-in")
            host_rt.launch(self.name, grid[0], block[0], args, shared_mem)

    class RawModule:
        def __init__(self, *, path=None, code=None, options=(), backend="nvrtc"):
            if (code is None) == (path is None) or not isinstance(options, tuple):
                raise TypeError("RawModule takes exactly one of code= and path=, and options as a tuple")
            self.path = path

        def get_function(self, name):
            if name not in host_rt.kernel_names():
                raise RuntimeError(f"CUDA_ERROR_NOT_FOUND: no kernel {name}")
            return RawKernel(name)

    cp.RawModule = RawModule
    cuda = types.SimpleNamespace()
    cuda.Device = _Device
    cuda.Stream = _Stream
    cuda.get_current_stream = _current_stream
    cuda.alloc_pinned_memory = bytearray
    cuda.get_elapsed_time = lambda a, b: (b.t - a.t) * 1e3
    cuda.runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        runtimeGetVersion=lambda: 13000,
        getDeviceProperties=lambda i: {"name": b"fake GPU (host build)", "multiProcessorCount": 1,
                                       "totalGlobalMem": 2**30, "major": 9, "minor": 0},
    )
    cp.cuda = cuda
    return cp
