"""Filecoin-shaped circuits with rust-fil-proofs' constraint counts (docs/filecoin.md).

neptune's Poseidon (:func:`poseidon_hash`), Filecoin Merkle trees of every (base, sub, top)
shape (:func:`build_tree`; :class:`SparseTree` for sectors too large to hold), the PoR circuit (:class:`PoR`), Fallback PoSt
(:class:`FallbackPoSt`, :func:`window_post`, :func:`winning_post`) and the sealing proof (PoRep:
:func:`seal`, :func:`commit_phase1`, :class:`StackedCircuit`, :func:`commit_phase2`) and the sector
update (SnapDeals: :func:`update`, :func:`decode`, :class:`EmptySectorUpdate`, :class:`EmptySectorUpdatePoseidon`).

    >>> from cuzk.circuits.filecoin import poseidon_hash, PoR, FallbackPoSt
    >>> hex(poseidon_hash(list(range(8))))[:12]
    '0x2394611da3'
"""

from cuzk.circuits.filecoin.challenges import API_VERSIONS, leaf_challenge
from cuzk.circuits.filecoin.por import PoR, por_challenge
from cuzk.circuits.filecoin.poseidon import ARITIES, neptune_spec, poseidon_hash
from cuzk.circuits.filecoin.post import FallbackPoSt, PostSector, window_post, winning_post, winning_post_sectors
from cuzk.circuits.filecoin.sparse import SparseTree
from cuzk.circuits.filecoin.shapes import SECTOR_SHAPES, TreeShape, shape_for_sector
from cuzk.circuits.filecoin.tree import FilecoinTree, build_tree, leaves_from_bytes, merkle_root_native
# last: the porep package imports shapes from this package
from cuzk.circuits.filecoin.porep import (
    SealCommitPhase1Output, StackedCircuit, commit_phase1, commit_phase2, interactive_challenges, ni_challenges,
    parent_cache, porep_id, replica_id, seal, synthetic_challenges, synthetic_porep_challenges,
    verify_commit_phase2,
)
from cuzk.circuits.filecoin.update import (
    EmptySectorUpdate, EmptySectorUpdatePoseidon, PartitionProof, decode, partition_proofs, prove_update, update,
    verify_update,
)

__all__ = [
    "poseidon_hash", "neptune_spec", "ARITIES",
    "TreeShape", "shape_for_sector", "SECTOR_SHAPES",
    "FilecoinTree", "SparseTree", "build_tree", "leaves_from_bytes", "merkle_root_native",
    "PoR", "por_challenge",
    "FallbackPoSt", "PostSector", "window_post", "winning_post", "winning_post_sectors",
    "leaf_challenge", "API_VERSIONS",
    "porep_id", "replica_id", "parent_cache",
    "interactive_challenges", "ni_challenges", "synthetic_challenges", "synthetic_porep_challenges",
    "StackedCircuit", "seal", "commit_phase1", "commit_phase2", "verify_commit_phase2", "SealCommitPhase1Output",
    "EmptySectorUpdate", "EmptySectorUpdatePoseidon", "update", "decode", "PartitionProof", "partition_proofs",
    "prove_update", "verify_update",
]
