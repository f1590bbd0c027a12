"""GLV/GLS endomorphism plans: split an MSM scalar into d short parts, derived from the curve.

Both groups of a pairing-friendly curve carry a cheap endomorphism that acts on the order-r
subgroup as multiplication by an eigenvalue μ:

* G1 (a = 0): φ(x, y) = (β·x, y) with β a cube root of unity in Fq; μ is a cube root of unity
  mod r, so μ² + μ + 1 ≡ 0 and a scalar splits into d = 2 parts of ~r^(1/2) (GLV).
* G2: ψ = untwist ∘ Frobenius ∘ twist, ψ(x, y) = (c_x·x̄, c_y·ȳ); μ = p mod r has order 12
  (embedding degree 12), μ⁴ − μ² + 1 ≡ 0, so d = 4 parts of ~r^(1/4) (GLS).

Then k·P = Σ_i u_i·endo^i(P) whenever Σ_i u_i·μ^i ≡ k (mod r), and an MSM over n points with
255-bit scalars becomes one over d·n points (±endo^i(P), the sign of u_i folded into the point)
with ~(255/d)-bit scalars: half (G1) or a quarter (G2) of the windows, so fewer bucket reductions.

Everything is derived here from the curve's numbers (``CurveParams`` of ``cuzk.curves``' specs,
which this package may not import, so callers pass them): β or (c_x, c_y), the eigenvalue μ
(checked on the generator with Python-int point arithmetic), a reduced basis of the lattice
{v ∈ Z^d : Σ v_i·μ^i ≡ 0 (mod r)} (LLL, exact rationals), and Babai rounding constants
g_j = round(2^256·(B⁻¹)_{0j}). A scalar k gives c_j ≈ k·g_j/2^256 and u = (k, 0, …) − c·B: the
identity Σ u_i μ^i ≡ k holds exactly for any integers c_j, and |c_j − k·(B⁻¹)_{0j}| < 1.25 bounds
|u_i| < 1.25·Σ_j |B_ji| < 2^bits (``EndoPlan.bits``). The per-scalar work is a Numba kernel
(``cuzk.kernels.glv_kernels``).

    >>> from cuzk.curves import BLS12_381 as S
    >>> FQ, FR, FQ2_NONRESIDUE, G1_PARAMS, G2_PARAMS = S.fq, S.fr, S.fq2_nonresidue, S.g1, S.g2
    >>> g1 = plan_for(G1_PARAMS, FQ, FR, FQ2_NONRESIDUE)
    >>> g1.dim, g1.bits, (g1.mu ** 2 + g1.mu + 1) % FR.modulus
    (2, 128, 0)
    >>> plan_for(G2_PARAMS, FQ, FR, FQ2_NONRESIDUE).bits
    65
"""

from __future__ import annotations

import functools
from fractions import Fraction

import attrs
import numpy as np

from cuzk.curve.coords import mont_array
from cuzk.curve.params import CurveParams
from cuzk.errors import CurveSpecError
from cuzk.field import fq2_ints
from cuzk.field.params import FieldParams

__all__ = ["EndoPlan", "plan_for", "derive", "lll", "split_ints", "ROUND_SHIFT", "WORDS"]

ROUND_SHIFT = 256  # Babai constants are g_j = round(2^ROUND_SHIFT·(B⁻¹)_{0j}); k < 2^255
WORDS = 8  # 64-bit words of the kernel's two's-complement accumulator (512 bits)


@attrs.frozen(eq=False)
class EndoPlan:
    """One group's endomorphism split, derived once per curve group.

    Attributes:
        dim: parts per scalar (2: GLV on G1, 4: GLS on G2).
        mu: the endomorphism's eigenvalue on the order-r subgroup.
        endo_x, endo_y: endo(x, y) = (endo_x·frob(x), endo_y·frob(y)) as ``degree``-tuples of ints.
        basis: d×d reduced lattice basis (rows v with Σ v_i μ^i ≡ 0 mod r, |det| = r).
        rounding: g_j, the Babai constants (signed ints).
        bits: every part's magnitude is below 2^bits.
        ex, ey: ``endo_x``/``endo_y`` as Montgomery arrays (1, *coord) for the expansion kernel.
        gmag, gneg, bmag, bneg: the kernel's views of ``rounding`` and ``basis`` (uint64 limbs
            of magnitudes, sign flags).
    """

    dim: int
    mu: int
    endo_x: tuple
    endo_y: tuple
    basis: tuple
    rounding: tuple
    bits: int
    ex: np.ndarray
    ey: np.ndarray
    gmag: np.ndarray
    gneg: np.ndarray
    bmag: np.ndarray
    bneg: np.ndarray


