"""A stand-in for the slice of CuPy that ``cuzk.kernels.cuda_runtime.CupyRuntime`` uses, over numpy
and the host build of the kernels, so the GPU runtime's own code (per-thread streams, pinned
staging, events, timers, module loading, error handling) runs in CI.

Copies are lazy, like a real copy engine: ``copy_from_host_async`` only queues the copy on its
stream, and it happens when an event recorded after it is waited on (``wait_event``,
``Event.synchronize``) or the stream is synchronised. A plan that launched a kernel on a staged
array without waiting for its event would read the poison that fake ``empty`` fills new arrays
with, and the proof would not verify.

Memory follows CuPy's pool: a block freed goes back to the free list of the stream it was
allocated on, and the next allocation of its size on that stream gets it at once. Every use of
a block (a kernel argument, a copy, a read back) is recorded with its stream and position; when
a block is handed out again, a use by another stream that the new owner never ordered itself
after (an event of that stream waited on, or the host having synchronised it) is a *hazard*:
on a GPU that stream's queued kernels could still be reading what the new owner overwrites.
``fake.hazards`` lists them; the tests expect none.

``fake.fault = "kernel_name"`` makes the next launch of that kernel fail like an illegal memory
access: the error surfaces at the next synchronisation and every call after it (sticky).

Devices: ``make_fake_cupy(host_rt, devices=2, device_memory=...)`` offers several devices of
``device_memory`` bytes each. ``with cupy.cuda.Device(i):`` makes ``i`` current on the calling
thread, every allocation belongs to the current device, ``fake.live_bytes(i)`` is what is
allocated there now (arrays still referenced), and an allocation past ``device_memory`` raises
``cupy.cuda.memory.OutOfMemoryError`` (a ``MemoryError``, as in CuPy) after a garbage collection,
like CuPy's pool freeing its cached blocks before it gives up.

    >>> fake = make_fake_cupy(host_runtime)   # doctest: +SKIP
    >>> monkeypatch.setitem(sys.modules, "cupy", fake)   # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import threading
import time
import types
import weakref

import numpy as np

__all__ = ["make_fake_cupy", "FakeArray"]


class CUDARuntimeError(RuntimeError):
    """CuPy's ``cupy.cuda.runtime.CUDARuntimeError``: the message starts with the error's name."""


class OutOfMemoryError(MemoryError):
    """CuPy's ``cupy.cuda.memory.OutOfMemoryError``."""


_current_device = threading.local()


def _device_now() -> int:
    stack = getattr(_current_device, "stack", None)
    return stack[-1] if stack else 0


class _Device:
    def __init__(self, device_id: int = 0):
        self.id = device_id
        self.compute_capability = "90"

    def __enter__(self):  # current on this thread until the matching exit, like CuPy's Device
        _current_device.stack = getattr(_current_device, "stack", []) + [self.id]
        return self

    def __exit__(self, *exc):
        _current_device.stack.pop()
        return False


class _State:
    """What the fake device holds besides memory: a sticky error, once one happened."""

    sticky: str | None = None


class _Event:
    def __init__(self, stream, upto: int):
        self.stream, self.upto, self.t = stream, upto, time.perf_counter()

    @property
    def done(self) -> bool:
        return self.stream.executed >= self.upto

    def synchronize(self) -> None:
        self.stream.flush(self.upto)
        self.stream.host_synced = max(self.stream.host_synced, self.upto)


class _Stream:
    _current = threading.local()
    state = _State  # replaced per fake module

    def __init__(self, non_blocking: bool = False):
        self.ops: list = []
        self.executed = 0
        self.lock = threading.Lock()
        self.waited: dict = {}  # other stream -> position of its last event this stream waited on
        self.host_synced = 0  # position up to which the host waited for this stream

    def enqueue(self, op) -> int:
        with self.lock:
            self.ops.append(op)
            return len(self.ops)

    def flush(self, upto: int | None = None) -> None:
        if self.state.sticky:
            raise CUDARuntimeError(self.state.sticky)
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
        self.waited[event.stream] = max(self.waited.get(event.stream, 0), event.upto)

    def synchronize(self) -> None:
        self.flush()
        self.host_synced = len(self.ops)

    def __enter__(self):  # per thread, like CuPy's current stream
        prev = getattr(_Stream._current, "stack", None)
        _Stream._current.stack = (prev or []) + [self]
        return self

    def __exit__(self, *exc):
        _Stream._current.stack.pop()
        return False


