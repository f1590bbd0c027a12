"""CUDA backend: the kernels of ``cuzk/kernels/cu/`` loaded through CuPy.

Same functions and signatures as :mod:`cuzk.kernels.cpu` (docs/kernel-contracts.md). The
sources are compiled with NVRTC for the device's architecture on first use and the cubin is
cached under ``~/.cache/cuzk/cuda`` keyed by a hash of the sources, options and NVRTC version.
CuPy is imported lazily: ``import cuzk`` never needs it.

Every launch goes through a *runtime* object (``xp``, ``context``, ``launch``, ``asarray``,
``asnumpy``, ``stage``, ``wait``, ``adopt``, ``handoff``, ``synchronize``, ``timer``, ``cache``):
:class:`CupyRuntime` here, and a ctypes runtime over a host build of the same sources in the
tests, so the launch plans below are exercised on the CPU as well.

    >>> from cuzk.kernels import cuda
    >>> ok, reason = cuda.is_available()
    >>> isinstance(ok, bool) and isinstance(reason, str)
    True
"""

from __future__ import annotations


import numpy as np

from cuzk.errors import FieldValueError, InputError
from cuzk.field.prime_field import Fr as FR_ARRAY
from cuzk.kernels.checks import check_field_rows, check_points
from cuzk.kernels.cuda_curve import BLS12_381, CudaCurve
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
]

_BLOCK = BLOCK["BLOCK_ELEMENTWISE"]  # cu/launch.cuh: the kernels' __launch_bounds__

#: the curves whose parameter header the CUDA sources are compiled with (cu/params_bls12_381.h)
CURVES = ("bls12_381",)
#: the curve of the runtimes ``get_runtime`` makes: host arrays given to the functions below are
#: checked against it before any device is touched; device arrays against their runtime's curve
_DEFAULT: CudaCurve = BLS12_381


def _check_ntt_args(n: int, shift, fr) -> int:
    log_n = n.bit_length() - 1
    if n < 1 or n != 1 << log_n:
        raise FieldValueError(f"NTT length must be a power of two >= 1, got {n}")
    if log_n > MAX_LOG_N:
        raise FieldValueError(f"NTT length 2^{log_n} exceeds the 2^{MAX_LOG_N} the CUDA kernels index")
    is_int = isinstance(shift, (int, np.integer)) and not isinstance(shift, bool)
    if shift is not None and not (is_int and 0 < shift < fr.modulus):
        raise FieldValueError(f"shift must be a non-zero canonical Fr int or None, got {shift!r}")
    return log_n


def _is_cupy(a) -> bool:
    return type(a).__module__.startswith("cupy")


def _on_device(a) -> bool:
    return isinstance(a, DeviceArray) or _is_cupy(a)


def _device_rows(a, what: str):
    """(runtime, C-contiguous uint32 (n, W) raw array, W the Fr words of the runtime's curve) for a :class:`DeviceArray` or CuPy Fr
    array; orders the calling thread's stream after a pending copy, or for a CuPy array after
    the caller's current stream (copied first if strided: the kernels only get its pointer)."""
    if isinstance(a, DeviceArray):
        rt, a = a.rt, a.rt.wait(a)
    else:
        rt = get_runtime(a.device.id)
        a = rt.adopt(a)
    words = rt.curve.fr_words
    if a.ndim != 2 or a.shape[1] != words or a.dtype != np.uint32:
        raise FieldValueError(f"{what} on the device must be a uint32 (n, {words}) array, got {a.shape} {a.dtype}")
    if not a.flags.c_contiguous:  # a DeviceArray made around a strided view: would be misread
        raise FieldValueError(f"{what} on the device must be C-contiguous, got strides {a.strides}")
    return rt, a


@_oom_guard
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
    if _on_device(values):
        rt, x = _device_rows(values, "values")
        log_n = _check_ntt_args(x.shape[0], shift, rt.curve.fr)
        w = rt.curve.fr.root_of_unity_for(log_n, root_generator)
        out = run_ntt(rt, x, log_n, w, shift, inverse)
        return DeviceArray(out, rt, rt.handoff())  # ordered for the caller's stream, other threads
    fr = _DEFAULT.fr
    v = check_field_rows(values, "values", _DEFAULT.fr_tail, fr.modulus)
    log_n = _check_ntt_args(v.shape[0], shift, fr)
    w = fr.root_of_unity_for(log_n, root_generator)
    rt = get_runtime()
    out = run_ntt(rt, rt.asarray(v.view(np.uint32)), log_n, w, shift, inverse)
    return rt.asnumpy(out).view(np.uint64)


