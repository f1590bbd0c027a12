"""Batched equalities of small numbers, as bellperson's ``MultiEq`` packs them.

``enforce_equal(num_bits, lhs, rhs)`` promises ``lhs == rhs`` where both sides are below
``2^num_bits``; instead of one row each, the sides are shifted into one running pair
``sum 2^offset * lhs_i`` / ``sum 2^offset * rhs_i`` and written as a single row ``L * 1 = R``
once the next equality would not fit below the field's capacity (r's bit length - 1 = 254 for
BLS12-381), and when the batch is closed. Since no side overflows its slot, the packed row holds
exactly when every equality does. SHA-256's additions share one MultiEq per compression.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); x = cs.private(5); y = cs.private(5)
    >>> with MultiEq(cs) as eq:
    ...     eq.enforce_equal(3, x.terms, y.terms)
    ...     eq.enforce_equal(3, y.terms, x.terms)
    >>> cs.n_constraints, cs.names
    (1, ['multieq 0'])
"""

from __future__ import annotations

from cuzk.circuit.lc import LinearCombination
from cuzk.errors import CircuitError

__all__ = ["MultiEq"]


class MultiEq:
    """Accumulator of equalities over ``cs``; a context manager that flushes on exit.

    Args:
        cs: the constraint system the packed rows go to.
    """

    def __init__(self, cs):
        self.cs = cs
        self.capacity = cs.modulus.bit_length() - 1
        self.ops = 0
        self.bits_used = 0
        self.lhs: dict = {}
        self.rhs: dict = {}

    def _accumulate(self) -> None:
        cs = self.cs
        cs.enforce(LinearCombination(cs, self.lhs), cs.one, LinearCombination(cs, self.rhs), name=f"multieq {self.ops}")
        self.lhs, self.rhs = {}, {}
        self.bits_used = 0
        self.ops += 1

    def enforce_equal(self, num_bits: int, lhs: dict, rhs: dict) -> None:
        """Add ``lhs == rhs`` (term dicts, both below ``2^num_bits``) to the batch.

        Raises:
            CircuitError: ``num_bits`` alone does not fit below the capacity.
        """
        if self.bits_used + num_bits >= self.capacity:
            self._accumulate()
        if num_bits >= self.capacity:
            raise CircuitError(f"MultiEq: a {num_bits}-bit equality does not fit below {self.capacity} bits")
        r = self.cs.modulus
        coeff = 1 << self.bits_used
        for acc, side in ((self.lhs, lhs), (self.rhs, rhs)):
            for k, v in side.items():
                nv = (acc.get(k, 0) + coeff * v) % r
                if nv:
                    acc[k] = nv
                else:
                    acc.pop(k, None)
        self.bits_used += num_bits

    def close(self) -> None:
        """Write the pending batch, if any (bellperson does this when the MultiEq is dropped)."""
        if self.bits_used > 0:
            self._accumulate()

    def __enter__(self) -> "MultiEq":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
