"""Compiling and loading the CUDA kernels: NVRTC cubin cache, device check, :class:`CupyRuntime`.

A *runtime* is what the launch plans in :mod:`cuzk.kernels.cuda` talk to (``xp``, ``context``,
``launch``, ``asarray``, ``asnumpy``, ``argsort``, ``cache``); the tests provide a second one over a
host build of the same sources. CuPy is imported only inside these functions.

    >>> from cuzk.kernels.cuda_runtime import is_available
    >>> isinstance(is_available()[0], bool)
    True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pathlib
import threading

import numpy as np

from cuzk.errors import BackendUnavailableError, DeviceOutOfMemoryError

__all__ = ["CU_DIR", "KERNEL_FILES", "source_hash", "is_available", "CupyRuntime", "get_runtime"]

CU_DIR = pathlib.Path(__file__).resolve().parent / "cu"
KERNEL_FILES = ("arith.cu", "ntt.cu", "msm.cu")


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


def _cache_dir() -> pathlib.Path:
    base = os.environ.get("CUZK_CUDA_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "cuzk", "cuda")
    return pathlib.Path(base)


def _compile_cubin(arch: str) -> pathlib.Path:
    """Compile all kernels into one cubin for ``sm_<arch>`` with NVRTC (no device needed),
    or reuse the cached one; returns its path."""
    from cupy_backends.cuda.libs import nvrtc

    src = "".join(f'#include "{f}"\n' for f in KERNEL_FILES)
    opts = [f"--gpu-architecture=sm_{arch}", "-std=c++17", f"--include-path={CU_DIR}"]
    path = _cache_dir() / f"cuzk_sm{arch}_{source_hash(*opts, str(nvrtc.getVersion()))[:24]}.cubin"
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
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(cubin)
    os.replace(tmp, path)  # atomic: concurrent first uses never see half a file
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


class CupyRuntime:
    """Kernels of one GPU: a loaded module, a stream, cached twiddle tables.

    >>> rt = get_runtime(0)  # doctest: +SKIP
    """

    def __init__(self, device_id: int = 0):
        ok, reason = is_available(device_id)
        if not ok:
            raise BackendUnavailableError(reason)
        import cupy

        self.xp = cupy
        self.device_id = device_id
        self.cache: dict = {}
        with cupy.cuda.Device(device_id) as dev:
            arch = dev.compute_capability
            self.stream = cupy.cuda.Stream(non_blocking=True)
            try:
                self.module = cupy.RawModule(path=str(_compile_cubin(arch)))
            except BackendUnavailableError:
                raise
            except Exception as first:  # an NVRTC binding this CuPy lacks: let CuPy compile
                src = "".join(f'#include "{f}"\n' for f in KERNEL_FILES)
                try:
                    self.module = cupy.RawModule(code=src, options=("-std=c++17", f"-I{CU_DIR}"), backend="nvrtc")
                    self.module.get_function("fr_batch_op")  # compiles now, not at the first launch
                except Exception as e:
                    raise BackendUnavailableError(f"cannot build the CUDA kernels: {first}; then {e}") from e

    def context(self):
        """Make this runtime's device and stream current (CuPy ops in a plan must share the stream)."""
        stack = contextlib.ExitStack()
        stack.enter_context(self.xp.cuda.Device(self.device_id))
        stack.enter_context(self.stream)
        return stack

    def launch(self, name: str, grid: int, block: int, args, smem: int = 0) -> None:
        conv = tuple(np.uint32(a) if isinstance(a, (int, np.integer)) else a for a in args)
        with self.xp.cuda.Device(self.device_id), self.stream:
            self.module.get_function(name)((int(grid),), (int(block),), conv, shared_mem=int(smem))

    def asarray(self, a):
        with self.xp.cuda.Device(self.device_id), self.stream:
            return self.xp.ascontiguousarray(self.xp.asarray(a))

    def asnumpy(self, a) -> np.ndarray:
        with self.xp.cuda.Device(self.device_id):
            out = self.xp.asnumpy(a, stream=self.stream)
            self.stream.synchronize()
        return out

    def argsort(self, keys):
        with self.xp.cuda.Device(self.device_id), self.stream:
            return self.xp.argsort(keys)


_RUNTIMES: dict[int, CupyRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def get_runtime(device_id: int | None = None) -> CupyRuntime:
    """The (lazily created, then shared) runtime of GPU ``device_id``.

    The contract functions (:func:`ntt`, :func:`msm_g1`, ...) use the default device:
    ``$CUZK_CUDA_DEVICE`` or 0. A prover that pins a device calls ``run_*`` on its runtime.

    Raises:
        BackendUnavailableError: CuPy or a device is missing, or the kernels do not compile.
    """
    if device_id is None:
        device_id = int(os.environ.get("CUZK_CUDA_DEVICE", "0"))
    with _RUNTIMES_LOCK:
        rt = _RUNTIMES.get(device_id)
        if rt is None:
            rt = _RUNTIMES[device_id] = CupyRuntime(device_id)
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
