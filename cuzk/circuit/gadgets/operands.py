"""Argument checks shared by the gadgets: a misuse inside ``define()`` is a :class:`CircuitError`
that names the gadget, not a bare ``TypeError`` from deep in a loop.

    >>> sequence([1, 2], "poseidon inputs")
    [1, 2]
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from cuzk.errors import CircuitError

__all__ = ["sequence", "index"]


def sequence(x, what: str) -> list:
    """``x`` (a list, tuple or 1-D array) as a list; anything else is refused by name."""
    if isinstance(x, (str, bytes)) or not (isinstance(x, Sequence) or hasattr(x, "__array__")):
        raise CircuitError(f"{what} must be a sequence (list, tuple, array), got {type(x).__name__}")
    return list(x)


def index(x, what: str, stop: int) -> int:
    """``x`` as an int in [0, stop); a bool, float or out-of-range value is refused by name."""
    try:
        i = None if isinstance(x, bool) else operator.index(x)
    except TypeError:
        i = None
    if i is None or not 0 <= i < stop:
        raise CircuitError(f"{what} must be an int in [0, {stop}), got {x!r}")
    return i
