"""SnapDeals (EmptySectorUpdate) parameters by sector size, as rust-fil-proofs' storage-proofs-update sets them.

A sector update proof is cut into partitions; each partition proves ``challenge_count`` nodes,
all inside its own ``1 / partition_count`` slice of the sector (the partition index is the
challenge's top bits). Tree D (the new data's binary SHA-256 tree) is split the same way: the
top ``partition_bit_len`` levels are the *partition tree*, under each of its leaves sits the
partition's *apex tree* of ``apex_leaf_count`` leaves, and a challenge's tree-D path is proved in
circuit only up to its apex leaf. The encoding's randomness ``rho`` depends on the ``h`` high
bits of a node's index; ``h`` is one of six hard-wired values ``hs`` (picked by the public
``h_select = 2^i``), ``hs[3]`` by default.

=========  =====  ==========  ==========  ========  ==========  ===========
size       nodes  tree R      partitions  per part  apex leafs  hs
=========  =====  ==========  ==========  ========  ==========  ===========
1 KiB      2^5    8-4-0       1           10        8           1 (x6)
2 KiB      2^6    8-0-0       1           10        8           1 (x6)
4 KiB      2^7    8-2-0       1           10        8           1 (x6)
8 KiB      2^8    8-4-0       1           10        8           1 (x6)
16 KiB     2^9    8-8-0       2           10        128         1 (x6)
32 KiB     2^10   8-8-2       2           10        128         1 (x6)
8 MiB      2^18   8-0-0       4           10        128         7..12
16 MiB     2^19   8-2-0       4           10        128         7..12
512 MiB    2^24   8-0-0       16          86        128         7..12
32 GiB     2^30   8-8-0       16          86        128         7..12
64 GiB     2^31   8-8-2       16          86        128         7..12
=========  =====  ==========  ==========  ========  ==========  ===========

The first six are rust-fil-proofs' test sizes; Filecoin's registered update proofs are 2 KiB,
8 MiB, 512 MiB, 32 GiB and 64 GiB. The Poseidon variant (tree D a Poseidon tree of tree R's
shape) is one partition of ``challenge_count * partition_count`` challenges.

    >>> p = update_params(32 << 30)
    >>> p.partition_count, p.challenge_count, p.challenge_bit_len, p.apex_leaf_bit_len, p.h_default
    (16, 86, 30, 7, 10)
    >>> update_params(nodes=32).shape.arities, h_select(1 << 30, 10)
    ((8, 4, 0), 8)
"""

from __future__ import annotations

import operator

import attrs

from cuzk.circuits.filecoin.shapes import NODE_SIZE, TreeShape
from cuzk.errors import InputError

__all__ = [
    "UPDATE_SHAPES", "REGISTERED_UPDATE_SIZES", "UpdateParams", "update_params", "partition_count",
    "challenge_count", "hs", "h_default", "h_select", "apex_leaf_count", "H_SELECT_BITS",
]

_KIB, _MIB, _GIB = 1 << 5, 1 << 15, 1 << 25  # nodes in 1 KiB / 1 MiB / 1 GiB

#: sector nodes -> tree R's (base, sub, top) arities (storage-proofs-update's validate_tree_r_shape)
UPDATE_SHAPES = {
    _KIB: (8, 4, 0), 2 * _KIB: (8, 0, 0), 4 * _KIB: (8, 2, 0), 8 * _KIB: (8, 4, 0),
    16 * _KIB: (8, 8, 0), 32 * _KIB: (8, 8, 2), 8 * _MIB: (8, 0, 0), 16 * _MIB: (8, 2, 0),
    512 * _MIB: (8, 0, 0), 32 * _GIB: (8, 8, 0), 64 * _GIB: (8, 8, 2),
}
#: the sector sizes (bytes) Filecoin registers update proofs for (RegisteredUpdateProof 0..4)
REGISTERED_UPDATE_SIZES = (2048, 8 << 20, 512 << 20, 32 << 30, 64 << 30)
#: h_select's bits: one per hard-wired h value
H_SELECT_BITS = 6


def _nodes(nodes) -> int:
    try:
        n = operator.index(nodes)
    except TypeError:
        raise InputError(f"sector nodes must be an int, got {type(nodes).__name__}") from None
    if n not in UPDATE_SHAPES:
        sizes = ", ".join(str(k * NODE_SIZE) for k in sorted(UPDATE_SHAPES))
        raise InputError(f"a sector update is defined for sectors of {sizes} bytes; got {n} nodes ({n * NODE_SIZE} bytes)")
    return n


def partition_count(nodes: int) -> int:
    """Partitions (Groth16 proofs) of one update of a ``nodes``-node sector."""
    n = _nodes(nodes)
    return 1 if n <= 8 * _KIB else 2 if n <= 32 * _KIB else 4 if n <= 16 * _MIB else 16


def challenge_count(nodes: int) -> int:
    """Challenges per partition."""
    return 10 if _nodes(nodes) <= 16 * _MIB else 86


