"""BLS12-381 field parameters and Montgomery kernels (Fr, Fq, Fq2, Fq6, Fq12).

In-JIT kernels live in ``cuzk.field.fr``, ``cuzk.field.fq`` (generated) and
``cuzk.field.fq2``; :data:`Fr` and :data:`Fq` are the array-level API.

    >>> from cuzk.field import Fr
    >>> Fr.to_ints(Fr.add(Fr.from_ints([2]), Fr.from_ints([3])))
    [5]
"""

from cuzk.field.params import FQ, FQ2_NONRESIDUE, FR, FieldParams
from cuzk.field.prime_field import Fq, Fr, PrimeField

__all__ = ["FieldParams", "FR", "FQ", "FQ2_NONRESIDUE", "PrimeField", "Fr", "Fq"]
