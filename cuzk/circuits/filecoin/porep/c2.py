"""PoRep commit phase 2 (C2): one Groth16 proof per partition of a sealed sector, from its C1.

``commit_phase2`` synthesizes each partition's StackedCircuit from the C1 vanilla proofs
(:func:`~cuzk.circuits.filecoin.porep.c1.circuit_inputs`) and proves it, directly or as one
partitioned job of a :class:`cuzk.Engine` (one unit per partition, assembled in order). The
result is what filecoin-proofs' ``seal_commit_phase2`` returns: the partition proofs
concatenated, 192 bytes each (compressed A, B, C).

The verifier's side (:func:`seal_public_inputs`, :func:`verify_commit_phase2`) recomputes every
public input from the sector's statement alone, as filecoin-proofs' ``get_seal_inputs`` does: the
replica id, comm_d and comm_r, the challenges drawn from the seed, and each challenge's parents
from the graph. Nothing is taken from the vanilla proofs, so a C1 whose proofs claim other
parents cannot make its own statement.

    >>> from cuzk.circuits.filecoin.porep.registered import registered_seal_proof
    >>> circuit_for(registered_seal_proof(5))
    StackedCircuit(nodes=64, layers=2, challenge_count=2, shape=(8, 0, 0), api_version='1.1', partition=0)
"""

from __future__ import annotations

import operator

from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output, circuit_inputs, partition_challenges
from cuzk.circuits.filecoin.porep.circuit import StackedCircuit
from cuzk.circuits.filecoin.porep.graph import parents as graph_parents
from cuzk.circuits.filecoin.porep.registered import SealProof
from cuzk.circuits.filecoin.vanilla.merkle import domain_int
from cuzk.errors import InputError, ProofVerificationError

__all__ = ["PROOF_BYTES", "circuit_for", "partition_inputs", "seal_public_inputs", "commit_phase2",
           "verify_commit_phase2", "check_commit_phase2", "split_proofs"]

PROOF_BYTES = 192  #: one partition's proof: compressed A (48), B (96), C (48)


def _seal_proof(c1: SealCommitPhase1Output, proof: SealProof | None) -> SealProof:
    """The C1's registered proof, or ``proof`` (a test configuration of the same id)."""
    if proof is None:
        return c1.seal_proof
    if not isinstance(proof, SealProof):
        raise InputError(f"proof must be a SealProof, got {proof!r:.60}")
    if proof.id != c1.registered_proof:
        raise InputError(f"proof is registered proof {proof.id}, the C1 output {c1.registered_proof}")
    return proof


def circuit_for(proof: SealProof) -> StackedCircuit:
    """The StackedCircuit of one partition of a sector sealed with ``proof`` (every partition of
    a sector has the same circuit; only the inputs differ)."""
    return StackedCircuit(nodes=proof.nodes, layers=proof.layers, challenge_count=proof.challenges_per_partition,
                          shape=proof.shape.arities, api_version=".".join(proof.api_version.split(".")[:2]))


def partition_inputs(c1: SealCommitPhase1Output, proof: SealProof | None = None) -> list[dict]:
    """Each partition's circuit inputs, in order (:func:`~cuzk.circuits.filecoin.porep.c1.circuit_inputs`).

    Raises:
        InputError: the C1 holds another number of partitions or of challenges per partition
            than ``proof`` (default: its registered proof) says.
    """
    proof = _seal_proof(c1, proof)
    parts = c1.vanilla_proofs
    if len(parts) != proof.partitions:
        raise InputError(f"the C1 output holds {len(parts)} partitions, {proof.name} has {proof.partitions}")
    for k, part in enumerate(parts):
        if len(part) != proof.challenges_per_partition:
            raise InputError(f"vanilla_proofs[{k}] holds {len(part)} challenges, a {proof.name} partition "
                             f"{proof.challenges_per_partition}")
    return [circuit_inputs(c1, k) for k in range(len(parts))]


def seal_public_inputs(proof: SealProof, replica_id: bytes, comm_d: bytes, comm_r: bytes, seed: bytes,
                       partition: int) -> list[int]:
    """Partition ``partition``'s public inputs, from the statement alone (module docstring).

    Raises:
        InputError: a partition outside the proof's, commitments or seed not 32 bytes.
    """
    for what, v in (("replica_id", replica_id), ("comm_d", comm_d), ("comm_r", comm_r), ("seed", seed)):
        if not isinstance(v, (bytes, bytearray)) or len(v) != 32:
            raise InputError(f"{what} must be 32 bytes, got {v!r:.60}")
    try:
        k = operator.index(partition)
    except TypeError:
        raise InputError(f"partition must be an int, got {partition!r:.40}") from None
    if not 0 <= k < proof.partitions:
        raise InputError(f"partition must be in [0, {proof.partitions}), got {k}")
    challenges = partition_challenges(proof, bytes(replica_id), bytes(seed), bytes(comm_r), k)
    rows = [graph_parents(proof.nodes, proof.porep_id, proof.api_version, c, c + 1, threads=1)[0] for c in challenges]
    return circuit_for(proof).public_inputs(domain_int(replica_id), domain_int(comm_d), domain_int(comm_r),
                                            challenges, [[int(p) for p in r] for r in rows])


