"""CUDA backend: the kernels of ``cuzk/kernels/cu/`` loaded through CuPy.

Same functions and signatures as :mod:`cuzk.kernels.cpu` (docs/kernel-contracts.md). The
sources are compiled with NVRTC for the device's architecture on first use and the cubin is
cached under ``~/.cache/cuzk/cuda`` keyed by a hash of the sources, options and NVRTC version.
CuPy is imported lazily: ``import cuzk`` never needs it.

Every launch goes through a *runtime* object (``xp``, ``context``, ``launch``, ``asarray``, ``asnumpy``,
``argsort``, ``cache``): :class:`CupyRuntime` here, and a ctypes runtime over a host build of the same
sources in the tests, so the launch plans below are exercised on the CPU as well.

    >>> from cuzk.kernels import cuda
    >>> ok, reason = cuda.is_available()
    >>> isinstance(ok, bool) and isinstance(reason, str)
    True
"""

from __future__ import annotations

import enum

import numpy as np

from cuzk.errors import FieldValueError, InputError
from cuzk.field.params import FQ, FR
from cuzk.kernels.checks import check_field_rows, check_points
from cuzk.kernels.cuda_runtime import (  # noqa: F401  (re-exported: part of this backend's API)
    CU_DIR,
    KERNEL_FILES,
    CupyRuntime,
    _oom_guard,
    get_runtime,
    is_available,
    source_hash,
)

__all__ = [
    "DevicePoints",
    "upload_points",
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
    "run_h_pointwise",
    "run_msm",
    "msm_window_bits",
    "xyzz_to_affine",
]

_BLOCK = 256  # threads per block of the element-wise kernels
_NTT_MAX_STAGES = 10  # stages per shared-memory pass: 2^10 elements x 32 B = 32 KiB
_POWERS_PER_THREAD = 16  # consecutive powers per thread: one pow_u32 then 15 multiplications
_MSM_TASK_LEN = 64  # a bucket with more points is split into several tasks (duplicates, skew)
_MSM_SEGMENT_LEN = 32  # buckets per running-sum segment: ~B/32 threads per window stay busy
_MSM_FOLD = 16  # segment partials summed per thread at each tree level
_MSM_BLOCK = 128  # G2 kernels use ~255 registers/thread: 256-thread blocks would hit the SM limit
_TWIDDLE_TABLES = 6  # cached (n, w) twiddle tables per runtime: forward + inverse for 3 sizes
_MAX_LOG_N = 28  # uint32 indices and twiddle exponents inside the kernels


class ArithOp(enum.IntEnum):
    """Element-wise field operations of ``arith.cu`` (``enum arith_op``)."""

    ADD = 0
    SUB = 1
    MUL = 2
    SQR = 3
    NEG = 4
    DBL = 5


class EcOp(enum.IntEnum):
    """Element-wise curve operations of ``arith.cu`` (``enum ec_op``); inputs affine, output XYZZ."""

    ADD_MIXED = 0
    SUB_MIXED = 1
    ADD = 2
    DBL = 3


