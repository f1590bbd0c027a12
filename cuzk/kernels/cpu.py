"""The Numba CPU backend: NTT and MSM kernels with the same signatures as ``cuzk.kernels.cuda``.

Everything here runs in ``nogil`` Numba code, so several Python threads can prove at once; each
kernel takes ``threads`` (None: all cores) so a pipeline can share the cores between stages.
Arrays follow DESIGN §3: Fr elements (n, 4) uint64 Montgomery, G1 affine (n, 2, 6), G2 affine
(n, 2, 2, 6), all-zero limbs for the identity; MSM scalars are canonical (not Montgomery).

    >>> import numpy as np
    >>> from cuzk.curve import G1
    >>> from cuzk.kernels import cpu
    >>> g = G1.generator()
    >>> pts = cpu.batch_mul_g1(g, np.array([[2, 0, 0, 0], [3, 0, 0, 0]], np.uint64))   # 2G, 3G
    >>> bool(G1.eq(cpu.msm_g1(pts, np.array([[5, 0, 0, 0], [1, 0, 0, 0]], np.uint64)), G1.mul(g, 13)))
    True
"""

from cuzk.field.prime_field import Fr
from cuzk.kernels.msm_cpu import batch_mul_g1, batch_mul_g2, msm_g1, msm_g2
from cuzk.kernels.ntt_cpu import h_pointwise, ntt

__all__ = ["ntt", "h_pointwise", "msm_g1", "msm_g2", "stage", "to_canonical", "device_timer", "batch_mul_g1",
           "batch_mul_g2"]


def stage(*arrays, device_id=None) -> list:
    """Where the kernels read their inputs: host memory already, so the arrays unchanged.

    (The CUDA backend's ``stage`` starts the host-to-device copies here; a prover calls it the
    same way for either backend.)

    >>> import numpy as np
    >>> stage(np.zeros((2, 4), np.uint64))[0].shape
    (2, 4)
    """
    return list(arrays)


class _NoDevice:
    ms = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def device_timer(device_id=None):
    """GPU time of the enclosed kernels, for the timeline's sub-spans: none here (``ms`` stays
    None; the CUDA backend's measures with CUDA events).

    >>> with device_timer() as t:
    ...     pass
    >>> t.ms is None
    True
    """
    return _NoDevice()


def to_canonical(values):
    """Montgomery Fr values → canonical integers (MSM scalars): ``Fr.from_mont``.

    >>> from cuzk.field import Fr
    >>> to_canonical(Fr.from_ints([5])).tolist()
    [[5, 0, 0, 0]]
    """
    return Fr.from_mont(values)
