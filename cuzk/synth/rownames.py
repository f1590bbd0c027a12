"""Constraint names without one Python string per row: stamped instances name their rows on
demand (``prefix/instance-namespace/template-name``), exactly as a hand trace would have.

    >>> t = ("a", None)                                  # a template's own two rows
    >>> n = RowNames([["root"], StampedNames(t, 3, ("sector",), "c{i}")])
    >>> len(n), n[0], n[1], n[6], list(n)[-1]
    (7, 'root', 'sector/c0/a', 'sector/c2', 'sector/c2')
    >>> decode_names(encode_names(n)) == n                # the PCE file's compact form
    True
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import attrs

__all__ = ["RowNames", "StampedNames", "full_name", "encode_names", "decode_names"]

_MAX_NESTING = 16  # repeats inside repeats a names encoding may hold


def full_name(prefix: tuple, inst: str | None, tname: str | None) -> str | None:
    """A row name as ``ConstraintSystem._name`` forms it inside ``namespace(inst)`` under ``prefix``."""
    parts = [*prefix, inst] if inst is not None else list(prefix)
    if tname is None:
        return "/".join(parts) if parts else None
    return "/".join([*parts, tname])


@attrs.frozen
class StampedNames:
    """The names of ``k`` stamped instances of a template whose own rows are named ``names``."""

    names: Sequence  # the template's row names (a RowNames, tuple or list)
    k: int
    prefix: tuple  # the enclosing namespace at the repeat call
    pattern: str | None  # the per-instance namespace; "{i}" is the instance index

    def __len__(self) -> int:
        return len(self.names) * self.k

    def __getitem__(self, off: int):
        i, j = divmod(off, len(self.names))
        inst = None if self.pattern is None else self.pattern.replace("{i}", str(i))
        return full_name(self.prefix, inst, self.names[j])


class RowNames(Sequence):
    """A read-only sequence of row names made of segments: lists of names, and
    :class:`StampedNames` of stamped instances."""

    def __init__(self, segments):
        self._starts, self._segs, n = [], [], 0
        for seg in segments:
            if len(seg):
                self._starts.append(n)
                self._segs.append(seg)
                n += len(seg)
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, r):
        if isinstance(r, slice):
            return [self[i] for i in range(*r.indices(self._n))]
        if not -self._n <= r < self._n:
            raise IndexError(f"row {r} of {self._n}")
        r %= self._n
        s = bisect.bisect_right(self._starts, r) - 1
        return self._segs[s][r - self._starts[s]]

    def __eq__(self, other):
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)) or len(other) != self._n:
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self):
        return f"RowNames({self._n} rows, {len(self._segs)} segments)"


def encode_names(names):
    """JSON-ready names: a list, or for stamped circuits ``{"segments": [...]}`` where a
    segment is a list of names or ``{"k", "prefix", "pattern", "names"}`` (O(template) size)."""
    if not isinstance(names, RowNames):
        return list(names)
    return {"segments": [
        {"k": g.k, "prefix": list(g.prefix), "pattern": g.pattern, "names": encode_names(g.names)}
        if isinstance(g, StampedNames) else list(g) for g in names._segs]}


def decode_names(obj, depth: int = 0):
    """Inverse of :func:`encode_names` for untrusted input; raises ValueError naming the problem."""
    if isinstance(obj, list):
        if any(n is not None and not isinstance(n, str) for n in obj):
            raise ValueError("a constraint name is neither a string nor null")
        return tuple(obj)
    if not isinstance(obj, dict) or set(obj) != {"segments"} or not isinstance(obj["segments"], list):
        raise ValueError("names are neither a list nor {segments: [...]}")
    if depth >= _MAX_NESTING:
        raise ValueError(f"names nest stamped blocks more than {_MAX_NESTING} deep")
    segs = []
    for g in obj["segments"]:
        if isinstance(g, list):
            segs.append(decode_names(g, depth + 1))
            continue
        if not isinstance(g, dict) or set(g) != {"k", "prefix", "pattern", "names"}:
            raise ValueError("a names segment is neither a list nor {k, prefix, pattern, names}")
        k, prefix, pattern = g["k"], g["prefix"], g["pattern"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"stamped names: k = {k!r:.40} is not a non-negative integer")
        if not isinstance(prefix, list) or any(not isinstance(p, str) for p in prefix):
            raise ValueError("stamped names: prefix is not a list of strings")
        if pattern is not None and not isinstance(pattern, str):
            raise ValueError("stamped names: pattern is neither a string nor null")
        segs.append(StampedNames(decode_names(g["names"], depth + 1), k, tuple(prefix), pattern))
    return RowNames(segs)
