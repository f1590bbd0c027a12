"""The :class:`Circuit` base class and circuit input shapes.

A circuit is a class with ``define(self, cs, **inputs)``. Input names come from ``define``'s
signature; every input is one Fr element unless :meth:`Circuit.input_shapes` says otherwise
(a tuple shape such as ``(4,)`` or ``(4, 10)``: the input is then a nested list of that shape,
and ``define`` receives a nested list of placeholders it can iterate over).

    >>> class Cube(Circuit):
    ...     def define(self, cs, x, out):
    ...         x, out = cs.private(x), cs.public(out)
    ...         cs.assert_equal(x * x * x + x + 5, out)
    >>> Cube().input_shapes()
    {'x': (), 'out': ()}
"""

from __future__ import annotations

import inspect

from cuzk.errors import CircuitError

__all__ = ["Circuit"]


class Circuit:
    """Base class of user circuits; subclasses implement :meth:`define`."""

    def define(self, cs, **inputs) -> None:
        """Allocate variables and add constraints on ``cs``; see the module docstring."""
        raise NotImplementedError(f"{type(self).__name__} must implement define(self, cs, **inputs)")

    def input_shapes(self) -> dict:
        """Name -> shape (tuple of ints; ``()`` for a single element) of every input.

        The default reads ``define``'s parameters after ``cs``; each is a scalar.
        """
        if getattr(type(self), "define", Circuit.define) is Circuit.define:
            raise CircuitError(f"{type(self).__name__} does not implement define()")
        params = list(inspect.signature(self.define).parameters.values())
        if not params:
            raise CircuitError("define() must take the constraint system as its first argument")
        shapes = {}
        for p in params[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise CircuitError(
                    f"define() parameter {p.name!r} is variadic; override input_shapes() to name the inputs"
                )
            shapes[p.name] = ()
        return shapes
