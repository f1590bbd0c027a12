"""A checked Filecoin proof request turned into Engine work: circuit inputs per partition, and how
the Engine's proofs become the bytes filecoin-proofs would return.

No grpc here: a request is any object with the proto's field names, and a refusal is a
:class:`RequestError` carrying the gRPC status name, so the decoding is tested without a server.

* WindowPoSt (``WINDOW_POST_PARTITION``): ``vanilla_proofs`` holds one bincode
  ``FallbackPoStSectorProof`` per sector of the partition (1 .. the partition's sector count;
  a short partition repeats its last sector, as rust-fil-proofs pads it). Each sector's
  challenges are derived from ``randomness`` and checked against its inclusion proofs' paths;
  the sector's index for API 1.0 challenges is ``partition_index * sectors per partition + i``,
  the index storage-proofs-post's verifier uses. Proof: 192 bytes.
* WinningPoSt (``WINNING_POST``): one sector proof of 66 inclusion proofs, laid out as the
  circuit's 66 one-challenge sectors. Proof: 192 bytes.
* PoRep C2 (``POREP_SEAL_COMMIT``): Curio's envelope ``{"SectorNum", "Phase1Out", "SectorSize"}``
  with ``Phase1Out`` the base64 of filecoin-proofs-api's C1 JSON; one Engine job of one unit per
  partition; the proofs concatenated (partitions × 192 bytes) and verified against public inputs
  recomputed from the sector's statement before they are returned.
* SnapDeals (``SNAP_DEALS_UPDATE``): :mod:`cuzk.serve.snap`.
"""

from __future__ import annotations

from typing import Callable

import attrs

from cuzk.circuits.filecoin.vanilla.merkle import domain_int
from cuzk.errors import InputError, VanillaFormatError
from cuzk.serve.filecoin import FilecoinCircuit, circuit_id, post_proof
from cuzk.serve.validate import RequestError, invalid

__all__ = ["Work", "post_work", "porep_work", "check_unused", "circuit_of_request", "KIND_PRIORITY"]

#: the proto's ProofKind number -> the default priority (Curio's: WinningPoSt must land within its epoch)
KIND_PRIORITY = {1: "normal", 2: "normal", 3: "high", 4: "critical"}


@attrs.frozen(eq=False)
class Work:
    """What one request asks of the Engine."""

    circuit: FilecoinCircuit
    inputs: tuple  #: circuit inputs, one mapping per unit (partition)
    partitioned: bool  #: one Engine job of len(inputs) units, the result a list
    finish: Callable  #: the Engine's result -> proof bytes (may verify; raises on a bad proof)


def _one_proof(result) -> bytes:
    return result.to_bytes()


def _randomness(raw: bytes) -> int:
    from cuzk.circuits.filecoin.challenges import check_randomness

    if len(raw) != 32:
        raise invalid("randomness", f"must be the 32-byte PoSt challenge seed, got {len(raw)} bytes")
    try:
        return check_randomness(int.from_bytes(raw, "little"))
    except InputError:
        raise invalid("randomness", "is not a canonical BLS12-381 scalar (little-endian, < r): Filecoin clears its "
                      "top two bits before proving") from None


def check_unused(req, fields) -> None:
    """INVALID_ARGUMENT naming the first of ``fields`` that is set: it belongs to another proof kind."""
    for name in fields:
        if getattr(req, name):
            raise invalid(name, f"does not apply to this proof kind (proof_kind {req.proof_kind})")


def registered(req, lookup: Callable):
    """``lookup(req.registered_proof)``, whose ``sector_size`` must be the request's; what is wrong
    is refused naming the field."""
    try:
        proof = lookup(req.registered_proof)
    except InputError as e:
        raise invalid("registered_proof", str(e)) from None
    if req.sector_size != proof.sector_size:
        raise invalid("sector_size", f"{req.sector_size} does not match registered_proof {proof.name} "
                      f"({proof.sector_size} bytes)")
    return proof


