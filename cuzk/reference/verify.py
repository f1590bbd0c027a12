"""The reference Groth16 verifier: e(A, B) == e(α, β)·e(Σ x_i·IC_i, γ)·e(C, δ), x_0 = 1.

The check runs as one product of Miller loops, e(−A, B)·e(α, β)·e(acc, γ)·e(C, δ), followed by
a single final exponentiation compared with 1 (py_ecc's pairing; a few seconds per call).

    >>> from cuzk.reference.qap import ReferenceR1CS
    >>> from cuzk.reference.setup import generate_parameters, ToxicWaste
    >>> from cuzk.reference.prove import create_proof
    >>> r1cs = ReferenceR1CS([({1: 1}, {1: 1}, {2: 1})], n_public=1, n_vars=3)   # x·x = y, x public
    >>> pk, vk = generate_parameters(r1cs, ToxicWaste(5, 2, 3, 7, 11))
    >>> proof = create_proof(pk, [1, 3, 9], r=1, s=2)
    >>> verify(vk, [3], proof), verify(vk, [4], proof)
    (True, False)
"""

from __future__ import annotations

from cuzk.errors import InputError, NotInSubgroupError, NotOnCurveError
from cuzk.reference.curve import RefCurve, ref_curve

__all__ = ["verify", "public_input_point"]


def public_input_point(vk, public_inputs) -> tuple:
    """Σ x_i·IC_i with x_0 = 1: the G1 point paired with γ.

    Raises:
        InputError: wrong number of inputs or an input that is not an int in 0..r−1.
    """
    c = ref_curve(vk.curve)
    xs = list(public_inputs)
    if len(xs) != vk.n_public:
        raise InputError(f"the verifying key expects {vk.n_public} public inputs, got {len(xs)}")
    for i, x in enumerate(xs):
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < c.r:
            raise InputError(f"public input {i} = {x!r} is not an int with 0 <= x < r")
    return c.msm(list(vk.ic), [1] + xs, c.Z1)


def _check_point(c: RefCurve, pt, name: str) -> None:
    if not c.on_curve(pt):
        raise NotOnCurveError(f"proof {name} is not on the curve")
    if not c.in_subgroup(pt):
        raise NotInSubgroupError(f"proof {name} is not in the prime-order subgroup")


def verify(vk, public_inputs, proof) -> bool:
    """True iff ``proof`` is a valid Groth16 proof for ``public_inputs`` under ``vk``.

    Args:
        vk: a :class:`~cuzk.reference.setup.VerifyingKey`.
        public_inputs: the n_public inputs as ints (ONE is implied).
        proof: a :class:`~cuzk.reference.prove.Proof`.

    Returns:
        False for a well-formed proof that does not verify.

    Raises:
        InputError: wrong number of inputs, an input out of range, or a proof of another curve.
        NotOnCurveError, NotInSubgroupError: a proof point is malformed.
    """
    c = ref_curve(vk.curve)
    if ref_curve(getattr(proof, "curve", None)).name != c.name:
        raise InputError(f"the proof is over {proof.curve}, the verifying key over {c.name}")
    acc = public_input_point(vk, public_inputs)
    _check_point(c, proof.a, "A")
    _check_point(c, proof.b, "B")
    _check_point(c, proof.c, "C")
    pairs = ((proof.b, c.neg(proof.a)), (vk.beta_g2, vk.alpha_g1), (vk.gamma_g2, acc), (vk.delta_g2, proof.c))
    return c.pairing_product(pairs) == c.FQ12.one()
