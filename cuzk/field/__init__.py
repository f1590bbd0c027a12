"""BLS12-381 field parameters and Montgomery kernels (Fr, Fq, Fq2, Fq6, Fq12)."""

from cuzk.field.params import FQ, FQ2_NONRESIDUE, FR, FieldParams

__all__ = ["FieldParams", "FR", "FQ", "FQ2_NONRESIDUE"]
