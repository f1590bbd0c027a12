"""CUDA backend: the kernels of ``cuzk/kernels/cu/`` loaded through CuPy.

Same functions and signatures as :mod:`cuzk.kernels.cpu` (docs/kernel-contracts.md). The
sources are compiled with NVRTC for the device's architecture on first use and the cubin is
cached under ``~/.cache/cuzk/cuda`` keyed by a hash of the sources, options and NVRTC version.
CuPy is imported lazily: ``import cuzk`` never needs it.

Every launch goes through a *runtime* object (``xp``, ``context``, ``launch``, ``asarray``,
``asnumpy``, ``stage``, ``wait``, ``adopt``, ``handoff``, ``synchronize``, ``timer``, ``cache``):
:class:`CupyRuntime` here, and a ctypes runtime over a host build of the same sources in the
tests, so the launch plans below are exercised on the CPU as well. A runtime is built for one
curve (``rt.curve``); :func:`kernels_for` gives a curve's functions
(:class:`~cuzk.kernels.cuda_kernels.CudaKernels`: ``ntt``, ``h_pointwise``, ``msm_g1``, ...).

    >>> from cuzk.kernels import cuda
    >>> ok, reason = cuda.is_available()
    >>> isinstance(ok, bool) and isinstance(reason, str)
    True
"""

from __future__ import annotations

import threading

from cuzk.errors import BackendUnavailableError
from cuzk.kernels.cuda_curve import CudaCurve
from cuzk.kernels.cuda_kernels import CudaKernels, DevicePoints, run_h_pointwise
from cuzk.kernels.cuda_msm import MSM_MAX_POINTS, check_msm_size, msm_window_bits, run_msm  # noqa: F401
from cuzk.kernels.cuda_ntt import MAX_LOG_N, fr_const, ntt_plan, run_ntt, scaled_by_powers  # noqa: F401
from cuzk.kernels.cuda_elementwise import ArithOp, EcOp, ec_op, field_op, xyzz_to_affine  # noqa: F401
from cuzk.kernels.cuda_runtime import (  # noqa: F401  (re-exported: part of this backend's API)
    BLOCK,
    CU_DIR,
    KERNEL_FILES,
    CupyRuntime,
    DeviceArray,
    _oom_guard,
    grid_size,
    get_runtime,
    is_available,
    source_hash,
)

__all__ = [
    "DevicePoints",
    "DeviceArray",
    "ArithOp",
    "EcOp",
    "CupyRuntime",
    "CU_DIR",
    "KERNEL_FILES",
    "is_available",
    "get_runtime",
    "source_hash",
    "field_op",
    "ec_op",
    "run_ntt",
    "ntt_plan",
    "run_h_pointwise",
    "run_msm",
    "msm_window_bits",
    "xyzz_to_affine",
    "MSM_MAX_POINTS",
    "CURVES",
    "CudaKernels",
    "kernels_for",
]

#: the curves whose parameter header the CUDA sources are compiled with (cu/params_<curve>.h) and
#: that ``GpuProver(device="cuda")`` accepts
CURVES = ("bls12_381", "bn254")

AUTO_BIT_MSM = CudaKernels.AUTO_BIT_MSM  # bit_msm='auto' stays general on the GPU (CudaKernels says why)
_BY_CURVE: dict[str, CudaKernels] = {}
_BY_CURVE_LOCK = threading.Lock()


def kernels_for(curve: CudaCurve) -> CudaKernels:
    """This backend's functions for ``curve`` (``cuzk.curves.get(name).cuda``), one
    :class:`~cuzk.kernels.cuda_kernels.CudaKernels` per curve, on the runtimes built for it.
    Each call looks ``get_runtime`` up in this module with the device id and the curve (tests
    and benchmarks/gpu_check.py replace it with a host runtime).

    >>> from cuzk.curves import get
    >>> k = kernels_for(get("bls12_381").cuda)
    >>> k, k is kernels_for(get("bls12_381").cuda)
    (<cuzk CUDA kernels of bls12_381>, True)

    Raises:
        BackendUnavailableError: a curve not in :data:`CURVES`.
    """
    if curve.name not in CURVES:
        raise BackendUnavailableError(f"the CUDA kernels are not built for {curve.name} (only {', '.join(CURVES)})")
    with _BY_CURVE_LOCK:
        k = _BY_CURVE.get(curve.name)
        if k is None:
            k = _BY_CURVE[curve.name] = CudaKernels(curve, lambda device_id=None: get_runtime(device_id, curve))
        return k
