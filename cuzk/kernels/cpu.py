"""The Numba CPU backend: NTT and MSM kernels with the same signatures as ``cuzk.kernels.cuda``.

:class:`CpuKernels` offers them for one curve's generated kernel modules; every curve's, the
default BLS12-381 included, is ``cuzk.curves.get(name).kernels``.

Everything here runs in ``nogil`` Numba code, so several Python threads can prove at once; each
kernel takes ``threads`` (None: all cores) so a pipeline can share the cores between stages.
Arrays follow DESIGN §3: Fr elements (n, 4) uint64 Montgomery, G1 affine (n, 2, 6), G2 affine
(n, 2, 2, 6), all-zero limbs for the identity; MSM scalars are canonical (not Montgomery).

    >>> import numpy as np
    >>> from cuzk.curves import get
    >>> G1, cpu = get("bls12_381").G1, get("bls12_381").kernels
    >>> g = G1.generator()
    >>> pts = cpu.batch_mul_g1(g, np.array([[2, 0, 0, 0], [3, 0, 0, 0]], np.uint64))   # 2G, 3G
    >>> bool(G1.eq(cpu.msm_g1(pts, np.array([[5, 0, 0, 0], [1, 0, 0, 0]], np.uint64)), G1.mul(g, 13)))
    True
"""

from types import ModuleType

from cuzk.curve.params import CurveParams
from cuzk.errors import InputError
from cuzk.field.params import FieldParams
from cuzk.field.prime_field import PrimeField
from cuzk.kernels import msm_bits as _msm_bits
from cuzk.kernels import msm_cpu
from cuzk.kernels.bit_split import BitSplit, split_bits
from cuzk.kernels.cpu_threads import resolve_threads
from cuzk.kernels.msm_cpu import MsmGroup, msm
from cuzk.kernels.msm_fixed import (FixedBasePlan, FixedBaseTable, msm_precomputed, plain_cost, plan_for_bytes,
                                    precompute, table_from_arrays, trade_off)
from cuzk.kernels.ntt_cpu import CpuNtt
from cuzk.kernels.ones_blocks import DEFAULT_BLOCK, OnesBlocks, ones_blocks
from cuzk.kernels.staged_rows import stack_rows

__all__ = ["msm", "split_bits", "BitSplit", "stage", "device_timer", "CpuKernels", "precompute", "msm_precomputed",
           "plan_for_bytes", "trade_off", "plain_cost", "table_from_arrays", "FixedBasePlan", "FixedBaseTable"]


def stage(*arrays, device_id=None, rows=None, threads=None) -> list:
    """Where the kernels read their inputs: host memory already, so each array unchanged; an
    entry given as a tuple of parts, or any entry when ``rows`` is set, becomes one host array
    of its parts one after another, then zero rows up to ``rows``
    (:func:`cuzk.kernels.staged_rows.stack_rows`, copied on ``threads``).

    (The CUDA backend's ``stage`` starts the host-to-device copies here, and zeroes the padding
    on the device; a prover calls it the same way for either backend.)

    >>> import numpy as np
    >>> stage(np.zeros((2, 4), np.uint64))[0].shape
    (2, 4)
    >>> stage((np.ones((2, 4), np.uint64), np.ones((1, 4), np.uint64)), rows=4)[0][:, 0].tolist()
    [1, 1, 1, 0]
    """
    if rows is None and not any(isinstance(a, (tuple, list)) for a in arrays):
        return list(arrays)
    t = resolve_threads(threads)
    return [stack_rows(list(a) if isinstance(a, (tuple, list)) else [a], rows, t) for a in arrays]


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


