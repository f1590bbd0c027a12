"""A ``SNAP_DEALS_UPDATE`` request turned into Engine work: one unit per partition of the sector
update's circuit, the proofs concatenated (partitions × 192 bytes, what filecoin-proofs'
``generate_empty_sector_update_proof_with_vanilla`` returns) and verified against the statement
before they are returned.

The request, as Curio sends it (docs/serve.md, "Proof kinds"): ``registered_proof`` a
RegisteredUpdateProof (0-4 by sector size), ``vanilla_proofs`` one bincode ``PartitionProof``
per partition in partition order (filecoin-proofs-api's ``PartitionProofBytes``),
``comm_r_old`` / ``comm_d_new`` / ``comm_r_new`` the statement as 32-byte little-endian field
elements (the raw digests of the sector key's, the new data's and the new replica's CIDs). ``h``
is the one filecoin-proofs uses for the size (``hs[3]``). Every partition's witness is built and
checked here (shapes, commitments against the proof's roots, each challenged node's encoding),
so a request that could not prove is refused before it is queued, naming the field.
"""

from __future__ import annotations

from typing import Callable

from cuzk.errors import InputError
from cuzk.serve.filecoin import FilecoinCircuit, update_proof
from cuzk.serve.payloads import Work, check_unused, registered
from cuzk.serve.validate import invalid

__all__ = ["snap_work", "COMMITMENTS"]

#: the statement's fields, in the order the circuit's public inputs hold them
COMMITMENTS = ("comm_r_old", "comm_d_new", "comm_r_new")


def _statement(req, params) -> dict:
    """The three commitments as ints, each 32 bytes and a canonical Fr element; the first that is
    not is refused by name."""
    from cuzk.circuits.filecoin.update import update_public_inputs

    zero = dict.fromkeys(COMMITMENTS, 0)
    out = {}
    for field in COMMITMENTS:
        raw = bytes(getattr(req, field))
        if len(raw) != 32:
            raise invalid(field, f"must be 32 bytes (the commitment's digest, not its CID), got {len(raw)}")
        try:
            update_public_inputs(params, 0, **{**zero, field: raw})  # reads it as a little-endian Fr element
        except InputError:
            raise invalid(field, "is not a canonical BLS12-381 scalar (little-endian, < r)") from None
        out[field] = int.from_bytes(raw, "little")
    return out


def _partition_inputs(params, req, statement: dict) -> list[dict]:
    from cuzk.circuits.filecoin.update import PartitionProof, circuit_inputs

    raw = list(req.vanilla_proofs)
    if len(raw) != params.partition_count:
        raise invalid("vanilla_proofs", f"a {params.sector_size}-byte sector's update has {params.partition_count} "
                      f"partitions, one PartitionProof each; got {len(raw)}")
    out = []
    for k, data in enumerate(raw):
        where = f"vanilla_proofs[{k}]"
        try:
            proof = PartitionProof.from_bincode(data, where)
        except InputError as e:
            raise invalid(where, f"is not a bincode PartitionProof: {e}") from None
        try:
            out.append(circuit_inputs(params, proof, k=k, **statement))
        except InputError as e:
            msg = str(e)
            # a commitment the proof's roots do not give: name the commitment, say which proof disagrees
            named = next((f for f in COMMITMENTS if msg.startswith(f)), None)
            if named is not None:
                raise invalid(named, f"{msg[len(named):].lstrip(' :')} (in {where})") from None
            raise invalid(where, msg) from None
    return out


def snap_work(req, vk_loader: Callable) -> Work:
    """Work of a ``SNAP_DEALS_UPDATE`` request; ``vk_loader(circuit)`` gives the verifying key the
    assembled proof is checked with.

    Raises:
        RequestError: INVALID_ARGUMENT naming the field that is wrong.
    """
    from cuzk.circuits.filecoin.update import check_update

    proof = registered(req, update_proof)
    check_unused(req, ("vanilla_proof", "randomness", "partition_index"))
    fc = FilecoinCircuit("snap", proof.sector_size)
    params = fc.update_params
    statement = _statement(req, params)
    inputs = _partition_inputs(params, req, statement)

    def finish(proofs) -> bytes:
        from cuzk.groth16 import Proof

        data = Proof.concat(proofs)
        check_update(params, vk_loader(fc), data, **statement)  # ProofVerificationError: never a bad proof out
        return data

    return Work(fc, tuple(inputs), True, finish)
