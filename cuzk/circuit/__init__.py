"""The circuit DSL: :class:`Circuit`, :class:`ConstraintSystem`, variables and combinations.

    >>> from cuzk.circuit import Circuit
    >>> class Cube(Circuit):
    ...     def define(self, cs, x, out):
    ...         x, out = cs.private(x), cs.public(out)
    ...         cs.assert_equal(x * x * x + x + 5, out)
"""

from cuzk.circuit.circuit import Circuit
from cuzk.circuit.cs import ConstraintSystem
from cuzk.circuit.lc import MAX_TERMS, LinearCombination, Value, Variable, lincomb

__all__ = ["Circuit", "ConstraintSystem", "LinearCombination", "Variable", "Value", "lincomb", "MAX_TERMS"]
