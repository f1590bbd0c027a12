"""Merkle inclusion paths (arity 2 and 8) with Poseidon, in-circuit and native.

A path of ``depth`` levels lists, per level, the ``arity - 1`` siblings in left-to-right order
with the current node left out; the position of the current node among its ``arity`` children
is the next ``log2(arity)`` bits of the leaf index (least significant first).

    >>> from cuzk.circuit import ConstraintSystem
    >>> tree = [[11, 12], [poseidon_hash([11, 12])]]
    >>> root = merkle_root_native(12, 1, [[11]], arity=2); root == tree[1][0]
    True
"""

from __future__ import annotations

from cuzk.circuit.gadgets.boolean import and_, not_
from cuzk.circuit.gadgets.operands import index as _index
from cuzk.circuit.gadgets.operands import sequence
from cuzk.circuit.gadgets.poseidon import poseidon
from cuzk.circuit.gadgets.poseidon_params import poseidon_hash
from cuzk.circuit.lc import lincomb
from cuzk.errors import CircuitError

__all__ = ["merkle_root", "merkle_root_native", "ARITY_BITS"]

ARITY_BITS = {2: 1, 8: 3}


def _arity_bits(arity: int) -> int:
    if arity not in ARITY_BITS:
        raise CircuitError(f"Merkle arity must be 2 or 8, got {arity!r}")
    return ARITY_BITS[arity]


def merkle_root_native(leaf: int, index: int, path, arity: int = 2) -> int:
    """Root reached from ``leaf`` at position ``index`` through ``path`` (Python ints)."""
    w = _arity_bits(arity)
    path = [sequence(s, f"merkle path level {i}") for i, s in enumerate(sequence(path, "merkle path"))]
    index = _index(index, "leaf index", arity ** len(path))  # a wrong index would give another root
    node = leaf
    for level, siblings in enumerate(path):
        if len(siblings) != arity - 1:
            raise CircuitError(f"level {level}: expected {arity - 1} siblings, got {len(siblings)}")
        pos = (index >> (w * level)) & (arity - 1)
        children = list(siblings[:pos]) + [node] + list(siblings[pos:])
        node = poseidon_hash(children)
    return node


def _one_hot(cs, bits):
    """The 2^len(bits) indicators e_j = [index == j] from boolean bits (LSB first)."""
    sel = [cs.one]
    for b in bits:
        nb = not_(b)
        sel = [and_(s, nb) if s is not cs.one else nb for s in sel] + [and_(s, b) if s is not cs.one else b for s in sel]
    return sel


def merkle_root(cs, leaf, path, index_bits, arity: int = 2):
    """The root computed in-circuit from ``leaf``, ``path`` and boolean ``index_bits``.

    ``index_bits`` must already be constrained boolean (e.g. from ``to_bits``); it holds
    ``log2(arity)`` bits per level. Arity 2 costs one product per level plus the hash; arity 8
    builds a one-hot selector (8 products after the first level's 2 + 4) and positions the
    node with 2 products per child.
    """
    w = _arity_bits(arity)
    path = [sequence(s, f"merkle path level {i}") for i, s in enumerate(sequence(path, "merkle path"))]
    index_bits = sequence(index_bits, "merkle index bits")
    if len(index_bits) != w * len(path):
        raise CircuitError(f"need {w * len(path)} index bits for {len(path)} levels, got {len(index_bits)}")
    node = cs._lc(leaf)
    for level, siblings in enumerate(path):
        siblings = [cs._lc(s) for s in siblings]
        if len(siblings) != arity - 1:
            raise CircuitError(f"level {level}: expected {arity - 1} siblings, got {len(siblings)}")
        bits = index_bits[w * level: w * (level + 1)]
        with cs.namespace(f"merkle{level}"):
            if arity == 2:
                # left = node + b*(sib - node), right = sib + node - left: one product
                d = bits[0] * (siblings[0] - node)
                left = lincomb(((1, node), (1, d)))
                right = lincomb(((1, siblings[0]), (-1, d)))
                children = [left, right]
            else:
                e = _one_hot(cs, bits)
                children, before = [], None  # before = sum_{i<j} e_i: node sits left of child j
                for j in range(arity):
                    g = e[j] if before is None else lincomb(((1, before), (1, e[j])))
                    parts = [(1, e[j] * node)]
                    if j > 0:  # child j is sibling j-1 when the node sits left of it
                        parts.append((1, (g - e[j]) * siblings[j - 1]))
                    if j < arity - 1:  # child j is sibling j when the node sits right of it
                        parts.append((1, (1 - g) * siblings[j]))
                    children.append(lincomb(parts))
                    before = g
            node = poseidon(cs, children)
    return node
