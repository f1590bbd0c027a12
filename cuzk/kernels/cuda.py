"""CUDA backend: the kernels of ``cuzk/kernels/cu/`` loaded through CuPy.

Same functions and signatures as :mod:`cuzk.kernels.cpu` (docs/kernel-contracts.md). The
sources are compiled with NVRTC for the device's architecture on first use and the cubin is
cached under ``~/.cache/cuzk/cuda`` keyed by a hash of the sources, options and NVRTC version.
CuPy is imported lazily: ``import cuzk`` never needs it.

Every launch goes through a *runtime* object (``xp``, ``context``, ``launch``, ``asarray``,
``asnumpy``, ``stage``, ``wait``, ``adopt``, ``handoff``, ``synchronize``, ``timer``, ``cache``):
:class:`CupyRuntime` here, and a ctypes runtime over a host build of the same sources in the
tests, so the launch plans below are exercised on the CPU as well. A runtime is built for one
curve (``rt.curve``); the functions here are BLS12-381's, :func:`kernels_for` gives another
curve's (:class:`~cuzk.kernels.cuda_kernels.CudaKernels`).

    >>> from cuzk.kernels import cuda
    >>> ok, reason = cuda.is_available()
    >>> isinstance(ok, bool) and isinstance(reason, str)
    True
"""

from __future__ import annotations

import sys
import threading

from cuzk.errors import BackendUnavailableError
from cuzk.field.prime_field import Fr as FR_ARRAY
from cuzk.kernels.cuda_curve import BLS12_381, CudaCurve
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
    "upload_points",
    "DeviceArray",
    "stage",
    "to_canonical",
    "device_timer",
    "ArithOp",
    "EcOp",
    "CupyRuntime",
    "CU_DIR",
    "KERNEL_FILES",
    "is_available",
    "get_runtime",
    "source_hash",
    "ntt",
    "h_pointwise",
    "msm_g1",
    "msm_g2",
    "msm_bits_g1",
    "msm_bits_g2",
    "field_op",
    "ec_op",
    "run_ntt",
    "ntt_plan",
    "run_h_pointwise",
    "run_msm",
    "msm_window_bits",
    "xyzz_to_affine",
    "warm_up",
    "MSM_MAX_POINTS",
    "CURVES",
    "CudaKernels",
    "kernels_for",
]

#: the curves whose parameter header the CUDA sources are compiled with (cu/params_<curve>.h) and
#: that ``GpuProver(device="cuda")`` accepts
CURVES = ("bls12_381", "bn254")

# This module's functions are BLS12-381's kernels. They look ``get_runtime`` up here at each call
# with the device id alone (tests and benchmarks/gpu_check.py replace it with a host runtime).
AUTO_BIT_MSM = CudaKernels.AUTO_BIT_MSM  # bit_msm='auto' stays general on the GPU (CudaKernels says why)
_KERNELS = CudaKernels(BLS12_381, lambda device_id=None: get_runtime(device_id), FR_ARRAY.from_mont)
_BY_CURVE: dict[str, CudaKernels] = {}
_BY_CURVE_LOCK = threading.Lock()


def kernels_for(curve: CudaCurve):
    """This backend's functions for ``curve`` (``cuzk.curves.get(name).cuda``): this module for
    BLS12-381, a :class:`~cuzk.kernels.cuda_kernels.CudaKernels` on runtimes built for the curve
    otherwise (one per curve).

    >>> kernels_for(BLS12_381) is sys.modules[__name__]
    True

    Raises:
        BackendUnavailableError: a curve not in :data:`CURVES`.
    """
    if curve.name not in CURVES:
        raise BackendUnavailableError(f"the CUDA kernels are not built for {curve.name} (only {', '.join(CURVES)})")
    if curve.name == BLS12_381.name:
        return sys.modules[__name__]
    with _BY_CURVE_LOCK:
        k = _BY_CURVE.get(curve.name)
        if k is None:
            k = _BY_CURVE[curve.name] = CudaKernels(curve, lambda device_id=None: get_runtime(device_id, curve))
        return k


def ntt(values, *, inverse=False, shift=None, root_generator=7, threads=None):
    """NTT of Fr values (natural order in and out) on the GPU.

    Args:
        values: ``(n, 4)`` uint64 Montgomery Fr, n a power of two (numpy); or a
            :class:`DeviceArray` / CuPy uint32 ``(n, 8)`` array already on a device, in which
            case the result is a :class:`DeviceArray` there (no host round trip).
        inverse: the exact inverse map. shift: coset shift, a canonical Fr int (None = 1).
        root_generator: w = ``fr.root_of_unity_for(log2 n, root_generator)`` in the curve's Fr.
        threads: accepted for interface parity with the CPU backend; unused.

    Returns:
        A new ``(n, 4)`` uint64 array: evaluations at shift*w^i (forward) or coefficients.

    Raises:
        FieldValueError: bad dtype/shape/length, unreduced limbs, bad shift.
        BackendUnavailableError: no usable GPU. DeviceOutOfMemoryError: GPU memory exhausted.

    >>> y = ntt(x, shift=7); bool((ntt(y, inverse=True, shift=7) == x).all())  # doctest: +SKIP
    True
    """
    return _KERNELS.ntt(values, inverse=inverse, shift=shift, root_generator=root_generator, threads=threads)


