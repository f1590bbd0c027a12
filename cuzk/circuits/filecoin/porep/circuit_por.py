"""rust-fil-proofs' ``PoRCircuit`` as the PoRep circuit calls it: a leaf's inclusion under a root.

:func:`inclusion` climbs the levels of a (base, sub, top) tree leaf first: per level its index
bits (``AllocatedBit``), then its siblings (``AllocatedNum``), the node's insertion among them
(:func:`~cuzk.circuits.filecoin.insertion.insert`) and the level's hash; then one packed public
input of all the path bits, and ``computed_root * 1 = root``. With a root or leaf given as a
witness (not a variable) it is allocated first, as ``Root::Val`` is; ``public_root`` adds
``root`` as a public input after the path, as a non-private PoR does.

:func:`poseidon_node` hashes a level with neptune's Poseidon (trees R and C); the SHA-256
node hash of tree D lives in :mod:`cuzk.circuit.gadgets.sha256_bits`.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> root, leaf = cs.private(0), cs.private(0)
    >>> _ = inclusion(cs, (8, 8), poseidon_node, leaf, root, cs.private(9).value, [cs.private(0).value] * 14)
    >>> cs.n_constraints                      # 2 x (3 bits + 22 insert + 505 hash) + path + root
    1062
"""

from __future__ import annotations

from cuzk.circuit.gadgets.poseidon import poseidon_rows
from cuzk.circuit.lc import LinearCombination
from cuzk.circuits.filecoin.insertion import insert
from cuzk.circuits.filecoin.porep.circuit_num import alloc_bit, enforce_equal, inputize, pack_into_inputs
from cuzk.circuits.filecoin.poseidon import neptune_spec, poseidon_circuit_hash
from cuzk.errors import CircuitError

__all__ = ["inclusion", "poseidon_cached", "poseidon_node"]


def poseidon_node(cs, children, level: int, cache=None):
    """neptune's MerkleTree Poseidon of one level's children (``hash_multi_leaf_circuit``),
    stamped from ``cache`` (a :class:`~cuzk.circuit.template_cache.TemplateCache`) when given."""
    return poseidon_cached(cs, children, cache, name="computation of commitment hash")


def poseidon_cached(cs, inputs, cache=None, *, name: str):
    """:func:`~cuzk.circuits.filecoin.poseidon.poseidon_circuit_hash` of ``inputs``; with a
    ``cache``, stamped from its template for this input structure: the same rows, variables and
    witness, but a partition's ~50 hashes of two arities are traced twice instead of ~50 times."""
    if cache is None:
        return poseidon_circuit_hash(cs, inputs, name=name)
    return cache.call(cs, _hash_template, list(inputs), name=name)


def _hash_template(cs, inputs):
    # no namespace of its own: the stamped block's name stands where poseidon_circuit_hash's is
    return poseidon_rows(cs, neptune_spec(len(inputs)), inputs)


def _var(cs, x, name):
    return x if isinstance(x, LinearCombination) else cs.private(x, name=name)


def inclusion(cs, levels, node_hash, leaf, root, index, siblings, *, public_root: bool = False,
              name: str = "por"):
    """Constrain ``leaf`` to sit at position ``index`` under ``root`` (see the module docstring).

    Args:
        levels: the arity of each level, leaf first (``TreeShape.levels``).
        node_hash: ``node_hash(cs, children, level) -> variable``.
        leaf, root: variables, or witness values to allocate (leaf first, root after the path).
        index: the witness of the leaf's index; its bits are the per-level insertion indices.
        siblings: flat sibling witnesses, level by level (arity - 1 per level).

    Returns the packed path input.
    """
    if len(siblings) != sum(a - 1 for a in levels):
        raise CircuitError(f"a path over levels {tuple(levels)} has {sum(a - 1 for a in levels)} siblings, "
                           f"got {len(siblings)}")
    cur = _var(cs, leaf, f"{name}/value")
    n_bits = sum(a.bit_length() - 1 for a in levels)
    bit_values = index.bits(n_bits)
    path_bits, k = [], 0
    for level, a in enumerate(levels):
        ns = f"{name}/merkle tree hash {level}"
        w = a.bit_length() - 1
        bits = [alloc_bit(cs, v, name=f"{ns}/index bit {i}") for i, v in enumerate(bit_values[len(path_bits):len(path_bits) + w])]
        path_bits += bits
        sibs = [cs.private(s, name=f"{ns}/path element {i}") for i, s in enumerate(siblings[k:k + a - 1])]
        k += a - 1
        with cs.namespace(ns):
            cur = node_hash(cs, insert(cs, cur, bits, sibs), level)
    (packed,) = pack_into_inputs(cs, path_bits, name=f"{name}/path")
    rt = _var(cs, root, f"{name}/root_value")
    enforce_equal(cs, cur, rt, name=f"{name}/enforce root is correct")
    if public_root:
        inputize(cs, rt, name=f"{name}/root")
    return packed
