"""bellperson's proof bytes: compressed A ‖ B ‖ C in the zcash point encoding (DESIGN §6).

The layout is the curve's, not BLS12-381's by name: point sizes come from the curve's
``EncodingFacts`` and the point codecs from its bundle (``cuzk.curves.get``), so any curve whose
spec has ``point_encoding="zcash"`` gets the format (BLS12-381: 48 ‖ 96 ‖ 48 = 192 bytes).
A curve without it (BN254) raises :class:`cuzk.errors.UnsupportedCurveError` before any
decoding; its proofs are written as snarkjs JSON (:mod:`cuzk.formats.snarkjs_json`).
The encoding is ``cuzk.groth16.Proof.to_bytes``/``from_bytes``'s (verify takes a proof's bytes,
so groth16 holds it); these functions are the format's names for them.

    >>> from cuzk import curves
    >>> from cuzk.groth16 import Proof
    >>> g = curves.get("bls12_381")
    >>> p = Proof(a=g.G1.generator(), b=g.G2.generator(), c=g.G1.generator())
    >>> data = proof_to_bytes(p)
    >>> len(data), proof_size("bls12_381"), proof_from_bytes(data) == p
    (192, 192, True)
"""

from __future__ import annotations

from cuzk.errors import InputError
from cuzk.groth16.proof import Proof, proof_size

__all__ = ["proof_to_bytes", "proof_from_bytes", "proof_size"]


def proof_to_bytes(proof: Proof) -> bytes:
    """The compressed encodings of A, B, C back to back.

    Raises:
        InputError: ``proof`` is not a :class:`cuzk.groth16.Proof`.
        UnsupportedCurveError: its curve has no zcash point encoding (BN254).
    """
    if not isinstance(proof, Proof):
        raise InputError(f"expected a cuzk.groth16.Proof, got {type(proof).__name__}")
    return proof.to_bytes()


def proof_from_bytes(data, *, checked: bool = True, curve: str | None = None) -> Proof:
    """Parse one proof of ``curve`` (default :data:`cuzk.curves.DEFAULT`); every point is checked
    (on the curve, in the subgroup) unless ``checked=False``.

    Raises:
        InputError: ``data`` is not bytes-like.
        UnsupportedCurveError: ``curve`` has no zcash point encoding.
        ParamsFormatError: wrong length, or a point that does not decode (the message names
            the element and its offset).
    """
    return Proof.from_bytes(data, checked=checked, curve=curve)
