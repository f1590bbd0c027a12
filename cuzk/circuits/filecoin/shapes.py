"""Filecoin sector sizes and Merkle tree shapes (base / sub / top arity), as rust-fil-proofs defines them.

A Filecoin tree over ``leaves`` 32-byte nodes is ``sub * top`` base trees of arity ``base``
(0 for an absent sub or top level counts as 1), side by side in leaf order; the sub level hashes
``sub`` base roots, the top level ``top`` sub roots. A leaf's path therefore climbs
``base_height`` base levels, then one sub level and one top level when present, and the path's
insertion indices, log2(arity) bits per level from the leaf up, are the bits of the leaf index.

    >>> s = shape_for_sector(32 << 30)
    >>> s.arities, s.base_height, s.levels, s.path_bits
    ((8, 8, 0), 9, (8, 8, 8, 8, 8, 8, 8, 8, 8, 8), 30)
    >>> TreeShape.of((8, 8, 2), 64 * 16).levels
    (8, 8, 8, 2)
"""

from __future__ import annotations

import attrs

from cuzk.errors import InputError

__all__ = [
    "TreeShape", "shape_for_sector", "SECTOR_SHAPES", "NODE_SIZE", "KIB", "MIB", "GIB",
    "WINDOW_POST_SECTOR_COUNT", "WINDOW_POST_CHALLENGE_COUNT", "WINNING_POST_CHALLENGE_COUNT",
]

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
NODE_SIZE = 32  # bytes per leaf (one Fr element)

#: sector size -> (base, sub, top) arities (rust-fil-proofs' filecoin-proofs constants)
SECTOR_SHAPES = {
    2 * KIB: (8, 0, 0), 4 * KIB: (8, 2, 0), 16 * KIB: (8, 8, 0), 32 * KIB: (8, 8, 2),
    8 * MIB: (8, 0, 0), 16 * MIB: (8, 2, 0), 512 * MIB: (8, 0, 0), 1 * GIB: (8, 2, 0),
    32 * GIB: (8, 8, 0), 64 * GIB: (8, 8, 2),
}
#: sectors per WindowPoSt partition (one Groth16 proof), by sector size
WINDOW_POST_SECTOR_COUNT = {size: 2 for size in SECTOR_SHAPES} | {32 * GIB: 2349, 64 * GIB: 2300}
WINDOW_POST_CHALLENGE_COUNT = 10  # challenges per sector in WindowPoSt
WINNING_POST_CHALLENGE_COUNT = 66  # challenges of the one WinningPoSt sector

_ARITIES = (2, 4, 8)


@attrs.frozen
class TreeShape:
    """A Filecoin tree: arities ``(base, sub, top)`` (sub/top 0 = absent) over ``leaves`` leaves."""

    base: int
    sub: int
    top: int
    leaves: int

    @classmethod
    def of(cls, shape, leaves) -> "TreeShape":
        """Validate ``shape`` = (base, sub, top) and ``leaves``; raises InputError naming the problem."""
        try:
            base, sub, top = (int(a) if isinstance(a, int) and not isinstance(a, bool) else a for a in shape)
        except (TypeError, ValueError):
            raise InputError(f"tree shape must be (base, sub, top) arities, got {shape!r}") from None
        if base not in _ARITIES or sub not in (0, *_ARITIES) or top not in (0, *_ARITIES):
            raise InputError(f"tree arities must be in {_ARITIES} (sub and top may be 0), got {shape!r}")
        if top and not sub:
            raise InputError(f"a top arity needs a sub arity, got {shape!r}")
        if not isinstance(leaves, int) or isinstance(leaves, bool) or leaves < 1:
            raise InputError(f"leaves must be a positive int, got {leaves!r}")
        trees = max(sub, 1) * max(top, 1)
        per, height = leaves // trees, 0
        while per > 1 and per % base == 0:
            per //= base
            height += 1
        if leaves % trees or per != 1 or height < 1:
            raise InputError(
                f"{leaves} leaves do not fill a ({base}, {sub}, {top}) tree: need {trees} base trees of "
                f"{base}^h leaves each (h >= 1)"
            )
        return cls(base, sub, top, leaves)

    @property
    def arities(self) -> tuple:
        return (self.base, self.sub, self.top)

    @property
    def base_trees(self) -> int:
        """Number of base trees (sub * top, absent levels counting 1)."""
        return max(self.sub, 1) * max(self.top, 1)

    @property
    def base_height(self) -> int:
        n, h = self.leaves // self.base_trees, 0
        while n > 1:
            n //= self.base
            h += 1
        return h

    @property
    def levels(self) -> tuple:
        """The arity of each level a path climbs, leaf first."""
        return (self.base,) * self.base_height + tuple(a for a in (self.sub, self.top) if a)

    @property
    def path_bits(self) -> int:
        """Bits of the packed path input (log2 leaves)."""
        return self.leaves.bit_length() - 1

    @property
    def siblings(self) -> int:
        """Sibling nodes on one path."""
        return sum(a - 1 for a in self.levels)


def shape_for_sector(sector_size, shape=None) -> TreeShape:
    """The tree of a sector of ``sector_size`` bytes: Filecoin's shape, or ``shape`` if given.

    Raises:
        InputError: a size not in Filecoin's table (without ``shape``), not a whole number of
            32-byte nodes, or leaves that do not fill ``shape``.
    """
    if not isinstance(sector_size, int) or isinstance(sector_size, bool) or sector_size <= 0:
        raise InputError(f"sector_size must be a positive int of bytes, got {sector_size!r}")
    if shape is None:
        if sector_size not in SECTOR_SHAPES:
            known = ", ".join(_size_name(s) for s in sorted(SECTOR_SHAPES))
            raise InputError(f"sector size {sector_size} is not a Filecoin sector size ({known}); pass shape= for others")
        shape = SECTOR_SHAPES[sector_size]
    if sector_size % NODE_SIZE:
        raise InputError(f"sector size {sector_size} is not a whole number of {NODE_SIZE}-byte nodes")
    return TreeShape.of(shape, sector_size // NODE_SIZE)


def _size_name(n: int) -> str:
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} B"
