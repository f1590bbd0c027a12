"""rust-fil-proofs' Merkle inclusion proof (``storage_proofs_core::merkle::MerkleProof``) and its layout.

A domain (``PoseidonDomain``, ``Sha256Domain``: newtypes of ``[u8; 32]``) is 32 little-endian
bytes, :data:`DOMAIN`. A proof is one of three variants by the tree's shape: ``Single`` (a base
tree alone), ``Sub`` (base trees under one sub level), ``Top`` (sub trees under a top level).
Its serde JSON, field by field::

    {"data": {"Single": {"root": D, "leaf": D, "path": P}}}
    {"data": {"Sub": {"base_proof": P, "sub_proof": P, "root": D, "leaf": D}}}
    {"data": {"Top": {"base_proof": P, "sub_proof": P, "top_proof": P, "root": D, "leaf": D}}}

where ``D`` is an array of 32 numbers and ``P`` (``InclusionPath``) is
``{"path": [{"hashes": [D, ...], "index": n}, ...]}``, leaf level first: the ``arity - 1``
siblings of the path's node and the node's position among its ``arity`` siblings (``index``
is a ``usize``). bincode: u32 variant index (0, 1, 2), then the fields in the same order.

    >>> p = MerkleProof(root=bytes(32), leaf=bytes([1]) + bytes(31),
    ...                 base=(PathElement((bytes(32),), 1),))
    >>> p.kind, p.path_index()
    ('Single', 1)
    >>> from cuzk.circuits.filecoin.vanilla import from_json, to_json
    >>> text = to_json(MERKLE_PROOF, p); text[:30]
    '{"data":{"Single":{"root":[0,0'
    >>> from_json(MERKLE_PROOF, text) == p
    True
"""

from __future__ import annotations

import attrs

from cuzk.circuits.filecoin.vanilla.schema import Bytes, Enum, Field, Mapped, Seq, Struct, U64, Variant
from cuzk.errors import InputError

__all__ = ["DOMAIN", "MERKLE_PROOF", "PathElement", "MerkleProof", "domain_int", "int_domain",
           "MAX_PATH_LEVELS", "MAX_SIBLINGS"]

#: A field element or SHA-256 digest as rust-fil-proofs stores it: 32 little-endian bytes.
DOMAIN = Bytes(32)
#: Most levels a path may have: 2^64 leaves at arity 2 (the reader's bound, not a Filecoin shape).
MAX_PATH_LEVELS = 64
#: Most siblings per level: arity 16, above every arity rust-fil-proofs builds trees with (2, 4, 8).
MAX_SIBLINGS = 15


def domain_int(d: bytes) -> int:
    """A domain's integer (little-endian). ``domain_int(bytes([1]) + bytes(31)) == 1``."""
    return int.from_bytes(d, "little")


def int_domain(x: int) -> bytes:
    """The 32-byte little-endian domain of ``0 <= x < 2^256``.

    Raises:
        InputError: ``x`` does not fit in 32 bytes.
    """
    try:
        return int(x).to_bytes(32, "little")
    except OverflowError:
        raise InputError(f"{x} does not fit a 32-byte domain") from None


def _hashes(v):
    hashes = tuple(v)
    if not all(isinstance(h, bytes) and len(h) == 32 for h in hashes):
        raise InputError("every sibling must be 32 bytes")
    return hashes


@attrs.frozen
class PathElement:
    """One level of a path: the siblings (leaf level first) and the node's position among them."""

    hashes: tuple = attrs.field(converter=_hashes)
    index: int = attrs.field(validator=attrs.validators.instance_of(int))

    def __attrs_post_init__(self):
        if not 0 <= self.index <= len(self.hashes):
            raise InputError(f"a path level with {len(self.hashes)} siblings has positions 0..{len(self.hashes)}, "
                             f"got index {self.index}")


def _levels(v):
    return None if v is None else tuple(v)


def _domain(d):
    if not isinstance(d, bytes) or len(d) != 32:
        raise InputError(f"a domain is 32 bytes, got {d!r:.40}")
    return d


@attrs.frozen
class MerkleProof:
    """An inclusion proof: ``base`` levels, then ``sub`` (Sub and Top proofs), then ``top`` (Top)."""

    root: bytes = attrs.field(converter=_domain)
    leaf: bytes = attrs.field(converter=_domain)
    base: tuple = attrs.field(converter=tuple)
    sub: tuple | None = attrs.field(default=None, converter=_levels)
    top: tuple | None = attrs.field(default=None, converter=_levels)

    def __attrs_post_init__(self):
        if self.top is not None and self.sub is None:
            raise InputError("a Top proof has sub levels too")

    @property
    def kind(self) -> str:
        """``Single``, ``Sub`` or ``Top``: the variant serde writes."""
        return "Single" if self.sub is None else "Sub" if self.top is None else "Top"

    @property
    def levels(self) -> tuple:
        """Every level, leaf first: base, sub, top."""
        return self.base + (self.sub or ()) + (self.top or ())

    @property
    def arities(self) -> tuple:
        """Each level's arity as the proof itself gives it (siblings + 1)."""
        return tuple(len(e.hashes) + 1 for e in self.levels)

    def path_index(self) -> int:
        """The leaf index the path leads from (each level's position weighted by the arities below it)."""
        index, weight = 0, 1
        for e in self.levels:
            index += e.index * weight
            weight *= len(e.hashes) + 1
        return index

    def siblings(self) -> list:
        """Per level, the siblings as ints (the form :func:`~cuzk.circuits.filecoin.tree.merkle_root_native` takes)."""
        return [[domain_int(h) for h in e.hashes] for e in self.levels]


_PATH_ELEMENT = Struct("PathElement", (Field("hashes", Seq(DOMAIN, MAX_SIBLINGS)), Field("index", U64)),
                       cls=PathElement)
_INCLUSION_PATH = Mapped(Struct("InclusionPath", (Field("path", Seq(_PATH_ELEMENT, MAX_PATH_LEVELS)),)),
                         load=lambda d: tuple(d["path"]), dump=lambda levels: {"path": list(levels)},
                         name="InclusionPath")
_PROOF_DATA = Enum("ProofData", (
    ("Single", Struct("SingleProof", (Field("root", DOMAIN), Field("leaf", DOMAIN), Field("path", _INCLUSION_PATH, "base")))),
    ("Sub", Struct("SubProof", (Field("base_proof", _INCLUSION_PATH, "base"), Field("sub_proof", _INCLUSION_PATH, "sub"),
                                Field("root", DOMAIN), Field("leaf", DOMAIN)))),
    ("Top", Struct("TopProof", (Field("base_proof", _INCLUSION_PATH, "base"), Field("sub_proof", _INCLUSION_PATH, "sub"),
                                Field("top_proof", _INCLUSION_PATH, "top"), Field("root", DOMAIN),
                                Field("leaf", DOMAIN)))),
))


def _load(d) -> MerkleProof:
    return MerkleProof(**d["data"].value)


def _dump(p: MerkleProof) -> dict:
    fields = {"root": p.root, "leaf": p.leaf, "base": p.base}
    if p.sub is not None:
        fields["sub"] = p.sub
    if p.top is not None:
        fields["top"] = p.top
    return {"data": Variant(p.kind, fields)}


#: ``MerkleProof<H, Arity, SubArity, TopArity>``: the layout is the same for every hasher and arity.
MERKLE_PROOF = Mapped(Struct("MerkleProof", (Field("data", _PROOF_DATA),)), load=_load, dump=_dump,
                      name="MerkleProof")
