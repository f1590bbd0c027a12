"""BLS12-381 groups G1 (over Fq) and G2 (over Fq2): parameters, Numba point kernels, zcash encodings.

    >>> from cuzk.curve import G1, G2
    >>> G2.is_in_subgroup(G2.generator())
    True
"""

from cuzk.curve.group import G1, G2, Group
from cuzk.curve.pairing import G2Prepared, multi_miller_loop, pairing_check, prepare_g2
from cuzk.curve.params import BLS_X, G1_PARAMS, G2_PARAMS, CurveParams

__all__ = ["G1", "G2", "Group", "CurveParams", "G1_PARAMS", "G2_PARAMS", "BLS_X",
           "pairing_check", "prepare_g2", "G2Prepared", "multi_miller_loop"]
