"""Boolean gadgets on combinations already constrained to {0, 1} (see ``cs.assert_bool``).

Each takes and returns :class:`~cuzk.circuit.LinearCombination` values; a product of two
non-constant operands costs one constraint, everything else is linear.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); a, b = cs.private(1), cs.private(0)
    >>> for v in (a, b): cs.assert_bool(v)
    >>> r = xor(a, b); cs.n_constraints      # two assert_bool rows + one product
    3
"""

from __future__ import annotations

from cuzk.circuit.lc import lincomb

__all__ = ["and_", "or_", "xor", "not_", "select"]


def and_(a, b):
    """a AND b = a * b (one constraint)."""
    return a * b


def or_(a, b):
    """a OR b = a + b - a*b (one constraint)."""
    return lincomb(((1, a), (1, b), (-1, a * b)))


def xor(a, b):
    """a XOR b = a + b - 2*a*b (one constraint)."""
    return lincomb(((1, a), (1, b), (-2, a * b)))


def not_(a):
    """NOT a = 1 - a (linear)."""
    return 1 - a


def select(cond, when_true, when_false):
    """``when_true if cond else when_false`` for a boolean ``cond`` (one constraint).

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); c, x, y = cs.private(1), cs.private(7), cs.private(9)
    >>> s = select(c, x, y); cs.n_constraints
    1
    """
    return lincomb(((1, when_false), (1, cond * (when_true - when_false))))
