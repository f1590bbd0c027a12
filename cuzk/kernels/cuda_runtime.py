"""Compiling and loading the CUDA kernels: NVRTC cubin cache, device check, :class:`CupyRuntime`.

A *runtime* is what the launch plans in :mod:`cuzk.kernels.cuda` talk to (``xp``, ``context``,
``launch``, ``asarray``, ``asnumpy``, ``stage``, ``wait``, ``adopt``, ``handoff``,
``synchronize``, ``timer``, ``cache``); the tests provide a second one over a host build of the
same sources. CuPy is imported only inside these functions.

Streams are per thread: each GPU worker of a pipeline that shares a device gets its own
compute stream and copy stream, so two proofs interleave on the GPU instead of queueing on one
stream. Host-to-device copies of per-proof data go through a ring of pinned chunks on the copy
stream (:mod:`cuzk.kernels.cuda_staging`); the compute stream waits on an event per array right
before its first use, so the first NTT starts while the rest is still in flight.

Debugging: ``CUZK_CUDA_SYNC=1`` makes every launch wait for its kernel, so a failure names it. A
sticky CUDA error (an illegal address, a trap: the context is unusable afterwards) marks the
runtime broken, and every later call raises at once with the name of the kernel that broke it
instead of failing in some unrelated call.

    >>> from cuzk.kernels.cuda_runtime import is_available
    >>> isinstance(is_available()[0], bool)
    True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import pathlib
import re
import threading

import numpy as np

from cuzk.atomic_file import atomic_write
from cuzk.errors import BackendUnavailableError, DeviceOutOfMemoryError, InputError
from cuzk.kernels.cuda_curve import CudaCurve, curve_define
from cuzk.kernels.cuda_staging import PinnedRing, stage_through_ring
from cuzk.kernels.staged_rows import stacked_shape

__all__ = [
    "CU_DIR", "KERNEL_FILES", "BLOCK", "launch_bounds", "check_launch", "grid_size", "cubin_cache_dir", "source_hash",
    "is_available", "DeviceArray", "PinnedRing", "CupyRuntime", "get_runtime", "sync_mode",
]

CU_DIR = pathlib.Path(__file__).resolve().parent / "cu"
KERNEL_FILES = ("arith.cu", "ntt.cu", "msm.cu", "msm_bits.cu")


def _source_files() -> list[pathlib.Path]:
    return sorted(p for p in CU_DIR.iterdir() if p.suffix in (".cu", ".cuh", ".h"))


def source_hash(*extra: str) -> str:
    """SHA-256 of every CUDA source (name and bytes) plus ``extra`` strings (options, arch)."""
    h = hashlib.sha256()
    for p in _source_files():
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    for e in extra:
        h.update(e.encode() + b"\0")
    return h.hexdigest()


def _launch_defines() -> dict[str, int]:
    text = (CU_DIR / "launch.cuh").read_text()
    return {name: int(v) for name, v in re.findall(r"^#define CUZK_(\w+) (\d+)", text, re.M)}


#: Threads per block of each kernel family and the NTT's stages per pass, read from
#: ``cu/launch.cuh`` (the kernels declare the same numbers as ``__launch_bounds__``):
#: ``BLOCK["BLOCK_CURVE"] == 128``.
BLOCK: dict[str, int] = _launch_defines()

_KERNEL_DECL = re.compile(r'extern "C" __global__ void __launch_bounds__\(CUZK_(\w+)\)[\s\\]*([\w#]+)\(')


@functools.lru_cache(maxsize=None)
def launch_bounds() -> dict[str, int]:
    """{kernel name: the most threads per block it may be launched with}, from the sources.

    Kernels stamped out by a macro (``G##_msm_bucket_acc``) appear once per instantiation
    (``g1_msm_bucket_acc``, ``g2_msm_bucket_acc``).

    >>> launch_bounds()["ntt_stages"] == BLOCK["BLOCK_NTT"]
    True
    """
    bounds = {}
    for f in KERNEL_FILES:
        text = (CU_DIR / f).read_text()
        for m in _KERNEL_DECL.finditer(text):
            size, name = BLOCK[m.group(1)], m.group(2)
            if "##" not in name:
                bounds[name] = size
                continue
            prefix, suffix = name.split("##")
            macro = re.findall(rf"^#define (\w+)\({prefix}\b", text[: m.start()], re.M)[-1]
            for inst in re.findall(rf"^{macro}\((\w+)\s*,", text, re.M):
                bounds[inst + suffix] = size
    return bounds


def check_launch(name: str, block: int, smem: int) -> None:
    """Refuse a launch the device would reject (more threads than the kernel's bounds, or more
    than the 48 KiB of dynamic shared memory a kernel gets without opting in), naming it."""
    bound = launch_bounds().get(name)
    if bound is None:
        raise InputError(f"no CUDA kernel named {name!r} in {', '.join(KERNEL_FILES)}")
    if not 0 < block <= bound:
        raise InputError(f"{name}: {block} threads per block, its __launch_bounds__ allow 1..{bound}")
    if not 0 <= smem <= 48 << 10:
        raise InputError(f"{name}: {smem} bytes of dynamic shared memory (at most 48 KiB)")


def grid_size(n: int, block: int) -> int:
    """Blocks of ``block`` threads covering n items (at least one: kernels bound-check)."""
    return max(1, -(-n // block))


def cubin_cache_dir() -> pathlib.Path:
    """Where compiled kernel modules are cached: ``$CUZK_CUDA_CACHE`` or ``~/.cache/cuzk/cuda``."""
    base = os.environ.get("CUZK_CUDA_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "cuzk", "cuda")
    return pathlib.Path(base)


def _compile_cubin(arch: str, defines: tuple[str, ...] = (), curve: str = "bls12_381") -> pathlib.Path:
    """Compile all kernels for ``curve`` into one cubin for ``sm_<arch>`` with NVRTC (no device
    needed), or reuse the cached one; returns its path. ``defines`` (e.g. ``("CUZK_CHAIN_ONLY",)``,
    field.cuh's per-instruction chains instead of whole PTX blocks) build a variant."""
    from cupy_backends.cuda.libs import nvrtc

    defines = (curve_define(curve), *defines)
    src = "".join(f'#include "{f}"\n' for f in KERNEL_FILES)
    opts = [f"--gpu-architecture=sm_{arch}", "-std=c++17", f"--include-path={CU_DIR}"] + [f"-D{d}" for d in defines]
    path = cubin_cache_dir() / f"cuzk_sm{arch}_{source_hash(*opts, str(nvrtc.getVersion()))[:24]}.cubin"
    if path.exists():
        return path
    prog = nvrtc.createProgram(src, "cuzk_kernels.cu", (), ())
    try:
        try:
            nvrtc.compileProgram(prog, opts)
        except Exception as e:
            log = nvrtc.getProgramLog(prog)
            raise BackendUnavailableError(f"NVRTC failed to compile the cuzk kernels: {log}") from e
        cubin = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as f:  # concurrent first uses never see half a file
        f.write(cubin)
    return path


def is_available(device_id: int = 0) -> tuple[bool, str]:
    """Whether the CUDA backend can run here, and why not.

    >>> ok, reason = is_available()
    >>> ok or len(reason) > 0
    True
    """
    try:
        import cupy
    except Exception as e:  # ImportError, or a CuPy built for another CUDA
        return False, f"CuPy is not importable ({e}); install 'cuzk[cuda12]' or 'cuzk[cuda13]'"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return False, f"no CUDA driver/device: {e}"
    if count <= device_id:
        return False, f"CUDA device {device_id} requested but {count} device(s) present"
    return True, f"CUDA device {device_id} of {count}"


class DeviceArray:
    """An array in a runtime's device memory, possibly with a host-to-device copy in flight.

    ``event`` completes when the copy has landed (None: nothing pending). The launch plans call
    ``rt.wait(d)`` before the first kernel that reads it, which orders only the calling thread's
    compute stream: the host never blocks. ``d[i:j]`` slices rows; ``d.array`` is the raw
    (CuPy, or numpy on the tests' host runtime) array.
    """

    __slots__ = ("array", "rt", "event")

    def __init__(self, array, rt, event=None):
        self.array, self.rt, self.event = array, rt, event

    @property
    def shape(self):
        return self.array.shape

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, rows):
        if not isinstance(rows, slice) or rows.step not in (None, 1):
            raise InputError(f"a DeviceArray takes contiguous row slices (a[i:j]) only, got {rows!r}")
        return DeviceArray(self.array[rows], self.rt, self.event)

    def __repr__(self) -> str:
        return f"DeviceArray(shape={tuple(self.array.shape)}, pending={self.event is not None})"


def sync_mode() -> bool:
    """Whether ``CUZK_CUDA_SYNC=1``: every launch waits for its kernel (debugging; slow)."""
    return os.environ.get("CUZK_CUDA_SYNC", "") == "1"


# CUDA errors after which the context is unusable: every later call in the process fails too.
# CuPy names them as the runtime API does (stream sync) or as the driver API does (launches).
_STICKY = ("cudaErrorIllegalAddress", "cudaErrorLaunchFailure", "cudaErrorIllegalInstruction",
           "cudaErrorMisalignedAddress", "cudaErrorInvalidAddressSpace", "cudaErrorInvalidPc",
           "cudaErrorHardwareStackError", "cudaErrorAssert", "cudaErrorECCUncorrectable", "cudaErrorLaunchTimeout",
           "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
           "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC",
           "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT", "CUDA_ERROR_ECC_UNCORRECTABLE",
           "CUDA_ERROR_LAUNCH_TIMEOUT")
_STREAM_KEYS = itertools.count(1)  # per-thread stream identities (id() of a dead stream may be reused)


class CupyRuntime:
    """Kernels of one GPU: a loaded module, per-thread streams, pinned staging, cached twiddles.

    The module is built for ``curve`` (a :class:`~cuzk.kernels.cuda_curve.CudaCurve`:
    ``cuzk.curves.get(name).cuda``), kept as ``self.curve``; the launch plans read the curve's
    fields and shapes from it.

    >>> rt = get_runtime(0, cuzk.curves.get("bls12_381").cuda)  # doctest: +SKIP
    """

    def __init__(self, device_id: int = 0, defines: tuple[str, ...] = (), curve: CudaCurve | None = None):
        if not isinstance(curve, CudaCurve):
            raise InputError(f"curve must be a CudaCurve (cuzk.curves.get(name).cuda), got {curve!r}")
        ok, reason = is_available(device_id)
        if not ok:
            raise BackendUnavailableError(reason)
        import cupy

        self.xp = cupy
        self.curve = curve
        self.device_id = device_id
        self.cache: dict = {}
        self.cache_lock = threading.RLock()  # reentrant: building a twiddle table uploads constants
        self._local = threading.local()
        self._kernels: dict = {}  # name -> RawKernel (get_function builds a new one per call)
        self.pinned = PinnedRing(cupy.cuda.alloc_pinned_memory)
        self.sync_launches = sync_mode()
        self.broken: str | None = None  # why the context is unusable (a sticky error), once it is
        self.kernel_log: list | None = None  # (name, start event, end event) per launch while a list
        with cupy.cuda.Device(device_id) as dev:
            arch = dev.compute_capability
            try:
                self.module = cupy.RawModule(path=str(_compile_cubin(arch, defines, curve.name)))
                # RawModule(path=) loads lazily: load now, so a cubin this driver rejects falls
                # back to CuPy's own compile here instead of failing at the first launch
                self.module.get_function("fr_batch_op")
            except BackendUnavailableError:
                raise
            except Exception as first:  # an NVRTC binding this CuPy lacks: let CuPy compile
                src = "".join(f'#include "{f}"\n' for f in KERNEL_FILES)
                try:
                    opts = ("-std=c++17", f"-I{CU_DIR}", *(f"-D{d}" for d in (curve.define, *defines)))
                    self.module = cupy.RawModule(code=src, options=opts, backend="nvrtc")
                    self.module.get_function("fr_batch_op")  # compiles now, not at the first launch
                except Exception as e:
                    raise BackendUnavailableError(f"cannot build the CUDA kernels: {first}; then {e}") from e

    def _streams(self):
        loc = self._local
        if getattr(loc, "stream", None) is None:
            with self.xp.cuda.Device(self.device_id):
                loc.stream = self.xp.cuda.Stream(non_blocking=True)
                loc.copy_stream = self.xp.cuda.Stream(non_blocking=True)
                loc.key = next(_STREAM_KEYS)
        return loc.stream, loc.copy_stream

    def stream_key(self) -> int:
        """An identity of the calling thread's streams (cache entries are per stream: see
        ``cuzk.kernels.cuda_ntt._cached``)."""
        self._streams()
        return self._local.key

    @property
    def stream(self):
        """The calling thread's compute stream on this device."""
        return self._streams()[0]

    def context(self):
        """Make this runtime's device and stream current (CuPy ops in a plan must share the stream)."""
        stack = contextlib.ExitStack()
        stack.enter_context(self.xp.cuda.Device(self.device_id))
        stack.enter_context(self.stream)
        return stack

    def _kernel(self, name: str):
        fn = self._kernels.get(name)
        if fn is None:  # get_function builds a new RawKernel per call: keep one per name
            fn = self._kernels[name] = self.module.get_function(name)
        return fn

    def launch(self, name: str, grid: int, block: int, args, smem: int = 0) -> None:
        check_launch(name, block, smem)
        self._check_usable()
        # Every scalar parameter of the kernels is uint32_t: CuPy would pass a Python int as
        # int64 (8 bytes) and shift every later parameter. Arrays go as their data pointer.
        conv = tuple(np.uint32(a) if isinstance(a, (int, np.integer)) else a for a in args)
        log = self.kernel_log
        with self.xp.cuda.Device(self.device_id), self.stream:
            what = f"kernel {name} (grid {grid}, block {block}, smem {smem})"
            with self._cuda_errors(what if self.sync_launches else what + " or a kernel launched before it"):
                start = self.stream.record() if log is not None else None
                self._kernel(name)((int(grid),), (int(block),), conv, shared_mem=int(smem))
                if log is not None:
                    log.append((name, start, self.stream.record()))
                if self.sync_launches:
                    self.stream.synchronize()

    def _check_usable(self) -> None:
        if self.broken is not None:
            raise BackendUnavailableError(f"the CUDA context of device {self.device_id} is unusable: {self.broken}")

    @contextlib.contextmanager
    def _cuda_errors(self, what: str):
        """Turn a CUDA error inside the block into BackendUnavailableError naming ``what``; a
        sticky one also marks the runtime broken."""
        try:
            yield
        except Exception as e:  # CuPy's CUDARuntimeError / CUDADriverError carry the error name
            text = str(e)
            if isinstance(e, (MemoryError, BackendUnavailableError)) or not ("cudaError" in text or "CUDA_ERROR" in text):
                raise
            where = what if self.sync_launches else what + (" (set CUZK_CUDA_SYNC=1 to make each launch wait and "
                                                            "name the kernel that failed)")
            if any(k in text for k in _STICKY):
                self.broken = f"{where} failed with {e} (a sticky error: restart the process)"
                raise BackendUnavailableError(self.broken) from e
            raise BackendUnavailableError(f"{where} failed: {e}") from e

    def kernel_attributes(self) -> dict[str, dict]:
        """{kernel: CuPy ``RawKernel.attributes``} (``num_regs``, ``local_size_bytes``, ...) of every
        kernel in the module: what ptxas made of each one on this device."""
        return {name: dict(self._kernel(name).attributes) for name in sorted(launch_bounds())}

    def preload(self) -> None:
        """Load every kernel of the module now (CUDA loads functions lazily at their first use)."""
        for name in launch_bounds():
            self._kernel(name)

    def asarray(self, a):
        with self.xp.cuda.Device(self.device_id), self.stream:
            return self.xp.ascontiguousarray(self.xp.asarray(a))

    def asnumpy(self, a) -> np.ndarray:
        self._check_usable()
        with self.xp.cuda.Device(self.device_id), self._cuda_errors("a kernel since the last synchronisation"):
            out = self.xp.asnumpy(a, stream=self.stream)
            self.stream.synchronize()
        return out

    def stage(self, *parts: np.ndarray, rows: int | None = None, threads: int = 1) -> DeviceArray:
        """Start copying host arrays to the device through the pinned ring; returns once the last
        chunk is queued (the host fills a chunk while the previous one is on the wire). The device
        array holds ``parts`` one after another, then zero rows up to ``rows`` (None: no padding;
        :mod:`cuzk.kernels.staged_rows`): the zeros are a memset on the copy stream, not host
        bytes. ``threads`` share the host copies into the pinned chunks."""
        self._check_usable()
        parts = [np.ascontiguousarray(p) for p in parts]
        shape, dtype = stacked_shape(parts, rows)
        stream, copy = self._streams()
        if shape[0] == 0:  # nothing to copy (and no pointer to copy from)
            with self.xp.cuda.Device(self.device_id), stream:
                return DeviceArray(self.xp.empty(shape, dtype), self)
        with self.xp.cuda.Device(self.device_id):
            # CuPy's pool keeps one free list per stream and reuses a block at once on the stream
            # it was allocated on. Allocated on the copy stream, a block freed by a staged array is
            # reused only by a later copy (in order after this one), never by a compute-stream
            # temporary while this DMA may still be writing it; and the copy waits for the compute
            # stream, so it never lands before queued kernels are done with the block's last use.
            with copy:
                dev = self.xp.empty(shape, dtype)
            copy.wait_event(stream.record())
            off = 0
            for p in parts:  # one stream: the copies (and the memset) land in order
                if p.nbytes:
                    stage_through_ring(self.pinned, p, dev.data + off, copy, threads)
                off += p.nbytes
            if off < dev.nbytes:
                (dev.data + off).memset_async(0, dev.nbytes - off, stream=copy)
            event = copy.record()
        return DeviceArray(dev, self, event)

    def wait(self, d: DeviceArray):
        """Order the calling thread's compute stream after ``d``'s pending copy; returns the array."""
        if d.event is not None:
            self.stream.wait_event(d.event)
        return d.array

    def adopt(self, a):
        """A caller's CuPy array, ready for the kernels: the compute stream ordered after the
        caller's current stream (ours is non-blocking: no implicit sync with the null stream), and
        C-contiguous (a kernel gets only the data pointer, so a strided view would be misread)."""
        with self.xp.cuda.Device(self.device_id):
            self.stream.wait_event(self.xp.cuda.get_current_stream().record())
            if not a.flags.c_contiguous:
                with self.stream:
                    a = self.xp.ascontiguousarray(a)
        return a

    def handoff(self):
        """After a plan that returns a device array: order the caller's current stream after the
        compute stream (CuPy work there reads the result only once it is written) and return
        the event, so another thread's ``wait`` orders its own stream after it too."""
        with self.xp.cuda.Device(self.device_id):
            event = self.stream.record()
            self.xp.cuda.get_current_stream().wait_event(event)
        return event

    def synchronize(self) -> None:
        """Block until the calling thread's compute stream is idle."""
        self._check_usable()
        with self._cuda_errors("a kernel since the last synchronisation"):
            self.stream.synchronize()

    def timer(self):
        """``with rt.timer() as t: ...`` then ``t.ms``: CUDA events around the enclosed launches."""
        return _EventTimer(self)

    def mark(self):
        """An event on the calling thread's compute stream, between launches (phase timings)."""
        with self.xp.cuda.Device(self.device_id):
            return self.stream.record()

    def elapsed_ms(self, a, b) -> float:
        """Milliseconds of GPU time between two :meth:`mark` events (waits for ``b``)."""
        b.synchronize()
        return self.xp.cuda.get_elapsed_time(a, b)


class _EventTimer:
    def __init__(self, rt):
        self.rt, self.ms = rt, float("nan")

    def __enter__(self):
        with self.rt.xp.cuda.Device(self.rt.device_id):  # an event is made on the current device
            self._start = self.rt.stream.record()
        return self

    def __exit__(self, *exc):
        with self.rt.xp.cuda.Device(self.rt.device_id):
            stop = self.rt.stream.record()
        stop.synchronize()
        self.ms = self.rt.xp.cuda.get_elapsed_time(self._start, stop)
        return False


_RUNTIMES: dict[tuple[int, str], CupyRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def get_runtime(device_id: int | None = None, curve: CudaCurve | None = None) -> CupyRuntime:
    """The (lazily created, then shared) runtime of GPU ``device_id`` for ``curve`` (a
    :class:`~cuzk.kernels.cuda_curve.CudaCurve`: ``cuzk.curves.get(name).cuda``), one per
    (device, curve).

    The contract functions (``cuda.kernels_for(curve).ntt``, ``.msm_g1``, ...) use the default
    device: ``$CUZK_CUDA_DEVICE`` or 0. A prover that pins a device calls ``run_*`` on its runtime.

    Raises:
        InputError: ``curve`` is not a CudaCurve.
        BackendUnavailableError: CuPy or a device is missing, or the kernels do not compile.
    """
    if device_id is None:
        device_id = int(os.environ.get("CUZK_CUDA_DEVICE", "0"))
    if not isinstance(curve, CudaCurve):
        raise InputError(f"curve must be a CudaCurve (cuzk.curves.get(name).cuda), got {curve!r:.60}")
    with _RUNTIMES_LOCK:
        rt = _RUNTIMES.get((device_id, curve.name))
        if rt is None:
            rt = _RUNTIMES[(device_id, curve.name)] = CupyRuntime(device_id, curve=curve)
        return rt



def _oom_guard(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MemoryError as e:  # cupy's OutOfMemoryError derives from MemoryError
            if isinstance(e, DeviceOutOfMemoryError):
                raise
            raise DeviceOutOfMemoryError(f"GPU out of memory in {fn.__name__}: {e}") from e

    return wrapper
