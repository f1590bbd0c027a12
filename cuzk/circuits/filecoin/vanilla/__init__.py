"""Byte layouts of rust-fil-proofs' types: serde JSON and bincode over one type description.

:mod:`~cuzk.circuits.filecoin.vanilla.schema` describes a Rust type as serde sees it (structs,
externally tagged enums, ``Vec``, ``Option``, fixed byte arrays, integers);
:mod:`~cuzk.circuits.filecoin.vanilla.serde_json` and :mod:`~cuzk.circuits.filecoin.vanilla.bincode`
read and write any described type, bounded by the bytes present, every failure a
:class:`~cuzk.errors.VanillaFormatError` naming the field. :mod:`~cuzk.circuits.filecoin.vanilla.merkle`
holds the Merkle inclusion proof every vanilla proof is built from, :mod:`~cuzk.circuits.filecoin.vanilla.post`
the Fallback PoSt sector proofs a PoSt prover is handed.

    >>> from cuzk.circuits.filecoin.vanilla import MERKLE_PROOF, from_bincode, to_bincode, MerkleProof
    >>> p = MerkleProof(root=bytes(32), leaf=bytes(32), base=())
    >>> from_bincode(MERKLE_PROOF, to_bincode(MERKLE_PROOF, p)) == p
    True
"""

from cuzk.circuits.filecoin.vanilla.bincode import from_bincode, to_bincode
from cuzk.circuits.filecoin.vanilla.merkle import DOMAIN, MERKLE_PROOF, MerkleProof, PathElement, domain_int, int_domain
from cuzk.circuits.filecoin.vanilla.post import (
    FALLBACK_POST_SECTOR_PROOF, FallbackPoStSectorProof, SectorProof, sector_proof,
)
from cuzk.circuits.filecoin.vanilla.schema import (
    U8, U32, U64, ByteVec, Bytes, Enum, Field, Int, Mapped, Opt, Seq, Str, Struct, Unit, Variant,
)
from cuzk.circuits.filecoin.vanilla.serde_json import from_json, from_value, to_json, to_value

__all__ = [
    "Int", "U8", "U32", "U64", "Bytes", "ByteVec", "Unit", "Str", "Seq", "Opt", "Field", "Struct", "Enum",
    "Variant", "Mapped",
    "from_json", "from_value", "to_json", "to_value", "from_bincode", "to_bincode",
    "DOMAIN", "MERKLE_PROOF", "MerkleProof", "PathElement", "domain_int", "int_domain",
    "FALLBACK_POST_SECTOR_PROOF", "FallbackPoStSectorProof", "SectorProof", "sector_proof",
]
