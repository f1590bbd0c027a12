"""Python ints ↔ uint64 limb arrays for curve coordinates and scalars (the edges of the API).

A coordinate over Fq^degree is a ``degree``-tuple of canonical ints; arrays hold Montgomery
limbs, shape ``(n, L)`` for degree 1 and ``(n, 2, L)`` for degree 2 (DESIGN §3; BLS12-381: L = 6).
``field`` is the base field's :class:`~cuzk.field.params.FieldParams` (a spec's ``fq``).

    >>> from cuzk.curves import BLS12_381
    >>> FQ = BLS12_381.fq
    >>> mont_ints(mont_array([(3,), (5,)], 1, FQ), 1, FQ)
    [(3,), (5,)]
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from cuzk.errors import FieldValueError
from cuzk.field.params import FieldParams

__all__ = ["mont_array", "mont_ints", "canonical_coords", "canonical_from_bytes", "scalar_limbs", "scalars_array"]


def _ints_to_limbs(values: list[int], limbs: int) -> np.ndarray:
    raw = b"".join(v.to_bytes(8 * limbs, "little") for v in values)
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(len(values), limbs)


def _limbs_to_ints(arr: np.ndarray) -> list[int]:
    arr = np.ascontiguousarray(arr, dtype="<u8")
    return _bytes_to_ints(arr.tobytes(), arr.shape[-1] * 8)


def _bytes_to_ints(raw: bytes, width: int) -> list[int]:
    """The little-endian ints of each ``width`` bytes of ``raw``."""
    return [int.from_bytes(raw[i : i + width], "little") for i in range(0, len(raw), width)]


def mont_array(values, degree: int, field: FieldParams) -> np.ndarray:
    """Montgomery limbs of ``values`` (each a ``degree``-tuple of ints in [0, p)).

    Raises:
        FieldValueError: a coefficient is not an int in [0, p) or a tuple has the wrong length.

    >>> from cuzk.curves import BLS12_381
    >>> FQ = BLS12_381.fq
    >>> mont_array([(1,)], 1, FQ).shape, mont_array([(1, 2)], 2, FQ).shape
    ((1, 6), (1, 2, 6))
    """
    flat = []
    for v in values:
        if len(v) != degree:
            raise FieldValueError(f"expected {degree} coefficient(s) per coordinate, got {v!r}")
        flat.extend(field.to_mont_int(field.check_canonical(c)) for c in v)
    L = field.limbs
    arr = _ints_to_limbs(flat, L)
    return arr.reshape(len(values), L) if degree == 1 else arr.reshape(len(values), degree, L)


@functools.lru_cache(maxsize=None)
def _r_inverse(r: int, p: int) -> int:
    """R^-1 mod p, once per field: the modular inverse was two thirds of a proof's snarkjs JSON
    (``cuzk serve`` writes one per answer)."""
    return pow(r, -1, p)


def mont_ints(arr: np.ndarray, degree: int, field: FieldParams) -> list[tuple[int, ...]]:
    """Inverse of :func:`mont_array`: canonical ``degree``-tuples from Montgomery limbs.

    >>> from cuzk.curves import BLS12_381
    >>> FQ = BLS12_381.fq
    >>> mont_ints(mont_array([(7, 8)], 2, FQ), 2, FQ)
    [(7, 8)]
    """
    p = field.modulus
    r_inv = _r_inverse(field.r, p)
    ints = [v * r_inv % p for v in _limbs_to_ints(arr)]
    return [tuple(ints[i : i + degree]) for i in range(0, len(ints), degree)]


def canonical_coords(arr: np.ndarray, field: FieldParams, what: str = "point") -> list[int]:
    """Canonical ints of the Montgomery coordinates in ``arr`` (any shape ending in the
    field's limbs), in array order, after checking each is reduced: the few points of one proof
    go through here in one conversion, without the batch checks' fixed cost per call.

    Raises:
        FieldValueError: a coordinate's limbs hold a value >= p.

    >>> from cuzk.curves import BLS12_381
    >>> FQ = BLS12_381.fq
    >>> canonical_coords(mont_array([(7, 8)], 2, FQ), FQ)
    [7, 8]
    """
    return canonical_from_bytes(np.ascontiguousarray(arr, dtype="<u8").tobytes(), field, what)


def canonical_from_bytes(raw: bytes, field: FieldParams, what: str = "point") -> list[int]:
    """:func:`canonical_coords` of the little-endian limb bytes ``raw`` (``arr.tobytes()`` of
    ``<u8`` limbs), for callers that hold a few small arrays: no array is built to join them."""
    p = field.modulus
    vals = _bytes_to_ints(raw, field.limbs * 8)
    if any(v >= p for v in vals):
        raise FieldValueError(f"{what}: a coordinate >= p (not a reduced {field.name.upper()} element)")
    r_inv = _r_inverse(field.r, p)
    return [v * r_inv % p for v in vals]


def scalar_limbs(k: int, limbs: int | None = None) -> np.ndarray:
    """Little-endian uint64 limbs of a non-negative int (at least one limb).

    >>> scalar_limbs(2**64 + 3).tolist()
    [3, 1]
    """
    if not isinstance(k, (int, np.integer)) or k < 0:
        raise FieldValueError(f"scalar must be a non-negative int, got {k!r}")
    k = int(k)
    n = limbs if limbs is not None else max(1, -(-k.bit_length() // 64))
    return _ints_to_limbs([k], n)[0]


def _scalar(k) -> int:
    if isinstance(k, (bool, np.bool_)):
        raise TypeError("bool")
    return operator.index(k)


def scalars_array(ks) -> np.ndarray:
    """(n, L) uint64 canonical limbs of non-negative ints, L fitting the largest.

    >>> scalars_array([1, 2**70]).shape
    (2, 2)
    """
    try:  # not int(): it truncated 2.5 and parsed '2'
        ks = [_scalar(k) for k in ks]
    except TypeError:
        raise FieldValueError(f"scalars must be a sequence of non-negative ints, got {ks!r:.80}") from None
    if any(k < 0 for k in ks):
        raise FieldValueError("scalars must be non-negative ints")
    n = max([1] + [-(-k.bit_length() // 64) for k in ks])
    return _ints_to_limbs(ks, n)