def split_proofs(data: bytes, partitions: int) -> list[bytes]:
    """``partitions`` proofs of :data:`PROOF_BYTES` each out of a C2 output.

    Raises:
        InputError: not bytes, or not ``partitions × 192`` of them.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError(f"a C2 proof must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) != partitions * PROOF_BYTES:
        raise InputError(f"a C2 proof of {partitions} partitions is {partitions * PROOF_BYTES} bytes, got {len(data)}")
    return [data[i:i + PROOF_BYTES] for i in range(0, len(data), PROOF_BYTES)]


def commit_phase2(c1: SealCommitPhase1Output, key, *, engine=None, name: str | None = None,
                  backend: str = "cpu", threads=None, proof: SealProof | None = None, **submit) -> bytes:
    """The sector's C2 proof: partitions × 192 bytes, each partition's proof verified.

    Args:
        c1: the sector's commit-phase-1 output.
        key: the partition circuit's :class:`~cuzk.groth16.ProvingKey` (without ``engine``).
        engine: a :class:`cuzk.Engine` on which ``name`` is registered with this circuit
            (:func:`circuit_for`) and its key: the partitions run as one partitioned job
            (``submit`` takes its ``priority``, ``request_id``, ``deadline``). ``key`` is then
            unused (pass None).
        backend, threads: where a direct proof runs (``"cpu"`` or ``"cuda"``).
        proof: a test configuration of the C1's registered proof (another partition count).

    Raises:
        InputError: a C1 that does not match its proof; ProofVerificationError: a partition's
        proof does not verify; and what synthesis, the prover or the Engine raise (a tampered
        vanilla proof: UnsatisfiedConstraint naming its row). Nothing is returned half-made.
    """
    from cuzk.groth16 import Proof

    proof = _seal_proof(c1, proof)
    inputs = partition_inputs(c1, proof)
    if engine is not None:
        if name is None:
            raise InputError("commit_phase2 with an engine needs the registered circuit's name")
        proofs = engine.submit_partitioned(name, inputs, **submit).result()
    else:
        if submit:
            raise InputError(f"{sorted(submit)} apply to an engine's job only")
        proofs = _prove_directly(proof, inputs, key, backend, threads)
    return Proof.concat(proofs)


def _prove_directly(proof: SealProof, inputs: list[dict], key, backend, threads) -> list:
    from cuzk.groth16 import prepare_verifying_key, prove
    from cuzk.synth import Synthesizer

    synth = Synthesizer(circuit_for(proof))
    pvk = prepare_verifying_key(key.vk)
    # prove() verifies each proof before returning it (ProofVerificationError otherwise)
    # bit_msm="auto": the witness is mostly SHA-256 bits (the same proof, its A, B, L MSMs faster)
    return [prove(key, synth.synthesize(**inp), backend=backend, threads=threads, prepared_vk=pvk, bit_msm="auto")
            for inp in inputs]


def verify_commit_phase2(c1: SealCommitPhase1Output, vk, data: bytes, *, proof: SealProof | None = None) -> bool:
    """True iff ``data`` holds a valid proof of every partition of the sector ``c1`` describes,
    under ``vk``; the public inputs come from the statement (:func:`seal_public_inputs`).

    Raises:
        InputError: ``data`` is not partitions × 192 bytes; ParamsFormatError: a partition's
            bytes are not a proof (a point off the curve).
    """
    from cuzk.groth16 import Proof, prepare_verifying_key, verify

    proof = _seal_proof(c1, proof)
    parts = split_proofs(data, proof.partitions)
    pvk = prepare_verifying_key(vk)
    for k, raw in enumerate(parts):
        public = seal_public_inputs(proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed, k)
        if not verify(pvk, public, Proof.from_bytes(raw)):
            return False
    return True


def check_commit_phase2(c1: SealCommitPhase1Output, vk, data: bytes, *, proof: SealProof | None = None) -> None:
    """:func:`verify_commit_phase2`, raising ProofVerificationError when it is False."""
    if not verify_commit_phase2(c1, vk, data, proof=proof):
        raise ProofVerificationError("the C2 proof does not verify for this sector's statement")

