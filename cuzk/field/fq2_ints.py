"""Fq2 = Fq[u]/(u² − β) on Python ints, for any prime p and non-residue β (deriving constants).

Kernels never call these: the generated tower modules (``fq6``/``fq12`` of every curve) and the
curve specifications (``cuzk.curves``) use them at import to turn a curve's defining numbers
(ξ, twist type) into Frobenius and endomorphism constants, so nothing is typed twice. An
element is a pair ``(c0, c1)`` of canonical ints meaning c0 + c1·u.

    >>> p = 103                                   # 103 = 3 mod 4: u² = −1 is a field extension
    >>> mul((0, 1), (0, 1), p, p - 1)             # u · u = β = −1
    (102, 0)
    >>> mul(inv((3, 5), p, p - 1), (3, 5), p, p - 1)
    (1, 0)
"""

from __future__ import annotations

from cuzk.errors import FieldValueError

__all__ = ["mul", "pow_", "inv", "conj", "norm", "frobenius_powers"]


def mul(a: tuple[int, int], b: tuple[int, int], p: int, beta: int) -> tuple[int, int]:
    """(a0 + a1 u)(b0 + b1 u) mod p with u² = β."""
    return ((a[0] * b[0] + beta * a[1] * b[1]) % p, (a[0] * b[1] + a[1] * b[0]) % p)


def pow_(a: tuple[int, int], e: int, p: int, beta: int) -> tuple[int, int]:
    """a^e by square-and-multiply (e >= 0).

    >>> pow_((1, 1), 2, 103, 102)                 # (1 + u)² = 2u when u² = −1
    (0, 2)
    """
    if e < 0:
        raise FieldValueError(f"exponent must be >= 0, got {e}")
    result, base = (1, 0), (a[0] % p, a[1] % p)
    while e:
        if e & 1:
            result = mul(result, base, p, beta)
        base = mul(base, base, p, beta)
        e >>= 1
    return result


def inv(a: tuple[int, int], p: int, beta: int) -> tuple[int, int]:
    """a⁻¹ = conj(a) / (a0² − β a1²); raises FieldValueError for zero."""
    nrm = norm(a, p, beta)
    if nrm == 0:
        raise FieldValueError("zero has no inverse in Fq2")
    n = pow(nrm, -1, p)
    return (a[0] * n % p, -a[1] * n % p)


def conj(a: tuple[int, int], p: int) -> tuple[int, int]:
    """c0 − c1·u: the p-power Frobenius of Fq2 (u^p = −u, β being a non-residue)."""
    return (a[0] % p, -a[1] % p)


def norm(a: tuple[int, int], p: int, beta: int) -> int:
    """a·conj(a) = a^(p+1) = a0² − β a1², an element of Fq."""
    return (a[0] * a[0] - beta * a[1] * a[1]) % p


def frobenius_powers(xi: tuple[int, int], d: int, count: int, p: int, beta: int) -> list[tuple[int, int]]:
    """[ξ^((p^k − 1)/d) for k in range(count)], the tower's Frobenius coefficients.

    With d | p − 1, (p^k − 1)/d = ((p − 1)/d)(1 + p + … + p^(k−1)), so with γ = ξ^((p−1)/d) the
    k-th is ∏_{j<k} γ^(p^j) = γ·conj(previous): one exponentiation instead of one per k (each
    ~760 squarings; 24 of them made importing a curve's tower take ~70 ms).

    >>> frobenius_powers((1, 1), 2, 3, 103, 102) == [pow_((1, 1), (103**k - 1) // 2, 103, 102) for k in range(3)]
    True
    """
    if (p - 1) % d:  # then (p - 1)/d is no integer: no tower of this degree over this p
        raise FieldValueError(f"p - 1 is not divisible by {d}")
    gamma = pow_(xi, (p - 1) // d, p, beta)
    out = [(1, 0)]
    for _ in range(1, count):
        out.append(mul(gamma, conj(out[-1], p), p, beta))
    return out
