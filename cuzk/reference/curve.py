"""The reference's curves: py_ecc's arithmetic for each curve cuzk proves over, chosen by name.

The reference stays an independent oracle: its numbers come from py_ecc (``curve_order``, the
generators, the pairing), not from cuzk's ``CurveSpec``; what it adds per curve is the one
convention py_ecc cannot know, the generator of Fr whose powers give the QAP's domain (bellperson's
7 for BLS12-381; 5, the Fr generator of snarkjs and arkworks, for BN254 — the same choice as
``cuzk.groth16.r1cs_to_qap``). Every function takes py_ecc projective triples and plain ints, as
:mod:`cuzk.reference.points` does for BLS12-381; zcash compression stays there (BLS12-381 only).

    >>> bn = ref_curve("bn128")
    >>> bn.name, bn.r == 21888242871839275222246405745257275088548364400416034343698204186575808495617
    ('bn254', True)
    >>> bn.eq(bn.g1_mul(2), bn.add(bn.G1, bn.G1)), bn.in_subgroup(bn.G2)
    (True, True)
    >>> bn.pairing_product([(bn.g2_mul(3), bn.g1_mul(2)), (bn.G2, bn.neg(bn.g1_mul(6)))]) == bn.FQ12.one()
    True
"""

from __future__ import annotations

import functools
import importlib

import attrs

from cuzk.errors import InputError, NotOnCurveError

__all__ = ["RefCurve", "ref_curve", "REF_CURVES", "DEFAULT"]

DEFAULT = "bls12_381"

#: canonical name -> (py_ecc's name of the curve, the QAP domain's Fr generator, aliases)
REF_CURVES = {
    "bls12_381": ("optimized_bls12_381", 7, ("bls12381",)),
    "bn254": ("optimized_bn128", 5, ("bn128", "alt_bn128")),
}
_ALIASES = {a: name for name, (*_, aliases) in REF_CURVES.items() for a in (name, *aliases)}


