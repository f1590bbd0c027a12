"""SnapDeals: Filecoin's sector-update proof (rust-fil-proofs' EmptySectorUpdate), docs/filecoin.md.

New deal data goes into an already sealed sector without resealing: :func:`update` encodes it
into the sealed replica (:func:`decode` and :func:`sector_key` undo it), :func:`partition_proofs`
makes the vanilla partition proofs (bincode and serde JSON as rust-fil-proofs writes them), and
:class:`EmptySectorUpdate` (and :class:`EmptySectorUpdatePoseidon`) is one partition's circuit with
rust-fil-proofs' exact R1CS; :func:`prove_update` / :func:`verify_update` make and check the
whole proof, directly or through a :class:`cuzk.Engine`.

    >>> EmptySectorUpdate(32 << 30).params.partition_count
    16
"""

from cuzk.circuits.filecoin.update.challenges import partition_challenges
from cuzk.circuits.filecoin.update.circuit import EmptySectorUpdate
from cuzk.circuits.filecoin.update.circuit_poseidon import EmptySectorUpdatePoseidon
from cuzk.circuits.filecoin.update.encode import UpdatedSector, decode, sector_key, update
from cuzk.circuits.filecoin.update.params import (
    REGISTERED_UPDATE_SIZES, UpdateParams, apex_leaf_count, challenge_count, h_default, h_select, hs,
    partition_count, update_params,
)
from cuzk.circuits.filecoin.update.prove import (
    check_update, circuit_for, circuit_inputs, prove_update, update_public_inputs, verify_update,
)
from cuzk.circuits.filecoin.update.randomness import GEN_RANDOMNESS_TAG, gen_randomness, phi, rho
from cuzk.circuits.filecoin.update.vanilla import (
    ChallengeProof, PartitionProof, PartitionProofPoseidon, partition_proof, partition_proofs,
    verify_partition_proof,
)

__all__ = [
    "update", "decode", "sector_key", "UpdatedSector",
    "UpdateParams", "update_params", "REGISTERED_UPDATE_SIZES", "partition_count", "challenge_count", "hs",
    "h_default", "h_select", "apex_leaf_count",
    "GEN_RANDOMNESS_TAG", "gen_randomness", "phi", "rho", "partition_challenges",
    "ChallengeProof", "PartitionProof", "PartitionProofPoseidon", "partition_proof", "partition_proofs",
    "verify_partition_proof",
    "EmptySectorUpdate", "EmptySectorUpdatePoseidon",
    "circuit_for", "circuit_inputs", "update_public_inputs", "prove_update", "verify_update", "check_update",
]
