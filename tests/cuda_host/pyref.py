"""Python-int oracles for the CUDA host tests: limb conversions and affine BLS12-381 arithmetic.

Independent of cuzk's fast paths (only the field moduli come from cuzk.field.params); the
generators come from py_ecc.

    >>> g1_mul(G1_GEN, 2) == g1_add(G1_GEN, G1_GEN)
    True
"""

from __future__ import annotations

import numpy as np
from py_ecc import bls12_381 as _bls

from cuzk.field.params import FQ, FR

__all__ = [
    "P", "R", "to_mont_limbs", "from_mont_limbs", "canon_limbs", "G1_GEN", "G2_GEN",
    "g1_add", "g1_mul", "g2_add", "g2_mul", "g1_to_array", "g2_to_array", "fq2_mul",
]

P, R = FQ.modulus, FR.modulus


def to_mont_limbs(values, field) -> np.ndarray:
    """Python ints (or Fq2 pairs flattened by the caller) → (n, limbs) uint64 Montgomery."""
    L = field.limbs
    raw = b"".join(field.to_mont_int(v % field.modulus).to_bytes(8 * L, "little") for v in values)
    return np.frombuffer(raw, dtype=np.uint64).reshape(-1, L).copy()


def from_mont_limbs(arr: np.ndarray, field) -> list[int]:
    rows = np.ascontiguousarray(arr, dtype=np.uint64).reshape(-1, field.limbs)
    return [field.from_mont_int(int.from_bytes(r.tobytes(), "little")) for r in rows]


def canon_limbs(values, limbs: int = 4) -> np.ndarray:
    raw = b"".join(int(v).to_bytes(8 * limbs, "little") for v in values)
    return np.frombuffer(raw, dtype=np.uint64).reshape(-1, limbs).copy()


# ---- fields as (add, sub, mul, inv, zero) over ints and (c0, c1) pairs (u^2 = -1)
def _fq2_mul(a, b):
    return ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)


fq2_mul = _fq2_mul


def _fq2_inv(a):
    d = pow(a[0] * a[0] + a[1] * a[1], -1, P)
    return (a[0] * d % P, -a[1] * d % P)


_FQ = (lambda a, b: (a + b) % P, lambda a, b: (a - b) % P, lambda a, b: a * b % P, lambda a: pow(a, -1, P), 0)
_FQ2 = (
    lambda a, b: ((a[0] + b[0]) % P, (a[1] + b[1]) % P),
    lambda a, b: ((a[0] - b[0]) % P, (a[1] - b[1]) % P),
    _fq2_mul,
    _fq2_inv,
    (0, 0),
)


def _add(F, p, q):
    add, sub, mul, inv, zero = F
    if p is None:
        return q
    if q is None:
        return p
    if p[0] == q[0]:
        if add(p[1], q[1]) == zero:
            return None
        three_x2 = mul(add(add(p[0], p[0]), p[0]), p[0])
        lam = mul(three_x2, inv(add(p[1], p[1])))
    else:
        lam = mul(sub(q[1], p[1]), inv(sub(q[0], p[0])))
    x = sub(sub(mul(lam, lam), p[0]), q[0])
    return (x, sub(mul(lam, sub(p[0], x)), p[1]))


def _mul(F, p, k):
    acc = None
    for bit in bin(k)[2:] if k > 0 else "":
        acc = _add(F, acc, acc)
        if bit == "1":
            acc = _add(F, acc, p)
    return acc


def g1_add(p, q):
    """Affine G1 sum; None is infinity."""
    return _add(_FQ, p, q)


def g1_mul(p, k):
    return _mul(_FQ, p, k)


def g2_add(p, q):
    return _add(_FQ2, p, q)


def g2_mul(p, k):
    return _mul(_FQ2, p, k)


G1_GEN = (int(_bls.G1[0]), int(_bls.G1[1]))
G2_GEN = tuple((int(c.coeffs[0]), int(c.coeffs[1])) for c in _bls.G2[:2])


def g1_to_array(pts) -> np.ndarray:
    """Affine int points (None = infinity) → (n, 2, 6) uint64 Montgomery (zeros = infinity)."""
    flat = [v for p in pts for v in ((0, 0) if p is None else p)]
    arr = to_mont_limbs(flat, FQ).reshape(-1, 2, 6)
    for i, p in enumerate(pts):
        if p is None:
            arr[i] = 0
    return arr


def g2_to_array(pts) -> np.ndarray:
    """Affine Fq2 points → (n, 2, 2, 6) uint64 Montgomery (x.c0, x.c1, y.c0, y.c1)."""
    flat = [c for p in pts for coord in (((0, 0), (0, 0)) if p is None else p) for c in coord]
    arr = to_mont_limbs(flat, FQ).reshape(-1, 2, 2, 6)
    for i, p in enumerate(pts):
        if p is None:
            arr[i] = 0
    return arr
