"""Fallback PoSt vanilla proofs (filecoin-proofs' ``FallbackPoStSectorProof``) and their layout.

What a storage provider's node hands a PoSt prover per sector (Curio sends one bincode document
per sector in ``SubmitProofRequest.vanilla_proofs``)::

    FallbackPoStSectorProof { sector_id: u64, comm_r: D,
                              vanilla_proof: Proof { sectors: [SectorProof, ...] } }
    SectorProof { inclusion_proofs: [M, ...challenges], comm_c: D, comm_r_last: D }

(``D`` a 32-byte domain, ``M`` a :data:`~cuzk.circuits.filecoin.vanilla.merkle.MERKLE_PROOF` of a
challenged leaf in the replica tree ``tree_r_last``; storage-proofs-post's ``fallback::Proof``
and ``SectorProof``). A WindowPoSt sector proof holds one ``SectorProof`` of 10 inclusion proofs,
a WinningPoSt one a single ``SectorProof`` of 66. bincode: the fields in this order, ``sector_id``
as u64 LE, each ``Vec`` behind a u64 length.

:func:`sector_proof` builds one from a :class:`~cuzk.circuits.filecoin.post.PostSector` (its tree
in memory) and the challenged leaves, as rust-fil-proofs' ``generate_single_vanilla_proof`` does.

    >>> from cuzk.circuits.filecoin import PostSector, build_tree
    >>> s = PostSector(sector_id=7, comm_c=5, tree=build_tree(list(range(64))))
    >>> p = sector_proof(s, [3, 60])
    >>> p.sector_id, len(p.sectors[0].inclusion_proofs), p.sectors[0].inclusion_proofs[1].path_index()
    (7, 2, 60)
    >>> from cuzk.circuits.filecoin.vanilla import from_bincode, to_bincode
    >>> from_bincode(FALLBACK_POST_SECTOR_PROOF, to_bincode(FALLBACK_POST_SECTOR_PROOF, p)) == p
    True
"""

from __future__ import annotations

import attrs

from cuzk.circuits.filecoin.vanilla.merkle import DOMAIN, MERKLE_PROOF, MerkleProof, PathElement, int_domain
from cuzk.circuits.filecoin.vanilla.schema import Field, Mapped, Seq, Struct, U64
from cuzk.errors import InputError

__all__ = ["SectorProof", "FallbackPoStSectorProof", "SECTOR_PROOF", "FALLBACK_POST_SECTOR_PROOF",
           "sector_proof", "MAX_INCLUSION_PROOFS", "MAX_SECTOR_PROOFS"]

#: Most inclusion proofs a sector proof may hold: above WinningPoSt's 66 and WindowPoSt's 10.
MAX_INCLUSION_PROOFS = 1024
#: Most SectorProofs in one FallbackPoStSectorProof (rust-fil-proofs puts exactly one).
MAX_SECTOR_PROOFS = 64


def _domain(v) -> bytes:
    if not isinstance(v, bytes) or len(v) != 32:
        raise InputError(f"a domain is 32 bytes, got {v!r:.40}")
    return v


def _proofs(v) -> tuple:
    out = tuple(v)
    if not all(isinstance(p, MerkleProof) for p in out):
        raise InputError("inclusion_proofs must be MerkleProof items")
    return out


def _sectors(v) -> tuple:
    out = tuple(v)
    if not all(isinstance(s, SectorProof) for s in out):
        raise InputError("sectors must be SectorProof items")
    return out


def _u64(inst, attribute, value):
    if type(value) is not int or not 0 <= value < 1 << 64:
        raise InputError(f"{attribute.name} must be a u64, got {value!r:.40}")


@attrs.frozen
class SectorProof:
    """One sector's inclusion proofs (one per challenge) and its tree C / tree R_last roots."""

    inclusion_proofs: tuple = attrs.field(converter=_proofs)
    comm_c: bytes = attrs.field(converter=_domain)
    comm_r_last: bytes = attrs.field(converter=_domain)


@attrs.frozen
class FallbackPoStSectorProof:
    """A sector's vanilla PoSt proof: its id, comm_r and its ``SectorProof`` list."""

    sector_id: int = attrs.field(validator=_u64)
    comm_r: bytes = attrs.field(converter=_domain)
    sectors: tuple = attrs.field(converter=_sectors)


SECTOR_PROOF = Struct("SectorProof", (
    Field("inclusion_proofs", Seq(MERKLE_PROOF, MAX_INCLUSION_PROOFS)), Field("comm_c", DOMAIN),
    Field("comm_r_last", DOMAIN)), cls=SectorProof)
_FALLBACK_PROOF = Mapped(Struct("Proof", (Field("sectors", Seq(SECTOR_PROOF, MAX_SECTOR_PROOFS)),)),
                         load=lambda d: tuple(d["sectors"]), dump=lambda sectors: {"sectors": list(sectors)},
                         name="fallback::Proof")
#: filecoin-proofs' ``FallbackPoStSectorProof<Tree>`` (one layout for every tree shape)
FALLBACK_POST_SECTOR_PROOF = Struct("FallbackPoStSectorProof", (
    Field("sector_id", U64), Field("comm_r", DOMAIN), Field("vanilla_proof", _FALLBACK_PROOF, "sectors")),
    cls=FallbackPoStSectorProof)


def _merkle_proof(tree, challenge: int) -> MerkleProof:
    """``challenge``'s inclusion proof in ``tree``, split into base / sub / top levels by its shape."""
    shape, node, levels = tree.shape, challenge, []
    for a, siblings in zip(shape.levels, tree.path(challenge)):
        levels.append(PathElement(tuple(int_domain(x) for x in siblings), node % a))
        node //= a
    base, rest = levels[:shape.base_height], levels[shape.base_height:]
    return MerkleProof(root=int_domain(tree.root), leaf=int_domain(tree.leaf(challenge)), base=base,
                       sub=rest[:1] if shape.sub else None, top=rest[1:2] if shape.top else None)


def sector_proof(sector, challenges) -> FallbackPoStSectorProof:
    """The vanilla proof of ``sector`` (a :class:`~cuzk.circuits.filecoin.post.PostSector` with its
    tree) for ``challenges`` (leaf indices, as :meth:`FallbackPoSt.challenges
    <cuzk.circuits.filecoin.post.FallbackPoSt.challenges>` derives them).

    Raises:
        InputError: a sector without a tree, a challenge outside it.
    """
    if getattr(sector, "tree", None) is None:
        raise InputError(f"sector {getattr(sector, 'sector_id', '?')}: a vanilla proof needs the sector's tree")
    proofs = [_merkle_proof(sector.tree, c) for c in challenges]
    sp = SectorProof(proofs, int_domain(sector.comm_c), int_domain(sector.comm_r_last))
    return FallbackPoStSectorProof(sector.sector_id, int_domain(sector.comm_r), (sp,))
