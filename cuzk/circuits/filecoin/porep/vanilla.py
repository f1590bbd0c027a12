"""PoRep vanilla proofs (rust-fil-proofs' ``stacked::Proof``): one per challenged node, and their layout.

One challenge's proof opens everything the StackedCircuit checks about node ``c``:

* ``comm_d_proofs``: ``c``'s data leaf and path in tree D (binary SHA-256, root ``comm_d``);
* ``comm_r_last_proof``: ``c``'s replica node and path in tree R_last (root ``comm_r_last``);
* ``replica_column_proofs``: ``c_x``, the column of ``c``'s labels (one row per layer) and its
  path in tree C (root ``comm_c``); ``drg_parents``: the same for the 6 DRG parents;
  ``exp_parents``: for the 8 expander parents;
* ``labeling_proofs``: per layer ``l`` (1-based) the 37 parent labels ``c``'s label hashes
  (layer 1: the 6 DRG parents' layer-1 labels repeated; later layers: the 6 DRG parents' layer-``l``
  labels and the 8 expander parents' layer-``l-1`` labels, repeated), ``layer_index = l``, ``node = c``;
* ``encoding_proof``: the last layer's labeling proof again (its label is the key the replica
  node is ``key + data`` under).

serde JSON, field by field (``D``: a domain, 32 numbers; ``M``: a
:data:`~cuzk.circuits.filecoin.vanilla.merkle.MERKLE_PROOF`)::

    {"comm_d_proofs": M, "comm_r_last_proof": M,
     "replica_column_proofs": {"c_x": CP, "drg_parents": [CP x 6], "exp_parents": [CP x 8]},
     "labeling_proofs": [{"parents": [D x 37], "layer_index": u32, "node": u64}, ...layers],
     "encoding_proof": {"parents": [D x 37], "layer_index": u32, "node": u64}}
    CP = {"column": {"index": u32, "rows": [D x layers], "_h": null}, "inclusion_proof": M}

``Column`` keeps its ``PhantomData`` field ``_h`` (serde writes ``null``; bincode nothing); the
labeling and encoding proofs skip theirs. bincode: the same fields in the same order.

    >>> from cuzk.circuits.filecoin.vanilla import from_json, to_json
    >>> lp = LabelingProof(parents=[bytes(32)] * 2, layer_index=1, node=5)
    >>> to_json(LABELING_PROOF, lp)[-31:]
    '0,0]],"layer_index":1,"node":5}'
    >>> from_json(LABELING_PROOF, to_json(LABELING_PROOF, lp)) == lp
    True
"""

from __future__ import annotations

import attrs

from cuzk.circuits.filecoin.vanilla.merkle import DOMAIN, MERKLE_PROOF, MerkleProof
from cuzk.circuits.filecoin.vanilla.schema import Field, Seq, Struct, U32, U64, Unit
from cuzk.errors import InputError

__all__ = [
    "Column", "ColumnProof", "ReplicaColumnProof", "LabelingProof", "EncodingProof", "VanillaProof",
    "COLUMN", "COLUMN_PROOF", "REPLICA_COLUMN_PROOF", "LABELING_PROOF", "ENCODING_PROOF", "VANILLA_PROOF",
    "TOTAL_PARENTS", "MAX_LAYERS",
]

#: Parent labels hashed into every label: the 14 parents (6 at layer 1) repeated to 37.
TOTAL_PARENTS = 37
#: The most rows a column may have in a document (Filecoin's sectors have 2 or 11 layers).
MAX_LAYERS = 16
_MAX_PARENTS = 64  # per labeling proof and parent list: above the 37 and 14 of every Filecoin proof


def _domains(v) -> tuple:
    out = tuple(v)
    if not all(isinstance(d, bytes) and len(d) == 32 for d in out):
        raise InputError("every domain must be 32 bytes")
    return out


def _u(bits):
    def check(inst, attribute, value):
        if type(value) is not int or not 0 <= value < (1 << bits):
            raise InputError(f"{attribute.name} must be a u{bits}, got {value!r:.40}")
    return check


