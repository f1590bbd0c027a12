"""A sector update's Groth16 proof: partition circuits' witnesses from the vanilla partition proofs,
proved directly or as one partitioned :class:`cuzk.Engine` job, and verified against the statement.

The result is what filecoin-proofs' ``generate_empty_sector_update_proof_with_vanilla`` returns:
the partition proofs concatenated in order, 192 bytes each (compressed A, B, C). The verifier's
side recomputes every public input from the statement alone (``comm_r_old``, ``comm_d_new``,
``comm_r_new``, ``h`` and the partition index), as ``verify_empty_sector_update_proof`` does.

:func:`circuit_inputs` checks what rust-fil-proofs' circuit asserts outside its constraints
(the proof's shape, each challenged node's encoding, one partition path for every challenge) and
names the field that fails; everything else is left to the constraints, so a vanilla proof of
other nodes or another sector fails synthesis with ``UnsatisfiedConstraint``.

    >>> from cuzk.circuits.filecoin.update.params import update_params
    >>> circuit_for(update_params(32 << 30))
    EmptySectorUpdate(nodes=1073741824, shape=(8, 8, 0), partition=0, h=10)
"""

from __future__ import annotations

from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.circuits.filecoin.update.challenges import partition_challenges
from cuzk.circuits.filecoin.update.circuit import EmptySectorUpdate
from cuzk.circuits.filecoin.update.circuit_poseidon import EmptySectorUpdatePoseidon
from cuzk.circuits.filecoin.update.params import UpdateParams
from cuzk.circuits.filecoin.update.randomness import phi as make_phi, rho as make_rho
from cuzk.circuits.filecoin.update.vanilla import PartitionProof, PartitionProofPoseidon, partition_proofs
from cuzk.circuits.filecoin.vanilla import domain_int
from cuzk.errors import InputError, ProofVerificationError
from cuzk.field import FR

__all__ = ["PROOF_BYTES", "circuit_for", "circuit_inputs", "update_public_inputs", "prove_update",
           "verify_update", "check_update", "split_proofs"]

PROOF_BYTES = 192  #: one partition's proof: compressed A (48), B (96), C (48)


def circuit_for(params: UpdateParams, h=None):
    """The partition circuit of an update with ``params`` (every partition has the same one)."""
    cls = EmptySectorUpdatePoseidon if params.poseidon else EmptySectorUpdate
    return cls(nodes=params.nodes, shape=params.shape.arities, h=h)


def _commitment(x, what: str) -> int:
    if isinstance(x, (bytes, bytearray)) and len(x) == 32:
        x = int.from_bytes(x, "little")
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < FR.modulus:
        raise InputError(f"{what} must be 32 bytes or an int, a canonical Fr element; got {x!r:.60}")
    return x


def update_public_inputs(params: UpdateParams, k: int, comm_r_old, comm_d_new, comm_r_new, h=None) -> list[int]:
    """Partition ``k``'s public inputs, from the statement alone."""
    coms = [_commitment(x, w) for x, w in ((comm_r_old, "comm_r_old"), (comm_d_new, "comm_d_new"),
                                           (comm_r_new, "comm_r_new"))]
    c = circuit_for(params, h)
    if params.poseidon:
        params.check_partition(k)
        return c.public_inputs(*coms)
    return c.public_inputs(k, *coms)


def _flat(proof) -> list[int]:
    return [domain_int(x) for e in proof.levels for x in e.hashes]


def _check_shapes(params: UpdateParams, i: int, cp) -> None:
    d_levels = params.shape.levels if params.poseidon else (2,) * params.challenge_bit_len
    for field, proof, want in (("proof_r_old", cp.proof_r_old, params.shape.levels),
                               ("proof_d_new", cp.proof_d_new, d_levels),
                               ("proof_r_new", cp.proof_r_new, params.shape.levels)):
        if proof.arities != tuple(want):
            raise InputError(f"challenge_proofs[{i}].{field}: a path of arities {proof.arities}, this sector's tree "
                             f"has {tuple(want)}")


