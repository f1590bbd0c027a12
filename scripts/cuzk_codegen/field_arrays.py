"""Template of the array loops ``fr_array.py`` / ``fq_array.py`` over ``(n, L)`` Montgomery arrays."""

from __future__ import annotations

from .common import JIT, Target
from .field import HEADER

__all__ = ["render_array"]

ARRAY_TEMPLATE = '''{header}"""Array loops over (n, L) uint64 Montgomery arrays for {title}, built on ``cuzk.field.{name}``.

Plain nogil loops, one thread: callers can run them from several Python threads. The
validating, user-facing wrapper is :class:`cuzk.field.PrimeField`.

    >>> import numpy as np
    >>> from {pkg} import {name}_array as V
    >>> a = np.zeros((2, {L}), dtype=np.uint64)
    >>> V.vis_zero(a).tolist()
    [True, True]
"""

import numpy as np
from numba import njit

from {pkg} import {name} as F

__all__ = [
    "vadd", "vsub", "vmul", "vsqr", "vneg", "vinv", "vpow", "vsqrt", "veq", "vis_zero",
    "vto_mont", "vfrom_mont", "batch_inverse",
]


{jit}
def vadd(a, b):
    """Elementwise a + b."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.add(F.load(a, i), F.load(b, i)))
    return out


{jit}
def vsub(a, b):
    """Elementwise a - b."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.sub(F.load(a, i), F.load(b, i)))
    return out


{jit}
def vmul(a, b):
    """Elementwise Montgomery product."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.mul(F.load(a, i), F.load(b, i)))
    return out


{jit}
def vsqr(a):
    """Elementwise square."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.sqr(F.load(a, i)))
    return out


{jit}
def vneg(a):
    """Elementwise negation."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.neg(F.load(a, i)))
    return out


{jit}
def vinv(a):
    """Elementwise inverse, one safegcd inversion each (zero maps to zero)."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.inv(F.load(a, i)))
    return out


{jit}
def vpow(a, e):
    """Elementwise a^e for one exponent e (uint64 little-endian limbs)."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.pow_(F.load(a, i), e))
    return out


{jit}
def vsqrt(a):
    """Elementwise square roots: (ok bool array, roots); roots of non-residues are zero."""
    out = np.empty_like(a)
    ok = np.empty(a.shape[0], dtype=np.bool_)
    for i in range(a.shape[0]):
        good, r = F.sqrt(F.load(a, i))
        ok[i] = good
        F.store(out, i, r)
    return ok, out


{jit}
def veq(a, b):
    """Elementwise equality."""
    out = np.empty(a.shape[0], dtype=np.bool_)
    for i in range(a.shape[0]):
        out[i] = F.eq(F.load(a, i), F.load(b, i))
    return out


{jit}
def vis_zero(a):
    """Elementwise test for zero."""
    out = np.empty(a.shape[0], dtype=np.bool_)
    for i in range(a.shape[0]):
        out[i] = F.is_zero(F.load(a, i))
    return out


{jit}
def vto_mont(a):
    """Canonical limbs -> Montgomery limbs."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.to_mont(F.load(a, i)))
    return out


{jit}
def vfrom_mont(a):
    """Montgomery limbs -> canonical limbs."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        F.store(out, i, F.from_mont(F.load(a, i)))
    return out


{jit}
def batch_inverse(a):
    """Inverses by Montgomery's trick: one inversion and 3(n-1) multiplications.

    Zeros map to zero and are skipped, so they do not poison the other entries.
    """
    n = a.shape[0]
    out = np.empty_like(a)
    acc = F.one()
    for i in range(n):  # out[i] = product of the non-zero a[j], j < i
        x = F.load(a, i)
        F.store(out, i, acc)
        if not F.is_zero(x):
            acc = F.mul(acc, x)
    acc = F.inv(acc)
    for i in range(n - 1, -1, -1):
        x = F.load(a, i)
        if F.is_zero(x):
            F.store(out, i, x)
        else:
            F.store(out, i, F.mul(acc, F.load(out, i)))
            acc = F.mul(acc, x)
    return out
'''




def render_array(t: Target, role: str) -> str:
    """Source of the array module ``<role>_array`` ("fr" | "fq") of the curve ``t``."""
    f = t.spec.fr if role == "fr" else t.spec.fq
    title = "Fr" if role == "fr" else "Fq"
    return ARRAY_TEMPLATE.format(header=HEADER, title=title, name=f.name, L=f.limbs, jit=JIT, pkg=t.layout.package)
