"""``cs.repeat`` for chains: one traced template stamped at many points of a circuit.

``cs.repeat(fn, items)`` stamps ``k`` independent instances at one point; a SHA-256 message's
compressions form a chain (each one's input state is the previous one's output), so each must
be stamped on its own, after the one before. :class:`TemplateCache` traces ``fn`` once per
argument structure (the ``cs.repeat`` binding: leaf kinds, static values, aliasing) and every
later call with the same structure records a one-instance block of the *same* template: the
compile turns each template into a fragment once (cuzk/synth/placement.py keys them by the
template), so a chain of ``n`` compressions costs one trace. The rows, variables and witness are
those of calling ``fn`` in place, as with ``cs.repeat`` (cuzk/circuit/stamp.py).

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); cache = TemplateCache()
    >>> def step(cs, x):
    ...     return cs.materialize(x * x + 1)
    >>> x = cs.private(3)
    >>> for _ in range(4):                  # x <- x * x + 1, four times: a chain
    ...     x = cache.call(cs, step, x)
    >>> cs.n_constraints, cache.traced      # 2 rows per link, one trace
    (8, 1)
"""

from __future__ import annotations

import numpy as np

from cuzk.circuit import stamp
from cuzk.errors import CircuitError

__all__ = ["TemplateCache"]


class TemplateCache:
    """Traced templates by ``(enclosing system, fn, argument structure)``; see the module docstring.

    Attributes:
        traced: how many templates were traced (the rest of the calls reused one).
    """

    def __init__(self):
        self._entries: dict = {}
        self.traced = 0

    def call(self, cs, fn, *args, name: str | None = None):
        """``fn(cs, *args)``, stamped from the cached template when one fits (its one result)."""
        items = [tuple(args)]
        tree0, specs, keys, vals = stamp._bind(cs, items, 1)
        cls, reps = stamp._classes(keys)
        key = (id(cs), fn, tuple(specs), cls.tobytes())
        ent = self._entries.get(key)
        if ent is None:
            t = cs._template()
            targs = stamp._template_args(t, tree0, specs, cls, reps.shape[0])
            before = (len(cs._var_kind), len(cs.a), len(cs._blocks), len(cs.input_names))
            out = fn(t, *targs)
            if (len(cs._var_kind), len(cs.a), len(cs._blocks), len(cs.input_names)) != before:
                raise CircuitError("a function given to TemplateCache.call added to the enclosing constraint "
                                   "system; it must use only the cs it is called with")
            # the entry keeps cs alive, so its id cannot be reused by another system
            ent = self._entries[key] = (cs, t, out)
            self.traced += 1
        _, t, out = ent
        block = stamp._record(cs, t, 1, np.ascontiguousarray(keys[:, reps]), vals, name, out)
        return stamp.Repeated(cs, block, 1)[0]
