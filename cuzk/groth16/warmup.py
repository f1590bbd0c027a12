"""Warm up the CPU prover: compile (cold cache) or load (warm cache) the kernels a proof runs.

Numba compiles a kernel at its first call, so a fresh process's first proof pays for every
kernel it touches (docs/perf/cold-start.md). :func:`warm_up` runs each of them once, on inputs
of the sizes and types a proof with this key passes (a few points of the key itself, a domain
of the key's size up to ``2^16``, the verifying key's prepared points), so the first real proof
finds them ready; :func:`start_warm_up` does it on a background thread, for a caller that has
other work meanwhile (reading a key, tracing a circuit, waiting for requests).

Numba compiles under one process-wide lock and never compiles a specialization twice: a proof
that reaches a kernel while the warm-up compiles it waits for that compile and then uses it. A
thread gains only where the other work is not itself compiling (I/O, nogil kernels, waiting):
the compiles of the two threads take turns on that lock.

    >>> fut = start_warm_up(pk)                         # doctest: +SKIP
    >>> proof = GpuProver(pk, device="cpu").prove(w)    # doctest: +SKIP
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time

import numpy as np

from cuzk import curves
from cuzk.groth16.keys import ProvingKey
from cuzk.groth16.r1cs_to_qap import compute_h
from cuzk.groth16.verify import prepare_verifying_key
from cuzk.kernels.msm_cpu import AVAILABLE, VEC_METHODS

__all__ = ["warm_up", "start_warm_up", "WARM_UP_MAX_LOG"]

_log = logging.getLogger("cuzk.groth16.warmup")

#: the NTT warm-up runs at the key's domain size, at most 2^WARM_UP_MAX_LOG elements: the
#: kernels a transform uses are the same for every size from 2^12 (two-thread split) up.
WARM_UP_MAX_LOG = 16


def _points(arr, n: int):
    # a few rows of a key query, as read-only as the key's own arrays (same kernel types)
    return arr[: min(n, arr.shape[0])] if isinstance(arr, np.ndarray) and arr.ndim >= 3 else None


def _msm(msm, points, fr) -> None:
    if points is None or points.shape[0] == 0:
        return
    msm(points, fr.ints_to_limbs(range(1, points.shape[0] + 1)))


def _msms(kern, group: str, points, fr) -> None:
    """The group's MSM as a few points run it (XYZZ) and, where the CPU has AVX-512 IFMA, as a
    proof's large MSMs run it (method "ifma", which a few points would not pick)."""
    _msm(getattr(kern, f"msm_{group}"), points, fr)
    if VEC_METHODS[0] in AVAILABLE:
        _msm(lambda p, k: kern.msm(group, p, k, method=VEC_METHODS[0]), points, fr)


def _bit_msms(kern, group: str, points, fr) -> None:
    """The group's bit-aware MSM with a split made first, as a proof runs it: the scan, the
    split's check, the sum of the ones and of the points of a repeated value (scalars 0, 1, 2, 2)."""
    if points is None or points.shape[0] == 0:
        return
    sc = fr.ints_to_limbs([0, 1, 2, 2][: points.shape[0]])
    getattr(kern, f"msm_bits_{group}")(points, sc, split=kern.split_bits(sc))


def warm_up(pk: ProvingKey, *, verify: bool = True, threads=None, stop=lambda: False, bit_msm=False) -> float:
    """Run the CPU kernels of a proof with ``pk`` once (see the module docstring).

    Args:
        pk: the proving key (its curve picks the kernels; a few of its points are used).
        verify: also the verification's (pairing check, input accumulation).
        threads: the prover's ``threads`` (the NTT's split depends on it).
        stop: asked between steps; true ends the warm-up early.
        bit_msm: the prover's ``bit_msm`` (:mod:`cuzk.groth16.bit_msm`): anything but False also
            readies the bit-aware MSMs' kernels.

    Returns:
        Seconds it took.
    """
    t0 = time.perf_counter()
    cv = curves.get(pk.curve)
    kern, fr = cv.kernels, cv.Fr
    steps = []
    log_m = min(pk.domain_size.bit_length() - 1, WARM_UP_MAX_LOG)
    m = 1 << log_m

    def h():
        zeros = np.zeros((m, fr.limbs), np.uint64)
        compute_h(zeros, zeros, zeros, kern, threads=threads, convention=pk.convention, curve=pk.curve)
        fr.eq(fr.mul(zeros[:2], zeros[:2]), zeros[:2])  # the witness check
        kern.to_canonical(zeros[:2])

    steps.append(h)
    steps.append(lambda: _msms(kern, "g1", _points(pk.a, 4), fr))
    steps.append(lambda: _msms(kern, "g2", _points(pk.b_g2, 4), fr))
    if bit_msm is not False:
        steps.append(lambda: _bit_msms(kern, "g1", _points(pk.a, 4), fr))
        steps.append(lambda: _bit_msms(kern, "g2", _points(pk.b_g2, 4), fr))
    if verify:
        def pairing():
            pvk = prepare_verifying_key(pk.vk)
            g1, g2 = cv.G1.generator(), cv.G2.generator()
            _msm(kern.msm_g1, pvk.vk.ic, fr)  # Σ x_i·IC_i as the prover's verification does it
            cv.pairing.pairing_check([(g1, g2), (cv.G1.neg(g1), pvk.beta)])

        steps.append(pairing)
    for step in steps:
        if stop():
            break
        step()
    took = time.perf_counter() - t0
    _log.debug("CPU prover warm-up for %s: %.2f s", pk.curve, took)
    return took


def start_warm_up(pk: ProvingKey, *, verify: bool = True, threads=None, bit_msm=False) -> concurrent.futures.Future:
    """:func:`warm_up` on a daemon thread ``cuzk-warmup``; returns a Future of its seconds.

    The Future never raises into the caller unasked: a failing warm-up (which a proof would
    then report itself) is logged at DEBUG level and resolves with the exception.
    """
    # Numba's compiler registries are not loaded here: a warm cache never needs them
    # (cuzk/_numba_loads.py), and a compile loads them itself under the compile lock.
    fut: concurrent.futures.Future = concurrent.futures.Future()
    cv = curves.get(pk.curve)
    _ = cv.kernels, cv.Fr, cv.G1, cv.G2  # every module the warm-up calls into, imported by the caller
    if verify:
        _ = cv.pairing

    def body():
        try:
            fut.set_result(warm_up(pk, verify=verify, threads=threads, bit_msm=bit_msm))
        except BaseException as e:  # noqa: BLE001 (handed to whoever asks the Future)
            _log.debug("CPU prover warm-up failed: %r", e)
            fut.set_exception(e)

    threading.Thread(target=body, name="cuzk-warmup", daemon=True).start()
    return fut