# ------------------------------------------------------------------ Python-int points (slow)
# Jacobian coordinates over Fq2 (a degree-1 point is (a, 0)), one inversion per scalar
# multiplication: the affine ladder this replaces paid an Fq2 inversion per step (~380 per
# eigenvalue check, ~70 ms of every process's first split MSM; docs/perf/cold-start.md).
def _jac_double(X, Y, Z, f):
    """2·(X : Y : Z) on y² = x³ + b (dbl-2009-l); Z = 0 is the identity."""
    m, sub, sc = f
    A, B = m(X, X), m(Y, Y)
    C = m(B, B)
    xb = (X[0] + B[0], X[1] + B[1])
    D = sc(2, sub(m(xb, xb), (A[0] + C[0], A[1] + C[1])))
    E = sc(3, A)
    X3 = sub(m(E, E), sc(2, D))
    return X3, sub(m(E, sub(D, X3)), sc(8, C)), sc(2, m(Y, Z))


def _jac_add_affine(X, Y, Z, x, y, f):
    """(X : Y : Z) + (x, y) (madd-2007-bl), with the doubling and inverse cases."""
    m, sub, sc = f
    if Z == (0, 0):
        return x, y, (1, 0)
    Z2 = m(Z, Z)
    H = sub(m(x, Z2), X)
    rr = sc(2, sub(m(y, m(Z, Z2)), Y))
    if H == (0, 0):
        return _jac_double(x, y, (1, 0), f) if rr == (0, 0) else ((1, 0), (1, 0), (0, 0))
    HH = m(H, H)
    I4 = sc(4, HH)
    J, V = m(H, I4), m(X, I4)
    X3 = sub(sub(m(rr, rr), J), sc(2, V))
    ZH = (Z[0] + H[0], Z[1] + H[1])
    return X3, sub(m(rr, sub(V, X3)), sc(2, m(Y, J))), sub(sub(m(ZH, ZH), Z2), HH)


def _mul(P, k, p, nr):
    """k·P for an affine P (None is the identity) and k >= 0, affine again."""
    if P is None or k == 0:
        return None
    f = (lambda a, b: fq2_ints.mul(a, b, p, nr),
         lambda a, b: ((a[0] - b[0]) % p, (a[1] - b[1]) % p),
         lambda c, a: (c * a[0] % p, c * a[1] % p))
    x, y = P
    X, Y, Z = x, y, (1, 0)
    for bit in bin(k)[3:]:
        X, Y, Z = _jac_double(X, Y, Z, f)
        if bit == "1":
            X, Y, Z = _jac_add_affine(X, Y, Z, x, y, f)
    if Z == (0, 0):
        return None
    zi = fq2_ints.inv(Z, p, nr)
    zi2 = f[0](zi, zi)
    return f[0](X, zi2), f[0](Y, f[0](zi2, zi))


def _endo(P, ex, ey, p, nr):
    (x, y) = P
    return fq2_ints.mul(ex, (x[0], -x[1] % p), p, nr), fq2_ints.mul(ey, (y[0], -y[1] % p), p, nr)


def _pad(c):
    c = tuple(c)
    return c + (0,) * (2 - len(c))


# ------------------------------------------------------------------ lattice
def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def _gram_schmidt(b):
    n = len(b)
    bstar, mu = [], [[Fraction(0)] * n for _ in range(n)]
    for i in range(n):
        v = [Fraction(x) for x in b[i]]
        for j in range(i):
            mu[i][j] = _dot(b[i], bstar[j]) / _dot(bstar[j], bstar[j])
            v = [vi - mu[i][j] * bj for vi, bj in zip(v, bstar[j])]
        bstar.append(v)
    return bstar, mu


def lll(rows, delta=Fraction(3, 4)) -> list[list[int]]:
    """LLL-reduced basis of the integer lattice spanned by ``rows`` (exact rationals; small d).

    >>> lll([[201, 37], [1648, 297]])
    [[1, 32], [40, 1]]
    """
    b = [list(map(int, r)) for r in rows]
    n = len(b)
    bstar, mu = _gram_schmidt(b)
    k = 1
    while k < n:
        for j in range(k - 1, -1, -1):
            q = round(mu[k][j])
            if q:
                b[k] = [x - q * y for x, y in zip(b[k], b[j])]
                bstar, mu = _gram_schmidt(b)
        if _dot(bstar[k], bstar[k]) >= (delta - mu[k][k - 1] ** 2) * _dot(bstar[k - 1], bstar[k - 1]):
            k += 1
        else:
            b[k], b[k - 1] = b[k - 1], b[k]
            bstar, mu = _gram_schmidt(b)
            k = max(k - 1, 1)
    return b


def _inverse_row0(b):
    """Row 0 of B⁻¹ (exact), by Gauss–Jordan on [B | I]."""
    n = len(b)
    m = [[Fraction(x) for x in row] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(b)]
    for col in range(n):
        piv = next(r for r in range(col, n) if m[r][col] != 0)
        m[col], m[piv] = m[piv], m[col]
        inv = 1 / m[col][col]
        m[col] = [v * inv for v in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col]
                m[r] = [a - f * c for a, c in zip(m[r], m[col])]
    return [m[0][n + j] for j in range(n)]


def _limbs(v: int, n: int) -> list[int]:
    return [(v >> (64 * i)) & (2**64 - 1) for i in range(n)]


