"""A runtime for cuzk.kernels.cuda's launch plans over a host (g++) build of the CUDA sources.

The shared library is ``tests/cuda_host/harness.cpp`` compiled with ``-include
tests/cuda_shim.h`` and ``-DCUZK_CURVE_<NAME>`` (cu/curve.h picks that curve's parameter header);
it is built once per curve (and set of defines) per test session into a temporary directory.

    >>> rt = get_runtime(curve="bn254")  # builds on first call (seconds)     # doctest: +SKIP
    >>> cuda.run_ntt(rt, x, 4, w, None, False)                                   # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import itertools
import pathlib
import shutil
import subprocess
import tempfile
import threading
import time

import numpy as np

from cuzk import curves
from cuzk.kernels.cuda_curve import CudaCurve
from cuzk.kernels.cuda_runtime import DeviceArray, check_launch, launch_bounds
from cuzk.kernels.staged_rows import stack_rows

__all__ = ["HostRuntime", "build", "get_runtime", "ROOT"]

ROOT = pathlib.Path(__file__).resolve().parents[2]
_STREAM_KEYS = itertools.count(1)
SHIM = ROOT / "tests" / "cuda_shim.h"
HARNESS = ROOT / "tests" / "cuda_host" / "harness.cpp"


@functools.lru_cache(maxsize=None)
def _build_dir() -> pathlib.Path:
    d = pathlib.Path(tempfile.mkdtemp(prefix="cuzk-cuda-host-"))
    atexit.register(shutil.rmtree, d, True)
    return d


def build(defines: tuple[str, ...] = (), curve: str = "bls12_381") -> pathlib.Path:
    """Compile the harness for ``curve`` with ``-D`` ``defines`` into a shared library; returns
    its path (cached: one build per curve and defines per session)."""
    if any(d.startswith("CUZK_CURVE_") for d in defines):
        raise ValueError(f"name the curve with curve=, not as a define: {defines}")
    return _build((curves.get(curve).cuda.define, *defines))


@functools.lru_cache(maxsize=None)
def _build(defines: tuple[str, ...]) -> pathlib.Path:
    name = "libcuzk_host" + "".join("_" + d.lower() for d in defines) + ".so"
    out = _build_dir() / name
    cmd = ["g++", "-std=c++20", "-O2", "-shared", "-fPIC", "-pthread", "-include", str(SHIM)]
    cmd += [f"-D{d}" for d in defines] + [str(HARNESS), "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"host build failed ({' '.join(cmd)}):\n{res.stderr[-4000:]}")
    return out


class HostRuntime:
    """The runtime interface (``xp``, ``context``, ``launch``, ``asarray``, ``asnumpy``,
    ``stage``, ``wait``, ``adopt``, ``handoff``, ``synchronize``, ``timer``, ``cache``) over numpy and the
    host library, built for ``curve`` (``rt.curve``, as :class:`~cuzk.kernels.cuda_runtime.CupyRuntime`)."""

    xp = np

    def __init__(self, lib_path: pathlib.Path, ntt_max_stages: int = 4, ntt_columns: int = 2,
                 curve: CudaCurve | None = None):
        self.curve = curves.get("bls12_381").cuda if curve is None else curve
        self.lib = ctypes.CDLL(str(lib_path))
        self.lib.cuzk_host_launch.restype = ctypes.c_int
        self.lib.cuzk_host_launch.argtypes = [
            ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)
        ]
        self.lib.cuzk_host_kernel_name.restype = ctypes.c_char_p
        self.cache: dict = {}
        self.cache_lock = threading.RLock()  # reentrant: building a twiddle table uploads constants
        self._local = threading.local()  # per-thread "stream" identity, as CupyRuntime.stream_key
        self.kernel_log: list | None = None  # (name, start, end) wall times per launch while a list
        self.sync_launches = False  # launches run to completion here anyway
        self.staged: list = []  # events of stage() calls, to check that every copy was waited on
        # few threads per shared-memory block keep std::thread counts small on CI, and force
        # several passes (so the strided passes are exercised) at test sizes.
        self.ntt_max_stages = ntt_max_stages
        self.ntt_columns = ntt_columns
        # tiny MSM slices and folds, so test-sized inputs already cut buckets, build heavy-tree
        # levels and fold window sums several times; few threads per scan block (std::threads)
        self.msm_slice = 4
        self.msm_tree_fold = 2
        self.msm_fold = 2
        self.scan_block = 32

    def kernel_names(self) -> list[str]:
        return [self.lib.cuzk_host_kernel_name(i).decode() for i in range(self.lib.cuzk_host_kernel_count())]

    def stream_key(self) -> int:
        if getattr(self._local, "key", None) is None:
            self._local.key = next(_STREAM_KEYS)
        return self._local.key

    def preload(self) -> None:
        missing = set(launch_bounds()) - set(self.kernel_names())
        if missing:
            raise KeyError(f"kernels not registered in {HARNESS.name}: {sorted(missing)}")

    @staticmethod
    def kernel_attributes() -> dict:
        return {}  # ptxas facts exist only for a device build

    def launch(self, name: str, grid: int, block: int, args, smem: int = 0) -> None:
        check_launch(name, block, smem)  # what a device would refuse, refused here too
        log, t0 = self.kernel_log, time.perf_counter()
        holders = []
        params = (ctypes.c_void_p * len(args))()
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                if not a.flags.c_contiguous:
                    raise ValueError(f"{name}: argument {i} is not C-contiguous")
                h = ctypes.c_void_p(a.ctypes.data)
            else:
                h = ctypes.c_uint32(int(a))
            holders.append(h)
            params[i] = ctypes.cast(ctypes.pointer(h), ctypes.c_void_p)
        if self.lib.cuzk_host_launch(name.encode(), int(grid), int(block), int(smem), params) != 0:
            raise KeyError(f"kernel {name} is not registered in {HARNESS.name}")
        if log is not None:
            log.append((name, t0, time.perf_counter()))

    @staticmethod
    def context():
        return contextlib.nullcontext()

    @staticmethod
    def asarray(a) -> np.ndarray:
        return np.ascontiguousarray(a)

    @staticmethod
    def asnumpy(a) -> np.ndarray:
        return np.asarray(a)


    def stage(self, *parts: np.ndarray, rows: int | None = None, threads: int = 1) -> DeviceArray:
        # a pending "copy" whose event the plans must wait on before reading (checked by tests)
        ev = _HostEvent()
        self.staged.append(ev)
        return DeviceArray(stack_rows([np.ascontiguousarray(p) for p in parts], rows, threads), self, ev)

    @staticmethod
    def wait(d: DeviceArray) -> np.ndarray:
        if d.event is not None:
            d.event.waited = True
        return d.array

    @staticmethod
    def adopt(a) -> np.ndarray:
        return np.ascontiguousarray(a)

    @staticmethod
    def handoff() -> None:  # one host thread runs every kernel to completion: nothing to order
        return None

    @staticmethod
    def synchronize() -> None:
        pass

    @staticmethod
    def timer():
        return _WallTimer()

    @staticmethod
    def mark() -> float:
        """A point in time between launches (kernels run synchronously here: wall clock)."""
        return time.perf_counter()

    @staticmethod
    def elapsed_ms(a: float, b: float) -> float:
        return (b - a) * 1e3


class _HostEvent:
    waited = False


class _WallTimer:
    ms = float("nan")

    def __enter__(self):
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.ms = (time.perf_counter() - self._t) * 1e3
        return False


@functools.lru_cache(maxsize=None)
def get_runtime(defines: tuple[str, ...] = (), curve: str = "bls12_381") -> HostRuntime:
    """The session's host runtime for ``curve`` (library built on first use)."""
    cc = curves.get(curve).cuda
    return HostRuntime(build(defines, cc.name), curve=cc)
