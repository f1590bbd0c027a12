"""zcash BLS12-381 point encodings (DESIGN §6), single points and whole arrays.

A coordinate is 48 big-endian bytes (G2: c1 ‖ c0). Byte 0 carries three flags: 0x80 compressed,
0x40 infinity, 0x20 "y is the lexicographically larger root" (compressed only; for Fq2 c1
decides, c0 when c1 = 0). Compressed points are x only (G1 48 bytes, G2 96), uncompressed x ‖ y
(96 / 192). Infinity must be canonical: 0xc0 then zeros (compressed), 0x40 then zeros.

Arrays decode in one parallel Numba pass; the first bad row raises a :mod:`cuzk.errors`
exception that names the row and the problem. Reading always checks that the point is on the
curve (cheap); ``checked=True`` (default) also checks subgroup membership (the expensive part;
skip it only for trusted data).

    >>> from cuzk.curve import G1
    >>> from cuzk.curve.encoding import point_to_bytes, point_from_bytes
    >>> b = point_to_bytes(G1, G1.generator())
    >>> b.hex()[:8], len(b)
    ('97f1d3a7', 48)
    >>> G1.eq(point_from_bytes(G1, b), G1.generator())
    True
"""

from __future__ import annotations

import numpy as np

from cuzk.curve.group import Group
from cuzk.errors import InputError, NotInSubgroupError, NotOnCurveError, PointEncodingError, UnsupportedCurveError

__all__ = ["encoded_size", "point_to_bytes", "point_from_bytes", "points_to_bytes", "points_from_bytes", "compressed_from_coords"]


def encoded_size(group: Group, compressed: bool = True) -> int:
    """Bytes per point: G1 48/96, G2 96/192 (compressed/uncompressed).

    >>> from cuzk.curve import G2
    >>> encoded_size(G2, compressed=False)
    192
    """
    if not isinstance(compressed, (bool, np.bool_)):  # "no" or 0.0 would pick a format by truthiness
        raise InputError(f"compressed must be True or False, got {compressed!r}")
    if not hasattr(group.kernels, "encode_many"):  # point modules generated without zcash (BN254)
        raise UnsupportedCurveError(f"{group!r} has no zcash point encoding (docs/curves.md)")
    return group.kernels.COORD_BYTES * (1 if compressed else 2)


def points_to_bytes(group: Group, points, *, compressed: bool = True) -> bytes:
    """Concatenated encodings of an affine batch (or one point).

    >>> from cuzk.curve import G1
    >>> points_to_bytes(G1, G1.identity(2)).hex()[:4]
    'c000'
    """
    arr, _ = group._batch(points)
    buf = np.zeros((arr.shape[0], encoded_size(group, compressed)), dtype=np.uint8)
    group.kernels.encode_many(arr, compressed, buf)
    return buf.tobytes()


def point_to_bytes(group: Group, point, *, compressed: bool = True) -> bytes:
    """Encoding of one affine point (shape ``group.point_shape``)."""
    arr = np.asarray(point)
    if arr.shape != group.point_shape:
        raise PointEncodingError(f"{group.name}: expected one point of shape {group.point_shape}, got {arr.shape}")
    return points_to_bytes(group, arr, compressed=compressed)


def compressed_from_coords(x: tuple, y: tuple, modulus: int, coord_bytes: int) -> bytes:
    """The compressed encoding of one affine point from its canonical int coordinates (``x``
    and ``y`` each a tuple of 1 (G1) or 2 (G2: c0, c1) ints; the identity as zeros), in plain
    Python: a proof's three points cost less this way than through the batch kernel, whose
    fixed cost per call is most of the work for one point (``cuzk serve`` encodes one proof per
    answer). The same bytes as :func:`point_to_bytes` (tests/test_encoding.py compares them).

    >>> from cuzk.curve import G1
    >>> from cuzk.curve.coords import canonical_coords
    >>> gx, gy = canonical_coords(G1.generator(), G1.field)
    >>> compressed_from_coords((gx,), (gy,), G1.field.modulus, 48) == point_to_bytes(G1, G1.generator())
    True
    """
    width = coord_bytes // len(x)
    if not any(x) and not any(y):
        return bytes([0xC0]) + bytes(coord_bytes - 1)
    # y is the lexicographically larger root: its last non-zero coefficient (c1, else c0) > (p-1)/2
    top = next((c for c in reversed(y) if c), 0)
    out = bytearray(b"".join(c.to_bytes(width, "big") for c in reversed(x)))  # G2: c1 ‖ c0
    out[0] |= 0x80 | (0x20 if 2 * top > modulus else 0)
    return bytes(out)


