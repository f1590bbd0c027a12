"""Elliptic-curve groups as arrays: :class:`Group`, :class:`CurveParams`, encodings and checks.

What lives here is curve-generic; a curve's generated point and pairing kernels live in its
package ``cuzk.curves.<name>`` and are reached through ``cuzk.curves.get(name).G1`` / ``.G2`` /
``.pairing``. The default curve's groups and pairing keep their short names here (``G1``,
``G2``, ``G1_PARAMS``, ``G2_PARAMS``, ``BLS_X``, ``pairing_check``, ``prepare_g2``,
``G2Prepared``, ``multi_miller_loop``), defined once in ``cuzk/curves/default.py``.

    >>> from cuzk.curve import G1, G2
    >>> G2.is_in_subgroup(G2.generator())
    True
"""

from cuzk.curve.group import Group
from cuzk.curve.params import CurveParams

__all__ = ["G1", "G2", "Group", "CurveParams", "G1_PARAMS", "G2_PARAMS", "BLS_X",
           "pairing_check", "prepare_g2", "G2Prepared", "multi_miller_loop"]


def __getattr__(name):  # the default curve's groups and pairing, resolved on first use (PEP 562)
    from cuzk.curves import default

    value = globals()[name] = default.lookup(__name__, name)  # resolved once; later reads are plain
    return value
