"""The Groth16 proof: three group elements of one curve.

Its bytes are bellperson's layout (compressed A ‖ B ‖ C in the zcash point encoding; 192 bytes
on BLS12-381), encoded here because :func:`cuzk.groth16.verify` takes a proof's bytes as well as
the proof (:mod:`cuzk.formats.bellperson_proof` offers the same as functions). Point sizes come
from the curve's ``EncodingFacts`` and the point codecs from its bundle, so nothing in this
module names a curve. A proof of a curve without the zcash encoding (BN254) has no bellperson
form: ``to_bytes`` raises :class:`cuzk.errors.UnsupportedCurveError`; it is written as snarkjs
JSON (:mod:`cuzk.formats.snarkjs_json`).

    >>> from cuzk import curves
    >>> g = curves.get(curves.DEFAULT)
    >>> p = Proof(a=g.G1.generator(), b=g.G2.generator(), c=g.G1.generator())
    >>> Proof.from_bytes(p.to_bytes()) == p, len(p.to_bytes()) == proof_size(p.curve) == PROOF_BYTES
    (True, True)
"""

from __future__ import annotations

import json

import attrs
import numpy as np

from cuzk.bounded_json import loads_bounded
from cuzk import curves
from cuzk.curve.coords import canonical_from_bytes
from cuzk.curve.encoding import compressed_from_coords, point_from_bytes
from cuzk.errors import InputError, ParamsFormatError, PointEncodingError
from cuzk.groth16.bellperson_layout import check_bellperson

__all__ = ["Proof", "PROOF_BYTES", "proof_size"]


def proof_size(curve: str | None = None) -> int:
    """Bytes of one encoded proof of ``curve`` (compressed G1 ‖ G2 ‖ G1, from its spec's
    ``EncodingFacts``; default :data:`cuzk.curves.DEFAULT`).

    >>> proof_size()
    192
    """
    enc = curves.resolve(curves.canonical(curve)).encoding
    return 2 * enc.g1_compressed + enc.g2_compressed


PROOF_BYTES = proof_size(curves.DEFAULT)  #: the default curve's proof size (A ‖ B ‖ C, compressed)
# to_json writes ~420 characters; anything over 64 KiB is not a proof, whatever its whitespace
_MAX_JSON = 64 << 10


def _parts(curve: str):
    bundle = curves.get(curve)
    enc = bundle.spec.encoding
    return (("a", bundle.G1, enc.g1_compressed), ("b", bundle.G2, enc.g2_compressed), ("c", bundle.G1, enc.g1_compressed))


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
    _coords: tuple | None = attrs.field(default=None, init=False, repr=False)  # coordinates(), once

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

    def coordinates(self) -> tuple:
        """The points as canonical ints, from one conversion: ``((ax, ay), ((bx0, bx1), (by0,
        by1)), (cx, cy))``, the identity as zeros (what the bytes and snarkjs's ``proof.json``
        are written from).

        Raises:
            FieldValueError: a coordinate's limbs hold a value >= p (not a point any prover made).

        >>> g = curves.get(curves.DEFAULT)
        >>> Proof(a=g.G1.identity(), b=g.G2.identity(), c=g.G1.identity()).coordinates()
        ((0, 0), ((0, 0), (0, 0)), (0, 0))
        """
        if self._coords is None:  # the arrays are read-only: the points cannot change
            field = curves.resolve(self.curve).fq
            # the arrays' bytes joined (C-contiguous uint64, _frozen_copy; little-endian as every
            # kernel of cuzk's assumes), not an array made of them: right after a proof (a daemon's
            # answer) each numpy call costs tens of microseconds with the caches cold
            raw = self.a.tobytes() + self.b.tobytes() + self.c.tobytes()
            v = canonical_from_bytes(raw, field, "proof")
            object.__setattr__(self, "_coords", ((v[0], v[1]), ((v[2], v[3]), (v[4], v[5])), (v[6], v[7])))
        return self._coords

    def to_bytes(self) -> bytes:
        """bellperson's proof bytes: compressed A ‖ B ‖ C, zcash point encoding (192 bytes on BLS12-381).

        Raises:
            UnsupportedCurveError: the proof's curve has no zcash encoding (BN254).
        """
        check_bellperson(self.curve, "a proof's bytes (Proof.to_bytes)")
        spec = curves.resolve(self.curve)
        p, enc = spec.fq.modulus, spec.encoding
        (ax, ay), (bx, by), (cx, cy) = self.coordinates()
        return (compressed_from_coords((ax,), (ay,), p, enc.g1_compressed)
                + compressed_from_coords(bx, by, p, enc.g2_compressed)
                + compressed_from_coords((cx,), (cy,), p, enc.g1_compressed))

    @classmethod
    def from_bytes(cls, data: bytes, *, checked: bool = True, curve: str | None = None) -> "Proof":
        """Parse one proof of ``curve`` (default :data:`cuzk.curves.DEFAULT`); every point is
        checked (on curve, in subgroup) unless ``checked=False``.

        Raises:
            InputError: ``data`` is not bytes-like.
            ParamsFormatError: wrong length, or a point that does not decode (the message names
                the element and its offset).
            UnsupportedCurveError: ``curve`` has no zcash encoding.
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
        return cls(**parts, curve=curve)

    @staticmethod
    def concat(proofs) -> bytes:
        """The multi-partition encoding: the proofs' bytes back to back."""
        return b"".join(p.to_bytes() for p in proofs)

    @classmethod
    def split(cls, data: bytes, *, checked: bool = True, curve: str | None = None) -> list["Proof"]:
        """Inverse of :meth:`concat` (proofs of ``curve``, default :data:`cuzk.curves.DEFAULT`)."""
        size = proof_size(curve)
        if len(data) % size:
            raise ParamsFormatError(f"multi-proof length {len(data)} is not a multiple of {size}")
        return [cls.from_bytes(data[i : i + size], checked=checked, curve=curve) for i in range(0, len(data), size)]

    def to_json(self) -> str:
        """Human-readable JSON: compressed points as hex (zcash encodings; see :meth:`to_bytes`)."""
        b = self.to_bytes()
        enc = curves.resolve(self.curve).encoding
        g1, g2 = enc.g1_compressed, enc.g2_compressed
        return json.dumps({"a": b[:g1].hex(), "b": b[g1 : g1 + g2].hex(), "c": b[g1 + g2 :].hex()})

    @classmethod
    def from_json(cls, text: str, *, checked: bool = True, curve: str | None = None) -> "Proof":
        """Inverse of :meth:`to_json` (a proof of ``curve``, default :data:`cuzk.curves.DEFAULT`).

        Raises:
            ParamsFormatError: not JSON (or nested absurdly deep, or over 64 KiB), not an object
                with hex fields a, b, c, or a point that does not decode.

        >>> g = curves.get(curves.DEFAULT)
        >>> p = Proof(a=g.G1.generator(), b=g.G2.generator(), c=g.G1.generator())
        >>> Proof.from_json(p.to_json()) == p
        True
        """
        d = loads_bounded(text, "proof JSON", ParamsFormatError, max_bytes=_MAX_JSON)
        try:
            raw = bytes.fromhex(d["a"]) + bytes.fromhex(d["b"]) + bytes.fromhex(d["c"])
        except (ValueError, KeyError, TypeError) as e:
            raise ParamsFormatError(f"proof JSON must be an object with hex fields a, b, c: {e}") from e
        return cls.from_bytes(raw, checked=checked, curve=curve)
