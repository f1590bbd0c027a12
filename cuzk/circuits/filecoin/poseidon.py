"""neptune's Poseidon (Filecoin's hash over BLS12-381 Fr): the native hash and its gadget.

The parameter sets are the ``neptune`` variant of
:func:`~cuzk.circuit.gadgets.poseidon_spec.poseidon_spec` (derived from the Grain LFSR, Cauchy
MDS ``1/(i + j + t)``, output element 1); hashing runs in the Numba kernels of
:mod:`cuzk.circuits.filecoin.native`.

    >>> hex(poseidon_hash([0, 1]))
    '0x396508d75e76a56b739e0fd902efe161a6fba9339d05a69d2e203c369a02e7ff'
    >>> poseidon_hash([7], arity=2, hash_type="constant_length") == poseidon_hash([7, 0], arity=2, hash_type="constant_length")
    False
"""

from __future__ import annotations

import operator

import numpy as np

from cuzk.circuit.gadgets.poseidon import poseidon_gadget
from cuzk.circuit.gadgets.poseidon_spec import NEPTUNE_PARTIAL_ROUNDS, neptune_tag, poseidon_spec
from cuzk.circuits.filecoin.native import hash_rows, kernel_constants
from cuzk.errors import InputError
from cuzk.field import FR, Fr

__all__ = ["poseidon_hash", "neptune_spec", "hash_nodes", "poseidon_circuit_hash", "ARITIES", "HASH_TYPES"]

ARITIES = tuple(sorted(NEPTUNE_PARTIAL_ROUNDS))
HASH_TYPES = ("merkle_tree", "constant_length")


def neptune_spec(arity: int):
    """The neptune parameter set hashing ``arity`` elements (t = arity + 1).

    Raises:
        InputError: an arity neptune's Filecoin instance does not define.
    """
    if arity not in ARITIES:
        raise InputError(f"neptune Poseidon arity must be one of {ARITIES}, got {arity!r}")
    return poseidon_spec("neptune", arity + 1)


def _field_ints(values, what: str) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise InputError(f"{what} must be a sequence of field elements, got {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        try:
            x = operator.index(v)
        except TypeError:
            raise InputError(f"{what}[{i}] must be an int, got {type(v).__name__} {v!r:.40}") from None
        if not 0 <= x < FR.modulus:
            raise InputError(f"{what}[{i}] = {x} is not a canonical BLS12-381 Fr element (0 <= x < r)")
        out.append(x)
    return out


def poseidon_hash(values, *, arity: int | None = None, hash_type: str = "merkle_tree") -> int:
    """neptune's Poseidon of ``values`` (canonical Fr ints) as an int.

    ``arity`` defaults to ``len(values)``. ``merkle_tree`` (tag 2^arity - 1) needs exactly
    ``arity`` values; ``constant_length`` (tag len * 2^64) takes 1 to ``arity`` values and pads
    with zeros.

    Raises:
        InputError: unknown hash type or arity, a wrong number of values, a value that is not a
            canonical field element.
    """
    vals = _field_ints(values, "values")
    arity = len(vals) if arity is None else arity
    if hash_type not in HASH_TYPES:
        raise InputError(f"hash_type must be one of {HASH_TYPES}, got {hash_type!r}")
    spec = neptune_spec(arity)
    if hash_type == "merkle_tree":
        if len(vals) != arity:
            raise InputError(f"a merkle_tree hash of arity {arity} takes exactly {arity} values, got {len(vals)}")
        tag = spec.tag
    else:
        if not 1 <= len(vals) <= arity:
            raise InputError(f"a constant_length hash of arity {arity} takes 1 to {arity} values, got {len(vals)}")
        tag = neptune_tag("constant_length", arity, len(vals))
    k = kernel_constants(spec)
    rows = Fr.from_ints(vals).reshape(1, len(vals), 4)
    tag_arr = k[7] if tag == spec.tag else Fr.from_ints([tag])
    return Fr.to_ints(hash_rows(rows, *k[:7], tag_arr, *k[8:]))[0]


def hash_nodes(children: np.ndarray) -> np.ndarray:
    """MerkleTree hashes of each row of ``children`` ((n, arity, 4) Montgomery) -> (n, 4)."""
    return hash_rows(children, *kernel_constants(neptune_spec(children.shape[1])))


def poseidon_circuit_hash(cs, inputs, name: str | None = None):
    """neptune's MerkleTree hash of ``len(inputs)`` allocated inputs in-circuit (an allocated
    variable; 311 / 505 constraints for arity 2 / 8, as rust-fil-proofs counts them)."""
    return poseidon_gadget(cs, neptune_spec(len(inputs)), inputs, name=name)
