"""Conversions at the edges of cuzk: Python ints and bytes <-> ``(n, L)`` uint64 limb arrays.

Everything here works on *canonical* limbs (the integer itself, not Montgomery form) and is
vectorised through ``bytes``/numpy views rather than per-limb Python arithmetic.
:class:`cuzk.field.PrimeField` adds the Montgomery step.

    >>> from cuzk.field import FR
    >>> a = ints_to_limbs([1, 2**64], FR)
    >>> a.tolist(), limbs_to_ints(a)
    ([[1, 0, 0, 0], [0, 1, 0, 0]], [1, 18446744073709551616])
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Set

import numpy as np

from cuzk.errors import FieldValueError
from cuzk.field.params import FieldParams

__all__ = [
    "check_count",
    "check_limbs",
    "ints_to_limbs",
    "limbs_to_ints",
    "limbs_to_bytes",
    "bytes_to_limbs",
    "is_canonical",
    "first_unreduced",
    "int_to_exponent",
]

_BYTEORDERS = ("big", "little")


def _label(params: FieldParams) -> str:
    return params.name.capitalize()


def check_limbs(arr, params: FieldParams, what: str = "array") -> np.ndarray:
    """Validate an ``(n, L)`` uint64 array for ``params``; return it C-contiguous.

    Raises:
        FieldValueError: not a numpy array, wrong dtype, or wrong shape.

    >>> from cuzk.field import FQ
    >>> check_limbs(np.zeros((3, 6), dtype=np.uint64), FQ).shape
    (3, 6)
    """
    if not isinstance(arr, np.ndarray):
        raise FieldValueError(f"{_label(params)} {what} must be a numpy ndarray, got {type(arr).__name__}")
    if arr.dtype != np.uint64:
        raise FieldValueError(f"{_label(params)} {what} must have dtype uint64, got {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != params.limbs:
        raise FieldValueError(f"{_label(params)} {what} must have shape (n, {params.limbs}), got {arr.shape}")
    return np.ascontiguousarray(arr)


def _as_int(x, params: FieldParams) -> int:
    if isinstance(x, (bool, np.bool_)):
        raise FieldValueError(f"{_label(params)} element must be an integer, got bool {x!r}")
    try:
        v = operator.index(x)
    except TypeError:
        raise FieldValueError(f"{_label(params)} element must be an integer, got {type(x).__name__} {x!r}") from None
    if not 0 <= v < params.modulus:
        params.check_canonical(v)  # raises with the standard message
    return v


def ints_to_limbs(values: Iterable[int], params: FieldParams) -> np.ndarray:
    """Python ints ``0 <= x < p`` -> ``(n, L)`` canonical little-endian limbs.

    Raises:
        FieldValueError: a value is not an integer or out of ``[0, p)``.

    >>> from cuzk.field import FR
    >>> ints_to_limbs([2**64 - 1], FR).tolist()
    [[18446744073709551615, 0, 0, 0]]
    """
    if isinstance(values, (int, np.integer)) or (isinstance(values, np.ndarray) and values.ndim == 0):
        raise FieldValueError(f"{_label(params)}: expected a sequence of integers, got a single {type(values).__name__}")
    if isinstance(values, (Set, Mapping)):  # their iteration order would silently permute the elements
        raise FieldValueError(f"{_label(params)}: expected a sequence of integers, got an unordered {type(values).__name__}")
    if not isinstance(values, Iterable):
        raise FieldValueError(f"{_label(params)}: expected a sequence of integers, got {type(values).__name__}")
    width = 8 * params.limbs
    ints = [_as_int(x, params) for x in values]
    data = b"".join(v.to_bytes(width, "little") for v in ints)
    return np.frombuffer(data, dtype="<u8").astype(np.uint64).reshape(len(ints), params.limbs)


def limbs_to_ints(arr: np.ndarray) -> list[int]:
    """``(n, L)`` little-endian limbs -> Python ints (no range check).

    >>> limbs_to_ints(np.array([[0, 1]], dtype=np.uint64))
    [18446744073709551616]
    """
    a = np.ascontiguousarray(arr, dtype="<u8")
    width = 8 * a.shape[1]
    data = a.tobytes()
    return [int.from_bytes(data[i : i + width], "little") for i in range(0, len(data), width)]


def limbs_to_bytes(arr: np.ndarray, byteorder: str = "big") -> np.ndarray:
    """``(n, L)`` limbs -> ``(n, 8L)`` uint8, each row the fixed-width integer in ``byteorder``.

    >>> limbs_to_bytes(np.array([[1, 0]], dtype=np.uint64), "big")[0, -1]
    np.uint8(1)
    """
    if byteorder not in _BYTEORDERS:
        raise FieldValueError(f"byteorder must be 'big' or 'little', got {byteorder!r}")
    a = np.ascontiguousarray(arr, dtype="<u8")
    b = a.view(np.uint8).reshape(a.shape[0], 8 * a.shape[1])
    return np.ascontiguousarray(b[:, ::-1]) if byteorder == "big" else b.copy()


def bytes_to_limbs(data, params: FieldParams, byteorder: str = "big") -> np.ndarray:
    """Fixed-width encodings -> ``(n, L)`` canonical limbs, checking each value is < p.

    ``data`` is a bytes-like object whose length is a multiple of ``8L`` (32 for Fr, 48 for
    Fq), or a ``(n, 8L)`` uint8 array.

    Raises:
        FieldValueError: bad length/shape, or an encoded value >= p (its index is named).

    >>> from cuzk.field import FR
    >>> bytes_to_limbs(bytes(31) + b"\\x05", FR).tolist()
    [[5, 0, 0, 0]]
    """
    if byteorder not in _BYTEORDERS:
        raise FieldValueError(f"byteorder must be 'big' or 'little', got {byteorder!r}")
    width = 8 * params.limbs
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != width:
            raise FieldValueError(
                f"{_label(params)} encodings must be a (n, {width}) uint8 array, got {data.dtype} {data.shape}"
            )
        b = np.ascontiguousarray(data)
    else:
        try:
            raw = memoryview(data).cast("B")
        except TypeError:
            raise FieldValueError(f"{_label(params)} encodings must be bytes-like, got {type(data).__name__}") from None
        if len(raw) % width:
            raise FieldValueError(f"{_label(params)} encodings: length {len(raw)} is not a multiple of {width} bytes")
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, width)
    if byteorder == "big":
        b = b[:, ::-1]
    limbs = np.ascontiguousarray(b).view("<u8").astype(np.uint64).reshape(-1, params.limbs)
    ok = is_canonical(limbs, params)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise FieldValueError(f"{_label(params)} encoding #{i} is not canonical (value >= modulus)")
    return limbs


def is_canonical(arr: np.ndarray, params: FieldParams) -> np.ndarray:
    """Per row: is the limb integer < p? Vectorised lexicographic compare from the top limb.

    >>> from cuzk.field import FR
    >>> is_canonical(ints_to_limbs([0, FR.modulus - 1], FR), FR).tolist()
    [True, True]
    """
    p = [(params.modulus >> (64 * k)) & 0xFFFFFFFFFFFFFFFF for k in range(params.limbs)]
    lt = np.zeros(arr.shape[0], dtype=bool)
    eq = np.ones(arr.shape[0], dtype=bool)
    for k in range(params.limbs - 1, -1, -1):
        pk = np.uint64(p[k])
        lt |= eq & (arr[:, k] < pk)
        eq &= arr[:, k] == pk
    return lt


def first_unreduced(arr: np.ndarray, params: FieldParams) -> int | None:
    """Index of the first row >= p, or None. One pass over the top limbs decides for almost any
    input; the full compare runs only when some top limb reaches p's.

    >>> from cuzk.field import FR
    >>> first_unreduced(ints_to_limbs([1, 2], FR), FR) is None
    True
    """
    if arr.shape[0] == 0 or arr[:, -1].max() < np.uint64(params.modulus >> (64 * (params.limbs - 1))):
        return None
    bad = np.flatnonzero(~is_canonical(arr, params))
    return int(bad[0]) if bad.size else None


def int_to_exponent(e: int) -> np.ndarray:
    """A non-negative int as the little-endian uint64 limb array ``pow_`` kernels take.

    >>> int_to_exponent(2**64 + 3).tolist()
    [3, 1]
    """
    e = operator.index(e)
    if e < 0:
        raise FieldValueError(f"exponent must be >= 0 here, got {e}")
    n = max(1, -(-e.bit_length() // 64))
    return np.frombuffer(e.to_bytes(8 * n, "little"), dtype="<u8").astype(np.uint64)


def check_count(n, what: str) -> int:
    """``n`` as a count (an int >= 0); numpy would take 2.0 or '2', or fail with a bare error.

    >>> check_count(3, "Fr: a count of elements")
    3
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise FieldValueError(f"{what} must be an int >= 0, got {n!r}")
    return int(n)