def _run_h_pointwise_body(rt, a, b, c, z_inv: int):
    n = a.shape[0]
    out = rt.xp.empty_like(a)
    rt.launch("ntt_h_pointwise", grid_size(n, _BLOCK), _BLOCK, (a, b, c, fr_const(rt, z_inv), out, n))
    return out


def run_h_pointwise(rt, a, b, c, z_inv: int):
    """Launch plan of :func:`h_pointwise` on ``rt`` arrays (uint32 ``(n, 8)``)."""
    with rt.context():
        return _run_h_pointwise_body(rt, a, b, c, z_inv)


@_oom_guard
def h_pointwise(a, b, c, z_inv):
    """(a·b − c)·z_inv elementwise over Montgomery Fr ``(n, 4)`` arrays; ``z_inv`` a canonical int.

    Raises:
        FieldValueError: bad arrays, different lengths, or z_inv not in [0, r).
        BackendUnavailableError, DeviceOutOfMemoryError.

    >>> h_pointwise(two, two, one, 3)  # (2*2 - 1)*3 = 9 in Montgomery form  # doctest: +SKIP
    """
    if isinstance(z_inv, bool) or not isinstance(z_inv, (int, np.integer)):
        raise FieldValueError(f"z_inv must be a canonical Fr int, got {type(z_inv).__name__}")
    named = ((a, "a"), (b, "b"), (c, "c"))
    on_device = [_on_device(x) for x, _ in named]
    if any(on_device) and not all(on_device):
        raise FieldValueError("a, b, c must all be on the device or all on the host")
    if all(on_device):
        rows = [_device_rows(x, name) for x, name in named]
        rt, arrs = rows[0][0], [arr for _, arr in rows]
        rt.curve.fr.check_canonical(int(z_inv))
    else:
        _DEFAULT.fr.check_canonical(int(z_inv))
        arrs = [check_field_rows(x, name, _DEFAULT.fr_tail, _DEFAULT.fr.modulus) for x, name in named]
    if not arrs[0].shape[0] == arrs[1].shape[0] == arrs[2].shape[0]:
        raise FieldValueError(f"a, b, c must have the same length, got {[x.shape[0] for x in arrs]}")
    if all(on_device):
        out = run_h_pointwise(rt, *arrs, int(z_inv))
        return DeviceArray(out, rt, rt.handoff())
    rt = get_runtime()
    if arrs[0].shape[0] == 0:
        return np.empty((0, *_DEFAULT.fr_tail), dtype=np.uint64)
    dev = [rt.asarray(x.view(np.uint32)) for x in arrs]
    return rt.asnumpy(run_h_pointwise(rt, *dev, int(z_inv))).view(np.uint64)


class DevicePoints:
    """Affine points uploaded once and kept on the device (a proving key's queries).

    Made by :func:`upload_points`; accepted wherever ``msm_g1``/``msm_g2`` take points, so a
    prover pays the host-to-device copy of its key once, not per proof.
    """

    __slots__ = ("words", "n", "group", "device_id")

    def __init__(self, words, n: int, group: str, device_id: int):
        self.words, self.n, self.group, self.device_id = words, n, group, device_id

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"DevicePoints({self.group}, n={self.n}, device={self.device_id})"


@_oom_guard
def upload_points(points, device_id: int = 0) -> DevicePoints:
    """Validate affine G1 ``(n, 2, 6)`` or G2 ``(n, 2, 2, 6)`` points once and copy them to the device."""
    arr = np.asarray(points)
    group = "g2" if arr.ndim == 4 else "g1"
    pts = check_points(points, "points", _DEFAULT.point_tail(group), _DEFAULT.fq.modulus)
    rt = get_runtime(device_id)
    words = rt.asarray(np.ascontiguousarray(pts).view(np.uint32))
    rt.synchronize()  # the MSMs may run on other threads' streams
    return DevicePoints(words, len(pts), group, device_id)


def _check_msm(points, scalars, group: str):
    if _on_device(scalars):
        sc = scalars
        m = scalars.shape[0]
    else:
        sc = check_field_rows(scalars, "scalars", _DEFAULT.fr_tail, _DEFAULT.fr.modulus)
        m = len(sc)
    if isinstance(points, DevicePoints):
        if points.group != group:
            raise InputError(f"these device points are {points.group}, the MSM is over {group}")
        n = points.n
    else:
        points = check_points(points, "points", _DEFAULT.point_tail(group), _DEFAULT.fq.modulus)
        n = len(points)
    if n != m:
        raise InputError(f"{n} points but {m} scalars")
    check_msm_size(n)  # nw*n (bucket, point) pairs must fit the kernels' uint32 positions
    return points, sc


