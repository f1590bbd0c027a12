"""BLS12-381 points for the reference prover: py_ecc's curve arithmetic plus zcash encodings.

Points are py_ecc ``optimized_bls12_381`` projective triples (X, Y, Z) representing (X/Z, Y/Z);
Z = 0 is the point at infinity. At the edges we speak plain ints:

* G1 affine: ``(x, y)``; G2 affine: ``((x0, x1), (y0, y1))`` with ``x = x0 + x1·u``.
* The point at infinity is all zeros, ``(0, 0)`` / ``((0, 0), (0, 0))``, as in DESIGN §3
  (x = y = 0 lies on neither curve, so the encoding is unambiguous).
* Compressed bytes follow the zcash format (DESIGN §6) via ``py_ecc.bls.point_compression``:
  48 big-endian bytes for G1; for G2 the two ints ``compress_G2`` returns (x1 with the flags,
  then x0), 48 bytes each.

    >>> from cuzk.reference.points import g1_mul, g1_compress
    >>> g1_compress(g1_mul(1)).hex()[:16]
    '97f1d3a73197d794'
"""

from __future__ import annotations

from py_ecc.bls.point_compression import compress_G1, compress_G2, decompress_G1, decompress_G2
from py_ecc.fields import optimized_bls12_381_FQ as _FQ
from py_ecc.fields import optimized_bls12_381_FQ2 as _FQ2
from py_ecc.optimized_bls12_381 import (
    G1,
    G2,
    Z1,
    Z2,
    add,
    b,
    b2,
    curve_order,
    eq,
    is_inf,
    is_on_curve,
    multiply,
    neg,
    normalize,
)

from cuzk.errors import NotInSubgroupError, NotOnCurveError, PointEncodingError

__all__ = [
    "G1",
    "G2",
    "Z1",
    "Z2",
    "add",
    "neg",
    "eq",
    "is_inf",
    "g1_mul",
    "g2_mul",
    "msm",
    "canonical",
    "in_subgroup",
    "g1_affine",
    "g2_affine",
    "g1_from_affine",
    "g2_from_affine",
    "g1_compress",
    "g2_compress",
    "g1_decompress",
    "g2_decompress",
    "g1_uncompressed",
    "g2_uncompressed",
]

_FIELD_BYTES = 48


def g1_mul(k: int, base=G1):
    """k · base in G1 (k reduced mod r; base defaults to the generator).

    >>> eq(g1_mul(2), add(G1, G1)), is_inf(g1_mul(curve_order))
    (True, True)
    """
    return multiply(base, k % curve_order)


def g2_mul(k: int, base=G2):
    """k · base in G2 (k reduced mod r; base defaults to the generator).

    >>> eq(g2_mul(3), add(G2, add(G2, G2)))
    True
    """
    return multiply(base, k % curve_order)


def msm(points: list, scalars: list[int], zero):
    """Σ scalars[i]·points[i], one scalar multiplication at a time (``zero``: Z1 or Z2).

    >>> eq(msm([G1, G1], [2, 3], Z1), g1_mul(5))
    True
    """
    if len(points) != len(scalars):
        raise ValueError(f"msm: {len(points)} points but {len(scalars)} scalars")
    acc = zero
    for p, k in zip(points, scalars):
        k %= curve_order
        if k and not is_inf(p):
            acc = add(acc, multiply(p, k))
    return acc


def canonical(pt):
    """The same point with Z = 1 (or py_ecc's infinity ``(1, 1, 0)``), so tuple equality is point equality.

    >>> canonical(add(G1, G1)) == canonical(g1_mul(2))
    True
    """
    if is_inf(pt):
        one = pt[0].one()
        return (one, one, pt[0].zero())
    x, y = normalize(pt)
    return (x, y, x.one())


def in_subgroup(pt) -> bool:
    """r · pt == O (cofactor-free points only pass).

    >>> in_subgroup(G1), in_subgroup(Z2)
    (True, True)
    """
    return is_inf(multiply(pt, curve_order))


def g1_affine(pt) -> tuple[int, int]:
    """Affine ``(x, y)`` as ints; ``(0, 0)`` for infinity.

    >>> g1_affine(Z1)
    (0, 0)
    """
    if is_inf(pt):
        return (0, 0)
    x, y = normalize(pt)
    return (int(x.n), int(y.n))


def g2_affine(pt) -> tuple[tuple[int, int], tuple[int, int]]:
    """Affine ``((x0, x1), (y0, y1))`` as ints (x = x0 + x1·u); all zeros for infinity.

    >>> g2_affine(Z2)
    ((0, 0), (0, 0))
    """
    if is_inf(pt):
        return ((0, 0), (0, 0))
    x, y = normalize(pt)
    return (tuple(int(c) for c in x.coeffs), tuple(int(c) for c in y.coeffs))


def g1_from_affine(xy: tuple[int, int]):
    """Inverse of :func:`g1_affine`; checks the curve equation (not the subgroup).

    Raises:
        NotOnCurveError: (x, y) is not on y² = x³ + 4 (and not the all-zero infinity).

    >>> eq(g1_from_affine(g1_affine(G1)), G1)
    True
    """
    x, y = xy
    if x == 0 and y == 0:
        return Z1
    pt = (_FQ(x), _FQ(y), _FQ.one())
    if not is_on_curve(pt, b):
        raise NotOnCurveError(f"G1 point ({x:#x}, {y:#x}) is not on the curve")
    return pt


