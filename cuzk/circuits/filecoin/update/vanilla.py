"""SnapDeals vanilla proofs (storage-proofs-update's ``PartitionProof``): their layout, making and checking.

A partition proof holds ``comm_c``, the partition's apex leaves (its slice of one tree-D row) and
per challenge three Merkle proofs of the challenged node: in tree R_old (the sealed replica),
tree D_new (the new data) and tree R_new (the new replica). serde JSON, field by field (``D`` a
32-number domain, ``M`` a :data:`~cuzk.circuits.filecoin.vanilla.MERKLE_PROOF`)::

    {"comm_c": D, "apex_leafs": [D, ...],
     "challenge_proofs": [{"proof_r_old": M, "proof_d_new": M, "proof_r_new": M}, ...]}

bincode (filecoin-proofs-api's ``PartitionProofBytes``, what Curio hands a proving daemon): the
same fields in order. The Poseidon variant's proof has no ``apex_leafs``.

:func:`partition_proof` makes one from an :class:`~.encode.UpdatedSector` (``prove_inner``);
:func:`verify_partition_proof` is rust-fil-proofs' vanilla ``verify``.

    >>> p = PartitionProof(comm_c=bytes(32), apex_leafs=(bytes(32),), challenge_proofs=())
    >>> PartitionProof.from_bincode(p.to_bincode()) == p, len(p.to_bincode())
    (True, 80)
"""

from __future__ import annotations

import attrs

from cuzk.circuits.filecoin.poseidon import poseidon_hash
from cuzk.circuits.filecoin.porep.sector_trees import TreeD
from cuzk.circuits.filecoin.sha256_circuit import sha256_trimmed
from cuzk.circuits.filecoin.tree import merkle_root_native
from cuzk.circuits.filecoin.update.challenges import partition_challenges
from cuzk.circuits.filecoin.update.params import UpdateParams
from cuzk.circuits.filecoin.update.randomness import phi as make_phi, rho as make_rho
from cuzk.circuits.filecoin.vanilla import (
    DOMAIN, MERKLE_PROOF, Field, MerkleProof, PathElement, Seq, Struct, domain_int, from_bincode, from_json,
    int_domain, to_bincode, to_json,
)
from cuzk.errors import InputError
from cuzk.field import FR

__all__ = [
    "ChallengeProof", "PartitionProof", "PartitionProofPoseidon", "CHALLENGE_PROOF", "PARTITION_PROOF",
    "PARTITION_PROOF_POSEIDON", "partition_proof", "partition_proofs", "verify_partition_proof",
    "MAX_CHALLENGES", "MAX_APEX_LEAFS",
]

#: most challenges a document may hold: the Poseidon variant's 16 x 86 (the reader's bound)
MAX_CHALLENGES = 16 * 86
#: most apex leaves a document may hold (Filecoin's partitions have 8 or 128)
MAX_APEX_LEAFS = 128


def _is(cls):
    return attrs.validators.instance_of(cls)


def _domain(d):
    if not isinstance(d, bytes) or len(d) != 32:
        raise InputError(f"a domain is 32 bytes, got {d!r:.40}")
    return d


def _domains(v) -> tuple:
    return tuple(_domain(d) for d in v)


def _challenges(v) -> tuple:
    out = tuple(v)
    if not all(isinstance(c, ChallengeProof) for c in out):
        raise InputError("challenge_proofs must hold ChallengeProof items")
    return out


@attrs.frozen
class ChallengeProof:
    """One challenged node's Merkle proofs in tree R_old, tree D_new and tree R_new."""

    proof_r_old: MerkleProof = attrs.field(validator=_is(MerkleProof))
    proof_d_new: MerkleProof = attrs.field(validator=_is(MerkleProof))
    proof_r_new: MerkleProof = attrs.field(validator=_is(MerkleProof))

    @property
    def challenge(self) -> int:
        """The node, as tree D's path gives it."""
        return self.proof_d_new.path_index()


