"""R1CS → QAP by Lagrange interpolation, in bellperson's convention, on Python ints.

Variables are numbered ``0 = ONE``, ``1..n_public`` = public inputs, then private variables.
Like bellperson, the QAP holds, after the user's rows, one extra row per input ``i`` in
``0..n_public`` (ONE included) with ``A = x_i, B = 0, C = 0``: it is trivially satisfied but
makes u_i non-zero for every input, so each public input gets its own non-zero IC point even
when no user constraint reads it. The domain is ``{ω^j}`` for ``m = next_pow2(rows + inputs)``
and ω the primitive m-th root derived from the curve's domain generator (bellperson's 7 on
BLS12-381, :mod:`cuzk.reference.curve`); column i of A interpolates to u_i.

    >>> r1cs = ReferenceR1CS([({1: 1}, {1: 1}, {2: 1})], n_public=1, n_vars=3)  # x·x = y
    >>> qap = QAP.from_r1cs(r1cs)
    >>> qap.m, check_witness(r1cs, [1, 3, 9]), check_witness(r1cs, [1, 3, 8])
    (4, None, 0)
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping

import attrs

from cuzk.errors import InputError, UnsatisfiedConstraint
from cuzk.reference.curve import ref_curve
from cuzk.reference.polynomial import (
    R,
    lagrange_basis,
    poly_add,
    poly_divmod,
    poly_eval,
    poly_mul,
    poly_scale,
    poly_sub,
    vanishing_poly,
)

__all__ = ["ReferenceR1CS", "from_r1cs", "check_witness", "QAP", "QapEvaluation", "domain_size", "evaluate_qap_at"]

Row = tuple[dict[int, int], dict[int, int], dict[int, int]]


def _as_int(v):
    """numpy integers count as ints (synthesizers hand them over); bools and floats do not."""
    if isinstance(v, bool):
        return v
    try:
        return operator.index(v)
    except TypeError:
        return v


def _lc(lc, what: str, n_vars: int, r: int) -> dict[int, int]:
    """Validate one linear combination (a mapping or (index, coeff) pairs) into a fresh dict."""
    try:
        items = list(lc.items()) if isinstance(lc, Mapping) else list(lc)
    except TypeError:
        raise InputError(f"{what}: expected a mapping variable -> coefficient, got {type(lc).__name__}") from None
    out: dict[int, int] = {}
    for pair in items:
        try:
            var, coeff = pair
        except (TypeError, ValueError):
            raise InputError(f"{what}: expected (variable, coefficient) pairs, got {pair!r}") from None
        var, coeff = _as_int(var), _as_int(coeff)
        if isinstance(var, bool) or not isinstance(var, int) or not 0 <= var < n_vars:
            raise InputError(f"{what}: variable {pair[0]!r} is not in 0..{n_vars - 1}")
        if isinstance(coeff, bool) or not isinstance(coeff, int) or not 0 <= coeff < r:
            raise InputError(f"{what}: coefficient {pair[1]!r} of variable {var} is not a canonical Fr int (0 <= c < r)")
        if var in out:
            raise InputError(f"{what}: variable {var} appears twice")
        if coeff:
            out[var] = coeff
    return out


def _lc_value(lc: Mapping[int, int], z: list[int], r: int) -> int:
    return sum(c * z[i] for i, c in lc.items()) % r


@attrs.frozen
class ReferenceR1CS:
    """A validated rank-1 constraint system: row j says ⟨A_j, z⟩·⟨B_j, z⟩ = ⟨C_j, z⟩.

    Attributes:
        constraints: tuple of (A, B, C) dicts, variable index -> canonical Fr coefficient
            (zero coefficients dropped).
        n_public: number of public inputs (variables 1..n_public).
        n_vars: total number of variables, ONE included.
        curve: the curve whose Fr the coefficients are in (canonical name; default BLS12-381;
            see :mod:`cuzk.reference.curve`).

    Raises:
        InputError: a variable index out of range, a non-canonical coefficient, or
            ``n_vars < 1 + n_public``.

    >>> ReferenceR1CS([({1: 1}, {0: 1}, {1: 1})], n_public=1, n_vars=2).n_private
    0
    """

    constraints: tuple[Row, ...] = attrs.field(converter=tuple)
    n_public: int
    n_vars: int
    curve: str = attrs.field(default=None, converter=lambda c: ref_curve(c).name)

    @property
    def r(self) -> int:
        """The modulus of the curve's Fr."""
        return ref_curve(self.curve).r

    def __attrs_post_init__(self):
        if not isinstance(self.n_public, int) or self.n_public < 0:
            raise InputError(f"n_public must be a non-negative int, got {self.n_public!r}")
        if not isinstance(self.n_vars, int) or self.n_vars < 1 + self.n_public:
            raise InputError(f"n_vars must be at least 1 + n_public = {1 + self.n_public}, got {self.n_vars!r}")
        rows = []
        for j, row in enumerate(self.constraints):
            if len(row) != 3:
                raise InputError(f"constraint {j}: expected (A, B, C), got {len(row)} parts")
            rows.append(tuple(_lc(lc, f"constraint {j} {name}", self.n_vars, self.r) for lc, name in zip(row, "ABC")))
        object.__setattr__(self, "constraints", tuple(rows))  # frozen: normalised once, here

    @property
    def n_constraints(self) -> int:
        """Number of user rows (without bellperson's input rows)."""
        return len(self.constraints)

    @property
    def n_private(self) -> int:
        """Number of private (auxiliary) variables."""
        return self.n_vars - 1 - self.n_public

    def check_assignment(self, z: Iterable[int]) -> list[int]:
        """Validate a full assignment ``z = [1, public..., private...]`` and return it as a list.

        Raises:
            InputError: wrong length, ``z[0] != 1`` or an entry not in ``0 <= z_i < r``.
        """
        z = list(z)
        if len(z) != self.n_vars:
            raise InputError(f"assignment has {len(z)} entries, the circuit has {self.n_vars} variables")
        for i, v in enumerate(z):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < self.r:
                raise InputError(f"assignment entry {i} = {v!r} is not a canonical Fr int (0 <= z < r)")
        if z[0] != 1:
            raise InputError(f"assignment entry 0 (the ONE variable) must be 1, got {z[0]}")
        return z