def h_pointwise(a, b, c, z_inv):
    """(a·b − c)·z_inv elementwise over Montgomery Fr ``(n, 4)`` arrays; ``z_inv`` a canonical int.

    Raises:
        FieldValueError: bad arrays, different lengths, or z_inv not in [0, r).
        BackendUnavailableError, DeviceOutOfMemoryError.

    >>> h_pointwise(two, two, one, 3)  # (2*2 - 1)*3 = 9 in Montgomery form  # doctest: +SKIP
    """
    return _KERNELS.h_pointwise(a, b, c, z_inv)


def upload_points(points, device_id: int = 0) -> DevicePoints:
    """Validate affine G1 ``(n, 2, 6)`` or G2 ``(n, 2, 2, 6)`` points once and copy them to the device."""
    return _KERNELS.upload_points(points, device_id)


def stage(*arrays, device_id: int | None = None) -> list:
    """Start copying Fr arrays to the GPU and return at once; the kernels wait for each copy.

    Each array is an ``(n, 4)`` uint64 Fr array (Montgomery values for :func:`ntt`, canonical
    integers for the MSMs), checked here on the host. The copies go through pinned buffers on
    the calling thread's copy stream, so the first NTT can start while later arrays are in
    flight. The CPU backend's ``stage`` returns its arguments unchanged.

    Returns:
        a list of :class:`~cuzk.kernels.cuda_runtime.DeviceArray`, accepted by ``ntt``,
        ``h_pointwise``, ``msm_g1``, ``msm_g2`` and :func:`to_canonical`.

    >>> a, b, c = stage(a, b, c)  # doctest: +SKIP
    """
    return _KERNELS.stage(*arrays, device_id=device_id)


def device_timer(device_id: int | None = None):
    """GPU time of the kernels the calling thread launches inside the block: CUDA events on its
    compute stream; ``.ms`` after the block (the prover's sub-spans carry it as ``device_ms``).

    >>> with device_timer() as t: h = ntt(x)  # doctest: +SKIP
    >>> t.ms  # doctest: +SKIP
    """
    return _KERNELS.device_timer(device_id)


def to_canonical(values):
    """Montgomery Fr values → canonical integers (the MSMs' scalars), where the values live.

    A device array is converted on the GPU into a new :class:`DeviceArray`, and the call
    returns once it is ready (so a prover's ``H`` span ends when
    the GPU is done); a host ``(n, 4)`` array is converted on the host.

    >>> to_canonical(h_on_device)  # doctest: +SKIP
    """
    return _KERNELS.to_canonical(values)


def msm_g1(points, scalars, threads=None):
    """Σ scalars[i]·points[i] over G1 on the GPU.

    Args:
        points: ``(n, 2, 6)`` uint64 affine Montgomery (all-zero rows = infinity), or
            :class:`DevicePoints` from :func:`upload_points` (already on the device);
            n <= ``MSM_MAX_POINTS`` = 2^28 - 1 (the kernels index the nw*n (bucket, point)
            pairs in 32 bits: 16 windows at c = 16).
        scalars: ``(n, 4)`` uint64 canonical (not Montgomery) Fr integers.
        threads: accepted for parity with the CPU backend; unused.

    Returns:
        ``(2, 6)`` uint64 affine Montgomery; zeros for infinity.

    Raises:
        FieldValueError: bad shapes/dtypes, mismatched lengths, unreduced limbs.
        InputError: more than ``MSM_MAX_POINTS`` points, or points and scalars of different lengths.
        BackendUnavailableError, DeviceOutOfMemoryError.

    >>> msm_g1(points, scalars)  # doctest: +SKIP
    """
    return _KERNELS.msm_g1(points, scalars, threads)


def msm_g2(points, scalars, threads=None):
    """Σ scalars[i]·points[i] over G2 on the GPU: points ``(n, 2, 2, 6)``, result ``(2, 2, 6)``.

    Same conventions and errors as :func:`msm_g1`.

    >>> msm_g2(points, scalars)  # doctest: +SKIP
    """
    return _KERNELS.msm_g2(points, scalars, threads)


def msm_bits_g1(points, scalars, threads=None, *, split=None):
    """Σ scalars[i]·points[i] over G1 with the scalars 0 skipped and the points of the scalars 1
    summed directly on the GPU (``msm_bits.cu``, plan :mod:`cuzk.kernels.cuda_bits`); only the
    other rows run the Pippenger MSM, over their points gathered on the device.

    Args:
        points, threads: as :func:`msm_g1` (``threads`` also for the host scan).
        scalars: ``(n, 4)`` uint64 canonical Fr integers on the host (the split is made there).
        split: ``split_bits(scalars)`` made earlier (checked against the scalars); None: made here.

    Returns:
        the same ``(2, 6)`` limbs as :func:`msm_g1`.

    Raises:
        InputError: device scalars, a split of other scalars, and what :func:`msm_g1` raises.

    >>> msm_bits_g1(points, scalars)  # doctest: +SKIP
    """
    return _KERNELS.msm_bits_g1(points, scalars, threads, split=split)


def msm_bits_g2(points, scalars, threads=None, *, split=None):
    """As :func:`msm_bits_g1` over G2 (:func:`msm_g2`'s shapes).

    >>> msm_bits_g2(points, scalars)  # doctest: +SKIP
    """
    return _KERNELS.msm_bits_g2(points, scalars, threads, split=split)


def warm_up(device_id: int = 0) -> None:
    """Make the first proof on ``device_id`` as fast as the next: load the module (NVRTC compile
    or cached cubin) and every kernel in it, and run a tiny NTT and G1/G2 MSM so the host side
    (the Numba window-sum combine, CuPy's allocator) is ready too. ``GpuProver`` calls it.

    >>> warm_up(0)  # doctest: +SKIP
    """
    return _KERNELS.warm_up(device_id)
