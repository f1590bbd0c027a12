"""Array-level point API: :data:`G1` and :data:`G2` objects over numpy uint64 Montgomery arrays.

Shapes follow DESIGN §3: a G1 affine point is ``(2, 6)``, a batch ``(n, 2, 6)``; G2 adds a
coefficient axis, ``(2, 2, 6)`` / ``(n, 2, 2, 6)``. The identity is all-zero limbs. Every
operation accepts a single point or a batch and returns the same kind; the work runs in the
generated Numba kernels (``cuzk.curves.<curve>.g1`` / ``g2``), results come back affine;
``cuzk.curves.get(curve).G1`` builds a curve's group.

    >>> from cuzk.curve import G1
    >>> g = G1.generator()
    >>> G1.eq(G1.add(g, g), G1.mul(g, 2))
    True
    >>> G1.to_ints(G1.identity())
    (0, 0)
"""

from __future__ import annotations

import numpy as np

from cuzk.curve.coords import mont_array, mont_ints, scalar_limbs, scalars_array
from cuzk.curve.params import CurveParams
from cuzk.errors import FieldValueError, InputError
from cuzk.field.conversions import check_count, first_unreduced
from cuzk.field.jit import readonly
from cuzk.field.params import FieldParams

__all__ = ["Group"]


class Group:
    """One curve group: its parameters plus the generated kernel module it runs on.

    Coordinates at the Python edge are ints (G1) or ``(c0, c1)`` pairs (G2, value c0 + c1·u).
    ``field`` is the curve's base field; ``curve`` names the curve in reprs and messages
    (``cuzk.curves.get`` builds every curve's groups).
    """

    def __init__(self, params: CurveParams, kernels, field: FieldParams, curve: str | None = None):
        self.params = params
        self.kernels = kernels
        self.field = field
        self.curve = curve
        self.name = params.name.upper()
        self.degree = params.degree
        L = field.limbs
        self.coord_shape = (L,) if params.degree == 1 else (params.degree, L)
        self.point_shape = (2,) + self.coord_shape

    def __repr__(self) -> str:
        return f"<cuzk.curve.{self.name}>" if self.curve is None else f"<cuzk.curves.{self.curve}.{self.name}>"

    # ------------------------------------------------------------ shape handling
    def _batch(self, points, what: str = "points") -> tuple[np.ndarray, bool]:
        """(n, 2, *coord) contiguous uint64 view of ``points`` and whether it was a single point."""
        arr = np.asarray(points)
        if arr.dtype != np.uint64:
            raise FieldValueError(f"{self.name} {what} must be uint64 Montgomery limbs, got dtype {arr.dtype}")
        if arr.shape == self.point_shape:
            return self._reduced(arr[None], what), True
        if arr.ndim == len(self.point_shape) + 1 and arr.shape[1:] == self.point_shape:
            return self._reduced(arr, what), False
        raise FieldValueError(
            f"{self.name} {what} must have shape {self.point_shape} or (n, {', '.join(map(str, self.point_shape))}), got {arr.shape}"
        )

    def _reduced(self, arr: np.ndarray, what: str) -> np.ndarray:
        # A coordinate >= p was computed with (and to_ints reduced it mod p): silently another point.
        arr = np.ascontiguousarray(arr)
        rows = arr.reshape(-1, self.field.limbs)
        bad = first_unreduced(rows, self.field)
        if bad is not None:
            i = bad // (rows.shape[0] // arr.shape[0])
            raise FieldValueError(f"{self.name} {what}: point {i} has a coordinate >= p (not a reduced Fq element)")
        return readonly(arr)  # kernel inputs are read-only arrays: one specialization per kernel

    def _count(self, n) -> int:
        return check_count(n, f"{self.name}: a number of points")

    def _coord(self, c) -> tuple:
        # one coordinate as a degree-tuple of ints (bools and floats used to slip through or TypeError)
        if self.degree == 2 and not isinstance(c, (tuple, list)):
            raise FieldValueError(f"{self.name} coordinate must be a (c0, c1) pair of ints, got {c!r:.80}")
        items = (c,) if self.degree == 1 else c
        if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in items):
            raise FieldValueError(f"{self.name} coordinate must hold ints, got {c!r:.80}")
        return tuple(int(v) for v in items)

    def _affine(self, jac: np.ndarray, single: bool) -> np.ndarray:
        out = np.empty((jac.shape[0],) + self.point_shape, dtype=np.uint64)
        self.kernels.batch_to_affine(jac, out)
        return out[0] if single else out

    def _jac_buffer(self, n: int) -> np.ndarray:
        return np.empty((n, 3) + self.coord_shape, dtype=np.uint64)

    # ------------------------------------------------------------ constructors
    def generator(self) -> np.ndarray:
        """The standard generator, affine ``point_shape`` array.

        >>> from cuzk.curve import G2
        >>> G2.generator().shape
        (2, 2, 6)
        """
        return self.from_ints(self.params.generator if self.degree == 2 else tuple(c[0] for c in self.params.generator))

    def identity(self, n: int | None = None) -> np.ndarray:
        """The identity (all-zero limbs); ``n`` given: a batch of n identities."""
        return np.zeros(self.point_shape if n is None else (self._count(n),) + self.point_shape, dtype=np.uint64)

    def from_ints(self, point) -> np.ndarray:
        """Affine Montgomery array from int coordinates: ``(x, y)`` or a list of them.

        G1 coordinates are ints, G2 coordinates ``(c0, c1)``. ``None`` or all-zero coordinates
        give the identity. No curve check (use :meth:`is_on_curve`).

        >>> from cuzk.curve import G1
        >>> G1.from_ints([(1, 2), None]).shape
        (2, 2, 6)
        """
        if point is not None and not isinstance(point, (tuple, list)):
            raise FieldValueError(f"{self.name} point must be (x, y), None or a list of them, got {point!r:.80}")
        single = point is None or (len(point) > 0 and _is_coord(point[0], self.degree))
        pts = [point] if single else list(point)
        coords = []
        for p in pts:
            if p is None:
                p = ((0,) * self.degree,) * 2 if self.degree == 2 else (0, 0)
            if not isinstance(p, (tuple, list)) or len(p) != 2:
                raise FieldValueError(f"{self.name} point must be (x, y), got {p!r:.80}")
            for c in p:
                coords.append(self._coord(c))
        arr = mont_array(coords, self.degree, self.field).reshape((len(pts),) + self.point_shape)
        return arr[0] if single else arr

    def to_ints(self, points):
        """Int coordinates of affine array(s); the identity is ``(0, 0)`` (G2: zero pairs).

        >>> from cuzk.curve import G1
        >>> G1.to_ints(G1.from_ints((1, 2)))
        (1, 2)
        """
        arr, single = self._batch(points)
        flat = mont_ints(arr, self.degree, self.field)
        if self.degree == 1:
            flat = [c[0] for c in flat]
        pts = [(flat[2 * i], flat[2 * i + 1]) for i in range(arr.shape[0])]
        return pts[0] if single else pts

    def random(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` points generator·k for random k in [1, r) (batch array).

        >>> from cuzk.curve import G1
        >>> G1.random(3, np.random.default_rng(1)).shape
        (3, 2, 6)
        """
        n = self._count(n)
        if not isinstance(rng, np.random.Generator):
            raise FieldValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        ks = [int.from_bytes(rng.bytes(40), "little") % (self.params.order - 1) + 1 for _ in range(n)]
        return self.mul_many(np.broadcast_to(self.generator(), (n,) + self.point_shape), ks)

    # ------------------------------------------------------------ arithmetic
    def add(self, p, q) -> np.ndarray:
        """p + q (elementwise for batches of equal length)."""
        a, single = self._batch(p)
        b, _ = self._batch(q)
        if a.shape != b.shape:
            raise FieldValueError(f"{self.name}.add: shapes differ, {a.shape} vs {b.shape}")
        jac = self._jac_buffer(a.shape[0])
        self.kernels.add_many(a, b, jac)
        return self._affine(jac, single)

    def neg(self, p) -> np.ndarray:
        """-p; the identity stays all-zero."""
        a, single = self._batch(p)
        out = np.empty_like(a)
        self.kernels.neg_many(a, out)
        return out[0] if single else out

    def mul(self, p, k: int) -> np.ndarray:
        """k·p for an int k (negative allowed; not reduced mod r, so it is exact off the subgroup).

        >>> from cuzk.curve import G1
        >>> G1.eq(G1.mul(G1.generator(), G1.params.order), G1.identity())
        True
        """
        a, single = self._batch(p)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):  # int() truncated 2.7, parsed '3'
            raise FieldValueError(f"{self.name}.mul: the scalar must be an int, got {type(k).__name__} {k!r:.40}")
        k = int(k)
        limbs = scalar_limbs(abs(k))
        jac = self._jac_buffer(a.shape[0])
        self.kernels.mul_many(a, readonly(np.ascontiguousarray(np.broadcast_to(limbs, (a.shape[0], limbs.shape[0])))), jac)
        out = self._affine(jac, False)
        if k < 0:
            out = self.neg(out)
        return out[0] if single else out

    def mul_many(self, points, scalars) -> np.ndarray:
        """Elementwise ``scalars[i]·points[i]`` (a batch; not an MSM). ``scalars``: ints >= 0 or
        an (n, L) uint64 canonical array."""
        a, _ = self._batch(points)
        ks = scalars if isinstance(scalars, np.ndarray) and scalars.dtype == np.uint64 else scalars_array(scalars)
        if ks.ndim != 2 or ks.shape[0] != a.shape[0]:
            raise FieldValueError(f"{self.name}.mul_many: need one scalar per point, got {ks.shape} for {a.shape[0]} points")
        jac = self._jac_buffer(a.shape[0])
        self.kernels.mul_many(a, readonly(np.ascontiguousarray(ks)), jac)
        return self._affine(jac, False)

    def sum(self, points) -> np.ndarray:
        """Σ points (one affine point)."""
        a, _ = self._batch(points)
        jac = self._jac_buffer(1)
        self.kernels.sum_many(a, jac)
        return self._affine(jac, True)

    def linear_combination(self, points, scalars) -> np.ndarray:
        """Σ scalars[i]·points[i] the slow, obvious way (a reference for MSM tests)."""
        return self.sum(self.mul_many(points, scalars))

    # ------------------------------------------------------------ predicates
    def eq(self, p, q):
        """Equality of affine points (bool, or a bool array for batches)."""
        a, single = self._batch(p)
        b, _ = self._batch(q)
        if a.shape != b.shape:  # a single point against a batch compared only the first
            raise FieldValueError(f"{self.name}.eq: shapes differ, {a.shape} vs {b.shape}")
        res = np.all(a.reshape(a.shape[0], -1) == b.reshape(b.shape[0], -1), axis=1)
        return bool(res[0]) if single else res

    def is_on_curve(self, points):
        """y² = x³ + b (the all-zero identity counts as on the curve)."""
        a, single = self._batch(points)
        out = np.empty(a.shape[0], dtype=np.bool_)
        self.kernels.on_curve_many(a, out)
        return bool(out[0]) if single else out

    def is_in_subgroup(self, points, *, method: str = "endomorphism"):
        """Membership of on-curve points in the order-r subgroup.

        ``method="endomorphism"`` (default): G1 φ(P) = −x²·P, G2 ψ(P) = x·P (Scott);
        ``method="order"``: r·P = 0, the slower definition.
        """
        if method not in ("endomorphism", "order"):
            raise InputError(f"method must be 'endomorphism' or 'order', got {method!r}")
        a, single = self._batch(points)
        out = np.empty(a.shape[0], dtype=np.bool_)
        self.kernels.in_subgroup_many(a, method == "order", out)
        return bool(out[0]) if single else out


def _is_coord(v, degree: int) -> bool:
    # tells "(x, y)" from "[(x, y), ...]": a single point's first item is a coordinate
    if degree == 1:
        return isinstance(v, (int, np.integer))
    return isinstance(v, (tuple, list)) and len(v) == 2 and isinstance(v[0], (int, np.integer))

