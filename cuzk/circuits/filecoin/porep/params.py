"""PoRep circuit parameters: Filecoin's production values per sector size, or a test shape.

Production (filecoin-proofs' constants): sectors up to 1 GiB have 2 layers, 2 interactive
challenges in 1 partition; 32 and 64 GiB sectors 11 layers and 176 challenges in 10 partitions
(18 per partition, the last slice short of none: rust-fil-proofs rounds up). Trees R and C have
the sector's shape (:data:`~cuzk.circuits.filecoin.shapes.SECTOR_SHAPES`).

    >>> p = porep_params(32 << 30)
    >>> p.nodes, p.layers, p.challenge_count, p.partitions, p.shape.arities
    (1073741824, 11, 18, 10, (8, 8, 0))
    >>> porep_params(nodes=8, layers=2, challenge_count=1, shape=(2, 0, 0)).shape.levels
    (2, 2, 2)
"""

from __future__ import annotations

import attrs

from cuzk.circuits.filecoin.poseidon import ARITIES
from cuzk.circuits.filecoin.shapes import GIB, NODE_SIZE, SECTOR_SHAPES, TreeShape
from cuzk.errors import InputError

__all__ = ["PorepParams", "porep_params", "DRG_DEGREE", "EXP_DEGREE", "COLUMN_ARITIES"]

DRG_DEGREE = 6  # base (bucket) graph parents per node (BASE_DEGREE)
EXP_DEGREE = 8  # expander parents per node from the previous layer (EXP_DEGREE)
#: layer counts the column hash supports: rust-fil-proofs' hash_single_column has arities 2 and 11
COLUMN_ARITIES = (2, 11)

_BIG = (32 * GIB, 64 * GIB)


@attrs.frozen
class PorepParams:
    """One partition's shape: graph nodes, layers, challenges, tree R/C shape, partitions."""

    nodes: int
    layers: int
    challenge_count: int
    shape: TreeShape
    partitions: int
    total_challenges: int


def _positive(x, what: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or x < 1:
        raise InputError(f"{what} must be a positive int, got {x!r}")
    return x


def porep_params(sector_size=None, *, nodes=None, layers=None, challenge_count=None, shape=None) -> PorepParams:
    """Production parameters of ``sector_size`` with any keyword overriding them.

    Without ``sector_size`` all four keywords are needed.

    Raises:
        InputError: an unknown sector size, missing keywords, a layer count outside
            :data:`COLUMN_ARITIES`, nodes that are not a power of two or do not fill the shape.
    """
    if sector_size is not None:
        if sector_size not in SECTOR_SHAPES:
            raise InputError(f"sector size {sector_size!r} is not a Filecoin sector size; pass nodes=, layers=, "
                             "challenge_count= and shape= for a test shape")
        big = sector_size in _BIG
        d_nodes, d_layers, d_shape = sector_size // NODE_SIZE, 11 if big else 2, SECTOR_SHAPES[sector_size]
        total, parts = (176, 10) if big else (2, 1)
    else:
        missing = [k for k, v in (("nodes", nodes), ("layers", layers), ("challenge_count", challenge_count),
                                  ("shape", shape)) if v is None]
        if missing:
            raise InputError(f"without a sector size StackedCircuit needs {', '.join(missing)}")
        d_nodes = d_layers = d_shape = None
        total, parts = None, 1
    nodes = _positive(d_nodes if nodes is None else nodes, "nodes")
    layers = _positive(d_layers if layers is None else layers, "layers")
    if layers not in COLUMN_ARITIES or layers not in ARITIES:
        raise InputError(f"layers must be one of {COLUMN_ARITIES} (the column hash's Poseidon arities), got {layers}")
    if nodes & (nodes - 1) or nodes < 2:
        raise InputError(f"nodes must be a power of two >= 2 (tree D is binary), got {nodes}")
    tree = TreeShape.of(d_shape if shape is None else shape, nodes)
    if challenge_count is None:
        challenge_count = -(-total // parts)
    else:
        _positive(challenge_count, "challenge_count")
        total = challenge_count * parts
    return PorepParams(nodes, layers, challenge_count, tree, parts, total)