@attrs.frozen(eq=False)
class RefCurve:
    """One curve's py_ecc arithmetic with the reference's conventions.

    Attributes:
        name: canonical name (as ``cuzk.curves`` spells it).
        r: the group order (Fr's modulus), py_ecc's ``curve_order``.
        domain_generator: the Fr generator g with ω_m = g^((r − 1)/m).
        ecc: the py_ecc ``optimized_*`` module; FQ, FQ2, FQ12 its field classes.
    """

    name: str
    r: int
    domain_generator: int
    ecc: object = attrs.field(repr=False)
    FQ: type = attrs.field(repr=False)  # noqa: N815 (py_ecc's names)
    FQ2: type = attrs.field(repr=False)  # noqa: N815
    FQ12: type = attrs.field(repr=False)  # noqa: N815

    # ---------------------------------------------------------------- points (py_ecc triples)
    @property
    def G1(self):  # noqa: N802
        return self.ecc.G1

    @property
    def G2(self):  # noqa: N802
        return self.ecc.G2

    @property
    def Z1(self):  # noqa: N802
        return self.ecc.Z1

    @property
    def Z2(self):  # noqa: N802
        return self.ecc.Z2

    def add(self, p, q):
        return self.ecc.add(p, q)

    def neg(self, p):
        return self.ecc.neg(p)

    def eq(self, p, q) -> bool:
        return self.ecc.eq(p, q)

    def is_inf(self, p) -> bool:
        return self.ecc.is_inf(p)

    def g1_mul(self, k: int, base=None):
        """k · base in G1 (k reduced mod r; base defaults to the generator)."""
        return self.ecc.multiply(self.G1 if base is None else base, k % self.r)

    def g2_mul(self, k: int, base=None):
        """k · base in G2 (k reduced mod r)."""
        return self.ecc.multiply(self.G2 if base is None else base, k % self.r)

    def msm(self, points: list, scalars: list[int], zero):
        """Σ scalars[i]·points[i], one scalar multiplication at a time (``zero``: Z1 or Z2)."""
        if len(points) != len(scalars):
            raise ValueError(f"msm: {len(points)} points but {len(scalars)} scalars")
        acc = zero
        for p, k in zip(points, scalars):
            k %= self.r
            if k and not self.ecc.is_inf(p):
                acc = self.ecc.add(acc, self.ecc.multiply(p, k))
        return acc

    def canonical(self, pt):
        """The same point with Z = 1 (infinity: ``(1, 1, 0)``), so tuple equality is point equality."""
        if self.ecc.is_inf(pt):
            one = pt[0].one()
            return (one, one, pt[0].zero())
        x, y = self.ecc.normalize(pt)
        return (x, y, x.one())

    def in_subgroup(self, pt) -> bool:
        """r · pt == O."""
        return self.ecc.is_inf(self.ecc.multiply(pt, self.r))

    def on_curve(self, pt) -> bool:
        """pt satisfies its curve's equation (G1's if its coordinates are in Fq, else the twist's)."""
        return self.ecc.is_on_curve(pt, self.ecc.b if isinstance(pt[0], self.FQ) else self.ecc.b2)

    def g1_affine(self, pt) -> tuple[int, int]:
        """Affine ``(x, y)`` as ints; ``(0, 0)`` for infinity."""
        if self.ecc.is_inf(pt):
            return (0, 0)
        x, y = self.ecc.normalize(pt)
        return (int(x.n), int(y.n))

    def g2_affine(self, pt):
        """Affine ``((x0, x1), (y0, y1))`` as ints (x = x0 + x1·u); all zeros for infinity."""
        if self.ecc.is_inf(pt):
            return ((0, 0), (0, 0))
        x, y = self.ecc.normalize(pt)
        return (tuple(int(c) for c in x.coeffs), tuple(int(c) for c in y.coeffs))

    def g1_from_affine(self, xy):
        """Inverse of :meth:`g1_affine`; checks the curve equation (not the subgroup).

        Raises:
            NotOnCurveError: (x, y) is not on the curve (and not the all-zero infinity).
        """
        x, y = xy
        if x == 0 and y == 0:
            return self.Z1
        pt = (self.FQ(x), self.FQ(y), self.FQ.one())
        if not self.ecc.is_on_curve(pt, self.ecc.b):
            raise NotOnCurveError(f"{self.name} G1 point ({x:#x}, {y:#x}) is not on the curve")
        return pt

    def g2_from_affine(self, xy):
        """Inverse of :meth:`g2_affine`; checks the twist's equation (not the subgroup)."""
        (x0, x1), (y0, y1) = xy
        if x0 == x1 == y0 == y1 == 0:
            return self.Z2
        pt = (self.FQ2([x0, x1]), self.FQ2([y0, y1]), self.FQ2.one())
        if not self.ecc.is_on_curve(pt, self.ecc.b2):
            raise NotOnCurveError(f"{self.name} G2 point is not on the twist curve")
        return pt

    # ---------------------------------------------------------------- pairing, QAP domain
    def pairing_product(self, pairs) -> object:
        """Π e(P_i, Q_i) for ``pairs`` of (G2 point Q, G1 point P): Miller loops multiplied, one
        final exponentiation (py_ecc's pairing)."""
        f = self.FQ12.one()
        for q, p in pairs:
            f = f * self.ecc.pairing(q, p, final_exponentiate=False)
        return self.ecc.final_exponentiate(f)

    def root_of_unity(self, m: int) -> int:
        """The primitive m-th root of unity g^((r − 1)/m) (m a power of two dividing r − 1)."""
        if m < 1 or m & (m - 1) or (self.r - 1) % m:
            raise InputError(f"{self.name}: no {m}-th roots of unity in Fr (m must be a power of two dividing r - 1)")
        return pow(self.domain_generator, (self.r - 1) // m, self.r)


@functools.cache
def _build(name: str) -> RefCurve:
    py_name, gen, _ = REF_CURVES[name]
    ecc = importlib.import_module(f"py_ecc.{py_name}")
    fields = importlib.import_module("py_ecc.fields")
    fq, fq2, fq12 = (getattr(fields, f"{py_name}_{k}") for k in ("FQ", "FQ2", "FQ12"))
    return RefCurve(name, int(ecc.curve_order), gen, ecc, fq, fq2, fq12)


def ref_curve(curve=None) -> RefCurve:
    """The :class:`RefCurve` of ``curve`` (a name or alias; None: BLS12-381, the default).

    Raises:
        InputError: a curve the reference has no arithmetic for.
    """
    if isinstance(curve, RefCurve):
        return curve
    key = DEFAULT if curve is None else str(curve).strip().lower().replace("-", "_")
    if key not in _ALIASES:
        raise InputError(f"the reference prover has no curve {curve!r}; it knows {', '.join(sorted(_ALIASES))}")
    return _build(_ALIASES[key])