def circuit_inputs(params: UpdateParams, proof, *, k: int = 0, comm_r_old, comm_d_new, comm_r_new, h=None,
                   check: bool = True) -> dict:
    """The partition circuit's witness (its ``define`` keywords) from partition ``k``'s vanilla proof.

    Args:
        params: the update's parameters; proof: a :class:`~.vanilla.PartitionProof` (the Poseidon
            variant's :class:`~.vanilla.PartitionProofPoseidon`).
        comm_r_old, comm_d_new, comm_r_new: the statement (32 bytes or ints); h: its ``h``.
        check: also check the commitments against the proof's roots and each challenged node's
            encoding against the statement's rho (rust-fil-proofs asserts the encoding while it
            synthesizes); off, those are left to the constraints.

    Raises:
        InputError: ``k`` or ``h`` not allowed, a proof of another shape or count, partition paths
            that differ, a commitment the proof's roots do not give, a node whose new replica leaf
            is not its encoding (each names its field).
    """
    k = params.check_partition(k)
    h = params.h_default if h is None else h
    publics = update_public_inputs(params, k, comm_r_old, comm_d_new, comm_r_new, h)
    want = PartitionProofPoseidon if params.poseidon else PartitionProof
    if not isinstance(proof, want):
        raise InputError(f"proof must be a {want.__name__}, got {type(proof).__name__}")
    cps = proof.challenge_proofs
    if len(cps) != params.challenge_count:
        raise InputError(f"challenge_proofs: a partition proves {params.challenge_count} challenges, got {len(cps)}")
    if not params.poseidon and len(proof.apex_leafs) != params.apex_leaf_count:
        raise InputError(f"apex_leafs: a partition has {params.apex_leaf_count}, got {len(proof.apex_leafs)}")
    for i, cp in enumerate(cps):
        _check_shapes(params, i, cp)
    top = params.challenge_bit_len - params.partition_bit_len
    ppath = [e.hashes[0] for e in cps[0].proof_d_new.levels[top:]]
    for i, cp in enumerate(cps):
        if [e.hashes[0] for e in cp.proof_d_new.levels[top:]] != ppath:
            raise InputError(f"challenge_proofs[{i}].proof_d_new: its partition path differs from challenge 0's")
    if check:
        comm_c = domain_int(proof.comm_c)
        for field, root, pub in (("comm_r_old", cps[0].proof_r_old.root, publics[1]),
                                 ("comm_r_new", cps[0].proof_r_new.root, publics[3])):
            if poseidon_hash([comm_c, domain_int(root)]) != pub:
                raise InputError(f"{field} is not Poseidon(comm_c, the root of challenge_proofs[0]'s tree) of this proof")
        if domain_int(cps[0].proof_d_new.root) != publics[2]:
            raise InputError("comm_d_new is not the root of challenge_proofs[0].proof_d_new")
        ph = make_phi(publics[2], publics[1])
        shift = params.challenge_bit_len - h
        for i, (c, cp) in enumerate(zip(partition_challenges(params, publics[3], k), cps)):
            want_leaf = (domain_int(cp.proof_r_old.leaf) + domain_int(cp.proof_d_new.leaf) * make_rho(ph, c >> shift))
            if domain_int(cp.proof_r_new.leaf) != want_leaf % FR.modulus:
                raise InputError(f"challenge_proofs[{i}].proof_r_new.leaf is not proof_r_old.leaf + proof_d_new.leaf "
                                 f"* rho of challenge {c} under this statement")
    d_path = (lambda cp: _flat(cp.proof_d_new)) if params.poseidon else \
        (lambda cp: _flat(cp.proof_d_new)[:params.apex_height])
    out = {
        "comm_r_old": publics[1], "comm_d_new": publics[2], "comm_r_new": publics[3],
        "comm_c": domain_int(proof.comm_c),
        "root_r_old": domain_int(cps[0].proof_r_old.root), "root_r_new": domain_int(cps[0].proof_r_new.root),
        "leaf_r_old": [domain_int(cp.proof_r_old.leaf) for cp in cps],
        "path_r_old": [_flat(cp.proof_r_old) for cp in cps],
        "leaf_d_new": [domain_int(cp.proof_d_new.leaf) for cp in cps],
        "path_d_new": [d_path(cp) for cp in cps],
        "path_r_new": [_flat(cp.proof_r_new) for cp in cps],
    }
    if params.poseidon:
        out["h_select"] = publics[0]
        return out
    out["k_and_h_select"] = publics[0]
    out["apex_leafs"] = [domain_int(x) for x in proof.apex_leafs]
    if params.partition_bit_len:
        out["partition_path"] = [domain_int(x) for x in ppath]
    return out


