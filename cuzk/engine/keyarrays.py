"""Proving keys as named arrays plus JSON metadata, and back: what a key-cache file holds.

A key is stored exactly as its checked read returned it, before any circuit is attached: the
vk points, the five queries, the density bitmaps when the source carries them (a ``.zkey``
does, a ``.params`` file does not), the digest, the H convention, the constraint count, and
for a :class:`~cuzk.formats.snarkjs.SnarkjsProvingKey` its A and B coefficient matrices. The
circuit (``r1cs``) is attached after loading, as the checked read would.

:func:`key_from_arrays` passes the large arrays through unchanged, so a memory-mapped file
stays mapped (``ProvingKey`` keeps read-only memory maps without copying them); the vk points
and density bitmaps are small and are copied by the key's own converters.

    >>> from cuzk.curve import G1, G2
    >>> from cuzk.groth16.keys import ProvingKey, VerifyingKey
    >>> g1, g2 = G1.generator(), G2.generator()
    >>> vk = VerifyingKey(alpha_g1=g1, beta_g1=g1, beta_g2=g2, gamma_g2=g2, delta_g1=g1, delta_g2=g2, ic=[g1])
    >>> pk = ProvingKey(vk=vk, h=[g1], l=[g1], a=[g1], b_g1=[g1], b_g2=[g2])
    >>> arrays, meta = key_to_arrays(pk)
    >>> back = key_from_arrays(arrays, meta)
    >>> same_key(pk, back), meta["class"]
    (True, 'ProvingKey')
"""

from __future__ import annotations

import attrs
import numpy as np

from cuzk.errors import KeyCacheFormatError
from cuzk.formats.snarkjs import SnarkjsProvingKey
from cuzk.groth16.keys import Density, ProvingKey, VerifyingKey
from cuzk.synth.r1cs import CsrMatrix

__all__ = ["key_to_arrays", "key_from_arrays", "same_key", "VK_FIELDS", "QUERIES"]

VK_FIELDS = ("alpha_g1", "beta_g1", "beta_g2", "gamma_g2", "delta_g1", "delta_g2", "ic")
QUERIES = ("h", "l", "a", "b_g1", "b_g2")
_DENSITY = ("a_aux", "b_input", "b_aux")
_CSR = ("indptr", "indices", "data", "coeff_table", "coeff_index")
_CLASSES = {"ProvingKey": ProvingKey, "SnarkjsProvingKey": SnarkjsProvingKey}


# fields stored as arrays, or attached after loading (r1cs); every other field must be a scalar
_STRUCTURED = {"vk", *QUERIES, "density", "matrix_a", "matrix_b", "r1cs"}


def _scalar_fields(pk) -> dict:
    """The key's plain fields (convention, digest, n_constraints, and any added later, such as a
    curve name), so a new scalar field is stored without touching this module."""
    out = {}
    for f in attrs.fields(type(pk)):
        if f.name in _STRUCTURED:
            continue
        v = getattr(pk, f.name)
        if v is not None and not isinstance(v, (str, int, float, bool)):
            raise KeyCacheFormatError(f"the key cache cannot store field {f.name!r} ({type(v).__name__})")
        out[f.name] = v
    return out


def key_to_arrays(pk: ProvingKey) -> tuple[dict, dict]:
    """``(arrays, meta)`` for a proving key (a ``ProvingKey`` or ``SnarkjsProvingKey``).

    Raises:
        KeyCacheFormatError: another key class, or a field that is neither an array this module
            knows nor a plain value.
    """
    cls = type(pk).__name__
    if _CLASSES.get(cls) is not type(pk):
        raise KeyCacheFormatError(f"the key cache stores ProvingKey and SnarkjsProvingKey, not {cls}")
    arrays = {f"vk.{n}": getattr(pk.vk, n) for n in VK_FIELDS}
    arrays.update({n: getattr(pk, n) for n in QUERIES})
    if pk.density is not None:  # bools as bytes: the file's dtypes are integer ones
        arrays.update({f"density.{n}": getattr(pk.density, n).view(np.uint8) for n in _DENSITY})
    meta = {"class": cls, "fields": _scalar_fields(pk), "density": pk.density is not None, "curve": pk.vk.curve}
    if isinstance(pk, SnarkjsProvingKey):
        for label in ("matrix_a", "matrix_b"):
            m = getattr(pk, label)
            meta[label] = m is not None
            if m is not None:
                arrays.update({f"{label}.{n}": getattr(m, n) for n in _CSR if getattr(m, n) is not None})
    return arrays, meta


def key_from_arrays(arrays: dict, meta: dict) -> ProvingKey:
    """The key :func:`key_to_arrays` flattened, its large arrays used as given (no copy).

    Raises:
        KeyCacheFormatError: arrays or metadata missing or inconsistent (the key's own checks,
            e.g. density against query lengths, fail as this error too).
    """
    try:
        cls = _CLASSES[meta["class"]]
        # entries written before keys carried a curve have none: BLS12-381, the default
        vk = VerifyingKey(**{n: arrays[f"vk.{n}"] for n in VK_FIELDS}, curve=meta.get("curve"))
        kw = {n: arrays[n] for n in QUERIES}
        if meta["density"]:
            kw["density"] = Density(**{n: arrays[f"density.{n}"].view(np.bool_) for n in _DENSITY})
        if cls is SnarkjsProvingKey:
            for label in ("matrix_a", "matrix_b"):
                if meta[label]:
                    kw[label] = CsrMatrix(**{n: arrays[f"{label}.{n}"] for n in _CSR if f"{label}.{n}" in arrays})
        return cls(vk=vk, **meta["fields"], **kw)
    except KeyError as e:
        raise KeyCacheFormatError(f"key-cache entry lacks {e.args[0]!r}") from None
    except (TypeError, ValueError, OverflowError) as e:  # KeyMismatchError is a ValueError: the key's own checks
        raise KeyCacheFormatError(f"key-cache entry does not make a proving key: {e}") from None


def _same_arrays(x, y, names) -> bool:
    return all(np.array_equal(getattr(x, n), getattr(y, n)) for n in names)


def same_key(p: ProvingKey, q: ProvingKey) -> bool:
    """Whether two proving keys hold the same class, arrays, density, matrices and metadata
    (``ProvingKey`` compares by identity; this is the value comparison the cache promises)."""
    if type(p) is not type(q) or p.vk != q.vk or not _same_arrays(p, q, QUERIES):
        return False
    if (p.density is None) != (q.density is None) or (p.density is not None and p.density != q.density):
        return False
    if _scalar_fields(p) != _scalar_fields(q):
        return False
    if isinstance(p, SnarkjsProvingKey):
        for label in ("matrix_a", "matrix_b"):
            m, n = getattr(p, label), getattr(q, label)
            if (m is None) != (n is None):
                return False
            if m is not None and not all(
                    (getattr(m, f) is None and getattr(n, f) is None)
                    or (getattr(m, f) is not None and getattr(n, f) is not None
                        and np.array_equal(getattr(m, f), getattr(n, f))) for f in _CSR):
                return False
        if (p.r1cs is None) != (q.r1cs is None) or (p.r1cs is not None and p.r1cs.digest != q.r1cs.digest):
            return False
    return True
