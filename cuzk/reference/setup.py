"""Groth16 keys and the (development) trusted setup of the reference, in bellperson's layout.

For toxic waste (τ, α, β, γ, δ) and the QAP of :mod:`cuzk.reference.qap`:

* vk: α·G1, β·G1, β·G2, γ·G2, δ·G1, δ·G2 and ``ic[i] = (β·u_i(τ) + α·v_i(τ) + w_i(τ))/γ · G1``
  for the inputs i = 0..n_public (ONE first);
* pk: ``a[i] = u_i(τ)·G1``, ``b_g1[i] = v_i(τ)·G1``, ``b_g2[i] = v_i(τ)·G2`` for every variable
  (full lists: points at infinity are kept, unlike bellperson's files, which omit them),
  ``l[j] = (β·u_j(τ) + α·v_j(τ) + w_j(τ))/δ · G1`` for the private variables and
  ``h[i] = τ^i·Z(τ)/δ · G1`` for i = 0..m−2.

All points are stored canonical (Z = 1), so ``==`` on keys is point equality.
Not for production: :func:`setup` draws the toxic waste in this process and does nothing to
erase it.

    >>> from cuzk.reference.qap import ReferenceR1CS
    >>> r1cs = ReferenceR1CS([({1: 1}, {1: 1}, {2: 1})], n_public=1, n_vars=3)    # x·x = y
    >>> pk, vk = generate_parameters(r1cs, ToxicWaste(tau=5, alpha=2, beta=3, gamma=7, delta=11))
    >>> len(vk.ic), len(pk.a), len(pk.l), len(pk.h)
    (2, 3, 1, 3)
"""

from __future__ import annotations

import secrets

import attrs

from cuzk.errors import InputError
from cuzk.reference import points as P
from cuzk.reference.curve import ref_curve
from cuzk.reference.polynomial import R
from cuzk.reference.qap import QAP, ReferenceR1CS, domain_size, from_r1cs

__all__ = ["ToxicWaste", "VerifyingKey", "ProvingKey", "generate_parameters", "setup"]