def _sector_proofs(req, most: int):
    from cuzk.circuits.filecoin.vanilla import FALLBACK_POST_SECTOR_PROOF, from_bincode

    raw = list(req.vanilla_proofs)
    if not 1 <= len(raw) <= most:
        raise invalid("vanilla_proofs", f"needs 1..{most} sector proofs for this proof, got {len(raw)}")
    out = []
    for i, data in enumerate(raw):
        try:
            out.append(from_bincode(FALLBACK_POST_SECTOR_PROOF, data, f"vanilla_proofs[{i}]"))
        except InputError as e:
            raise invalid(f"vanilla_proofs[{i}]", f"is not a bincode FallbackPoStSectorProof: {e}") from None
    ids = [p.sector_id for p in out]
    if len(set(ids)) != len(ids):
        raise invalid("vanilla_proofs", "names one sector twice")
    return out


def _sector_inputs(where, proof, sp, challenges, shape) -> dict:
    """One circuit sector's inputs from its SectorProof, each check naming the field."""
    from cuzk.circuits.filecoin.poseidon import poseidon_hash

    comm_c, comm_r_last, comm_r = domain_int(sp.comm_c), domain_int(sp.comm_r_last), domain_int(proof.comm_r)
    try:
        ok = poseidon_hash([comm_c, comm_r_last]) == comm_r
    except InputError:
        ok = False  # a domain that is not a field element
    if not ok:
        raise invalid(where, f"sector {proof.sector_id}: comm_r is not Poseidon(comm_c, comm_r_last)")
    leaves, siblings = [], []
    for n, (ip, c) in enumerate(zip(sp.inclusion_proofs, challenges)):
        if ip.root != sp.comm_r_last:
            raise invalid(where, f"sector {proof.sector_id}: inclusion proof {n}'s root is not comm_r_last")
        if ip.arities != shape.levels:
            raise invalid(where, f"sector {proof.sector_id}: inclusion proof {n} has levels of arity {ip.arities}, "
                          f"a {shape.leaves * 32}-byte sector's tree {shape.levels}")
        if ip.path_index() != c:
            raise invalid(where, f"sector {proof.sector_id}: inclusion proof {n} opens leaf {ip.path_index()}, "
                          f"the challenge drawn from randomness is leaf {c}")
        leaves.append(domain_int(ip.leaf))
        siblings.append([x for level in ip.siblings() for x in level])
    return {"comm_r": comm_r, "comm_c": comm_c, "comm_r_last": comm_r_last, "challenges": list(challenges),
            "leaves": leaves, "siblings": siblings}


def post_work(req) -> Work:
    """Work of a ``WINDOW_POST_PARTITION`` or ``WINNING_POST`` request.

    Raises:
        RequestError: INVALID_ARGUMENT naming the field that is wrong.
    """
    from cuzk.circuits.filecoin.post import FallbackPoSt

    want = "winning" if req.proof_kind == 4 else "wpost"

    def of_kind(number):
        pp = post_proof(number)
        if pp.kind != want:
            raise invalid("registered_proof", f"{pp.id} is {pp.name}, not a proof of kind {req.proof_kind}")
        return pp

    pp = registered(req, of_kind)
    check_unused(req, ("vanilla_proof", "comm_r_old", "comm_r_new", "comm_d_new"))
    if want == "winning" and req.partition_index:
        raise invalid("partition_index", "WinningPoSt has one partition (0)")
    randomness = _randomness(req.randomness)
    fc = FilecoinCircuit(want, pp.sector_size)
    challenge_count, sector_count = fc.post_counts
    post = FallbackPoSt(pp.sector_size, challenge_count, sector_count, api_version=pp.api_version)
    proofs = _sector_proofs(req, 1 if want == "winning" else sector_count)
    rows = []
    for i, proof in enumerate(proofs):
        where = f"vanilla_proofs[{i}]"
        if len(proof.sectors) != 1:
            raise invalid(where, f"holds {len(proof.sectors)} SectorProofs, a PoSt sector proof holds 1")
        sp = proof.sectors[0]
        count = challenge_count * (sector_count if want == "winning" else 1)
        if len(sp.inclusion_proofs) != count:
            raise invalid(where, f"holds {len(sp.inclusion_proofs)} inclusion proofs, {pp.name} challenges {count}")
        if want == "winning":  # one sector, 66 challenges: the circuit's 66 one-challenge sectors
            for j in range(sector_count):
                one = attrs.evolve(sp, inclusion_proofs=sp.inclusion_proofs[j:j + 1])
                rows.append(_sector_inputs(where, proof, one, post.challenges(randomness, proof.sector_id, j),
                                           post.shape))
        else:
            index = req.partition_index * sector_count + i
            rows.append(_sector_inputs(where, proof, sp, post.challenges(randomness, proof.sector_id, index),
                                       post.shape))
    rows += [rows[-1]] * (sector_count - len(rows))  # a short partition repeats its last sector
    inputs = {k: [r[k] for r in rows] for k in rows[0]}
    return Work(fc, (inputs,), False, _one_proof)


