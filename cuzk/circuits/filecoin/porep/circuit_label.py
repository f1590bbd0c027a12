"""The SHA-256 parts of the PoRep circuit: tree D's node hash and a node's label, as
rust-fil-proofs writes them (filecoin-hashers' ``hash_multi_leaf_circuit``, PoRep's
``create_label_circuit``).

* :func:`sha_node` — each child's 255 bits (``to_bits_le``), padded to 256 and byte-reversed,
  concatenated; SHA-256; the digest byte-reversed back and its first 254 bits packed.
* :func:`create_label` — ``SHA-256(replica_id || layer || node || 0-pad || 37 parents)`` over
  39 32-byte chunks, truncated to 254 bits the same way.

Both use a :class:`~cuzk.circuit.template_cache.TemplateCache` for the
compressions when given one.

    >>> from cuzk.circuit import ConstraintSystem
    >>> from cuzk.circuit.template_cache import TemplateCache
    >>> cs = ConstraintSystem()
    >>> kids = [cs.private(1), cs.private(2)]
    >>> _ = sha_node(cs, kids, 0, cache=TemplateCache())
    >>> cs.n_constraints                  # 2 x 256 unpacking + two compressions + 1 packing
    45379
"""

from __future__ import annotations

from cuzk.circuits.filecoin.porep.circuit_num import CAPACITY, pack_bits, reverse_bit_numbering, to_bits_le
from cuzk.circuit.gadgets.sha256_bits import sha256
from cuzk.errors import CircuitError

__all__ = ["sha_node", "create_label", "TOTAL_PARENTS", "label_preimage"]

TOTAL_PARENTS = 37  # parents hashed into a label: 6 DRG + 8 expander, repeated (PoRep's TOTAL_PARENTS)


def sha_node(cs, children, level: int, cache=None):
    """Tree D's hash of one level's children (allocated numbers) into a new allocated number."""
    bits = []
    for i, child in enumerate(children):
        bits += reverse_bit_numbering(to_bits_le(cs, child, name=f"{i}_num_into_bits"))
    digest = sha256(cs, bits, cache, name="hash")
    return pack_bits(cs, reverse_bit_numbering(digest)[:CAPACITY], name="pack_le")


def label_preimage(replica_id_bits, layer: int, node_bits_le, parents) -> list:
    """The bits ``create_label`` hashes: replica id (256), layer (32, big-endian), node (64,
    big-endian), zeros to 512, then each parent's 256 bits."""
    if len(replica_id_bits) != 256:
        raise CircuitError(f"replica id bits must be 256, got {len(replica_id_bits)}")
    if len(parents) != TOTAL_PARENTS:
        raise CircuitError(f"a label hashes {TOTAL_PARENTS} parents, got {len(parents)}")
    bits = list(replica_id_bits)
    bits += [bool(layer >> i & 1) for i in range(31, -1, -1)]
    bits += list(node_bits_le)[::-1]
    bits += [False] * (512 - len(bits))
    for p in parents:
        if len(p) != 256:
            raise CircuitError(f"a parent's bits must be 256, got {len(p)}")
        bits += p
    return bits


def create_label(cs, replica_id_bits, parents, layer: int, node_bits_le, cache=None):
    """A node's label in ``layer`` (1-based) from its 37 parents' bits (each 256, already
    byte-reversed), the replica id's 256 bits and the node index's 64 bits (least significant
    first); returns the allocated label."""
    with cs.namespace("create_label"):
        digest = sha256(cs, label_preimage(replica_id_bits, layer, node_bits_le, parents), cache, name="hash")
        return pack_bits(cs, reverse_bit_numbering(digest)[:CAPACITY], name="result_num")
