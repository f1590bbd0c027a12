"""Input checks shared by the CPU kernels: dtype, shape, and "every limb row is < modulus".

The range check is a Numba loop (a few ns per row), cheap next to any kernel it guards, and it
turns a silently wrong MSM/NTT into an error that names the offending row. A frozen array
(``cuzk.field.jit.frozen``: a proving key's read-only queries) found reduced is not scanned
again while it lives.

    >>> import numpy as np
    >>> from cuzk.curves import BLS12_381
    >>> FR = BLS12_381.fr
    >>> check_field_rows(np.zeros((2, 4), np.uint64), "values", (4,), FR.modulus).shape
    (2, 4)
"""

from __future__ import annotations

import weakref

import numpy as np
from numba import njit

from cuzk.errors import FieldValueError, InputError
from cuzk.field.jit import frozen, readonly
from cuzk.kernels.cpu_threads import run_phases

__all__ = ["check_field_rows", "check_points", "first_unreduced", "modulus_limbs"]

# Limb rows per range-check task on several threads (~4 ns a row: ~1 ms, far above the ~0.1 ms
# a helper thread takes to start).
_CHECK_CHUNK = 1 << 18


def modulus_limbs(modulus: int, limbs: int) -> np.ndarray:
    """Little-endian uint64 limbs of ``modulus``."""
    return np.array([(modulus >> (64 * k)) & (2**64 - 1) for k in range(limbs)], dtype=np.uint64)


@njit(cache=True, nogil=True)
def first_unreduced(rows, mod):
    """Index of the first row (little-endian limbs) that is >= mod, or -1 if all are reduced."""
    L = mod.shape[0]
    for i in range(rows.shape[0]):
        for k in range(L - 1, -1, -1):
            if rows[i, k] != mod[k]:
                if rows[i, k] > mod[k]:
                    return i
                break
        else:
            return i  # equal to the modulus
    return -1


def _check_dtype_shape(arr, name, tail, err):
    if not isinstance(arr, np.ndarray):
        raise err(f"{name} must be a numpy uint64 array, got {type(arr).__name__}")
    if arr.dtype != np.uint64:
        raise err(f"{name} must have dtype uint64, got {arr.dtype}")
    if arr.ndim != 1 + len(tail) or tuple(arr.shape[1:]) != tuple(tail):
        want = "(n, " + ", ".join(str(t) for t in tail) + ")"
        raise err(f"{name} must have shape {want}, got {arr.shape}")
    return np.ascontiguousarray(arr)


def _first_unreduced(rows: np.ndarray, mod: np.ndarray, threads: int) -> int:
    """first_unreduced over chunks of rows on ``threads`` threads (a 2.7M-point G1 key: ~23 ms
    on one thread, which an MSM on two would otherwise spend with the other thread idle)."""
    n = rows.shape[0]
    chunks = min(2 * threads, n // _CHECK_CHUNK) if threads > 1 else 1
    if chunks <= 1:
        return first_unreduced(rows, mod)
    cut = [k * n // chunks for k in range(chunks + 1)]
    bad = np.full(chunks, -1, np.int64)

    def chunk(k):
        b = first_unreduced(rows[cut[k]:cut[k + 1]], mod)
        if b >= 0:
            bad[k] = cut[k] + b

    run_phases(threads, [[(chunk, (k,)) for k in range(chunks)]])
    hits = bad[bad >= 0]
    return int(hits.min()) if len(hits) else -1


# Frozen arrays (cuzk.field.jit.frozen) already found reduced, by id while they live: a key's
# read-only queries are range-checked by the first MSM over them, not again by every proof's
# (a 2 KiB PoRep partition's A, B and L points: ~25 ms a proof on two threads). The entry's weak
# reference is dropped with its array, so a new array at the same address is checked anew, and
# an array whose owner is made writable again is checked again; numpy keeps no record of writes,
# so one made writable, changed and made read-only again behind the check's back is not.
_REDUCED: dict[int, tuple] = {}


def _known_reduced(arr: np.ndarray, modulus: int) -> bool:
    hit = _REDUCED.get(id(arr))
    return hit is not None and hit[0]() is arr and modulus in hit[1] and frozen(arr)


def _remember_reduced(arr: np.ndarray, modulus: int) -> None:
    if not frozen(arr):
        return
    key = id(arr)
    hit = _REDUCED.get(key)
    if hit is not None and hit[0]() is arr:
        hit[1].add(modulus)
        return

    def forget(ref, key=key):
        if _REDUCED.get(key, (None,))[0] is ref:
            del _REDUCED[key]

    _REDUCED[key] = (weakref.ref(arr, forget), {modulus})


def check_field_rows(arr, name: str, tail: tuple, modulus: int, threads: int = 1) -> np.ndarray:
    """Validate an (n, *tail) uint64 array whose last axis holds limbs of elements < modulus.

    Returns the array C-contiguous (copied only if it was not) and read-only (a view when it was
    writable): kernels read it, and one array type means one compiled specialization of each
    (``cuzk.field.jit.readonly``). ``threads`` (resolved, >= 1) share the range check of a
    large array.

    Raises:
        FieldValueError: wrong type, dtype or shape, or a limb row >= modulus.
    """
    arr = readonly(_check_dtype_shape(arr, name, tail, FieldValueError))
    if _known_reduced(arr, modulus):
        return arr
    L = tail[-1]
    bad = _first_unreduced(arr.reshape(-1, L), modulus_limbs(modulus, L), threads)
    if bad >= 0:
        per_item = int(np.prod(tail[:-1], dtype=np.int64))
        raise FieldValueError(f"{name}[{bad // per_item}] holds a value >= the field modulus (not reduced)")
    _remember_reduced(arr, modulus)
    return arr


def check_points(arr, name: str, tail: tuple, modulus: int, threads: int = 1) -> np.ndarray:
    """Validate an affine point array (n, *tail): uint64, coordinates < p (on ``threads``).

    Curve membership is not checked here (that costs a multiplication chain per point); points
    come from validated keys. Raises :class:`InputError` for a wrong type/dtype/shape and
    :class:`FieldValueError` for an unreduced coordinate.
    """
    arr = _check_dtype_shape(arr, name, tail, InputError)
    return check_field_rows(arr, name, tail, modulus, threads)