class _Codec:
    """bincode and serde JSON through the class's type description ``LAYOUT``."""

    LAYOUT = None

    def to_bincode(self) -> bytes:
        return to_bincode(self.LAYOUT, self)

    @classmethod
    def from_bincode(cls, data, where: str = "partition proof (bincode)"):
        """Raises VanillaFormatError naming the field of any malformed byte."""
        return from_bincode(cls.LAYOUT, data, where)

    def to_json(self) -> str:
        return to_json(self.LAYOUT, self)

    @classmethod
    def from_json(cls, text, where: str = "partition proof"):
        return from_json(cls.LAYOUT, text, where)


@attrs.frozen
class PartitionProof(_Codec):
    """One partition's vanilla proof (see the module docstring)."""

    comm_c: bytes = attrs.field(converter=_domain)
    apex_leafs: tuple = attrs.field(converter=_domains)
    challenge_proofs: tuple = attrs.field(converter=_challenges)


@attrs.frozen
class PartitionProofPoseidon(_Codec):
    """The Poseidon variant's (single) partition proof: no apex leaves."""

    comm_c: bytes = attrs.field(converter=_domain)
    challenge_proofs: tuple = attrs.field(converter=_challenges)


CHALLENGE_PROOF = Struct("ChallengeProof", (
    Field("proof_r_old", MERKLE_PROOF), Field("proof_d_new", MERKLE_PROOF), Field("proof_r_new", MERKLE_PROOF),
), cls=ChallengeProof)
#: ``storage_proofs_update::vanilla::PartitionProof<TreeR>``
PARTITION_PROOF = Struct("PartitionProof", (
    Field("comm_c", DOMAIN), Field("apex_leafs", Seq(DOMAIN, MAX_APEX_LEAFS)),
    Field("challenge_proofs", Seq(CHALLENGE_PROOF, MAX_CHALLENGES)),
), cls=PartitionProof)
#: ``storage_proofs_update::poseidon::vanilla::PartitionProof<TreeR>``
PARTITION_PROOF_POSEIDON = Struct("PartitionProof", (
    Field("comm_c", DOMAIN), Field("challenge_proofs", Seq(CHALLENGE_PROOF, MAX_CHALLENGES)),
), cls=PartitionProofPoseidon)
PartitionProof.LAYOUT = PARTITION_PROOF
PartitionProofPoseidon.LAYOUT = PARTITION_PROOF_POSEIDON


# ---- making proofs --------------------------------------------------------------------------

def _poseidon_proof(tree, node: int) -> MerkleProof:
    """``node``'s proof in a Poseidon tree, its levels split as rust-fil-proofs' proof variant of
    the tree's shape (base levels, then one sub and one top level)."""
    shape, levels, idx = tree.shape, [], node
    for siblings, a in zip(tree.path(node), shape.levels):
        levels.append(PathElement(tuple(int_domain(x) for x in siblings), idx % a))
        idx //= a
    b = shape.base_height
    parts = {"base": levels[:b]}
    if shape.sub:
        parts["sub"] = levels[b:b + 1]
    if shape.top:
        parts["top"] = levels[b + 1:b + 2]
    return MerkleProof(root=int_domain(tree.root), leaf=int_domain(tree.leaf(node)), **parts)


def _sha_proof(tree: TreeD, node: int) -> MerkleProof:
    return MerkleProof(root=tree.root, leaf=tree.leaf(node),
                       base=[PathElement((s,), (node >> i) & 1) for i, s in enumerate(tree.path(node))])


def _d_proof(updated, node: int) -> MerkleProof:
    if isinstance(updated.tree_d, TreeD):
        return _sha_proof(updated.tree_d, node)
    return _poseidon_proof(updated.tree_d, node)


def partition_proof(updated, k: int = 0):
    """Partition ``k``'s vanilla proof of ``updated`` (an :class:`~.encode.UpdatedSector`).

    Raises:
        InputError: no such partition.
    """
    p: UpdateParams = updated.params
    k = p.check_partition(k)
    challenges = partition_challenges(p, updated.comm_r_new_int, k)
    proofs = [ChallengeProof(_poseidon_proof(updated.tree_r_old, c), _d_proof(updated, c),
                             _poseidon_proof(updated.tree_r, c)) for c in challenges]
    if p.poseidon:
        return PartitionProofPoseidon(comm_c=updated.comm_c, challenge_proofs=proofs)
    row = updated.tree_d.levels[p.apex_height]
    apex = [row[i].tobytes() for i in range(k * p.apex_leaf_count, (k + 1) * p.apex_leaf_count)]
    return PartitionProof(comm_c=updated.comm_c, apex_leafs=apex, challenge_proofs=proofs)