# ------------------------------------------------------------------ the plan
def derive(curve: CurveParams, fq: FieldParams, fr: FieldParams, fq2_nonresidue: int) -> EndoPlan:
    """The :class:`EndoPlan` of one group (uncached; see :func:`plan_for`).

    Raises:
        CurveSpecError: the group has no endomorphism with a checked eigenvalue (a G2 without
            ψ constants), or a derived number fails its check.
    """
    p, r, nr = fq.modulus, fr.modulus, fq2_nonresidue
    gen = (_pad(curve.generator[0]), _pad(curve.generator[1]))
    if curve.degree == 1:
        dim = 2
        beta = curve.endo_x[0] if curve.endo_x else next(
            b for b in (pow(h, (p - 1) // 3, p) for h in range(2, 64)) if b != 1)
        ex, ey = (beta, 0), (1, 0)
        root = next(m for m in (pow(h, (r - 1) // 3, r) for h in range(2, 64)) if m != 1)
        candidates = (root, root * root % r)
    else:
        if curve.endo_x is None:
            raise CurveSpecError(f"{curve.name}: no psi constants (endo_x/endo_y) to build a GLS split from")
        dim = 4
        ex, ey = _pad(curve.endo_x), _pad(curve.endo_y)
        candidates = (p % r,)
    image = _endo(gen, ex, ey, p, nr)
    mu = next((m for m in candidates if _mul(gen, m, p, nr) == image), None)
    if mu is None:
        raise CurveSpecError(f"{curve.name}: the endomorphism is not multiplication by {candidates} on the generator")
    if dim == 2 and (mu * mu + mu + 1) % r or dim == 4 and (mu**4 - mu**2 + 1) % r:
        raise CurveSpecError(f"{curve.name}: eigenvalue {mu} has the wrong minimal polynomial mod r")
    rows = [[r] + [0] * (dim - 1)] + [[-pow(mu, i, r)] + [int(j == i) for j in range(1, dim)] for i in range(1, dim)]
    basis = lll(rows)
    for v in basis:
        if sum(c * pow(mu, i, r) for i, c in enumerate(v)) % r:
            raise CurveSpecError(f"{curve.name}: a reduced basis vector left the lattice")
    inv0 = _inverse_row0(basis)
    g = [round(Fraction(2**ROUND_SHIFT) * a) for a in inv0]
    bound = Fraction(5, 4) * max(sum(abs(basis[j][i]) for j in range(dim)) for i in range(dim))
    bits = int(bound).bit_length()
    # the kernel's magnitudes: |g_j| < 2^256 (4 limbs), c_j < 2^256, |B_ji| in bl limbs, and
    # k + Σ|c_j·B_ji| inside the signed accumulator
    bl = max(1, -(-max(abs(x) for v in basis for x in v).bit_length() // 64))
    cmax = max(abs(x) for x in g)
    if cmax >= 1 << 256 or bits > 255 or 4 + bl > WORDS or (
            (1 << 255) + dim * cmax * max(abs(x) for v in basis for x in v) >= 1 << (64 * WORDS - 1)):
        raise CurveSpecError(f"{curve.name}: split constants exceed the decomposition kernel's word sizes")
    gmag = np.array([_limbs(abs(x), 4) for x in g], np.uint64)
    bmag = np.array([[_limbs(abs(x), bl) for x in v] for v in basis], np.uint64)
    coord_ex = [ex[: curve.degree]]
    coord_ey = [ey[: curve.degree]]
    return EndoPlan(
        dim=dim, mu=mu, endo_x=ex[: curve.degree], endo_y=ey[: curve.degree],
        basis=tuple(tuple(v) for v in basis), rounding=tuple(g), bits=bits,
        ex=mont_array(coord_ex, curve.degree, fq), ey=mont_array(coord_ey, curve.degree, fq),
        gmag=gmag, gneg=np.array([x < 0 for x in g], np.bool_),
        bmag=bmag, bneg=np.array([[x < 0 for x in v] for v in basis], np.bool_),
    )


@functools.cache
def plan_for(curve: CurveParams, fq: FieldParams, fr: FieldParams, fq2_nonresidue: int) -> EndoPlan:
    """:func:`derive`, once per process per group (the plan depends on the curve only)."""
    return derive(curve, fq, fr, fq2_nonresidue)


def split_ints(plan: EndoPlan, k: int, r: int) -> list[int]:
    """The split of one scalar with Python ints, exactly as the kernel computes it (a reference).

    >>> from cuzk.curves import BLS12_381 as S
    >>> FQ, FR, FQ2_NONRESIDUE, G1_PARAMS, G2_PARAMS = S.fq, S.fr, S.fq2_nonresidue, S.g1, S.g2
    >>> plan = plan_for(G1_PARAMS, FQ, FR, FQ2_NONRESIDUE)
    >>> u = split_ints(plan, 12345, FR.modulus)
    >>> (u[0] + u[1] * plan.mu - 12345) % FR.modulus
    0
    """
    c = [(1 if g >= 0 else -1) * ((k * abs(g)) >> ROUND_SHIFT) for g in plan.rounding]
    return [(k if i == 0 else 0) - sum(c[j] * plan.basis[j][i] for j in range(plan.dim)) for i in range(plan.dim)]
