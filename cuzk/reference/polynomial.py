"""Dense polynomials over Fr as lists of Python ints (coefficient i is the x^i term).

Everything is the schoolbook algorithm, O(n^2), so that it is obviously correct; the reference
prover only ever sees circuits of a few dozen rows. Results are always reduced mod r and
trimmed of high zero coefficients (the zero polynomial is ``[]``). Every function takes the
modulus ``r`` (default :data:`R`, BLS12-381's Fr; the QAP passes its curve's).

    >>> from cuzk.reference.polynomial import poly_mul, poly_eval
    >>> p = poly_mul([1, 1], [-1 % R, 1])      # (1 + x)(x - 1) = x^2 - 1
    >>> p == [R - 1, 0, 1], poly_eval(p, 3)
    (True, 8)
"""

from __future__ import annotations

__all__ = [
    "R",
    "poly_trim",
    "poly_add",
    "poly_sub",
    "poly_scale",
    "poly_mul",
    "poly_divmod",
    "poly_eval",
    "vanishing_poly",
    "lagrange_basis",
    "interpolate",
]

#: the default modulus, BLS12-381's r (the reference's default curve), written out here so the
#: oracle holds its own numbers (tests/test_reference_points.py checks it against the catalog's)
R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001


def poly_trim(p: list[int], r: int = R) -> list[int]:
    """Reduce every coefficient mod r and drop high zero coefficients.

    >>> poly_trim([1, R + 2, 0, 0])
    [1, 2]
    """
    out = [c % r for c in p]
    while out and out[-1] == 0:
        out.pop()
    return out


def poly_add(p: list[int], q: list[int], r: int = R) -> list[int]:
    """p + q.

    >>> poly_add([1, 2], [3])
    [4, 2]
    """
    n = max(len(p), len(q))
    return poly_trim([(p[i] if i < len(p) else 0) + (q[i] if i < len(q) else 0) for i in range(n)], r)


def poly_sub(p: list[int], q: list[int], r: int = R) -> list[int]:
    """p - q.

    >>> poly_sub([1, 2], [1, 2])
    []
    """
    return poly_add(p, [-c for c in q], r)


def poly_scale(p: list[int], k: int, r: int = R) -> list[int]:
    """k · p.

    >>> poly_scale([1, 2], 3)
    [3, 6]
    """
    return poly_trim([c * k for c in p], r)


def poly_mul(p: list[int], q: list[int], r: int = R) -> list[int]:
    """p · q (schoolbook).

    >>> poly_mul([1, 1], [1, 1])
    [1, 2, 1]
    """
    if not p or not q:
        return []
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a:
            for j, b in enumerate(q):
                out[i + j] += a * b
    return poly_trim(out, r)


def poly_divmod(num: list[int], den: list[int], r: int = R) -> tuple[list[int], list[int]]:
    """Long division: ``(q, rem)`` with ``num == q·den + rem`` and ``deg rem < deg den``.

    Raises:
        ZeroDivisionError: ``den`` is the zero polynomial.

    >>> poly_divmod([R - 1, 0, 1], [R - 1, 1])   # (x^2 - 1) / (x - 1) = x + 1
    ([1, 1], [])
    """
    den = poly_trim(den, r)
    if not den:
        raise ZeroDivisionError("polynomial division by zero")
    rem = poly_trim(num, r)
    lead_inv = pow(den[-1], -1, r)
    quot = [0] * max(len(rem) - len(den) + 1, 0)
    while len(rem) >= len(den):
        shift = len(rem) - len(den)
        k = rem[-1] * lead_inv % r
        quot[shift] = k
        for i, d in enumerate(den):
            rem[shift + i] = (rem[shift + i] - k * d) % r
        # the leading term cancels by construction; trim re-establishes the invariant
        rem = poly_trim(rem, r)
    return poly_trim(quot, r), rem


def poly_eval(p: list[int], x: int, r: int = R) -> int:
    """p(x) by Horner's rule.

    >>> poly_eval([1, 2, 3], 2)
    17
    """
    acc = 0
    for c in reversed(p):
        acc = (acc * x + c) % r
    return acc


def vanishing_poly(m: int, r: int = R) -> list[int]:
    """Z(x) = x^m - 1, which vanishes exactly on the m-th roots of unity.

    >>> vanishing_poly(2) == [R - 1, 0, 1]
    True
    """
    return poly_trim([-1] + [0] * (m - 1) + [1], r)


def lagrange_basis(points: list[int], r: int = R) -> list[list[int]]:
    """The Lagrange basis polynomials L_j of distinct ``points``: L_j(points[k]) = [j == k].

    L_j(x) = Π_{k≠j} (x − x_k) / Π_{k≠j} (x_j − x_k), built from N(x) = Π_k (x − x_k) by one
    exact division per j.

    Raises:
        ValueError: two points coincide.

    >>> L = lagrange_basis([0, 1])
    >>> L[0] == [1, R - 1], L[1]          # 1 - x and x
    (True, [0, 1])
    """
    pts = [x % r for x in points]
    if len(set(pts)) != len(pts):
        raise ValueError("interpolation points must be distinct")
    master = [1]
    for x in pts:
        master = poly_mul(master, [-x, 1], r)
    basis = []
    for j, xj in enumerate(pts):
        numer, rem = poly_divmod(master, [-xj, 1], r)
        assert not rem, "x_j is a root of N(x) by construction"
        denom = 1
        for k, xk in enumerate(pts):
            if k != j:
                denom = denom * (xj - xk) % r
        basis.append(poly_scale(numer, pow(denom, -1, r), r))
    return basis


def interpolate(points: list[int], values: list[int], r: int = R) -> list[int]:
    """The unique polynomial of degree < len(points) with p(points[j]) = values[j].

    >>> interpolate([1, 2], [3, 5])      # 2x + 1
    [1, 2]
    """
    if len(points) != len(values):
        raise ValueError(f"{len(points)} points but {len(values)} values")
    acc: list[int] = []
    for basis_j, y in zip(lagrange_basis(points, r), values):
        acc = poly_add(acc, poly_scale(basis_j, y, r), r)
    return acc