def from_r1cs(r1cs) -> ReferenceR1CS:
    """Build a :class:`ReferenceR1CS` from any object with ``rows_as_ints()``, ``n_public``, ``n_vars``
    (and ``curve``, default BLS12-381).

    Duck-typed so the reference never imports the synthesizer it checks.

    >>> class Tiny:
    ...     n_public, n_vars = 1, 2
    ...     def rows_as_ints(self): return [({1: 1}, {0: 1}, {1: 1})]
    >>> from_r1cs(Tiny()).n_constraints
    1
    """
    return ReferenceR1CS(list(r1cs.rows_as_ints()), n_public=int(r1cs.n_public), n_vars=int(r1cs.n_vars),
                         curve=getattr(r1cs, "curve", None))


def check_witness(constraints, z: Iterable[int]) -> int | None:
    """Index of the first user row with ⟨A,z⟩·⟨B,z⟩ ≠ ⟨C,z⟩, or ``None`` when all hold.

    Args:
        constraints: a :class:`ReferenceR1CS`, an object :func:`from_r1cs` accepts, or a bare
            list of (A, B, C) rows (then ``len(z)`` is the number of variables).
        z: the full assignment ``[1, public..., private...]``.

    Raises:
        InputError: malformed rows or assignment.

    >>> rows = [({1: 1}, {1: 1}, {1: 1})]          # x·x = x
    >>> check_witness(rows, [1, 1]), check_witness(rows, [1, 2])
    (None, 0)
    """
    z = list(z)
    if isinstance(constraints, ReferenceR1CS):
        r1cs = constraints
    elif hasattr(constraints, "rows_as_ints"):
        r1cs = from_r1cs(constraints)
    else:
        r1cs = ReferenceR1CS(list(constraints), n_public=0, n_vars=max(len(z), 1))
    z = r1cs.check_assignment(z)
    r = r1cs.r
    for j, (a, b, c) in enumerate(r1cs.constraints):
        if _lc_value(a, z, r) * _lc_value(b, z, r) % r != _lc_value(c, z, r):
            return j
    return None


def domain_size(n_constraints: int, n_public: int) -> int:
    """m = the least power of two ≥ n_constraints + n_public + 1 (bellperson's domain).

    >>> domain_size(3, 1), domain_size(4, 3)
    (8, 8)
    """
    rows = n_constraints + n_public + 1
    m = 1
    while m < rows:
        m *= 2
    return m


@attrs.frozen
class QapEvaluation:
    """The QAP polynomials evaluated at one point τ (setup needs nothing else).

    Attributes:
        u, v, w: u_i(τ), v_i(τ), w_i(τ) for every variable i.
        z: Z(τ) = τ^m − 1.
    """

    u: tuple[int, ...]
    v: tuple[int, ...]
    w: tuple[int, ...]
    z: int