def hs(nodes: int) -> tuple:
    """The six ``h`` values the circuit has hard-wired (``h_select = 2^i`` picks ``hs[i]``)."""
    return (1,) * H_SELECT_BITS if _nodes(nodes) <= 32 * _KIB else (7, 8, 9, 10, 11, 12)


def h_default(nodes: int) -> int:
    """The ``h`` Filecoin uses: ``hs[3]`` (10 for the registered sizes above 2 KiB)."""
    return hs(nodes)[3]


def h_select(nodes: int, h) -> int:
    """``2^i`` for the first ``i`` with ``hs[i] == h``.

    Raises:
        InputError: ``h`` is not one of the sector size's ``hs``.
    """
    allowed = hs(nodes)
    if isinstance(h, bool) or not isinstance(h, int) or h not in allowed:
        raise InputError(f"h must be one of {sorted(set(allowed))} for a {nodes * NODE_SIZE}-byte sector, got {h!r}")
    return 1 << allowed.index(h)


def apex_leaf_count(nodes: int) -> int:
    """Leaves of each partition's apex tree (the tree-D row a challenge's circuit path ends at)."""
    return 8 if _nodes(nodes) <= 8 * _KIB else 128


@attrs.frozen
class UpdateParams:
    """One sector size's update parameters (rust-fil-proofs' ``PublicParams``, plus tree R's shape)."""

    nodes: int  #: sector nodes (32 bytes each)
    shape: TreeShape  #: tree R's (and the Poseidon variant's tree D's) shape
    challenge_count: int  #: challenges per partition
    challenge_bit_len: int  #: log2(nodes): bits of a challenge, tree D's height
    partition_count: int
    partition_bit_len: int  #: height of the partition tree at the top of tree D
    apex_leaf_count: int  #: 0 in the Poseidon variant (no apex trees)
    apex_leaf_bit_len: int  #: height of each apex tree
    poseidon: bool = False  #: the Poseidon variant (one partition, tree D a Poseidon tree)

    @property
    def sector_size(self) -> int:
        return self.nodes * NODE_SIZE

    @property
    def hs(self) -> tuple:
        return hs(self.nodes)

    @property
    def h_default(self) -> int:
        return h_default(self.nodes)

    @property
    def apex_height(self) -> int:
        """Tree-D level of the apex leaves (0 = the data): a challenge's circuit path length."""
        return self.challenge_bit_len - self.partition_bit_len - self.apex_leaf_bit_len

    @property
    def random_bits_per_challenge(self) -> int:
        """Bits of a challenge drawn from the digests; the partition index supplies the rest."""
        return self.challenge_bit_len - self.partition_bit_len

    def h_select(self, h=None) -> int:
        return h_select(self.nodes, self.h_default if h is None else h)

    def check_partition(self, k) -> int:
        """``k`` as an int in [0, partition_count); InputError naming ``partition`` otherwise."""
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < self.partition_count:
            raise InputError(f"partition must be an int in [0, {self.partition_count}), got {k!r}")
        return k


def update_params(sector_size=None, *, nodes=None, shape=None, poseidon: bool = False) -> UpdateParams:
    """The update parameters of a sector of ``sector_size`` bytes, or of ``nodes`` nodes.

    Args:
        sector_size: bytes (a size of the module table).
        nodes: the same in 32-byte nodes (rust-fil-proofs' test sizes are given this way).
        shape: tree R's (base, sub, top) arities; when given it must be the size's (rust-fil-proofs
            accepts no other).
        poseidon: the Poseidon variant's parameters.

    Raises:
        InputError: neither or both of sector_size and nodes, a size without update parameters,
            a shape that is not the size's.
    """
    if (sector_size is None) == (nodes is None):
        raise InputError("give exactly one of sector_size (bytes) and nodes")
    if nodes is None:
        if isinstance(sector_size, bool) or not isinstance(sector_size, int) or sector_size % NODE_SIZE:
            raise InputError(f"sector_size must be an int number of bytes (a multiple of 32), got {sector_size!r}")
        nodes = sector_size // NODE_SIZE
    n = _nodes(nodes)
    arities = UPDATE_SHAPES[n]
    if shape is not None:
        given = shape.arities if isinstance(shape, TreeShape) else tuple(shape)
        if given != arities:
            raise InputError(f"a {n * NODE_SIZE}-byte sector's tree R has shape {arities}, got {given}")
    tree = TreeShape.of(arities, n)
    bits = n.bit_length() - 1
    if poseidon:
        return UpdateParams(nodes=n, shape=tree, challenge_count=challenge_count(n) * partition_count(n),
                            challenge_bit_len=bits, partition_count=1, partition_bit_len=0, apex_leaf_count=0,
                            apex_leaf_bit_len=0, poseidon=True)
    parts, apex = partition_count(n), apex_leaf_count(n)
    return UpdateParams(nodes=n, shape=tree, challenge_count=challenge_count(n), challenge_bit_len=bits,
                        partition_count=parts, partition_bit_len=parts.bit_length() - 1, apex_leaf_count=apex,
                        apex_leaf_bit_len=apex.bit_length() - 1)
