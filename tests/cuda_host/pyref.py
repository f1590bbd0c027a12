"""Python-int oracles for the CUDA host tests: limb conversions and affine arithmetic per curve.

Independent of cuzk's fast paths (only the field parameters come from the curve's spec,
``cuzk.curves.resolve(name)``, pure data); the generators come from py_ecc (``bls12_381``,
``bn128``). :func:`get` gives one curve's oracle; the module-level names are BLS12-381's.

    >>> g1_mul(G1_GEN, 2) == g1_add(G1_GEN, G1_GEN)
    True
    >>> bn = get("bn254"); bn.g2_mul(bn.G2_GEN, 3) == bn.g2_add(bn.G2_GEN, bn.g2_mul(bn.G2_GEN, 2))
    True
"""

from __future__ import annotations

import functools

import numpy as np
from py_ecc import bls12_381 as _bls
from py_ecc import bn128 as _bn

from cuzk.curves import resolve

__all__ = [
    "P", "R", "to_mont_limbs", "from_mont_limbs", "canon_limbs", "G1_GEN", "G2_GEN",
    "g1_add", "g1_mul", "g2_add", "g2_mul", "g1_to_array", "g2_to_array", "fq2_mul", "Curve", "get",
]

_PY_ECC = {"bls12_381": _bls, "bn254": _bn}  # py_ecc's module of each curve (generators)


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


class Curve:
    """One curve's oracle: fields ``FQ``/``FR`` (spec parameters), ``P``/``R``, Fq2 with u² = β,
    affine G1/G2 arithmetic on ints (None = infinity) and conversions to cuzk's host arrays."""

    def __init__(self, name: str):
        spec = resolve(name)
        self.name, self.FQ, self.FR = spec.name, spec.fq, spec.fr
        self.P, self.R, self.beta = spec.fq.modulus, spec.fr.modulus, spec.fq2_nonresidue
        P = self.P
        self._fq = (lambda a, b: (a + b) % P, lambda a, b: (a - b) % P, lambda a, b: a * b % P,
                    lambda a: pow(a, -1, P), 0)
        self._fq2 = (lambda a, b: ((a[0] + b[0]) % P, (a[1] + b[1]) % P),
                     lambda a, b: ((a[0] - b[0]) % P, (a[1] - b[1]) % P), self.fq2_mul, self.fq2_inv, (0, 0))
        ecc = _PY_ECC[spec.name]
        self.G1_GEN = (int(ecc.G1[0]), int(ecc.G1[1]))
        self.G2_GEN = tuple((int(c.coeffs[0]), int(c.coeffs[1])) for c in ecc.G2[:2])

    def fq2_mul(self, a, b):
        P, beta = self.P, self.beta
        return ((a[0] * b[0] + beta * a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)

    def fq2_inv(self, a):
        P = self.P
        d = pow(a[0] * a[0] - self.beta * a[1] * a[1], -1, P)
        return (a[0] * d % P, -a[1] * d % P)

    def g1_add(self, p, q):
        """Affine G1 sum; None is infinity."""
        return _add(self._fq, p, q)

    def g1_mul(self, p, k):
        return _mul(self._fq, p, k)

    def g2_add(self, p, q):
        return _add(self._fq2, p, q)

    def g2_mul(self, p, k):
        return _mul(self._fq2, p, k)

    def g1_to_array(self, pts) -> np.ndarray:
        """Affine int points (None = infinity) → (n, 2, L) uint64 Montgomery (zeros = infinity)."""
        flat = [v for p in pts for v in ((0, 0) if p is None else p)]
        arr = to_mont_limbs(flat, self.FQ).reshape(-1, 2, self.FQ.limbs)
        for i, p in enumerate(pts):
            if p is None:
                arr[i] = 0
        return arr

    def g2_to_array(self, pts) -> np.ndarray:
        """Affine Fq2 points → (n, 2, 2, L) uint64 Montgomery (x.c0, x.c1, y.c0, y.c1)."""
        flat = [c for p in pts for coord in (((0, 0), (0, 0)) if p is None else p) for c in coord]
        arr = to_mont_limbs(flat, self.FQ).reshape(-1, 2, 2, self.FQ.limbs)
        for i, p in enumerate(pts):
            if p is None:
                arr[i] = 0
        return arr


@functools.lru_cache(maxsize=None)
def get(name: str) -> Curve:
    """The oracle of curve ``name`` ("bls12_381", "bn254")."""
    return Curve(name)


_BLS = get("bls12_381")
P, R = _BLS.P, _BLS.R
G1_GEN, G2_GEN = _BLS.G1_GEN, _BLS.G2_GEN
fq2_mul, g1_add, g1_mul, g2_add, g2_mul = _BLS.fq2_mul, _BLS.g1_add, _BLS.g1_mul, _BLS.g2_add, _BLS.g2_mul
g1_to_array, g2_to_array = _BLS.g1_to_array, _BLS.g2_to_array