class CpuKernels:
    """The CPU backend's functions for one curve, on that curve's generated kernel modules.

    The same names and signatures as ``cuzk.kernels.cuda``'s (docs/kernel-contracts.md); arrays
    have the curve's limb counts (Fr (n, 4); G1 (n, 2, L), G2 (n, 2, 2, L) with L the Fq limbs).
    Built by ``cuzk.curves.get(name).kernels`` (this package may not import ``cuzk.curves``).

    Args:
        fr: the curve's array-level Fr (:class:`~cuzk.field.prime_field.PrimeField`).
        fq: the curve's base field parameters.
        msm_g1, msm_g2, ntt_kernels: its generated ``msm_kernels_g1/g2`` and ``ntt_kernels`` modules.
        name: the curve's name, for ``repr``.
        g1, g2, fq2_nonresidue: the curve's group parameters and Fq2 non-residue (its spec's
            ``g1``, ``g2``, ``fq2_nonresidue``), from which the MSMs derive their GLV/GLS
            splits; without them the MSMs run unsplit.
    """

    def __init__(self, fr: PrimeField, fq: FieldParams, msm_g1: ModuleType, msm_g2: ModuleType,
                 ntt_kernels: ModuleType, name: str, *, g1: CurveParams | None = None,
                 g2: CurveParams | None = None, fq2_nonresidue: int | None = None,
                 vec_g1: ModuleType | None = None, vec_g2: ModuleType | None = None):
        self.name = name
        self._fr = fr
        self._ntt = CpuNtt(fr.params, ntt_kernels)
        self._g1 = MsmGroup("g1", msm_g1, 1, fq, fr.params, g1, fq2_nonresidue, vec_g1)
        self._g2 = MsmGroup("g2", msm_g2, 2, fq, fr.params, g2, fq2_nonresidue, vec_g2)

    def __repr__(self) -> str:
        return f"<cuzk CPU kernels of {self.name}>"

    def ntt(self, values, *, inverse=False, shift=None, root_generator=None, threads=None):
        """NTT of Fr values, natural order in and out (:meth:`cuzk.kernels.ntt_cpu.CpuNtt.ntt`);
        ``root_generator`` defaults to the curve's Fr generator."""
        return self._ntt.ntt(values, inverse=inverse, shift=shift, root_generator=root_generator, threads=threads)

    def h_pointwise(self, a, b, c, z_inv):
        """(a·b − c)·z_inv elementwise (:meth:`cuzk.kernels.ntt_cpu.CpuNtt.h_pointwise`)."""
        return self._ntt.h_pointwise(a, b, c, z_inv)

    def powers(self, x: int, n: int, scale: int = 1):
        """``[scale·x^0, ..., scale·x^(n-1)]`` as (n, L) Montgomery Fr rows."""
        return self._ntt.powers(x, n, scale)

    def msm(self, group: str, points, scalars, threads=None, *, method=None, window=None, endo=None):
        """As :func:`cuzk.kernels.msm_cpu.msm` for this curve's ``group`` ("g1" | "g2")."""
        return msm_cpu.msm(self.group(group), points, scalars, threads, method=method, window=window, endo=endo)

    def group(self, group: str) -> MsmGroup:
        """The :class:`~cuzk.kernels.msm_cpu.MsmGroup` of ``group`` ("g1" | "g2"), for the
        drivers of :mod:`cuzk.kernels.msm_cpu`, :mod:`~cuzk.kernels.msm_fixed` and
        :mod:`~cuzk.kernels.msm_bits`."""
        if group not in ("g1", "g2"):
            raise InputError(f"group must be 'g1' or 'g2', got {group!r}")
        return self._g1 if group == "g1" else self._g2

    def precompute(self, group: str, points, plan, threads=None):
        """As :func:`cuzk.kernels.msm_fixed.precompute` for this curve's ``group``."""
        return precompute(self.group(group), points, plan, threads)

    def plan_for_bytes(self, group: str, n: int, max_bytes: int):
        """As :func:`cuzk.kernels.msm_fixed.plan_for_bytes` for this curve's ``group``."""
        return plan_for_bytes(self.group(group), n, max_bytes)

    def trade_off(self, group: str, n: int):
        """As :func:`cuzk.kernels.msm_fixed.trade_off` for this curve's ``group``."""
        return trade_off(self.group(group), n)

    def plain_cost(self, group: str, n: int) -> float:
        """As :func:`cuzk.kernels.msm_fixed.plain_cost` for this curve's ``group``."""
        return plain_cost(self.group(group), n)

    def table_from_arrays(self, group: str, plan, points, skip):
        """As :func:`cuzk.kernels.msm_fixed.table_from_arrays` for this curve's ``group``."""
        return table_from_arrays(self.group(group), plan, points, skip)

    msm_precomputed = staticmethod(msm_precomputed)
    # The plan and table types are curve-generic; kept here so a curve's kernels offer every
    # name of this module (tests/test_bn254.py checks the interface).
    FixedBasePlan = FixedBasePlan
    FixedBaseTable = FixedBaseTable

    def msm_g1(self, points, scalars, threads=None):
        """Σ scalars[i]·points[i] over the curve's G1: points (n, 2, L) affine Montgomery
        (all-zero rows = identity) or a G1 :class:`FixedBaseTable` of this curve (the
        precomputed MSM), scalars (n, 4) canonical Fr; the result (2, L) affine Montgomery.

        Raises:
            InputError, FieldValueError: see :func:`cuzk.kernels.msm_cpu.msm`."""
        return msm_cpu.msm(self._g1, points, scalars, threads)

    def msm_g2(self, points, scalars, threads=None):
        """As :meth:`msm_g1` over G2: points (n, 2, 2, L), result (2, 2, L)."""
        return msm_cpu.msm(self._g2, points, scalars, threads)

    def msm_bits_g1(self, points, scalars, threads=None, *, split=None, blocks=None):
        """As :meth:`msm_g1`, the scalars 0 skipped and the scalars 1 adding their points directly
        (:mod:`cuzk.kernels.msm_bits`); ``split`` is ``split_bits(scalars)`` made earlier (None:
        made here), ``blocks`` the points' :meth:`ones_blocks` (fewer additions for the ones).
        The same result as :meth:`msm_g1`."""
        return _msm_bits.msm_bits(self._g1, points, scalars, threads, split=split, blocks=blocks)

    def msm_bits_g2(self, points, scalars, threads=None, *, split=None, blocks=None):
        """As :meth:`msm_bits_g1` over the curve's G2."""
        return _msm_bits.msm_bits(self._g2, points, scalars, threads, split=split, blocks=blocks)

    def ones_blocks(self, group: str, points, block: int = DEFAULT_BLOCK, threads=None) -> OnesBlocks:
        """The block sums of ``points`` of ``group`` ("g1" or "g2") that :meth:`msm_bits_g1` /
        :meth:`msm_bits_g2` take as ``blocks`` (:mod:`cuzk.kernels.ones_blocks`: a table of
        1/``block`` of the points' bytes)."""
        return ones_blocks(self.group(group), points, block, threads)

    split_bits = staticmethod(split_bits)
    BitSplit = BitSplit

    def batch_mul_g1(self, base, scalars, threads=None):
        """[k·base for k in scalars] (fixed-base windowed, batch-affine): base (2, L) affine
        Montgomery, scalars (n, 4) canonical -> (n, 2, L) (zeros for k = 0). Used by Groth16 setup."""
        return msm_cpu.batch_mul(self._g1, base, scalars, threads)

    def batch_mul_g2(self, base, scalars, threads=None):
        """As :meth:`batch_mul_g1` over G2."""
        return msm_cpu.batch_mul(self._g2, base, scalars, threads)

    def to_canonical(self, values):
        """Montgomery Fr values → canonical integers (MSM scalars)."""
        return self._fr.from_mont(values)

    stage = staticmethod(stage)
    device_timer = staticmethod(device_timer)
