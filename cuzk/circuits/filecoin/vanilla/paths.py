"""What the readers and writers say when something fails: the JSON path, the value, the field.

A reader descends with ``(parent, key)`` pairs, which cost one tuple per step; the dotted text
(``$.vanilla_proofs.StackedDrg2KiBV1[0][1].seed``) is made from them only for an error.

    >>> render(((((None, "a"), 0), "b"), 3))
    '$.a[0].b[3]'
"""

from __future__ import annotations

import json

from cuzk.errors import InputError, VanillaFormatError

__all__ = ["render", "fail", "show", "build"]


def render(path) -> str:
    """The text of a ``(parent, key)`` chain: ``.key`` for a field, ``[i]`` for an index."""
    keys = []
    while path is not None:
        path, key = path
        keys.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "$" + "".join(reversed(keys))


def fail(where: str, path, message: str):
    """Raise the :class:`~cuzk.errors.VanillaFormatError` naming ``where``, the field and the problem."""
    text = render(path)
    raise VanillaFormatError(f"{where}: {text}: {message}", path=text)


def show(v) -> str:
    """A value for a message: short, and never the whole of a large array."""
    if isinstance(v, (list, dict)):
        return f"{type(v).__name__} of {len(v)}"
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64:
        return f"an integer of {v.bit_length()} bits"  # str() of a huge int is slow, then refused
    text = json.dumps(v) if isinstance(v, (str, int, float, bool, type(None))) else type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def build(make, value, path, where, name, spread=True):
    """``make(**value)`` (a struct's class) or ``make(value)`` (``spread=False``: a Mapped load),
    the class's own refusals reported at ``path``."""
    try:
        return make(**value) if spread else make(value)
    except (InputError, ValueError, TypeError) as e:  # the class's own checks (lengths, ranges)
        fail(where, path, f"not a valid {name}: {e}")
