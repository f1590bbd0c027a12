"""What the CUDA launch plans need of the curve a runtime's kernels are built for.

The sources are compiled for one curve at a time (``cu/curve.h`` picks ``params_<curve>.h``
from ``-DCUZK_CURVE_<NAME>``). A runtime carries the matching :class:`CudaCurve` as
``rt.curve``, and the plans (:mod:`cuzk.kernels.cuda_ntt`, :mod:`cuzk.kernels.cuda_msm`,
:mod:`cuzk.kernels.cuda_elementwise`) take their field parameters, word counts and array shapes
from it. Every curve's is ``cuzk.curves.get(name).cuda``, built from its spec (this package
may not import ``cuzk.curves``: tests/test_import_edges.py).

    >>> from cuzk.curves import get
    >>> bls = get("bls12_381").cuda
    >>> bls.define, bls.fq_words, bls.point_tail("g2")
    ('CUZK_CURVE_BLS12_381', 12, (2, 2, 6))
"""

from __future__ import annotations

from typing import Callable

import attrs

from cuzk.errors import InputError
from cuzk.field.params import FieldParams

__all__ = ["CudaCurve", "curve_define"]

def curve_define(curve: str) -> str:
    """The macro that builds the kernels for ``curve`` (cu/curve.h): ``CUZK_CURVE_BN254``.

    >>> curve_define("bls12_381")
    'CUZK_CURVE_BLS12_381'
    """
    return f"CUZK_CURVE_{curve.upper()}"


_DEGREE = {"g1": 1, "g2": 2}  # Fq coordinates per point coordinate (G2 lives over Fq2)


@attrs.frozen(repr=False)
class CudaCurve:
    """One curve as the CUDA plans see it.

    Attributes:
        name: the canonical curve name ("bn254"); the kernels are built with :attr:`define`.
        fr, fq: the scalar and base field parameters (64-bit limbs; the kernels use twice as
            many 32-bit words with the same Montgomery R = 2^(64·limbs)).
        fq2_nonresidue: β of Fq2 = Fq[u]/(u² − β), as an int mod p.
        combine_g1, combine_g2: the curve's Numba ``msm_kernels_g*.combine(sums, c)``, which
            turns the MSM's per-window XYZZ sums into the affine result on the host.
        host_from_mont: Montgomery → canonical Fr rows on the host (the curve's
            ``Fr.from_mont``), for ``to_canonical`` of a host array; None: through the device.
    """

    name: str
    fr: FieldParams
    fq: FieldParams
    fq2_nonresidue: int
    combine_g1: Callable = attrs.field(eq=False, repr=False)
    combine_g2: Callable = attrs.field(eq=False, repr=False)
    host_from_mont: Callable | None = attrs.field(default=None, eq=False, repr=False)

    def __repr__(self) -> str:
        return f"CudaCurve({self.name})"

    @property
    def define(self) -> str:
        """The macro that builds the kernels for this curve (cu/curve.h)."""
        return curve_define(self.name)

    @property
    def fr_words(self) -> int:
        """32-bit words of one Fr element on the device."""
        return 2 * self.fr.limbs

    @property
    def fq_words(self) -> int:
        """32-bit words of one Fq element on the device."""
        return 2 * self.fq.limbs

    @property
    def fr_tail(self) -> tuple[int]:
        """The trailing shape of a host Fr array: ``(limbs,)``."""
        return (self.fr.limbs,)

    def coord_words(self, group: str) -> int:
        """32-bit words of one coordinate of a ``group`` point (two Fq elements in G2)."""
        return _DEGREE[_check_group(group)] * self.fq_words

    def point_tail(self, group: str) -> tuple[int, ...]:
        """The trailing shape of a host affine point array: G1 ``(2, L)``, G2 ``(2, 2, L)``.

        >>> from cuzk.curves import get
        >>> get("bls12_381").cuda.point_tail("g1")
        (2, 6)
        """
        L = self.fq.limbs
        return (2, L) if _check_group(group) == "g1" else (2, 2, L)

    def combine(self, group: str) -> Callable:
        """The host kernel that combines ``group``'s MSM window sums."""
        return self.combine_g1 if _check_group(group) == "g1" else self.combine_g2


def _check_group(group: str) -> str:
    if group not in _DEGREE:
        raise InputError(f"group must be 'g1' or 'g2', got {group!r}")
    return group
