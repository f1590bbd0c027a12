"""bellperson's proof bytes: compressed A ‖ B ‖ C in the zcash point encoding (DESIGN §6).

The layout is the curve's, not BLS12-381's by name: point sizes come from the curve's
``EncodingFacts`` and the point codecs from its bundle (``cuzk.curves.get``), so any curve whose
spec has ``point_encoding="zcash"`` gets the format (BLS12-381: 48 ‖ 96 ‖ 48 = 192 bytes).
A curve without it (BN254) raises :class:`cuzk.errors.UnsupportedCurveError` before any
decoding; its proofs are written as snarkjs JSON (:mod:`cuzk.formats.snarkjs_json`).
``cuzk.groth16.Proof.to_bytes``/``from_bytes`` delegate here.

    >>> from cuzk import curves
    >>> from cuzk.groth16 import Proof
    >>> g = curves.get("bls12_381")
    >>> p = Proof(a=g.G1.generator(), b=g.G2.generator(), c=g.G1.generator())
    >>> data = proof_to_bytes(p)
    >>> len(data), proof_size("bls12_381"), proof_from_bytes(data) == p
    (192, 192, True)
"""

from __future__ import annotations

from cuzk import curves
from cuzk.curve.encoding import point_from_bytes, point_to_bytes
from cuzk.errors import InputError, ParamsFormatError, PointEncodingError
from cuzk.groth16.keys import check_bellperson
from cuzk.groth16.proof import Proof, proof_size

__all__ = ["proof_to_bytes", "proof_from_bytes", "proof_size"]


def _parts(curve: str):
    bundle = curves.get(curve)
    enc = bundle.spec.encoding
    return (("a", bundle.G1, enc.g1_compressed), ("b", bundle.G2, enc.g2_compressed), ("c", bundle.G1, enc.g1_compressed))


def proof_to_bytes(proof: Proof) -> bytes:
    """The compressed encodings of A, B, C back to back.

    Raises:
        InputError: ``proof`` is not a :class:`cuzk.groth16.Proof`.
        UnsupportedCurveError: its curve has no zcash point encoding (BN254).
    """
    if not isinstance(proof, Proof):
        raise InputError(f"expected a cuzk.groth16.Proof, got {type(proof).__name__}")
    check_bellperson(proof.curve, "a proof's bytes (Proof.to_bytes)")
    return b"".join(point_to_bytes(group, getattr(proof, name)) for name, group, _ in _parts(proof.curve))


def proof_from_bytes(data, *, checked: bool = True, curve: str | None = None) -> Proof:
    """Parse one proof of ``curve`` (default :data:`cuzk.curves.DEFAULT`); every point is checked
    (on the curve, in the subgroup) unless ``checked=False``.

    Raises:
        InputError: ``data`` is not bytes-like.
        UnsupportedCurveError: ``curve`` has no zcash point encoding.
        ParamsFormatError: wrong length, or a point that does not decode (the message names
            the element and its offset).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):  # bytes(5) would be five zeros
        raise InputError(f"Proof.from_bytes takes bytes, got {type(data).__name__}")
    curve = curves.canonical(curve)
    check_bellperson(curve, "a proof's bytes (Proof.from_bytes)")
    data = bytes(data)
    size = proof_size(curve)
    if len(data) != size:
        raise ParamsFormatError(f"a {curves.resolve(curve).title} Groth16 proof is {size} bytes, got {len(data)}")
    parts = {}
    off = 0
    for name, group, n in _parts(curve):
        try:
            parts[name] = point_from_bytes(group, data[off : off + n], compressed=True, checked=checked)
        except PointEncodingError as e:
            raise ParamsFormatError(f"proof.{name} at offset {off}: {e}") from e
        off += n
    return Proof(**parts, curve=curve)