def _envelope(req) -> tuple[dict, bytes]:
    from cuzk.circuits.filecoin.porep.c1 import check_envelope_size, curio_envelope

    if not req.vanilla_proof:
        raise invalid("vanilla_proof", "is empty: POREP_SEAL_COMMIT takes Curio's C1 envelope (JSON)")
    try:
        doc, raw = curio_envelope(req.vanilla_proof, "vanilla_proof")
        check_envelope_size(doc, req.sector_size, "vanilla_proof", f"sector_size {req.sector_size}")
        return doc, raw
    except VanillaFormatError as e:  # its message is "field: problem", as invalid() writes one
        raise RequestError("INVALID_ARGUMENT", str(e)) from None


def porep_work(req, vk_loader: Callable) -> Work:
    """Work of a ``POREP_SEAL_COMMIT`` request; ``vk_loader(circuit)`` gives the verifying key the
    assembled proof is checked with.

    Raises:
        RequestError: INVALID_ARGUMENT naming the field that is wrong.
    """
    from cuzk.circuits.filecoin.porep import c2
    from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output
    from cuzk.circuits.filecoin.porep.registered import registered_seal_proof

    proof = registered(req, registered_seal_proof)
    check_unused(req, ("vanilla_proofs", "randomness", "partition_index", "comm_r_old", "comm_r_new", "comm_d_new"))
    doc, raw = _envelope(req)
    if doc["SectorNum"] != req.sector_number:
        raise invalid("vanilla_proof.SectorNum", f"{doc['SectorNum']} differs from sector_number {req.sector_number}")
    try:
        c1 = SealCommitPhase1Output.from_json(raw, "vanilla_proof.Phase1Out")
        if c1.registered_proof != proof.id:
            raise invalid("vanilla_proof.Phase1Out", f"is a {c1.seal_proof.name} C1 output, registered_proof "
                          f"is {proof.name}")
        inputs = c2.partition_inputs(c1)
    except InputError as e:
        raise invalid("vanilla_proof.Phase1Out", str(e)) from None
    fc = FilecoinCircuit("porep", proof.sector_size)

    def finish(proofs) -> bytes:
        from cuzk.groth16 import Proof

        data = Proof.concat(proofs)
        c2.check_commit_phase2(c1, vk_loader(fc), data)  # ProofVerificationError: never a bad proof out
        return data

    return Work(fc, tuple(inputs), True, finish)


def circuit_of_request(req) -> str:
    """The Filecoin circuit id a request names (for messages before it is decoded)."""
    prefix = {1: "porep", 2: "snap", 3: "wpost", 4: "winning"}.get(req.proof_kind)
    try:
        return circuit_id(prefix, req.sector_size)
    except KeyError:
        raise invalid("sector_size", f"{req.sector_size} is not a Filecoin sector size") from None