def split_proofs(data: bytes, partitions: int) -> list[bytes]:
    """``partitions`` proofs of :data:`PROOF_BYTES` each out of an update proof.

    Raises:
        InputError: not bytes, or not ``partitions × 192`` of them.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError(f"an update proof must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) != partitions * PROOF_BYTES:
        raise InputError(f"an update proof of {partitions} partitions is {partitions * PROOF_BYTES} bytes, got {len(data)}")
    return [data[i:i + PROOF_BYTES] for i in range(0, len(data), PROOF_BYTES)]


def prove_update(updated, key, *, proofs=None, engine=None, name: str | None = None, backend: str = "cpu",
                 threads=None, **submit) -> bytes:
    """The update proof of ``updated`` (an :class:`~.encode.UpdatedSector`): partitions × 192 bytes,
    each partition's proof verified before it is returned.

    Args:
        key: the partition circuit's :class:`~cuzk.groth16.ProvingKey` (None with ``engine``).
        proofs: the vanilla partition proofs (default: made from ``updated``); a proving daemon
            gets them as bincode from its client (:meth:`~.vanilla.PartitionProof.from_bincode`).
        engine, name: a :class:`cuzk.Engine` with this circuit (:func:`circuit_for`) and its key
            registered as ``name``: one partitioned job, one unit per partition, in order
            (``submit`` takes its ``priority``, ``request_id``, ``deadline``).
        backend, threads: where a direct proof runs.

    Raises:
        InputError: vanilla proofs that do not fit (see :func:`circuit_inputs`); what synthesis,
            the prover or the Engine raise (UnsatisfiedConstraint for a proof of other nodes).
    """
    from cuzk.groth16 import Proof

    p = updated.params
    proofs = partition_proofs(updated) if proofs is None else list(proofs)
    if len(proofs) != p.partition_count:
        raise InputError(f"proofs: this update has {p.partition_count} partitions, got {len(proofs)}")
    statement = dict(comm_r_old=updated.comm_r_old, comm_d_new=updated.comm_d_new, comm_r_new=updated.comm_r_new,
                     h=updated.h)
    inputs = [circuit_inputs(p, pp, k=k, **statement) for k, pp in enumerate(proofs)]
    if engine is not None:
        if name is None:
            raise InputError("prove_update with an engine needs the registered circuit's name")
        out = engine.submit_partitioned(name, inputs, **submit).result()
    else:
        if submit:
            raise InputError(f"{sorted(submit)} apply to an engine's job only")
        from cuzk.groth16 import prepare_verifying_key, prove
        from cuzk.synth import Synthesizer

        synth = Synthesizer(circuit_for(p, updated.h))
        pvk = prepare_verifying_key(key.vk)
        out = [prove(key, synth.synthesize(**inp), backend=backend, threads=threads, prepared_vk=pvk) for inp in inputs]
    return Proof.concat(out)


def verify_update(params: UpdateParams, vk, data: bytes, *, comm_r_old, comm_d_new, comm_r_new, h=None) -> bool:
    """True iff ``data`` proves every partition of the update ``(comm_r_old, comm_d_new, comm_r_new, h)``
    under ``vk``; the public inputs come from the statement alone.

    Raises:
        InputError: ``data`` not partitions × 192 bytes, a bad commitment or h; ParamsFormatError:
            bytes that are not a proof.
    """
    from cuzk.groth16 import Proof, prepare_verifying_key, verify

    parts = split_proofs(data, params.partition_count)
    pvk = prepare_verifying_key(vk)
    for k, raw in enumerate(parts):
        public = update_public_inputs(params, k, comm_r_old, comm_d_new, comm_r_new, h)
        if not verify(pvk, public, Proof.from_bytes(raw)):
            return False
    return True


def check_update(params: UpdateParams, vk, data: bytes, **statement) -> None:
    """:func:`verify_update`, raising ProofVerificationError when it is False."""
    if not verify_update(params, vk, data, **statement):
        raise ProofVerificationError("the update proof does not verify for this statement")