def partition_proofs(updated) -> list:
    """Every partition's vanilla proof, in order (``prove_all_partitions``)."""
    return [partition_proof(updated, k) for k in range(updated.params.partition_count)]


# ---- checking them --------------------------------------------------------------------------

def _sha_root(proof: MerkleProof) -> bytes:
    node, idx = proof.leaf, proof.path_index()
    for e in proof.levels:
        (sib,) = e.hashes
        node = sha256_trimmed(sib + node if idx & 1 else node + sib)
        idx >>= 1
    return node


def _poseidon_ok(proof: MerkleProof, c: int, p: UpdateParams) -> bool:
    if proof.arities != p.shape.levels or proof.path_index() != c:
        return False
    return merkle_root_native(domain_int(proof.leaf), c, proof.siblings(), p.shape) == domain_int(proof.root)


def verify_partition_proof(params: UpdateParams, proof: PartitionProof, *, k: int, comm_r_old, comm_d_new,
                           comm_r_new, h=None) -> bool:
    """rust-fil-proofs' vanilla check of partition ``k``'s proof against the public statement
    (commitments as 32 bytes): every Merkle proof on its challenge and root, the encoding of every
    challenged node, the apex leaves against tree D's paths.

    Raises:
        InputError: ``k`` or ``h`` not allowed for the sector size, a proof of the wrong shape.
    """
    k = params.check_partition(k)
    h = params.h_default if h is None else h
    params.h_select(h)
    if not isinstance(proof, PartitionProof):
        raise InputError(f"proof must be a PartitionProof, got {type(proof).__name__}")
    if len(proof.apex_leafs) != params.apex_leaf_count or len(proof.challenge_proofs) != params.challenge_count:
        raise InputError(f"a partition proof holds {params.apex_leaf_count} apex leaves and {params.challenge_count} "
                         f"challenges, got {len(proof.apex_leafs)} and {len(proof.challenge_proofs)}")
    r_old, d_new, r_new = (domain_int(x) for x in (comm_r_old, comm_d_new, comm_r_new))
    first = proof.challenge_proofs[0]
    root_r_old, root_r_new = first.proof_r_old.root, first.proof_r_new.root
    comm_c = domain_int(proof.comm_c)
    if poseidon_hash([comm_c, domain_int(root_r_old)]) != r_old or poseidon_hash([comm_c, domain_int(root_r_new)]) != r_new:
        return False
    apex = [list(proof.apex_leafs)]
    for _ in range(params.apex_leaf_bit_len):
        prev = apex[-1]
        apex.append([sha256_trimmed(prev[i] + prev[i + 1]) for i in range(0, len(prev), 2)])
    ph = make_phi(d_new, r_old)
    shift = params.challenge_bit_len - h
    for c, cp in zip(partition_challenges(params, r_new, k), proof.challenge_proofs):
        d = cp.proof_d_new
        if not (_poseidon_ok(cp.proof_r_old, c, params) and _poseidon_ok(cp.proof_r_new, c, params)):
            return False
        if cp.proof_r_old.root != root_r_old or cp.proof_r_new.root != root_r_new:
            return False
        if d.arities != (2,) * params.challenge_bit_len or d.path_index() != c or domain_int(d.root) != d_new:
            return False
        if _sha_root(d) != d.root:
            return False
        want = (domain_int(cp.proof_r_old.leaf) + domain_int(d.leaf) * make_rho(ph, c >> shift)) % FR.modulus
        if domain_int(cp.proof_r_new.leaf) != want:
            return False
        top = d.levels[params.apex_height:params.apex_height + params.apex_leaf_bit_len]
        if not all(e.hashes[0] in row for e, row in zip(top, apex)):
            return False
    return True

