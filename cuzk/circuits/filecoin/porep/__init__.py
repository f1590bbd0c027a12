"""Filecoin's stacked-DRG proof of replication (PoRep): graph, sealing, vanilla proofs and the
StackedCircuit with rust-fil-proofs' constraint counts (docs/filecoin.md)."""

from cuzk.circuits.filecoin.porep.challenges import (
    interactive_challenges, ni_challenges, synthetic_challenges, synthetic_porep_challenges,
)
from cuzk.circuits.filecoin.porep.fr32 import check_nodes, fr32_pad, fr32_unpad
from cuzk.circuits.filecoin.porep.graph import parent_cache, parent_cache_id, parents
from cuzk.circuits.filecoin.porep.labels import label_layers
from cuzk.circuits.filecoin.porep.registered import (
    REGISTERED_SEAL_PROOFS, SealProof, porep_id, registered_seal_proof, replica_id,
)
from cuzk.circuits.filecoin.porep.seal import SealedSector, seal
from cuzk.circuits.filecoin.porep.sector_trees import TreeD
from cuzk.circuits.filecoin.porep.circuit import StackedCircuit
from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output, commit_phase1
from cuzk.circuits.filecoin.porep.c2 import circuit_for, commit_phase2, seal_public_inputs, verify_commit_phase2

__all__: list = [
    "SealProof", "REGISTERED_SEAL_PROOFS", "registered_seal_proof", "porep_id", "replica_id",
    "parents", "parent_cache", "parent_cache_id",
    "interactive_challenges", "ni_challenges", "synthetic_challenges", "synthetic_porep_challenges",
    "seal", "SealedSector", "TreeD", "label_layers", "fr32_pad", "fr32_unpad", "check_nodes",
    "StackedCircuit", "SealCommitPhase1Output", "commit_phase1", "commit_phase2", "verify_commit_phase2",
    "seal_public_inputs", "circuit_for",
]