def _check_canonical_on_device(rt, x, what: str) -> None:
    """Every row of the uint32 (n, 8) device array ``x`` is < r (``fr_count_noncanonical``, a
    kernel of the module: no CuPy kernel to compile on first use)."""
    with rt.context():
        bad = rt.xp.zeros(1, dtype=np.uint32)
        n = x.shape[0]
        if n:
            rt.launch("fr_count_noncanonical", grid_size(n, _BLOCK), _BLOCK, (x, n, bad))
        count = int(rt.asnumpy(bad)[0])
    if count:
        raise FieldValueError(f"{what}: {count} device rows are not canonical Fr integers (>= r)")


def _msm(group: str, points, scalars) -> np.ndarray:
    pts, sc = _check_msm(points, scalars, group)
    rt = dsc = None
    if _on_device(sc):
        rt, dsc = _device_rows(sc, "scalars")
        if not isinstance(sc, DeviceArray):  # cuzk's own device arrays were checked (stage) or computed
            _check_canonical_on_device(rt, dsc, "scalars")
    if isinstance(pts, DevicePoints):
        prt = get_runtime(pts.device_id)
        if rt is not None and prt is not rt:
            raise InputError(f"the scalars are on another device than the points (device {pts.device_id})")
        rt, words = prt, pts.words
    else:
        rt = rt or get_runtime()
        words = rt.asarray(pts.view(np.uint32))
    if dsc is None:
        dsc = rt.asarray(np.ascontiguousarray(sc).view(np.uint32))
    return run_msm(rt, group, words, dsc, len(dsc))


@_oom_guard
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
    rt = get_runtime(device_id)
    rows = [check_field_rows(a, f"arrays[{i}]", rt.curve.fr_tail, rt.curve.fr.modulus) for i, a in enumerate(arrays)]
    return [rt.stage(np.ascontiguousarray(v).view(np.uint32)) for v in rows]


def device_timer(device_id: int | None = None):
    """GPU time of the kernels the calling thread launches inside the block: CUDA events on its
    compute stream; ``.ms`` after the block (the prover's sub-spans carry it as ``device_ms``).

    >>> with device_timer() as t: h = ntt(x)  # doctest: +SKIP
    >>> t.ms  # doctest: +SKIP
    """
    return get_runtime(device_id).timer()


@_oom_guard
def to_canonical(values):
    """Montgomery Fr values → canonical integers (the MSMs' scalars), where the values live.

    A device array is converted on the GPU into a new :class:`DeviceArray`, and the call
    returns once it is ready (so a prover's ``H`` span ends when
    the GPU is done); a host ``(n, 4)`` array is converted on the host.

    >>> to_canonical(h_on_device)  # doctest: +SKIP
    """
    if not _on_device(values):
        return FR_ARRAY.from_mont(check_field_rows(values, "values", _DEFAULT.fr_tail, _DEFAULT.fr.modulus))
    rt, x = _device_rows(values, "values")
    fr = rt.curve.fr
    with rt.context():
        # x * (the element whose Montgomery form is 1) = x * R^-1: Montgomery -> canonical
        n = x.shape[0]
        out = scaled_by_powers(rt, x, 1, pow(fr.r, -1, fr.modulus), n) if n else rt.xp.empty_like(x)
    rt.synchronize()
    return DeviceArray(out, rt)


@_oom_guard
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
    return _msm("g1", points, scalars)


@_oom_guard
def msm_g2(points, scalars, threads=None):
    """Σ scalars[i]·points[i] over G2 on the GPU: points ``(n, 2, 2, 6)``, result ``(2, 2, 6)``.

    Same conventions and errors as :func:`msm_g1`.

    >>> msm_g2(points, scalars)  # doctest: +SKIP
    """
    return _msm("g2", points, scalars)


def warm_up(device_id: int = 0) -> None:
    """Make the first proof on ``device_id`` as fast as the next: load the module (NVRTC compile
    or cached cubin) and every kernel in it, and run a tiny NTT and G1/G2 MSM so the host side
    (the Numba window-sum combine, CuPy's allocator) is ready too. ``GpuProver`` calls it.

    >>> warm_up(0)  # doctest: +SKIP
    """
    rt = get_runtime(device_id)
    rt.preload()
    curve, fw = rt.curve, rt.curve.fr_words
    x = rt.asarray(np.zeros((4, fw), np.uint32))
    run_ntt(rt, x, 2, curve.fr.root_of_unity_for(2), 7, True)
    sc = rt.asarray(np.arange(4 * fw, dtype=np.uint32).reshape(4, fw) % 7)
    for group in ("g1", "g2"):  # points at infinity (all-zero rows)
        run_msm(rt, group, rt.asarray(np.zeros((4, 4 * curve.coord_words(group)), np.uint32)), sc, 4)
    rt.synchronize()