def _rows(group: Group, data, compressed: bool) -> np.ndarray:
    size = encoded_size(group, compressed)
    kind = "compressed" if compressed else "uncompressed"
    if isinstance(data, np.ndarray) and data.ndim == 2:
        if data.dtype != np.uint8 or data.shape[1] != size:
            raise PointEncodingError(f"{group.name} {kind} rows must be uint8 of width {size}, got {data.dtype} {data.shape}")
        return np.ascontiguousarray(data)
    if isinstance(data, np.ndarray) and data.dtype != np.uint8:  # its raw bytes are no encoding
        raise PointEncodingError(f"{group.name} {kind} encodings must be bytes or uint8, got a {data.dtype} array")
    try:
        raw = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    except TypeError:  # str, list, None, a non-contiguous buffer: memoryview's bare TypeError
        raise PointEncodingError(
            f"{group.name} {kind} encodings must be a contiguous bytes-like object, got {type(data).__name__}"
        ) from None
    if raw.size % size:
        raise PointEncodingError(f"{group.name} {kind} encoding: length {raw.size} is not a multiple of {size} bytes")
    return raw.reshape(-1, size)


def _raise_for(group: Group, kernels, code: int, index: int, kind: str):
    where = f"{group.name} {kind} point {index}"
    if code == kernels.BAD_FLAGS:
        want = "set" if kind == "compressed" else "clear"
        raise PointEncodingError(
            f"{where}: bad flag bits (compression flag must be {want}; uncompressed points carry no sign bit)"
        )
    if code == kernels.BAD_INFINITY:
        raise PointEncodingError(f"{where}: non-canonical infinity (infinity flag with other bits set)")
    if code == kernels.X_NOT_CANONICAL:
        raise PointEncodingError(f"{where}: x coordinate is not reduced (>= p)")
    if code == kernels.Y_NOT_CANONICAL:
        raise PointEncodingError(f"{where}: y coordinate is not reduced (>= p)")
    if code == kernels.NOT_ON_CURVE:
        raise NotOnCurveError(f"{where}: not on the curve")
    if code == kernels.NOT_IN_SUBGROUP:
        raise NotInSubgroupError(f"{where}: on the curve but not in the prime-order subgroup")
    raise PointEncodingError(f"{where}: rejected (status {code})")


def points_from_bytes(group: Group, data, *, compressed: bool = True, checked: bool = True) -> np.ndarray:
    """Decode concatenated encodings (bytes-like, or an (n, size) uint8 array) into an
    (n, *point_shape) affine batch.

    Raises:
        PointEncodingError: wrong length, bad flags, coordinate >= p, non-canonical infinity.
        NotOnCurveError: the point is not on the curve (compressed: x³ + b has no square root).
        NotInSubgroupError: ``checked`` and the point is outside the order-r subgroup.

    >>> from cuzk.curve import G2
    >>> pts = G2.random(2, np.random.default_rng(0))
    >>> bool(np.all(points_from_bytes(G2, points_to_bytes(G2, pts)) == pts))
    True
    """
    rows = _rows(group, data, compressed)
    k = group.kernels
    out = np.empty((rows.shape[0],) + group.point_shape, dtype=np.uint64)
    status = np.empty(rows.shape[0], dtype=np.int8)
    k.decode_many(rows, compressed, checked, out, status)
    bad = np.flatnonzero(status != k.OK)
    if bad.size:
        i = int(bad[0])
        _raise_for(group, k, int(status[i]), i, "compressed" if compressed else "uncompressed")
    return out


def point_from_bytes(group: Group, data, *, compressed: bool = True, checked: bool = True) -> np.ndarray:
    """Decode exactly one point (raises :class:`PointEncodingError` on any other length)."""
    size = encoded_size(group, compressed)
    rows = _rows(group, data, compressed)  # type errors first; len() of an int was a TypeError
    if rows.size != size:
        kind = "compressed" if compressed else "uncompressed"
        raise PointEncodingError(f"{group.name} {kind} point must be {size} bytes, got {rows.size}")
    return points_from_bytes(group, rows, compressed=compressed, checked=checked)[0]
