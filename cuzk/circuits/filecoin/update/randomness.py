"""SnapDeals' randomness: neptune's arity-2 Poseidon under a custom domain tag, natively and in circuit.

rust-fil-proofs' storage-proofs-update hashes its randomness with neptune's
``HashType::Custom(CType::Arbitrary(1))``: the arity-2 parameter set Filecoin's trees use (same
round constants and MDS), but the capacity element (the tag) is ``id · 2^40 = 2^40`` instead of the
Merkle tree tag ``2^2 - 1``. Three values come from it:

* ``phi = H(comm_d_new, comm_r_old)``, one per update;
* ``rho(high) = H(phi, high)``, the factor a node is encoded with, ``high`` being the ``h`` high
  bits of the node's index (so there are ``2^h`` of them);
* the challenge digests ``H(comm_r_new, digest_index)`` (:mod:`.challenges`).

In circuit the tag is a constant lane, so a hash of two allocated inputs costs 311 rows, as
neptune's own circuit does.

    >>> from cuzk.circuits.filecoin.poseidon import poseidon_hash
    >>> gen_randomness(1, 2) != poseidon_hash([1, 2])
    True
    >>> rhos(5, h=2, nodes=64).shape, Fr.to_ints(rhos(5, h=2, nodes=64)[3:])[0] == rho(5, 3)
    ((4, 4), True)
"""

from __future__ import annotations

import numpy as np

from cuzk.circuit.gadgets.poseidon import poseidon_gadget
from cuzk.circuits.filecoin.native import hash_rows, kernel_constants
from cuzk.circuits.filecoin.poseidon import _field_ints, neptune_spec
from cuzk.errors import InputError
from cuzk.field import Fr

__all__ = ["GEN_RANDOMNESS_TAG", "gen_randomness", "gen_randomness_rows", "phi", "rho", "rhos",
           "gen_randomness_circuit"]

#: neptune's Custom(Arbitrary(1)) domain tag: the id times 2^40 (neptune's hash_type.rs)
GEN_RANDOMNESS_TAG = 1 << 40
_TAG = Fr.from_ints([GEN_RANDOMNESS_TAG])
_TAG.setflags(write=False)


def gen_randomness_rows(rows: np.ndarray) -> np.ndarray:
    """The custom-tag hash of each row of ``rows`` ((n, 2, 4) Montgomery) -> (n, 4) Montgomery."""
    k = kernel_constants(neptune_spec(2))
    return hash_rows(np.ascontiguousarray(rows), *k[:7], _TAG, *k[8:])


def gen_randomness(a, b) -> int:
    """``H_custom(a, b)`` of two canonical Fr ints, as an int.

    Raises:
        InputError: a value that is not a canonical field element.
    """
    vals = _field_ints([a, b], "gen_randomness inputs")
    return Fr.to_ints(gen_randomness_rows(Fr.from_ints(vals).reshape(1, 2, 4)))[0]


def phi(comm_d_new, comm_r_old) -> int:
    """``phi = H_custom(comm_d_new, comm_r_old)`` (ints; canonical Fr elements)."""
    return gen_randomness(comm_d_new, comm_r_old)


def rho(phi_value, high) -> int:
    """``rho = H_custom(phi, high)``: the encoding factor of every node whose ``h`` high bits are ``high``."""
    return gen_randomness(phi_value, high)


def rhos(phi_value, *, h: int, nodes: int) -> np.ndarray:
    """All ``2^h`` rhos of a sector, indexed by ``high`` ((2^h, 4) Montgomery).

    Raises:
        InputError: ``h`` outside ``[1, log2(nodes)]``.
    """
    bits = int(nodes).bit_length() - 1
    if isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= bits:
        raise InputError(f"h must be an int in [1, {bits}] for {nodes} nodes, got {h!r}")
    (p,) = _field_ints([phi_value], "phi")
    rows = np.empty((1 << h, 2, 4), dtype=np.uint64)
    rows[:, 0] = Fr.from_ints([p])
    rows[:, 1] = Fr.from_ints(list(range(1 << h)))
    return gen_randomness_rows(rows)


def gen_randomness_circuit(cs, a, b, name: str | None = None):
    """``H_custom(a, b)`` of two allocated numbers in-circuit (neptune's ``poseidon_hash`` with the
    custom tag: 311 rows); returns the allocated output."""
    return poseidon_gadget(cs, neptune_spec(2), [a, b], tag=GEN_RANDOMNESS_TAG, name=name)