def _nonzero_scalar(instance, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < R:
        raise InputError(f"toxic waste {attribute.name} must be an int with 0 < {attribute.name} < r, got {value!r}")


@attrs.frozen
class ToxicWaste:
    """The secret scalars of a Groth16 setup, each in 1..r−1 (r: BLS12-381's, the largest of the
    reference's curves; :func:`generate_parameters` checks them against its curve's r).

    Raises:
        InputError: a value that is zero, negative, ≥ r or not an int.

    >>> ToxicWaste(tau=5, alpha=2, beta=3, gamma=7, delta=11).gamma
    7
    """

    tau: int = attrs.field(validator=_nonzero_scalar)
    alpha: int = attrs.field(validator=_nonzero_scalar)
    beta: int = attrs.field(validator=_nonzero_scalar)
    gamma: int = attrs.field(validator=_nonzero_scalar)
    delta: int = attrs.field(validator=_nonzero_scalar)

    @classmethod
    def random(cls, curve=None) -> ToxicWaste:
        """Five independent uniform non-zero scalars below ``curve``'s r (default BLS12-381), from :mod:`secrets`."""
        r = ref_curve(curve).r
        return cls(*(1 + secrets.randbelow(r - 1) for _ in range(5)))


def _points():
    # a tuple of canonical points, so that key equality is point equality
    return attrs.field(converter=lambda pts: tuple(P.canonical(p) for p in pts))


@attrs.frozen
class VerifyingKey:
    """Groth16 verifying key (py_ecc points).

    Attributes:
        alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2: the setup's group elements.
        ic: one G1 point per input, ONE first (len = n_public + 1).
        curve: the curve's canonical name (:mod:`cuzk.reference.curve`; default BLS12-381).
    """

    alpha_g1: tuple = attrs.field(converter=P.canonical)
    beta_g1: tuple = attrs.field(converter=P.canonical)
    beta_g2: tuple = attrs.field(converter=P.canonical)
    gamma_g2: tuple = attrs.field(converter=P.canonical)
    delta_g1: tuple = attrs.field(converter=P.canonical)
    delta_g2: tuple = attrs.field(converter=P.canonical)
    ic: tuple = _points()
    curve: str = attrs.field(default=None, converter=lambda c: ref_curve(c).name)

    @property
    def n_public(self) -> int:
        """Number of public inputs the key expects (ONE excluded)."""
        return len(self.ic) - 1

    def to_affine_ints(self) -> dict:
        """Every point as affine ints (see :mod:`cuzk.reference.points`; zeros = infinity)."""
        g1, g2 = P.g1_affine, P.g2_affine
        return {
            "alpha_g1": g1(self.alpha_g1),
            "beta_g1": g1(self.beta_g1),
            "beta_g2": g2(self.beta_g2),
            "gamma_g2": g2(self.gamma_g2),
            "delta_g1": g1(self.delta_g1),
            "delta_g2": g2(self.delta_g2),
            "ic": [g1(p) for p in self.ic],
        }


@attrs.frozen
class ProvingKey:
    """Groth16 proving key with full (infinity-including) queries, plus the QAP it was made for.

    Attributes:
        vk: the matching verifying key.
        a, b_g1, b_g2: u_i(τ)·G1, v_i(τ)·G1, v_i(τ)·G2 for every variable i (inputs then private).
        l: (β·u_j + α·v_j + w_j)(τ)/δ · G1 for the private variables j.
        h: τ^i·Z(τ)/δ · G1 for i = 0..m−2.
        qap: the QAP (the reference prover divides polynomials instead of using NTTs).
    """

    vk: VerifyingKey
    a: tuple = _points()
    b_g1: tuple = _points()
    b_g2: tuple = _points()
    l: tuple = _points()  # noqa: E741 (bellperson's name)
    h: tuple = _points()
    qap: QAP = attrs.field(eq=False, repr=False)

    def to_affine_ints(self, omit_infinity: bool = False) -> dict:
        """Every query as affine ints; ``omit_infinity=True`` drops infinities from a, b_g1, b_g2
        as bellperson's ``.params`` layout does (l and h never hold infinity for valid waste)."""
        g1, g2 = P.g1_affine, P.g2_affine

        def keep(pts, conv, zero):
            out = [conv(p) for p in pts]
            return [q for q in out if q != zero] if omit_infinity else out

        return {
            "vk": self.vk.to_affine_ints(),
            "a": keep(self.a, g1, (0, 0)),
            "b_g1": keep(self.b_g1, g1, (0, 0)),
            "b_g2": keep(self.b_g2, g2, ((0, 0), (0, 0))),
            "l": [g1(p) for p in self.l],
            "h": [g1(p) for p in self.h],
        }


def generate_parameters(r1cs, toxic: ToxicWaste) -> tuple[ProvingKey, VerifyingKey]:
    """Deterministic Groth16 setup of ``r1cs`` (a :class:`ReferenceR1CS` or anything
    :func:`~cuzk.reference.qap.from_r1cs` accepts) for the given toxic waste.

    The curve is the R1CS's (``ReferenceR1CS.curve``).

    Raises:
        InputError: τ is an m-th root of unity (Z(τ) = 0 would make the key useless), or a
            toxic-waste scalar is not below the curve's r.

    >>> from cuzk.reference.qap import ReferenceR1CS
    >>> r1cs = ReferenceR1CS([], n_public=0, n_vars=1)
    >>> pk, vk = generate_parameters(r1cs, ToxicWaste(5, 2, 3, 7, 11))
    >>> P.eq(vk.ic[0], P.g1_mul((3 * 1 + 2 * 0 + 0) * pow(7, -1, R)))   # u_0 = 1 when m = 1
    True
    """
    if not isinstance(toxic, ToxicWaste):
        raise InputError(f"toxic waste must be a ToxicWaste, got {type(toxic).__name__}")
    if not isinstance(r1cs, ReferenceR1CS):
        r1cs = from_r1cs(r1cs)
    c = ref_curve(r1cs.curve)
    r = c.r
    for f in attrs.fields(ToxicWaste):
        if not getattr(toxic, f.name) < r:
            raise InputError(f"toxic waste {f.name} must be below {c.name}'s r")
    qap = QAP.from_r1cs(r1cs)
    tau, alpha, beta = toxic.tau, toxic.alpha, toxic.beta
    ev = qap.evaluate_at(tau)
    if ev.z == 0:
        raise InputError(f"toxic waste tau is an {qap.m}-th root of unity: Z(tau) = 0")
    gamma_inv = pow(toxic.gamma, -1, r)
    delta_inv = pow(toxic.delta, -1, r)
    n_in = r1cs.n_public + 1

    def lc_of(i: int) -> int:
        return (beta * ev.u[i] + alpha * ev.v[i] + ev.w[i]) % r

    vk = VerifyingKey(
        alpha_g1=c.g1_mul(alpha),
        beta_g1=c.g1_mul(beta),
        beta_g2=c.g2_mul(beta),
        gamma_g2=c.g2_mul(toxic.gamma),
        delta_g1=c.g1_mul(toxic.delta),
        delta_g2=c.g2_mul(toxic.delta),
        ic=[c.g1_mul(lc_of(i) * gamma_inv) for i in range(n_in)],
        curve=c.name,
    )
    pk = ProvingKey(
        vk=vk,
        a=[c.g1_mul(x) for x in ev.u],
        b_g1=[c.g1_mul(x) for x in ev.v],
        b_g2=[c.g2_mul(x) for x in ev.v],
        l=[c.g1_mul(lc_of(j) * delta_inv) for j in range(n_in, r1cs.n_vars)],
        h=[c.g1_mul(pow(tau, i, r) * ev.z * delta_inv) for i in range(qap.m - 1)],
        qap=qap,
    )
    return pk, vk


def setup(r1cs) -> tuple[ProvingKey, VerifyingKey]:
    """Development setup: :func:`generate_parameters` with :meth:`ToxicWaste.random`.

    Not for production: the toxic waste lives in this process's memory until collected.

    >>> from cuzk.reference.qap import ReferenceR1CS
    >>> pk, vk = setup(ReferenceR1CS([], n_public=0, n_vars=1))
    >>> vk.n_public
    0
    """
    if not isinstance(r1cs, ReferenceR1CS):
        r1cs = from_r1cs(r1cs)
    m = domain_size(r1cs.n_constraints, r1cs.n_public)
    r = ref_curve(r1cs.curve).r
    toxic = ToxicWaste.random(r1cs.curve)
    while pow(toxic.tau, m, r) == 1:  # probability m/r, but such a key would be worthless
        toxic = ToxicWaste.random(r1cs.curve)
    return generate_parameters(r1cs, toxic)
