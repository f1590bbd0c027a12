"""Filecoin's registered seal proofs (ids 0-19), their PoRep ids and the replica id.

The ids follow filecoin-proofs-api's ``RegisteredSealProof`` order: five sector sizes (2 KiB,
8 MiB, 512 MiB, 32 GiB, 64 GiB) for each of ``V1`` (API 1.0.0, ids 0-4), ``V1_1`` (1.1.0, 5-9),
``V1_1_Feat_SyntheticPoRep`` (1.2.0, 10-14) and ``V1_2_Feat_NonInteractivePoRep`` (1.2.0,
15-19). A proof's PoRep id is its numeric id as u64 LE, a nonce (0 for every proof so far) as
u64 LE, then 16 zero bytes. Layers, partitions and challenges come from filecoin-proofs'
constants: a partition holds ``ceil(minimum challenges / partitions)`` challenges.

    >>> p = registered_seal_proof(8)
    >>> p.name, p.sector_size, p.api_version, p.layers, p.partitions, p.challenges_per_partition
    ('StackedDrg32GiBV1_1', 34359738368, '1.1.0', 11, 10, 18)
    >>> porep_id(8).hex()[:20]
    '08000000000000000000'
    >>> registered_seal_proof(19).partitions, registered_seal_proof(19).feature
    (126, 'non-interactive')
"""

from __future__ import annotations

import hashlib
import operator

import attrs

from cuzk.circuits.filecoin.shapes import GIB, KIB, MIB, NODE_SIZE, TreeShape, shape_for_sector
from cuzk.errors import InputError

__all__ = [
    "SealProof", "REGISTERED_SEAL_PROOFS", "registered_seal_proof", "vanilla_variant", "porep_id", "replica_id",
    "SYNTHETIC", "NON_INTERACTIVE", "DEFAULT_SYNTH_CHALLENGES",
]

SYNTHETIC = "synthetic"
NON_INTERACTIVE = "non-interactive"
DEFAULT_SYNTH_CHALLENGES = 1 << 18  # synthetic challenges generated for a sector (fewer if it has fewer nodes)

_SIZES = ((2 * KIB, "2KiB"), (8 * MIB, "8MiB"), (512 * MIB, "512MiB"), (32 * GIB, "32GiB"), (64 * GIB, "64GiB"))
#: (name suffix, API version, feature) of each group of five ids
_GROUPS = (("V1", "1.0.0", None), ("V1_1", "1.1.0", None),
           ("V1_1_Feat_SyntheticPoRep", "1.2.0", SYNTHETIC), ("V1_2_Feat_NonInteractivePoRep", "1.2.0", NON_INTERACTIVE))
_PRODUCTION = (32 * GIB, 64 * GIB)  # the sizes with 11 layers and the large challenge counts


@attrs.frozen
class SealProof:
    """One registered seal proof."""

    id: int  #: the RegisteredSealProof number, hashed into the PoRep id
    name: str  #: filecoin-proofs-api's variant name
    sector_size: int  #: bytes
    api_version: str  #: "1.0.0", "1.1.0" or "1.2.0"
    feature: str | None  #: None, SYNTHETIC or NON_INTERACTIVE
    layers: int  #: SDR labeling layers
    partitions: int  #: Groth16 proofs per sector
    minimum_challenges: int  #: challenges the sector's proof must hold in all

    @property
    def nodes(self) -> int:
        return self.sector_size // NODE_SIZE

    @property
    def challenges_per_partition(self) -> int:
        return -(-self.minimum_challenges // self.partitions)

    @property
    def shape(self) -> TreeShape:
        """The replica's tree (tree R) shape."""
        return shape_for_sector(self.sector_size)

    @property
    def porep_id(self) -> bytes:
        return porep_id(self.id)

    @property
    def synthetic_challenges(self) -> int:
        """Synthetic challenges generated for the sector (0 unless the proof is synthetic)."""
        return min(self.nodes, DEFAULT_SYNTH_CHALLENGES) if self.feature == SYNTHETIC else 0


def _table() -> dict:
    table = {}
    for g, (suffix, version, feature) in enumerate(_GROUPS):
        for s, (size, size_name) in enumerate(_SIZES):
            big = size in _PRODUCTION
            if feature == NON_INTERACTIVE:
                partitions, minimum = (126, 2253) if big else (13, 26)
            else:
                partitions, minimum = (10, 176) if big else (1, 2)
            pid = 5 * g + s
            table[pid] = SealProof(pid, f"StackedDrg{size_name}{suffix}", size, version, feature,
                                   11 if big else 2, partitions, minimum)
    return table


#: id -> SealProof for ids 0..19
REGISTERED_SEAL_PROOFS = _table()


def registered_seal_proof(registered_proof) -> SealProof:
    """The registered seal proof numbered ``registered_proof``.

    Raises:
        InputError: an id that is not an int in 0..19.
    """
    try:
        i = operator.index(registered_proof)
    except TypeError:
        raise InputError(f"registered seal proof id must be an int, got {registered_proof!r:.60}") from None
    if i not in REGISTERED_SEAL_PROOFS:
        raise InputError(f"unknown registered seal proof id {i} (known: 0..{len(REGISTERED_SEAL_PROOFS) - 1})")
    return REGISTERED_SEAL_PROOFS[i]


def vanilla_variant(registered_proof) -> str:
    """The ``VanillaSealProof`` variant (the ``vanilla_proofs`` key) of a registered proof id.

    >>> vanilla_variant(8), vanilla_variant(15)
    ('StackedDrg32GiBV1', 'StackedDrg2KiBV1')
    """
    name = registered_seal_proof(registered_proof).name
    return name[:name.index("V1")] + "V1"


def porep_id(registered_proof: int) -> bytes:
    """The 32-byte PoRep id of a registered seal proof: id u64 LE || nonce 0 u64 LE || 16 zeros.

    Raises:
        InputError: an unknown id.
    """
    p = registered_seal_proof(registered_proof)
    return p.id.to_bytes(8, "little") + (0).to_bytes(8, "little") + bytes(16)


def _bytes32(x, what: str) -> bytes:
    if not isinstance(x, (bytes, bytearray, memoryview)) or len(x) != 32:
        raise InputError(f"{what} must be 32 bytes, got {x!r:.80}")
    return bytes(x)


def replica_id(prover_id: bytes, sector_id: int, ticket: bytes, comm_d: bytes, porep_id: bytes) -> bytes:
    """The replica id: ``sha256(prover_id || sector_id as u64 BIG-endian || ticket || comm_d ||
    porep_id)`` with the top two bits of its last byte cleared, so the 32 little-endian bytes
    are a canonical Fr element (rust-fil-proofs' ``generate_replica_id``).

    >>> rid = replica_id(bytes(32), 1, bytes(32), bytes(32), bytes(32))
    >>> len(rid), rid[31] < 64
    (32, True)

    Raises:
        InputError: a byte string that is not 32 bytes, a sector id outside u64.
    """
    try:
        sid = operator.index(sector_id)
    except TypeError:
        raise InputError(f"sector_id must be an int, got {type(sector_id).__name__}") from None
    if not 0 <= sid < 1 << 64:
        raise InputError(f"sector_id must fit in a u64, got {sid}")
    d = bytearray(hashlib.sha256(
        _bytes32(prover_id, "prover_id") + sid.to_bytes(8, "big") + _bytes32(ticket, "ticket")
        + _bytes32(comm_d, "comm_d") + _bytes32(porep_id, "porep_id")
    ).digest())
    d[31] &= 0x3F
    return bytes(d)