@attrs.frozen
class QAP:
    """The QAP of an R1CS: u_i, v_i, w_i as coefficient lists over the domain {ω^j}.

    Attributes:
        r1cs: the constraint system it came from.
        m: domain size; omega: the primitive m-th root of unity used.
        rows: the (A, B, C) rows actually interpolated: the user's rows, then one row
            ``x_i · 0 = 0`` per input, then zero rows up to m.
        u, v, w: per-variable polynomials (lists of ints, trimmed; ``[]`` is zero).
    """

    r1cs: ReferenceR1CS
    m: int
    omega: int
    rows: tuple[Row, ...]
    u: tuple[list[int], ...]
    v: tuple[list[int], ...]
    w: tuple[list[int], ...]

    @classmethod
    def from_r1cs(cls, r1cs) -> QAP:
        """Interpolate the columns of A, B, C (bellperson's extra input rows included).

        >>> qap = QAP.from_r1cs(ReferenceR1CS([], n_public=1, n_vars=2))
        >>> qap.m, [poly_eval(qap.u[1], pow(qap.omega, j, R)) for j in range(qap.m)]
        (2, [0, 1])
        """
        if not isinstance(r1cs, ReferenceR1CS):
            r1cs = from_r1cs(r1cs)
        m = domain_size(r1cs.n_constraints, r1cs.n_public)
        r = r1cs.r
        omega = ref_curve(r1cs.curve).root_of_unity(m)
        rows = list(r1cs.constraints)
        rows += [({i: 1}, {}, {}) for i in range(r1cs.n_public + 1)]
        rows += [({}, {}, {})] * (m - len(rows))
        basis = lagrange_basis([pow(omega, j, r) for j in range(m)], r)
        cols = []
        for k in range(3):
            polys: list[list[int]] = [[] for _ in range(r1cs.n_vars)]
            for j, row in enumerate(rows):
                for i, coeff in row[k].items():
                    polys[i] = poly_add(polys[i], poly_scale(basis[j], coeff, r), r)
            cols.append(tuple(polys))
        return cls(r1cs, m, omega, tuple(rows), *cols)

    @property
    def domain(self) -> list[int]:
        """The interpolation points ω^0, ..., ω^(m−1)."""
        return [pow(self.omega, j, self.r1cs.r) for j in range(self.m)]

    @property
    def vanishing(self) -> list[int]:
        """Z(x) = x^m − 1."""
        return vanishing_poly(self.m, self.r1cs.r)

    def evaluate_at(self, tau: int) -> QapEvaluation:
        """u_i(τ), v_i(τ), w_i(τ) for all i, and Z(τ).

        >>> qap = QAP.from_r1cs(ReferenceR1CS([], n_public=0, n_vars=1))
        >>> qap.evaluate_at(5).u, qap.evaluate_at(5).z       # m = 1: u_0 = 1, Z = x - 1
        ((1,), 4)
        """
        r = self.r1cs.r
        tau %= r
        return QapEvaluation(
            u=tuple(poly_eval(p, tau, r) for p in self.u),
            v=tuple(poly_eval(p, tau, r) for p in self.v),
            w=tuple(poly_eval(p, tau, r) for p in self.w),
            z=poly_eval(self.vanishing, tau, r),
        )

    def combine(self, z: list[int]) -> tuple[list[int], list[int], list[int]]:
        """A(x) = Σ z_i u_i(x), B(x) = Σ z_i v_i(x), C(x) = Σ z_i w_i(x)."""
        out, r = [], self.r1cs.r
        for polys in (self.u, self.v, self.w):
            acc: list[int] = []
            for zi, p in zip(z, polys):
                acc = poly_add(acc, poly_scale(p, zi, r), r)
            out.append(acc)
        return out[0], out[1], out[2]

    def compute_h(self, z: Iterable[int]) -> list[int]:
        """h(x) = (A(x)·B(x) − C(x)) / Z(x) as m−1 coefficients (zero-padded).

        Raises:
            InputError: a malformed assignment.
            UnsatisfiedConstraint: the witness fails a row (``index`` names the first), so
                Z(x) does not divide A·B − C.

        >>> qap = QAP.from_r1cs(ReferenceR1CS([({1: 1}, {1: 1}, {2: 1})], n_public=1, n_vars=3))
        >>> len(qap.compute_h([1, 3, 9]))
        3
        """
        z = self.r1cs.check_assignment(z)
        a, b, c = self.combine(z)
        r = self.r1cs.r
        h, rem = poly_divmod(poly_sub(poly_mul(a, b, r), c, r), self.vanishing, r)
        if rem:
            row = check_witness(self.r1cs, z)
            raise UnsatisfiedConstraint(
                f"witness does not satisfy constraint {row}: Z(x) does not divide A(x)·B(x) − C(x)", index=row
            )
        assert len(h) <= self.m - 1, "deg(A·B − C) ≤ 2m − 2, so deg h ≤ m − 2"
        return h + [0] * (self.m - 1 - len(h))


def evaluate_qap_at(r1cs, tau: int) -> QapEvaluation:
    """u_i(τ), v_i(τ), w_i(τ) and Z(τ) of the QAP of ``r1cs``: ``QAP.from_r1cs(r1cs).evaluate_at(tau)``.

    >>> ev = evaluate_qap_at(ReferenceR1CS([], n_public=1, n_vars=2), 0)   # m = 2, Z(0) = -1
    >>> ev.z == R - 1, ev.u == ((R + 1) // 2,) * 2      # u_0 = (1 + x)/2, u_1 = (1 - x)/2
    (True, True)
    """
    return QAP.from_r1cs(r1cs).evaluate_at(tau)
