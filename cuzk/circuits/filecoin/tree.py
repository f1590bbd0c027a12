"""Native Filecoin Merkle trees: every layer of a (base, sub, top) tree, its paths and root.

Layer 0 holds the leaves (32-byte little-endian nodes, each a canonical Fr element, as sector
replicas store them); every next layer hashes consecutive groups of its level's arity with
neptune's MerkleTree Poseidon. Base trees sit side by side in leaf order, so one pass per level
covers all of them, and the sub and top levels are just two more layers (see
:mod:`~cuzk.circuits.filecoin.shapes`).

    >>> t = build_tree(list(range(64)), (8, 0, 0))
    >>> from cuzk.circuits.filecoin.poseidon import poseidon_hash
    >>> t.root == poseidon_hash([poseidon_hash(list(range(8 * i, 8 * i + 8))) for i in range(8)])
    True
    >>> path = t.path(9); [len(level) for level in path]
    [7, 7]
    >>> merkle_root_native(t.leaf(9), 9, path, t.shape) == t.root
    True
"""

from __future__ import annotations

import operator

import attrs
import numpy as np

from cuzk.circuits.filecoin.poseidon import _field_ints, hash_nodes, poseidon_hash
from cuzk.circuits.filecoin.shapes import NODE_SIZE, TreeShape
from cuzk.errors import FieldValueError, InputError
from cuzk.field import Fr

__all__ = ["FilecoinTree", "build_tree", "leaves_from_bytes", "merkle_root_native", "check_challenge"]


def leaves_from_bytes(data) -> np.ndarray:
    """Sector bytes -> (n, 4) Montgomery leaves (32-byte little-endian nodes, each < r).

    Raises:
        InputError: a length that is not a whole number of nodes, or a node >= r (Filecoin's
            Fr32 padding keeps the top two bits of every node zero).
    """
    data = bytes(data)
    if not data or len(data) % NODE_SIZE:
        raise InputError(f"sector data must be a non-empty whole number of {NODE_SIZE}-byte nodes, got {len(data)} bytes")
    try:
        return Fr.from_bytes(data, byteorder="little")
    except FieldValueError as e:
        raise InputError(f"sector data holds a node that is not a canonical Fr element: {e}") from None


def _leaves(leaves) -> np.ndarray:
    if isinstance(leaves, (bytes, bytearray, memoryview)):
        return leaves_from_bytes(leaves)
    if isinstance(leaves, np.ndarray) and leaves.dtype == np.uint64 and leaves.ndim == 2:
        return Fr.from_ints(Fr.to_ints(leaves))  # validates range: a Montgomery array
    return Fr.from_ints(_field_ints(leaves, "leaves"))


def check_challenge(challenge, leaves: int) -> int:
    """``challenge`` as an int in [0, leaves); InputError otherwise."""
    try:
        c = operator.index(challenge)
    except TypeError:
        raise InputError(f"a challenge must be an int leaf index, got {type(challenge).__name__}") from None
    if not 0 <= c < leaves:
        raise InputError(f"challenge {c} is beyond the tree: it has {leaves} leaves (0 <= challenge < {leaves})")
    return c


@attrs.frozen(eq=False)
class FilecoinTree:
    """All layers of one tree (Montgomery (n, 4) arrays, leaves first, root last)."""

    shape: TreeShape
    layers: tuple

    @property
    def root(self) -> int:
        return Fr.to_ints(self.layers[-1])[0]

    def leaf(self, challenge) -> int:
        c = check_challenge(challenge, self.shape.leaves)
        return Fr.to_ints(self.layers[0][c:c + 1])[0]

    def path(self, challenge) -> list[list[int]]:
        """Per level (leaf first), the ``arity - 1`` siblings of the node on ``challenge``'s path."""
        idx = check_challenge(challenge, self.shape.leaves)
        out = []
        for layer, a in zip(self.layers, self.shape.levels):
            pos, start = idx % a, idx - idx % a
            kids = Fr.to_ints(layer[start:start + a])
            out.append(kids[:pos] + kids[pos + 1:])
            idx //= a
        return out


def build_tree(leaves, shape=(8, 0, 0)) -> FilecoinTree:
    """Build every layer of a ``shape`` tree over ``leaves`` (ints, sector bytes, or a Montgomery array).

    Raises:
        InputError: leaves that do not fill the shape, or that are not canonical Fr elements.
    """
    layer = _leaves(leaves)
    shape = shape if isinstance(shape, TreeShape) else TreeShape.of(shape, int(layer.shape[0]))
    if layer.shape[0] != shape.leaves:
        raise InputError(f"the tree shape has {shape.leaves} leaves, got {layer.shape[0]}")
    layers = [layer]
    for a in shape.levels:
        layer = hash_nodes(np.ascontiguousarray(layer.reshape(-1, a, 4)))
        layers.append(layer)
    return FilecoinTree(shape=shape, layers=tuple(layers))


def merkle_root_native(leaf: int, challenge: int, path, shape: TreeShape) -> int:
    """The root reached from ``leaf`` at ``challenge`` through ``path`` (per level siblings)."""
    idx = check_challenge(challenge, shape.leaves)
    node = leaf
    if len(path) != len(shape.levels):
        raise InputError(f"a path of this tree has {len(shape.levels)} levels, got {len(path)}")
    for level, (siblings, a) in enumerate(zip(path, shape.levels)):
        siblings = list(siblings)
        if len(siblings) != a - 1:
            raise InputError(f"path level {level}: expected {a - 1} siblings, got {len(siblings)}")
        pos = idx % a
        node = poseidon_hash(siblings[:pos] + [node] + siblings[pos:])
        idx //= a
    return node
