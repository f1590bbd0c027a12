"""The Groth16 proof: three group elements of one curve, and (BLS12-381) their 192-byte
bellperson encoding. A proof of another curve (BN254) has no bellperson form: ``to_bytes``
raises :class:`cuzk.errors.UnsupportedCurveError`; it is written as snarkjs JSON
(:mod:`cuzk.formats.snarkjs_json`).

    >>> from cuzk.curve import G1, G2
    >>> p = Proof(a=G1.generator(), b=G2.generator(), c=G1.generator())
    >>> Proof.from_bytes(p.to_bytes()) == p, len(p.to_bytes())
    (True, 192)
"""

from __future__ import annotations

import json

import attrs
import numpy as np

from cuzk.bounded_json import loads_bounded
from cuzk import curves
# the 192-byte bellperson encoding is BLS12-381's zcash one (check_bellperson guards the others)
from cuzk.curve import G1, G2
from cuzk.curve.encoding import encoded_size, point_from_bytes, point_to_bytes
from cuzk.errors import InputError, ParamsFormatError, PointEncodingError
from cuzk.groth16.keys import check_bellperson

__all__ = ["Proof", "PROOF_BYTES"]

_G1C = encoded_size(G1, compressed=True)  # 48
_G2C = encoded_size(G2, compressed=True)  # 96
PROOF_BYTES = 2 * _G1C + _G2C  # A ‖ B ‖ C, compressed (bellperson layout)
# to_json writes ~420 characters; anything over 64 KiB is not a proof, whatever its whitespace
_MAX_JSON = 64 << 10


def _frozen_copy(arr: np.ndarray) -> np.ndarray:
    a = np.array(arr, dtype=np.uint64, copy=True)
    a.flags.writeable = False
    return a


@attrs.frozen(eq=False)
class Proof:
    """A Groth16 proof (affine points as uint64 Montgomery arrays, DESIGN §3) over ``curve``.

    Raises:
        InputError: a point's shape is not one of ``curve``'s.
    """

    a: np.ndarray = attrs.field(converter=_frozen_copy)  #: A in G1, shape (2, L), L the Fq limbs
    b: np.ndarray = attrs.field(converter=_frozen_copy)  #: B in G2, shape (2, 2, L)
    c: np.ndarray = attrs.field(converter=_frozen_copy)  #: C in G1, shape (2, L)
    curve: str = attrs.field(default=curves.DEFAULT, converter=curves.canonical)  #: the curve's canonical name

    def __attrs_post_init__(self):
        limbs = curves.resolve(self.curve).fq.limbs
        for name, want in (("a", (2, limbs)), ("b", (2, 2, limbs)), ("c", (2, limbs))):
            if getattr(self, name).shape != want:
                raise InputError(f"proof.{name} has shape {getattr(self, name).shape}, a "
                                 f"{curves.resolve(self.curve).title} point is {want}")

    def __eq__(self, other) -> bool:
        if not isinstance(other, Proof):
            return NotImplemented
        # affine Montgomery limbs are canonical (infinity is all zeros), so equal arrays = equal points
        return self.curve == other.curve and all(np.array_equal(getattr(self, k), getattr(other, k)) for k in "abc")

    def __hash__(self) -> int:
        return hash((self.curve, self.a.tobytes(), self.b.tobytes(), self.c.tobytes()))

    def to_bytes(self) -> bytes:
        """192 bytes: compressed A (48) ‖ B (96) ‖ C (48), zcash point encoding (BLS12-381).

        Raises:
            UnsupportedCurveError: the proof is over a curve without a zcash encoding (BN254).
        """
        check_bellperson(self.curve, "the 192-byte proof encoding")
        return point_to_bytes(G1, self.a) + point_to_bytes(G2, self.b) + point_to_bytes(G1, self.c)

    @classmethod
    def from_bytes(cls, data: bytes, *, checked: bool = True) -> "Proof":
        """Parse 192 bytes; every point is checked (on curve, in subgroup) unless ``checked=False``.

        Raises:
            ParamsFormatError: wrong length, or a point that does not decode (the message names
                the element and its offset).
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):  # bytes(5) would be five zeros
            raise InputError(f"Proof.from_bytes takes bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) != PROOF_BYTES:
            raise ParamsFormatError(f"a Groth16 proof is {PROOF_BYTES} bytes, got {len(data)}")
        parts = {}
        off = 0
        for name, group, size in (("a", G1, _G1C), ("b", G2, _G2C), ("c", G1, _G1C)):
            try:
                parts[name] = point_from_bytes(group, data[off : off + size], compressed=True, checked=checked)
            except PointEncodingError as e:
                raise ParamsFormatError(f"proof.{name} at offset {off}: {e}") from e
            off += size
        return cls(**parts)

    @staticmethod
    def concat(proofs) -> bytes:
        """The multi-partition encoding: the proofs' bytes back to back."""
        return b"".join(p.to_bytes() for p in proofs)

    @classmethod
    def split(cls, data: bytes, *, checked: bool = True) -> list["Proof"]:
        """Inverse of :meth:`concat`."""
        if len(data) % PROOF_BYTES:
            raise ParamsFormatError(f"multi-proof length {len(data)} is not a multiple of {PROOF_BYTES}")
        return [cls.from_bytes(data[i : i + PROOF_BYTES], checked=checked) for i in range(0, len(data), PROOF_BYTES)]

    def to_json(self) -> str:
        """Human-readable JSON: compressed points as hex (BLS12-381; see :meth:`to_bytes`)."""
        b = self.to_bytes()
        return json.dumps({"a": b[:_G1C].hex(), "b": b[_G1C : _G1C + _G2C].hex(), "c": b[_G1C + _G2C :].hex()})

    @classmethod
    def from_json(cls, text: str, *, checked: bool = True) -> "Proof":
        """Inverse of :meth:`to_json`.

        Raises:
            ParamsFormatError: not JSON (or nested absurdly deep, or over 64 KiB), not an object
                with hex fields a, b, c, or a point that does not decode.

        >>> p = Proof(a=G1.generator(), b=G2.generator(), c=G1.generator())
        >>> Proof.from_json(p.to_json()) == p
        True
        """
        d = loads_bounded(text, "proof JSON", ParamsFormatError, max_bytes=_MAX_JSON)
        try:
            raw = bytes.fromhex(d["a"]) + bytes.fromhex(d["b"]) + bytes.fromhex(d["c"])
        except (ValueError, KeyError, TypeError) as e:
            raise ParamsFormatError(f"proof JSON must be an object with hex fields a, b, c: {e}") from e
        return cls.from_bytes(raw, checked=checked)
