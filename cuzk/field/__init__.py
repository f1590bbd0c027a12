"""Prime fields as data and as arrays: :class:`FieldParams`, :class:`PrimeField`.

What lives here is curve-generic (the Montgomery template's helpers, intrinsics, JIT helpers,
the AVX-512 IFMA arithmetic); a curve's generated field and tower kernels live in its package
``cuzk.curves.<name>`` and are reached through ``cuzk.curves.get(name).Fr`` / ``.Fq``. The
default curve's fields keep their short names here (``Fr``, ``Fq``, ``FR``, ``FQ``,
``FQ2_NONRESIDUE``), defined once in ``cuzk/curves/default.py``.

    >>> from cuzk.field import Fr
    >>> Fr.to_ints(Fr.add(Fr.from_ints([2]), Fr.from_ints([3])))
    [5]
"""

from cuzk.field.params import FieldParams
from cuzk.field.prime_field import PrimeField

__all__ = ["FieldParams", "FR", "FQ", "FQ2_NONRESIDUE", "PrimeField", "Fr", "Fq"]


def __getattr__(name):  # the default curve's fields, resolved on first use (PEP 562)
    from cuzk.curves import default

    value = globals()[name] = default.lookup(__name__, name)  # resolved once; later reads are plain
    return value