def g2_from_affine(xy: tuple[tuple[int, int], tuple[int, int]]):
    """Inverse of :func:`g2_affine`; checks the curve equation (not the subgroup).

    Raises:
        NotOnCurveError: the point is not on the twist (and not the all-zero infinity).

    >>> eq(g2_from_affine(g2_affine(G2)), G2)
    True
    """
    (x0, x1), (y0, y1) = xy
    if x0 == x1 == y0 == y1 == 0:
        return Z2
    pt = (_FQ2([x0, x1]), _FQ2([y0, y1]), _FQ2.one())
    if not is_on_curve(pt, b2):
        raise NotOnCurveError("G2 point is not on the twist curve")
    return pt


def g1_compress(pt) -> bytes:
    """48-byte zcash compressed G1 (infinity: 0xc0 then zeros).

    >>> g1_compress(Z1).hex()[:4]
    'c000'
    """
    return int(compress_G1(pt)).to_bytes(_FIELD_BYTES, "big")


def g2_compress(pt) -> bytes:
    """96-byte zcash compressed G2: x1 with the flag bits, then x0.

    >>> len(g2_compress(G2)), g2_compress(G2).hex()[:8]
    (96, '93e02b60')
    """
    z1, z2 = compress_G2(pt)
    return int(z1).to_bytes(_FIELD_BYTES, "big") + int(z2).to_bytes(_FIELD_BYTES, "big")


def _check_subgroup(pt, group: str, check_subgroup: bool):
    if check_subgroup and not in_subgroup(pt):
        raise NotInSubgroupError(f"{group} point is on the curve but not in the prime-order subgroup")
    return pt


def g1_decompress(data: bytes, check_subgroup: bool = True):
    """Inverse of :func:`g1_compress`.

    Raises:
        PointEncodingError: wrong length, flags or a coordinate ≥ p;
        NotOnCurveError / NotInSubgroupError: x gives no curve point / a point outside G1.

    >>> eq(g1_decompress(g1_compress(G1)), G1)
    True
    """
    if len(data) != _FIELD_BYTES:
        raise PointEncodingError(f"compressed G1 point must be {_FIELD_BYTES} bytes, got {len(data)}")
    try:
        pt = decompress_G1(int.from_bytes(data, "big"))
    except ValueError as e:
        kind = NotOnCurveError if "not on" in str(e) else PointEncodingError
        raise kind(f"bad compressed G1 point: {e}") from None
    return _check_subgroup(pt, "G1", check_subgroup)


def g2_decompress(data: bytes, check_subgroup: bool = True):
    """Inverse of :func:`g2_compress`.

    Raises:
        PointEncodingError: wrong length, flags or a coordinate ≥ p;
        NotOnCurveError / NotInSubgroupError: x gives no curve point / a point outside G2.

    >>> eq(g2_decompress(g2_compress(G2)), G2)
    True
    """
    if len(data) != 2 * _FIELD_BYTES:
        raise PointEncodingError(f"compressed G2 point must be {2 * _FIELD_BYTES} bytes, got {len(data)}")
    z1 = int.from_bytes(data[:_FIELD_BYTES], "big")
    z2 = int.from_bytes(data[_FIELD_BYTES:], "big")
    if z2 >> 381:
        raise PointEncodingError("bad compressed G2 point: flag bits set in the second half")
    try:
        pt = decompress_G2((z1, z2))
    except ValueError as e:
        kind = NotOnCurveError if "not on" in str(e).lower() or "square" in str(e).lower() else PointEncodingError
        raise kind(f"bad compressed G2 point: {e}") from None
    return _check_subgroup(pt, "G2", check_subgroup)


def g1_uncompressed(pt) -> bytes:
    """96-byte zcash uncompressed G1 (x ‖ y; infinity: 0x40 then zeros), as in ``.params`` files.

    >>> g1_uncompressed(Z1)[:1].hex(), len(g1_uncompressed(G1))
    ('40', 96)
    """
    if is_inf(pt):
        return bytes([0x40]) + bytes(2 * _FIELD_BYTES - 1)
    x, y = g1_affine(pt)
    return x.to_bytes(_FIELD_BYTES, "big") + y.to_bytes(_FIELD_BYTES, "big")


def g2_uncompressed(pt) -> bytes:
    """192-byte zcash uncompressed G2 (x1 ‖ x0 ‖ y1 ‖ y0; infinity: 0x40 then zeros).

    >>> g2_uncompressed(Z2)[:1].hex(), len(g2_uncompressed(G2))
    ('40', 192)
    """
    if is_inf(pt):
        return bytes([0x40]) + bytes(4 * _FIELD_BYTES - 1)
    (x0, x1), (y0, y1) = g2_affine(pt)
    return b"".join(c.to_bytes(_FIELD_BYTES, "big") for c in (x1, x0, y1, y0))
