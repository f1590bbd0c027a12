"""The CUDA backend's public functions for one curve: :class:`CudaKernels`.

Each method checks its inputs on the host against the curve (before any device is touched),
moves them to a runtime built for that curve and calls the launch plans
(:mod:`cuzk.kernels.cuda_ntt`, :mod:`cuzk.kernels.cuda_msm`).
``cuda.kernels_for(cuzk.curves.get(name).cuda)`` gives a curve's, the way
``cuzk.curves.get(name).kernels`` gives its CPU kernels (docs/kernel-contracts.md).

    >>> from cuzk.curves import get
    >>> CudaKernels(get("bls12_381").cuda, lambda device_id=None: None)
    <cuzk CUDA kernels of bls12_381>
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from cuzk.errors import FieldValueError, InputError
from cuzk.kernels.bit_split import split_bits
from cuzk.kernels.checks import check_field_rows, check_points
from cuzk.kernels.cpu_threads import resolve_threads
from cuzk.kernels.cuda_bits import gather_rows, run_msm_bits
from cuzk.kernels.cuda_curve import CudaCurve
from cuzk.kernels.cuda_msm import check_msm_size, run_msm
from cuzk.kernels.cuda_ntt import MAX_LOG_N, fr_const, run_ntt, scaled_by_powers
from cuzk.kernels.cuda_runtime import BLOCK, DeviceArray, _oom_guard, grid_size
from cuzk.kernels.msm_bits import check_split_of
from cuzk.kernels.ones_blocks import OnesBlocks

__all__ = ["CudaKernels", "DevicePoints", "run_h_pointwise"]

_BLOCK = BLOCK["BLOCK_ELEMENTWISE"]  # cu/launch.cuh: the kernels' __launch_bounds__


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


def _row_numbers(rt, rows, n: int):
    """Host row numbers as a uint32 ``rt`` array, each checked < n (the gather kernel does not check)."""
    rows = np.asarray(rows)
    if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer) or (
            len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= n)):
        raise InputError(f"rows must be a 1-d integer array of row numbers below {n}")
    with rt.context():
        return rt.asarray(rows.astype(np.uint32))


def run_h_pointwise(rt, a, b, c, z_inv: int):
    """Launch plan of ``h_pointwise`` on ``rt`` arrays (uint32 ``(n, W)``, W the Fr words of ``rt.curve``)."""
    with rt.context():
        n = a.shape[0]
        out = rt.xp.empty_like(a)
        rt.launch("ntt_h_pointwise", grid_size(n, _BLOCK), _BLOCK, (a, b, c, fr_const(rt, z_inv), out, n))
        return out


class DevicePoints:
    """Affine points uploaded once and kept on the device (a proving key's queries).

    Made by ``upload_points``; accepted wherever ``msm_g1``/``msm_g2`` of the same curve take
    points, so a prover pays the host-to-device copy of its key once, not per proof.
    """

    __slots__ = ("words", "n", "group", "device_id", "curve")

    def __init__(self, words, n: int, group: str, device_id: int, curve: str = "bls12_381"):
        self.words, self.n, self.group, self.device_id, self.curve = words, n, group, device_id, curve

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"DevicePoints({self.group}, n={self.n}, device={self.device_id})"


class CudaKernels:
    """The CUDA backend's functions for ``curve``, on the runtimes ``runtime(device_id)`` returns.

    Args:
        curve: the curve (``cuzk.curves.get(name).cuda``).
        runtime: ``runtime(device_id=None)`` → the runtime of that device built for ``curve``.

    ``to_canonical`` of a host array runs on the host with the curve's ``host_from_mont`` when
    it has one, else through the device.
    """

    #: ``bit_msm="auto"`` leaves the MSMs general here: on an H200 the general MSM of a 95 %-bit
    #: vector already costs less than a random one (2^22 G1 17.4 vs 71.3 ms: a 0/1 scalar has one
    #: non-zero digit), and the host scan of the split costs more than the ones' sum saves (bit-aware
    #: 84 ms with the scan, 14.4 ms of kernels; docs/perf/cuda.md). ``bit_msm=True`` still runs them.
    AUTO_BIT_MSM = False

    def __init__(self, curve: CudaCurve, runtime: Callable):
        self.curve, self._runtime = curve, runtime

    def __repr__(self) -> str:
        return f"<cuzk CUDA kernels of {self.curve.name}>"

    def _host_rows(self, a, what: str, threads: int = 1) -> np.ndarray:
        return check_field_rows(a, what, self.curve.fr_tail, self.curve.fr.modulus, threads)

    def _device_rows(self, a, what: str):
        """(runtime, C-contiguous uint32 (n, W) raw array) for a :class:`DeviceArray` or CuPy Fr
        array; orders the calling thread's stream after a pending copy, or for a CuPy array after
        the caller's current stream (copied first if strided: the kernels only get its pointer)."""
        if isinstance(a, DeviceArray):
            rt, a = a.rt, a.rt.wait(a)
            if rt.curve.name != self.curve.name:
                raise InputError(f"{what} is a {rt.curve.name} device array, these kernels are {self.curve.name}'s")
        else:
            rt = self._runtime(a.device.id)
            a = rt.adopt(a)
        words = self.curve.fr_words
        if a.ndim != 2 or a.shape[1] != words or a.dtype != np.uint32:
            raise FieldValueError(f"{what} on the device must be a uint32 (n, {words}) array, got {a.shape} {a.dtype}")
        if not a.flags.c_contiguous:  # a DeviceArray made around a strided view: would be misread
            raise FieldValueError(f"{what} on the device must be C-contiguous, got strides {a.strides}")
        return rt, a

    @_oom_guard
    def ntt(self, values, *, inverse=False, shift=None, root_generator=None, threads=None):
        """NTT of Fr values (natural order in and out) on the GPU.

        ``values``: ``(n, 4)`` uint64 Montgomery Fr, n a power of two (numpy); or a
        :class:`DeviceArray` / CuPy uint32 ``(n, 8)`` array already on a device, in which case
        the result is a :class:`DeviceArray` there (no host round trip). ``inverse``: the exact
        inverse map; ``shift``: coset shift, a canonical Fr int (None = 1); ``root_generator``:
        w = ``fr.root_of_unity_for(log2 n, root_generator)`` (None: the curve's Fr generator);
        ``threads``: accepted for interface parity with the CPU backend, unused.

        Raises:
            FieldValueError: bad dtype/shape/length, unreduced limbs, bad shift.
            BackendUnavailableError: no usable GPU. DeviceOutOfMemoryError: GPU memory exhausted.
        """
        fr = self.curve.fr
        gen = fr.generator if root_generator is None else root_generator
        if _on_device(values):
            rt, x = self._device_rows(values, "values")
            log_n = _check_ntt_args(x.shape[0], shift, fr)
            out = run_ntt(rt, x, log_n, fr.root_of_unity_for(log_n, gen), shift, inverse)
            return DeviceArray(out, rt, rt.handoff())  # ordered for the caller's stream, other threads
        v = self._host_rows(values, "values")
        log_n = _check_ntt_args(v.shape[0], shift, fr)
        w = fr.root_of_unity_for(log_n, gen)
        rt = self._runtime()
        out = run_ntt(rt, rt.asarray(v.view(np.uint32)), log_n, w, shift, inverse)
        return rt.asnumpy(out).view(np.uint64)

    @_oom_guard
    def h_pointwise(self, a, b, c, z_inv):
        """(a·b − c)·z_inv elementwise over Montgomery Fr arrays; ``z_inv`` a canonical int."""
        if isinstance(z_inv, bool) or not isinstance(z_inv, (int, np.integer)):
            raise FieldValueError(f"z_inv must be a canonical Fr int, got {type(z_inv).__name__}")
        self.curve.fr.check_canonical(int(z_inv))
        named = ((a, "a"), (b, "b"), (c, "c"))
        on_device = [_on_device(x) for x, _ in named]
        if any(on_device) and not all(on_device):
            raise FieldValueError("a, b, c must all be on the device or all on the host")
        if all(on_device):
            rows = [self._device_rows(x, name) for x, name in named]
            rt, arrs = rows[0][0], [arr for _, arr in rows]
        else:
            arrs = [self._host_rows(x, name) for x, name in named]
        if not arrs[0].shape[0] == arrs[1].shape[0] == arrs[2].shape[0]:
            raise FieldValueError(f"a, b, c must have the same length, got {[x.shape[0] for x in arrs]}")
        if all(on_device):
            out = run_h_pointwise(rt, *arrs, int(z_inv))
            return DeviceArray(out, rt, rt.handoff())
        rt = self._runtime()
        if arrs[0].shape[0] == 0:
            return np.empty((0, *self.curve.fr_tail), dtype=np.uint64)
        dev = [rt.asarray(x.view(np.uint32)) for x in arrs]
        return rt.asnumpy(run_h_pointwise(rt, *dev, int(z_inv))).view(np.uint64)

    @_oom_guard
    def upload_points(self, points, device_id: int = 0) -> DevicePoints:
        """Validate affine G1 ``(n, 2, L)`` or G2 ``(n, 2, 2, L)`` points once and copy them to the device."""
        group = "g2" if np.asarray(points).ndim == 4 else "g1"
        pts = check_points(points, "points", self.curve.point_tail(group), self.curve.fq.modulus)
        rt = self._runtime(device_id)
        words = rt.asarray(np.ascontiguousarray(pts).view(np.uint32))
        rt.synchronize()  # the MSMs may run on other threads' streams
        return DevicePoints(words, len(pts), group, device_id, self.curve.name)

    def _check_msm(self, points, scalars, group: str):
        if _on_device(scalars):
            sc = scalars
            m = scalars.shape[0]
        else:
            sc = self._host_rows(scalars, "scalars")
            m = len(sc)
        if isinstance(points, DevicePoints):
            if points.group != group:
                raise InputError(f"these device points are {points.group}, the MSM is over {group}")
            if points.curve != self.curve.name:
                raise InputError(f"these device points are {points.curve}'s, the MSM is over {self.curve.name}")
            n = points.n
        else:
            points = check_points(points, "points", self.curve.point_tail(group), self.curve.fq.modulus)
            n = len(points)
        if n != m:
            raise InputError(f"{n} points but {m} scalars")
        check_msm_size(n)  # nw*n (bucket, point) pairs must fit the kernels' uint32 positions
        return points, sc

    @staticmethod
    def _check_canonical_on_device(rt, x, what: str) -> None:
        """Every row of the uint32 (n, W) device array ``x`` is < r (``fr_count_noncanonical``, a
        kernel of the module: no CuPy kernel to compile on first use)."""
        with rt.context():
            bad = rt.xp.zeros(1, dtype=np.uint32)
            n = x.shape[0]
            if n:
                rt.launch("fr_count_noncanonical", grid_size(n, _BLOCK), _BLOCK, (x, n, bad))
            count = int(rt.asnumpy(bad)[0])
        if count:
            raise FieldValueError(f"{what}: {count} device rows are not canonical Fr integers (>= r)")

    def _msm(self, group: str, points, scalars) -> np.ndarray:
        pts, sc = self._check_msm(points, scalars, group)
        rt = dsc = None
        if _on_device(sc):
            rt, dsc = self._device_rows(sc, "scalars")
            if not isinstance(sc, DeviceArray):  # cuzk's own device arrays were checked (stage) or computed
                self._check_canonical_on_device(rt, dsc, "scalars")
        if isinstance(pts, DevicePoints):
            prt = self._runtime(pts.device_id)
            if rt is not None and prt is not rt:
                raise InputError(f"the scalars are on another device than the points (device {pts.device_id})")
            rt, words = prt, pts.words
        else:
            rt = rt or self._runtime()
            words = rt.asarray(pts.view(np.uint32))
        if dsc is None:
            dsc = rt.asarray(np.ascontiguousarray(sc).view(np.uint32))
        return run_msm(rt, group, words, dsc, len(dsc))

    def _msm_bits(self, group: str, points, scalars, split, threads) -> np.ndarray:
        if _on_device(scalars):
            raise InputError("the bit-aware MSM splits its scalars on the host: pass them as an (n, 4) numpy array")
        pts, sc = self._check_msm(points, scalars, group)
        split = split_bits(sc, threads) if split is None else check_split_of(split, sc, threads)
        if isinstance(pts, DevicePoints):
            rt, words = self._runtime(pts.device_id), pts.words
        else:
            rt = self._runtime()
            words = rt.asarray(pts.view(np.uint32))
        return run_msm_bits(rt, group, words, split, sc)

    @_oom_guard
    def msm_bits_g1(self, points, scalars, threads=None, *, split=None, blocks=None):
        """As :meth:`msm_g1`, the scalars 0 skipped and the scalars 1 summed directly (``split``:
        ``split_bits(scalars)`` made earlier). ``blocks``, the CPU MSM's block sums of the points
        (:mod:`cuzk.kernels.ones_blocks`), is taken for the same signature and not used: the ones
        here are one digit bucket each, summed on the device."""
        _no_blocks(blocks)
        return self._msm_bits("g1", points, scalars, split, threads)

    @_oom_guard
    def msm_bits_g2(self, points, scalars, threads=None, *, split=None, blocks=None):
        """As :meth:`msm_bits_g1` over G2."""
        _no_blocks(blocks)
        return self._msm_bits("g2", points, scalars, split, threads)

    @_oom_guard
    def stage(self, *arrays, device_id: int | None = None, rows: int | None = None, threads=None) -> list:
        """Start copying Fr arrays to the GPU and return at once (a list of :class:`DeviceArray`); the kernels wait for each copy.

        An entry may be a tuple of parts, staged one after another into one device array; with
        ``rows`` each device array is padded with zero rows to that length on the device (the
        prover's A·z, B·z, C·z: no domain-sized host array is built). ``threads`` (None: all
        cores) share the reduced-value checks and the host copies into the pinned chunks.

        Raises:
            FieldValueError: a part that is not (n, 4) uint64 reduced rows (named by its place).
            InputError: parts longer than ``rows``.
        """
        rt = self._runtime(device_id)
        t = resolve_threads(threads)
        out = []
        for i, entry in enumerate(arrays):
            named = ([(p, f"arrays[{i}][{j}]") for j, p in enumerate(entry)] if isinstance(entry, (tuple, list))
                     else [(entry, f"arrays[{i}]")])
            parts = [self._host_rows(p, name, t) for p, name in named]
            out.append(rt.stage(*(v.view(np.uint32) for v in parts), rows=rows, threads=t))
        return out

    def device_timer(self, device_id: int | None = None):
        """GPU time of the kernels the calling thread launches inside the block (CUDA events; ``.ms`` after it)."""
        return self._runtime(device_id).timer()

    @_oom_guard
    def to_canonical(self, values):
        """Montgomery Fr values → canonical integers (the MSMs' scalars) where they live: a device array on the GPU, a host array on the host (through the device when the curve has no ``host_from_mont``)."""
        if not _on_device(values):
            v = self._host_rows(values, "values")
            if self.curve.host_from_mont is not None:
                return self.curve.host_from_mont(v)
            rt = self._runtime()
            out = self.to_canonical(DeviceArray(rt.asarray(v.view(np.uint32)), rt))
            return rt.asnumpy(out.array).view(np.uint64).reshape(v.shape)
        rt, x = self._device_rows(values, "values")
        out = self._from_mont(rt, x)
        rt.synchronize()
        return DeviceArray(out, rt)

    def _from_mont(self, rt, x):
        """Montgomery → canonical of the uint32 (n, W) device array ``x``, launched on the
        calling thread's stream (not waited for)."""
        fr = self.curve.fr
        with rt.context():
            # x * (the element whose Montgomery form is 1) = x * R^-1: Montgomery -> canonical
            n = x.shape[0]
            return scaled_by_powers(rt, x, 1, pow(fr.r, -1, fr.modulus), n) if n else rt.xp.empty_like(x)

    @_oom_guard
    def query_scalars(self, z, rows, n_inputs: int) -> tuple:
        """The A, B and L query scalars from the Montgomery assignment ``z`` already on the device
        (a :class:`DeviceArray` from :meth:`stage`): z converted to canonical integers there and
        the A and B rows gathered there (``bits_gather_rows``), L's a slice of it; the prover's
        host does neither pass. ``rows``: the A and B queries' rows of z
        (:func:`cuzk.groth16.witness_prep.query_rows`), host int arrays or uint32 device arrays
        (a resident key's, :meth:`upload_rows`). Returns three :class:`DeviceArray` s, ordered
        for the caller's stream and other threads' (an event).

        Raises:
            InputError: ``z`` not on the device, or row numbers outside z.
        """
        if not _on_device(z):
            raise InputError("query_scalars takes z on the device: stage it first")
        rt, x = self._device_rows(z, "z")
        n = x.shape[0]
        if not 0 <= n_inputs <= n:
            raise InputError(f"n_inputs must be in 0..{n}, got {n_inputs}")
        canon = self._from_mont(rt, x)
        words = self.curve.fr_words
        with rt.context():
            out = [gather_rows(rt, canon, r if _on_device(r) else _row_numbers(rt, r, n), words) for r in rows]
        event = rt.handoff()
        return (*(DeviceArray(g, rt, event) for g in out), DeviceArray(canon[n_inputs:], rt, event))

    @_oom_guard
    def upload_rows(self, rows, n: int, device_id: int = 0):
        """Row numbers (host ints, each < ``n``) as a uint32 device array: a resident key's query
        rows for :meth:`query_scalars`."""
        rt = self._runtime(device_id)
        out = _row_numbers(rt, rows, n)
        rt.synchronize()  # the proofs may run on other threads' streams
        return out

    @_oom_guard
    def msm_g1(self, points, scalars, threads=None):
        """Σ scalars[i]·points[i] over G1 on the GPU; result ``(2, L)`` affine Montgomery (L the Fq limbs).

        Args:
            points: ``(n, 2, L)`` uint64 affine Montgomery (all-zero rows = infinity), or
                :class:`DevicePoints` from :meth:`upload_points` (already on the device);
                n <= ``MSM_MAX_POINTS`` = 2^28 - 1 (the kernels index the nw*n (bucket, point)
                pairs in 32 bits: 16 windows at c = 16).
            scalars: ``(n, 4)`` uint64 canonical (not Montgomery) Fr integers, on the host or
                the device.
            threads: accepted for parity with the CPU backend; unused.
        """
        return self._msm("g1", points, scalars)

    @_oom_guard
    def msm_g2(self, points, scalars, threads=None):
        """As :meth:`msm_g1` over G2: result ``(2, 2, L)``."""
        return self._msm("g2", points, scalars)

    def warm_up(self, device_id: int = 0) -> None:
        """As ``cuzk.kernels.cuda.warm_up``."""
        rt = self._runtime(device_id)
        rt.preload()
        fw = self.curve.fr_words
        x = rt.asarray(np.zeros((4, fw), np.uint32))
        run_ntt(rt, x, 2, self.curve.fr.root_of_unity_for(2), 7, True)
        sc = rt.asarray(np.arange(4 * fw, dtype=np.uint32).reshape(4, fw) % 7)
        for group in ("g1", "g2"):  # points at infinity (all-zero rows)
            run_msm(rt, group, rt.asarray(np.zeros((4, 4 * self.curve.coord_words(group)), np.uint32)), sc, 4)
        bits = np.zeros((4, self.curve.fr.limbs), np.uint64)
        bits[1, 0], bits[2, 0] = 1, 3  # a zero, a one, two others: every step of the bit-aware plan
        split = check_split_of(split_bits(bits, 1), bits)  # the host scan and its check compile here
        for group in ("g1", "g2"):
            run_msm_bits(rt, group, rt.asarray(np.zeros((4, 4 * self.curve.coord_words(group)), np.uint32)), split, bits)
        rt.synchronize()


def _no_blocks(blocks) -> None:
    if blocks is not None and not isinstance(blocks, OnesBlocks):
        raise InputError(f"blocks must be None or a cuzk.kernels.ones_blocks.OnesBlocks, got {type(blocks).__name__}")
