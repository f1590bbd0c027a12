"""Circuit gadgets: boolean ops, bits/range checks, zero tests, Poseidon, Merkle paths, SHA-256."""

from cuzk.circuit.gadgets.bits import from_bits, is_equal, is_zero, to_bits
from cuzk.circuit.gadgets.boolean import and_, not_, or_, select, xor
from cuzk.circuit.gadgets.merkle import merkle_root, merkle_root_native
from cuzk.circuit.gadgets.poseidon import poseidon, poseidon_gadget, poseidon_permutation_gadget
from cuzk.circuit.gadgets.poseidon_params import poseidon_hash, poseidon_params, poseidon_permutation
from cuzk.circuit.gadgets.poseidon_spec import PoseidonSpec, poseidon_spec
from cuzk.circuit.gadgets.sha256 import sha256

__all__ = [
    "and_", "or_", "xor", "not_", "select",
    "to_bits", "from_bits", "is_zero", "is_equal",
    "poseidon", "poseidon_permutation_gadget", "poseidon_hash", "poseidon_permutation", "poseidon_params",
    "poseidon_gadget", "poseidon_spec", "PoseidonSpec",
    "merkle_root", "merkle_root_native",
    "sha256",
]
