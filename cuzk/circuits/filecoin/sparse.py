"""A sparse Filecoin tree: a sector that holds a default node everywhere except a few leaves.

A 32 GiB sector has 2^30 leaves (a 32 GiB tree does not fit in memory here); a PoSt only reads
the challenged leaves and their paths. With every other leaf equal to ``default`` (zero: an
empty sector's replica), a subtree without a set leaf hashes to a per-level constant (the hash
of ``arity`` copies of the level below's), so the tree needs only the nodes on the paths of
the set leaves: O(set leaves × height) hashes. ``root``, ``leaf`` and ``path`` behave as
:class:`~cuzk.circuits.filecoin.tree.FilecoinTree`'s, so :class:`PostSector` takes either.

    >>> from cuzk.circuits.filecoin.tree import build_tree
    >>> s = SparseTree((8, 0, 0), 64, {5: 11, 60: 12})
    >>> full = build_tree([{5: 11, 60: 12}.get(i, 0) for i in range(64)])
    >>> s.root == full.root and s.path(60) == full.path(60) and s.path(7) == full.path(7)
    True
"""

from __future__ import annotations

from cuzk.circuits.filecoin.poseidon import _field_ints, poseidon_hash
from cuzk.circuits.filecoin.shapes import TreeShape
from cuzk.circuits.filecoin.tree import check_challenge

__all__ = ["SparseTree"]


class SparseTree:
    """The tree of ``shape`` over ``leaves`` leaves, ``set_leaves`` ({index: value}) and
    ``default`` elsewhere; only the set leaves' ancestors are computed.

    Raises:
        cuzk.errors.InputError: a shape the leaves do not fill, an index beyond the tree, a
            value that is not a canonical field element.
    """

    def __init__(self, shape, leaves: int, set_leaves: dict, default: int = 0):
        self.shape = shape if isinstance(shape, TreeShape) else TreeShape.of(shape, leaves)
        (self.default,) = _field_ints([default], "default")
        idx = [check_challenge(i, self.shape.leaves) for i in set_leaves]
        vals = _field_ints(list(set_leaves.values()), "leaf values")
        self.empty = [self.default]  # empty[l]: a node of level l over only default leaves
        self.nodes = [dict(zip(idx, vals))]  # nodes[l]: position -> value, where not empty[l]
        for a in self.shape.levels:
            below, level = self.nodes[-1], {}
            for p in sorted({i // a for i in below}):
                level[p] = poseidon_hash([below.get(p * a + j, self.empty[-1]) for j in range(a)])
            self.empty.append(poseidon_hash([self.empty[-1]] * a))
            self.nodes.append(level)

    def _node(self, level: int, pos: int) -> int:
        return self.nodes[level].get(pos, self.empty[level])

    @property
    def root(self) -> int:
        return self._node(len(self.shape.levels), 0)

    def leaf(self, challenge) -> int:
        return self._node(0, check_challenge(challenge, self.shape.leaves))

    def path(self, challenge) -> list[list[int]]:
        """Per level (leaf first), the ``arity - 1`` siblings on ``challenge``'s path."""
        idx = check_challenge(challenge, self.shape.leaves)
        out = []
        for level, a in enumerate(self.shape.levels):
            base = idx - idx % a
            out.append([self._node(level, base + j) for j in range(a) if base + j != idx])
            idx //= a
        return out