def _all(cls):
    def convert(v) -> tuple:
        out = tuple(v)
        if not all(isinstance(x, cls) for x in out):
            raise InputError(f"expected {cls.__name__} items")
        return out
    return convert


def _is(cls):
    return attrs.validators.instance_of(cls)


@attrs.frozen
class Column:
    """A node's labels, one row per layer (row ``l - 1`` holds layer ``l``), and the node's index."""

    index: int = attrs.field(validator=_u(32))
    rows: tuple = attrs.field(converter=_domains)


@attrs.frozen
class ColumnProof:
    """A column and its inclusion in tree C (the leaf is the column's Poseidon hash)."""

    column: Column = attrs.field(validator=_is(Column))
    inclusion_proof: MerkleProof = attrs.field(validator=_is(MerkleProof))


@attrs.frozen
class ReplicaColumnProof:
    """The challenged node's column and its 6 DRG and 8 expander parents' columns."""

    c_x: ColumnProof = attrs.field(validator=_is(ColumnProof))
    drg_parents: tuple = attrs.field(converter=_all(ColumnProof))
    exp_parents: tuple = attrs.field(converter=_all(ColumnProof))


@attrs.frozen
class LabelingProof:
    """The parent labels one label hashes (repeated to 37), its layer (1-based) and node."""

    parents: tuple = attrs.field(converter=_domains)
    layer_index: int = attrs.field(validator=_u(32))
    node: int = attrs.field(validator=_u(64))


@attrs.frozen
class EncodingProof:
    """The last layer's labeling inputs: the key that encodes the replica node."""

    parents: tuple = attrs.field(converter=_domains)
    layer_index: int = attrs.field(validator=_u(32))
    node: int = attrs.field(validator=_u(64))


@attrs.frozen
class VanillaProof:
    """One challenge's vanilla proof (see the module docstring)."""

    comm_d_proofs: MerkleProof = attrs.field(validator=_is(MerkleProof))
    comm_r_last_proof: MerkleProof = attrs.field(validator=_is(MerkleProof))
    replica_column_proofs: ReplicaColumnProof = attrs.field(validator=_is(ReplicaColumnProof))
    labeling_proofs: tuple = attrs.field(converter=_all(LabelingProof))
    encoding_proof: EncodingProof = attrs.field(validator=_is(EncodingProof))

    @property
    def challenge(self) -> int:
        """The challenged node, as the tree-D path gives it."""
        return self.comm_d_proofs.path_index()


_PARENTS = Seq(DOMAIN, _MAX_PARENTS)
COLUMN = Struct("Column", (Field("index", U32), Field("rows", Seq(DOMAIN, MAX_LAYERS)), Field("_h", Unit(), None)),
                cls=Column)
COLUMN_PROOF = Struct("ColumnProof", (Field("column", COLUMN), Field("inclusion_proof", MERKLE_PROOF)), cls=ColumnProof)
REPLICA_COLUMN_PROOF = Struct("ReplicaColumnProof", (
    Field("c_x", COLUMN_PROOF), Field("drg_parents", Seq(COLUMN_PROOF, _MAX_PARENTS)),
    Field("exp_parents", Seq(COLUMN_PROOF, _MAX_PARENTS))), cls=ReplicaColumnProof)
LABELING_PROOF = Struct("LabelingProof", (Field("parents", _PARENTS), Field("layer_index", U32), Field("node", U64)),
                        cls=LabelingProof)
ENCODING_PROOF = Struct("EncodingProof", (Field("parents", _PARENTS), Field("layer_index", U32), Field("node", U64)),
                        cls=EncodingProof)
#: ``stacked::Proof<Tree, Sha256Hasher>`` (filecoin-proofs' ``VanillaSealProof``)
VANILLA_PROOF = Struct("Proof", (
    Field("comm_d_proofs", MERKLE_PROOF), Field("comm_r_last_proof", MERKLE_PROOF),
    Field("replica_column_proofs", REPLICA_COLUMN_PROOF), Field("labeling_proofs", Seq(LABELING_PROOF, MAX_LAYERS)),
    Field("encoding_proof", ENCODING_PROOF)), cls=VanillaProof)