def _grid(n: int, block: int = _BLOCK) -> int:
    return max(1, -(-n // block))


def _fr_mont32(x: int) -> np.ndarray:
    m = FR.to_mont_int(x % FR.modulus)
    return np.array([(m >> (32 * i)) & 0xFFFFFFFF for i in range(8)], dtype=np.uint32)


# ---------------------------------------------------------------- NTT plan
def _powers(rt, base: int, scale: int, n: int):
    out = rt.xp.empty((n, 8), dtype=np.uint32)
    threads = -(-n // _POWERS_PER_THREAD)
    b, s = rt.asarray(_fr_mont32(base)), rt.asarray(_fr_mont32(scale))
    rt.launch("fr_powers", _grid(threads), _BLOCK, (out, b, s, n, _POWERS_PER_THREAD))
    return out


def _scale_by_powers(rt, x, base: int, scale: int, n: int) -> None:
    threads = -(-n // _POWERS_PER_THREAD)
    b, s = rt.asarray(_fr_mont32(base)), rt.asarray(_fr_mont32(scale))
    rt.launch("fr_scale_by_powers", _grid(threads), _BLOCK, (x, b, s, n, _POWERS_PER_THREAD))


def _run_ntt_body(rt, x, log_n: int, omega: int, shift: int | None, inverse: bool):
    n = 1 << log_n
    r = FR.modulus
    w = pow(omega, -1, r) if inverse else omega
    key = ("twiddles", n, w)
    tw = rt.cache.get(key)
    if tw is None:
        if len(rt.cache) >= _TWIDDLE_TABLES:  # bounded: a 2^24 table is 256 MiB
            rt.cache.pop(next(iter(rt.cache)), None)
        tw = rt.cache[key] = _powers(rt, w, 1, max(1, n // 2))
    x = rt.xp.array(x, copy=True) if not inverse and shift not in (None, 1) else x
    if not inverse and shift not in (None, 1):
        _scale_by_powers(rt, x, shift, 1, n)
    out = rt.xp.empty_like(x)
    rt.launch("ntt_bitrev", _grid(n), _BLOCK, (x, out, log_n))
    max_stages = getattr(rt, "ntt_max_stages", _NTT_MAX_STAGES)
    s0 = 0
    while s0 < log_n:
        k = min(max_stages, log_n - s0)
        blocks = n >> k
        rt.launch("ntt_stages", blocks, 1 << (k - 1), (out, tw, log_n, s0, k), smem=(1 << k) * 32)
        s0 += k
    if inverse:
        sh_inv = pow(shift, -1, r) if shift not in (None, 1) else 1
        _scale_by_powers(rt, out, sh_inv, pow(n, -1, r), n)
    return out


def run_ntt(rt, x, log_n: int, omega: int, shift: int | None, inverse: bool):
    """Launch plan of :func:`ntt` on runtime ``rt``: ``x`` is an ``rt`` uint32 ``(n, 8)`` array.

    Forward: scale by shift^i, bit-reverse, DIT stages with w. Inverse: the same transform
    with w^-1, then scale by n^-1 * shift^-i. Returns a new ``rt`` array.
    """
    with rt.context():
        return _run_ntt_body(rt, x, log_n, omega, shift, inverse)


def _check_ntt_args(n: int, shift) -> int:
    log_n = n.bit_length() - 1
    if n < 1 or n != 1 << log_n:
        raise FieldValueError(f"NTT length must be a power of two >= 1, got {n}")
    if log_n > _MAX_LOG_N:
        raise FieldValueError(f"NTT length 2^{log_n} exceeds the 2^{_MAX_LOG_N} the CUDA kernels index")
    is_int = isinstance(shift, (int, np.integer)) and not isinstance(shift, bool)
    if shift is not None and not (is_int and 0 < shift < FR.modulus):
        raise FieldValueError(f"shift must be a non-zero canonical Fr int or None, got {shift!r}")
    return log_n


def _is_cupy(a) -> bool:
    return type(a).__module__.startswith("cupy")


@_oom_guard
def ntt(values, *, inverse=False, shift=None, root_generator=7, threads=None):
    """NTT of Fr values (natural order in and out) on the GPU.

    Args:
        values: ``(n, 4)`` uint64 Montgomery Fr, n a power of two (numpy). A CuPy uint32
            ``(n, 8)`` array is used in place on its device and the result stays there too.
        inverse: the exact inverse map. shift: coset shift, a canonical Fr int (None = 1).
        root_generator: w = ``FR.root_of_unity_for(log2 n, root_generator)``.
        threads: accepted for interface parity with the CPU backend; unused.

    Returns:
        A new ``(n, 4)`` uint64 array: evaluations at shift*w^i (forward) or coefficients.

    Raises:
        FieldValueError: bad dtype/shape/length, unreduced limbs, bad shift.
        BackendUnavailableError: no usable GPU. DeviceOutOfMemoryError: GPU memory exhausted.

    >>> y = ntt(x, shift=7); bool((ntt(y, inverse=True, shift=7) == x).all())  # doctest: +SKIP
    True
    """
    if _is_cupy(values):
        log_n = _check_ntt_args(values.shape[0], shift)
        w = FR.root_of_unity_for(log_n, root_generator)
        return run_ntt(get_runtime(values.device.id), values, log_n, w, shift, inverse)
    v = check_field_rows(values, "values", (4,), FR.modulus)
    log_n = _check_ntt_args(v.shape[0], shift)
    w = FR.root_of_unity_for(log_n, root_generator)
    rt = get_runtime()
    out = run_ntt(rt, rt.asarray(v.view(np.uint32)), log_n, w, shift, inverse)
    return rt.asnumpy(out).view(np.uint64)


def _run_h_pointwise_body(rt, a, b, c, z_inv: int):
    n = a.shape[0]
    out = rt.xp.empty_like(a)
    rt.launch("ntt_h_pointwise", _grid(n), _BLOCK, (a, b, c, rt.asarray(_fr_mont32(z_inv)), out, n))
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
    arrs = [check_field_rows(x, name, (4,), FR.modulus) for x, name in ((a, "a"), (b, "b"), (c, "c"))]
    if not arrs[0].shape[0] == arrs[1].shape[0] == arrs[2].shape[0]:
        raise FieldValueError(f"a, b, c must have the same length, got {[x.shape[0] for x in arrs]}")
    if isinstance(z_inv, bool) or not isinstance(z_inv, (int, np.integer)):
        raise FieldValueError(f"z_inv must be a canonical Fr int, got {type(z_inv).__name__}")
    FR.check_canonical(int(z_inv))
    rt = get_runtime()
    if arrs[0].shape[0] == 0:
        return np.empty((0, 4), dtype=np.uint64)
    dev = [rt.asarray(x.view(np.uint32)) for x in arrs]
    return rt.asnumpy(run_h_pointwise(rt, *dev, int(z_inv))).view(np.uint64)


# ---------------------------------------------------------------- MSM plan
def msm_window_bits(n: int) -> int:
    """Pippenger window width c for n points (about log2 n - 3, between 4 and 16)."""
    return max(4, min(16, n.bit_length() - 4))


def _run_msm_body(rt, group: str, points, scalars, n: int, c: int | None) -> np.ndarray:
    fw = 12 if group == "g1" else 24  # 32-bit words per coordinate
    pw = 4 * fw  # XYZZ point
    xp = rt.xp
    c = c or msm_window_bits(n)
    nw = 255 // c + 1  # room for the signed-digit carry out of bit 254
    B = 1 << (c - 1)
    nb = nw * B
    keys = xp.empty(nw * n, dtype=np.uint32)
    vals = xp.empty(nw * n, dtype=np.uint32)
    if n:
        rt.launch("msm_digits", _grid(n), _BLOCK, (scalars, n, c, nw, keys, vals))
    order = rt.argsort(keys)
    skeys, svals = keys[order], xp.ascontiguousarray(vals[order])
    counts = xp.bincount(skeys.astype(np.int64), minlength=nb + 1)[:nb]
    starts = xp.cumsum(counts) - counts
    chunks = -(-counts // _MSM_TASK_LEN)
    task_off = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(chunks)])
    ntasks = int(task_off[-1])
    partial = xp.empty((max(ntasks, 1), pw), dtype=np.uint32)
    if ntasks:
        # task -> bucket by binary search (cupy.repeat cannot take device repeat counts)
        task_bucket = xp.searchsorted(task_off, xp.arange(ntasks, dtype=np.int64), side="right") - 1
        within = (xp.arange(ntasks, dtype=np.int64) - task_off[task_bucket]) * _MSM_TASK_LEN
        t_start = (starts[task_bucket] + within).astype(np.uint32)
        t_len = xp.minimum(counts[task_bucket] - within, _MSM_TASK_LEN).astype(np.uint32)
        args = (points, svals, t_start, t_len, partial, ntasks)
        rt.launch(f"{group}_msm_bucket_acc", _grid(ntasks, _MSM_BLOCK), _MSM_BLOCK, args)
    buckets = xp.empty((nb, pw), dtype=np.uint32)
    args = (partial, task_off.astype(np.uint32), buckets, nb)
    rt.launch(f"{group}_msm_bucket_merge", _grid(nb, _MSM_BLOCK), _MSM_BLOCK, args)
    nseg = max(1, B // _MSM_SEGMENT_LEN)
    seg = xp.empty((nw * nseg, pw), dtype=np.uint32)
    args = (buckets, B, nw, nseg, seg)
    rt.launch(f"{group}_msm_window_segments", _grid(nw * nseg, _MSM_BLOCK), _MSM_BLOCK, args)
    while nseg > 1:  # fold segments into window sums, a tree level at a time (nseg is 2^k)
        g = min(_MSM_FOLD, nseg)
        m = seg.shape[0] // g
        folded = xp.empty((m, pw), dtype=np.uint32)
        off = xp.arange(0, m * g + 1, g, dtype=np.uint32)
        rt.launch(f"{group}_msm_bucket_merge", _grid(m, _MSM_BLOCK), _MSM_BLOCK, (seg, off, folded, m))
        seg, nseg = folded, nseg // g
    win = seg
    out = xp.empty((1, pw), dtype=np.uint32)
    rt.launch(f"{group}_msm_combine", 1, 1, (win, nw, c, out))
    return rt.asnumpy(out)[0]


def run_msm(rt, group: str, points, scalars, n: int, c: int | None = None) -> np.ndarray:
    """Launch plan of the MSM on ``rt`` (``points``/``scalars`` uint32 ``rt`` arrays); returns the
    XYZZ result as host uint32 words. ``c`` overrides the window width (tests)."""
    with rt.context():
        return _run_msm_body(rt, group, points, scalars, n, c)


def _words_to_int(w: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(w, dtype=np.uint32).tobytes(), "little")


def _int_to_u64(x: int, limbs: int) -> np.ndarray:
    return np.frombuffer(x.to_bytes(8 * limbs, "little"), dtype=np.uint64).copy()


def xyzz_to_affine(words: np.ndarray, group: str) -> np.ndarray:
    """XYZZ point as uint32 words (Montgomery) → affine uint64 ``(2, 6)`` / ``(2, 2, 6)``, zeros = infinity.

    One inversion in Python ints per MSM: x = X/ZZ, y = Y/ZZZ, all in Montgomery form.
    """
    p, R = FQ.modulus, FQ.r
    fw = 12 if group == "g1" else 24
    coords = [words[i * fw : (i + 1) * fw] for i in range(4)]
    if group == "g1":
        X, Y, ZZ, ZZZ = (_words_to_int(cw) * pow(R, -1, p) % p for cw in coords)
        if ZZ == 0:
            return np.zeros((2, 6), dtype=np.uint64)
        x, y = X * pow(ZZ, -1, p) % p, Y * pow(ZZZ, -1, p) % p
        return np.stack([_int_to_u64(FQ.to_mont_int(v), 6) for v in (x, y)])
    rinv = pow(R, -1, p)
    X, Y, ZZ, ZZZ = ((_words_to_int(cw[:12]) * rinv % p, _words_to_int(cw[12:]) * rinv % p) for cw in coords)
    if ZZ == (0, 0):
        return np.zeros((2, 2, 6), dtype=np.uint64)

    def div(a, b):  # a / b in Fq2 with u^2 = -1: 1/b = conj(b) / (b0^2 + b1^2)
        d = pow(b[0] * b[0] + b[1] * b[1], -1, p)
        i0, i1 = b[0] * d % p, -b[1] * d % p
        return ((a[0] * i0 - a[1] * i1) % p, (a[0] * i1 + a[1] * i0) % p)

    x, y = div(X, ZZ), div(Y, ZZZ)
    return np.stack([np.stack([_int_to_u64(FQ.to_mont_int(v), 6) for v in pt]) for pt in (x, y)])


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
    pts = check_points(points, "points", (2, 2, 6) if group == "g2" else (2, 6), FQ.modulus)
    rt = get_runtime(device_id)
    return DevicePoints(rt.asarray(np.ascontiguousarray(pts).view(np.uint32)), len(pts), group, device_id)


def _check_msm(points, scalars, tail: tuple):
    sc = check_field_rows(scalars, "scalars", (4,), FR.modulus)
    if isinstance(points, DevicePoints):
        want = "g2" if len(tail) == 3 else "g1"
        if points.group != want:
            raise InputError(f"these device points are {points.group}, the MSM is over {want}")
        n = points.n
    else:
        points = check_points(points, "points", tail, FQ.modulus)
        n = len(points)
    if n != len(sc):
        raise InputError(f"{n} points but {len(sc)} scalars")
    if n >= 1 << 31:
        raise InputError(f"MSM of {n} points exceeds the 2^31 - 1 the kernels index")
    return points, sc


def _msm(group: str, points, scalars, tail: tuple) -> np.ndarray:
    pts, sc = _check_msm(points, scalars, tail)
    if isinstance(pts, DevicePoints):
        rt, words = get_runtime(pts.device_id), pts.words
    else:
        rt = get_runtime()
        words = rt.asarray(pts.view(np.uint32))
    out = run_msm(rt, group, words, rt.asarray(np.ascontiguousarray(sc).view(np.uint32)), len(sc))
    return xyzz_to_affine(out, group)


@_oom_guard
def msm_g1(points, scalars, threads=None):
    """Σ scalars[i]·points[i] over G1 on the GPU.

    Args:
        points: ``(n, 2, 6)`` uint64 affine Montgomery (all-zero rows = infinity), or
            :class:`DevicePoints` from :func:`upload_points` (already on the device).
        scalars: ``(n, 4)`` uint64 canonical (not Montgomery) Fr integers.
        threads: accepted for parity with the CPU backend; unused.

    Returns:
        ``(2, 6)`` uint64 affine Montgomery; zeros for infinity.

    Raises:
        FieldValueError: bad shapes/dtypes, mismatched lengths, unreduced limbs.
        BackendUnavailableError, DeviceOutOfMemoryError.

    >>> msm_g1(points, scalars)  # doctest: +SKIP
    """
    return _msm("g1", points, scalars, (2, 6))


@_oom_guard
def msm_g2(points, scalars, threads=None):
    """Σ scalars[i]·points[i] over G2 on the GPU: points ``(n, 2, 2, 6)``, result ``(2, 2, 6)``.

    Same conventions and errors as :func:`msm_g1`.

    >>> msm_g2(points, scalars)  # doctest: +SKIP
    """
    return _msm("g2", points, scalars, (2, 2, 6))


# ---------------------------------------------------------------- element-wise checks
def field_op(rt, field: str, op: ArithOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """op(a, b) element-wise with ``arith.cu`` on ``rt``; ``field`` in fr/fq/fq2, uint64 in and out."""
    n = a.shape[0]
    da, db = rt.asarray(np.ascontiguousarray(a).view(np.uint32)), rt.asarray(np.ascontiguousarray(b).view(np.uint32))
    out = rt.xp.empty_like(da)
    rt.launch(f"{field}_batch_op", _grid(n), _BLOCK, (int(op), da, db, out, n))
    return rt.asnumpy(out).view(np.uint64).reshape(a.shape)


def ec_op(rt, group: str, op: EcOp, p: np.ndarray, q: np.ndarray) -> list[np.ndarray]:
    """op(p, q) element-wise on affine points (uint64, DESIGN §3 layout) → list of affine results."""
    n = p.shape[0]
    fw = 12 if group == "g1" else 24
    dp, dq = rt.asarray(np.ascontiguousarray(p).view(np.uint32)), rt.asarray(np.ascontiguousarray(q).view(np.uint32))
    out = rt.xp.empty((n, 4 * fw), dtype=np.uint32)
    rt.launch(f"{group}_batch_op", _grid(n, _MSM_BLOCK), _MSM_BLOCK, (int(op), dp, dq, out, n))
    return [xyzz_to_affine(w, group) for w in rt.asnumpy(out)]