def _current_stream(null) -> _Stream:
    stack = getattr(_Stream._current, "stack", None)
    return stack[-1] if stack else null


class _Block:
    """A pool block: the stream that owns it and the (stream, position) of every use."""

    def __init__(self, nbytes: int, stream, device: int = 0):
        self.nbytes, self.stream, self.uses, self.device = nbytes, stream, [], device


class _Pool:
    def __init__(self, device_memory: int = 2**30):
        self.free: dict = {}  # (stream, nbytes) -> [blocks]
        self.by_owner: dict = {}  # id(numpy owner array) -> block
        self.hazards: list[str] = []
        self.lock = threading.RLock()  # a garbage collection inside a locked section may release a block
        self.device_memory = device_memory
        self.live: dict[int, int] = {}  # device -> bytes of live arrays

    def _reserve(self, device: int, nbytes: int) -> None:
        for attempt in (0, 1):
            with self.lock:
                if self.live.get(device, 0) + nbytes <= self.device_memory:
                    self.live[device] = self.live.get(device, 0) + nbytes
                    return
            if attempt == 0:
                import gc

                gc.collect()  # CuPy frees its pool's cached blocks and retries before giving up
        raise OutOfMemoryError(f"Out of memory allocating {nbytes:,} bytes (allocated so far: "
                               f"{self.live.get(device, 0):,} bytes) on device {device}")

    def allocate(self, shape, dtype, stream):
        nbytes = max(1, int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
        device = _device_now()
        self._reserve(device, nbytes)
        with self.lock:
            blocks = self.free.get((stream, nbytes))
            block = blocks.pop() if blocks else _Block(nbytes, stream)
            block.device = device
            for user, pos in block.uses:  # handed out again: were all other streams' uses ordered before?
                if user is not stream and stream.waited.get(user, 0) < pos and user.host_synced < pos:
                    self.hazards.append(f"a {nbytes}-byte block read by another stream (op {pos}) was reused "
                                        "by its owner stream without waiting for that stream")
            block.uses = []
        owner = np.empty(shape, dtype)  # fresh memory; the block is the pool's bookkeeping identity
        owner.view(np.uint8).reshape(-1).fill(0xA5)  # poisoned, like uninitialised device memory
        with self.lock:
            self.by_owner[id(owner)] = block
        weakref.finalize(owner, self._release, id(owner), block)
        return owner.view(FakeArray)

    def _release(self, key, block) -> None:
        with self.lock:
            self.live[block.device] -= block.nbytes
            self.by_owner.pop(key, None)
            self.free.setdefault((block.stream, block.nbytes), []).append(block)

    def use(self, arr, stream, pos: int) -> None:
        owner = arr if arr.base is None else arr.base
        while isinstance(owner, np.ndarray) and owner.base is not None and id(owner) not in self.by_owner:
            owner = owner.base
        with self.lock:
            block = self.by_owner.get(id(owner))
            if block is not None:
                block.uses.append((stream, pos))


class _Ptr:
    def __init__(self, arr, offset: int = 0):
        self.arr, self.offset = arr, offset

    def __add__(self, k: int) -> "_Ptr":  # MemoryPointer arithmetic (staging in chunks)
        return _Ptr(self.arr, self.offset + k)

    def copy_from_host_async(self, src: int, nbytes: int, stream=None) -> None:
        dst = self.arr.ctypes.data + self.offset
        assert self.offset + nbytes <= self.arr.nbytes, "copy past the end of the device array"
        pos = stream.enqueue(lambda: ctypes.memmove(dst, src, nbytes))
        self.arr.pool.use(self.arr, stream, pos)

    def memset_async(self, value: int, nbytes: int, stream=None) -> None:
        dst = self.arr.ctypes.data + self.offset
        assert self.offset + nbytes <= self.arr.nbytes, "memset past the end of the device array"
        pos = stream.enqueue(lambda: ctypes.memset(dst, value, nbytes))
        self.arr.pool.use(self.arr, stream, pos)


class FakeArray(np.ndarray):
    """A numpy array that answers CuPy's ``.data`` (a device pointer) and ``.device``."""

    pool: _Pool  # set on the class made per fake module

    @property
    def data(self):  # noqa: D401 - CuPy's MemoryPointer, for copy_from_host_async
        return _Ptr(self)

    @property
    def device(self):
        owner = self if self.base is None else self.base
        while isinstance(owner, np.ndarray) and owner.base is not None and id(owner) not in self.pool.by_owner:
            owner = owner.base
        block = self.pool.by_owner.get(id(owner))
        return _Device(block.device if block is not None else 0)


def make_fake_cupy(host_rt, *, devices: int = 1, device_memory: int = 2**30) -> types.ModuleType:
    """A module object named ``cupy`` whose kernels run on ``host_rt`` (tests' HostRuntime), with
    ``devices`` devices of ``device_memory`` bytes each."""
    cp = types.ModuleType("cupy")
    cp.__version__ = "fake-host"
    pool, state = _Pool(device_memory), type("State", (_State,), {})
    array_cls = type("FakeArray", (FakeArray,), {"pool": pool})
    stream_cls = type("Stream", (_Stream,), {"state": state})
    null = stream_cls()  # the legacy default stream: current where no `with stream:` is open

    def current():
        return _current_stream(null)

    def empty(shape, dtype=float):
        return pool.allocate(shape, dtype, current()).view(array_cls)

    def _fill(src):
        out = empty(src.shape, src.dtype)
        out[...] = src
        pool.use(out, current(), current().enqueue(lambda: None))
        return out

    def asarray(a, dtype=None):
        if isinstance(a, FakeArray) and (dtype is None or a.dtype == dtype):
            return a
        return _fill(np.asarray(a, dtype=dtype))

    def ascontiguousarray(a, dtype=None):
        if isinstance(a, FakeArray) and a.flags.c_contiguous and (dtype is None or a.dtype == dtype):
            return a
        return _fill(np.ascontiguousarray(a, dtype=dtype))

    def zeros(shape, dtype=float):  # a memset: no kernel to compile
        out = empty(shape, dtype)
        out.view(np.uint8).reshape(-1).fill(0)
        return out

    cp.empty = empty
    cp.empty_like = lambda a: empty(a.shape, a.dtype)
    cp.zeros = zeros
    cp.asarray = asarray
    cp.ascontiguousarray = ascontiguousarray
    cp.hazards = pool.hazards
    cp.fault = None
    cp.live_bytes = lambda device=0: pool.live.get(device, 0)
    cp.pool = pool  # tests may change pool.device_memory while they run

    def asnumpy(a, stream=None):
        s = stream or current()
        s.flush()
        pool.use(a, s, s.enqueue(lambda: None))
        return np.array(a, copy=True).view(np.ndarray)

    cp.asnumpy = asnumpy

    class RawKernel:
        """Rejects what real CuPy would pass wrongly: CuPy sends a Python int as an int64 and a
        numpy array by value (size 1) or not at all, and gives a kernel only an array's data
        pointer (a strided view would be misread); every cuzk kernel scalar is uint32_t."""

        def __init__(self, name):
            self.name = name
            self.max_dynamic_shared_size_bytes = 48 * 1024
            self.attributes = {"num_regs": 0, "local_size_bytes": 0, "shared_size_bytes": 0,
                               "max_threads_per_block": 1024}

        def __call__(self, grid, block, args, *, shared_mem=0):
            if state.sticky:  # a real launch after a sticky error fails at once
                raise CUDARuntimeError(state.sticky)
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
            s = current()
            pos = s.enqueue(lambda: None)
            for a in args:
                if isinstance(a, FakeArray):
                    pool.use(a, s, pos)
            if cp.fault == self.name:  # the launch succeeds; the kernel traps: reported at the next sync
                cp.fault = None
                state.sticky = "cudaErrorIllegalAddress: an illegal memory access was encountered"
                return
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
    cuda.Stream = stream_cls
    cuda.get_current_stream = current
    cuda.alloc_pinned_memory = bytearray
    cuda.memory = types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError)
    cuda.get_elapsed_time = lambda a, b: (b.t - a.t) * 1e3
    cuda.runtime = types.SimpleNamespace(
        CUDARuntimeError=CUDARuntimeError,
        getDeviceCount=lambda: devices,
        runtimeGetVersion=lambda: 13000,
        getDeviceProperties=lambda i: {"name": b"fake GPU (host build)", "multiProcessorCount": 1,
                                       "totalGlobalMem": device_memory, "major": 9, "minor": 0},
    )
    cp.cuda = cuda
    return cp
