"""Groth16 verification: one multi-pairing check, and batch verification.

``e(A, B) = e(α, β) · e(Σ x_i·IC_i, γ) · e(C, δ)`` is checked as
``e(A, B) · e(−α, β) · e(−acc, γ) · e(−C, δ) = 1`` with one shared final exponentiation.

    >>> cuzk.groth16.verify(vk, [35], proof)                # doctest: +SKIP
    True
"""

from __future__ import annotations

import secrets

import attrs
import numpy as np

from cuzk import curves
from cuzk.errors import InputError
from cuzk.groth16.keys import VerifyingKey, check_same_curve
from cuzk.groth16.proof import Proof

__all__ = ["PreparedVerifyingKey", "prepare_verifying_key", "verify", "verify_batch"]


@attrs.frozen(eq=False)
class PreparedVerifyingKey:
    """A verifying key with β, γ, δ's Miller-loop lines precomputed (reuse it across proofs);
    the pairing and groups are its curve's (``cuzk.curves.get(vk.curve)``), looked up once here
    and kept, so a verification does no name look-ups."""

    vk: VerifyingKey
    neg_alpha_g1: np.ndarray
    beta: object  #: the curve's ``G2Prepared``
    gamma: object
    delta: object
    bundle: object = attrs.field(default=None, repr=False)  #: ``cuzk.curves.get(vk.curve)``

    def __attrs_post_init__(self):
        if self.bundle is None:
            object.__setattr__(self, "bundle", curves.get(self.vk.curve))

    @property
    def curve(self) -> str:
        return self.vk.curve


def prepare_verifying_key(vk: VerifyingKey) -> PreparedVerifyingKey:
    """Precompute what every verification with ``vk`` shares."""
    if isinstance(vk, PreparedVerifyingKey):
        return vk
    if not isinstance(vk, VerifyingKey):
        raise InputError(f"expected a VerifyingKey, got {type(vk).__name__}")
    c = curves.get(vk.curve)
    prepare_g2 = c.pairing.prepare_g2
    return PreparedVerifyingKey(
        vk=vk,
        neg_alpha_g1=c.G1.neg(vk.alpha_g1),
        beta=prepare_g2(vk.beta_g2),
        gamma=prepare_g2(vk.gamma_g2),
        delta=prepare_g2(vk.delta_g2),
        bundle=c,
    )


def _check_inputs(vk: VerifyingKey, public_inputs, r: int) -> list[int]:
    try:
        xs = list(public_inputs)
    except TypeError:
        raise InputError(f"public_inputs must be a sequence of ints, got {type(public_inputs).__name__}") from None
    if len(xs) != vk.n_public:
        raise InputError(f"the verifying key expects {vk.n_public} public inputs, got {len(xs)}")
    for i, x in enumerate(xs):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise InputError(f"public input {i} must be an int, got {type(x).__name__}")
        if not 0 <= int(x) < r:
            raise InputError(f"public input {i} = {int(x)} is outside [0, r)")
    return [int(x) for x in xs]


def _as_proof(proof, vk: VerifyingKey) -> Proof:
    if isinstance(proof, (bytes, bytearray, memoryview)):
        proof = Proof.from_bytes(bytes(proof), curve=vk.curve)  # bytes carry no curve: the key's
    if not isinstance(proof, Proof):
        raise InputError(f"expected a Proof or its bytes, got {type(proof).__name__}")
    if proof.curve != vk.curve:  # both canonical names (their converters): only a mismatch needs messages
        check_same_curve("the proof", proof.curve, "the verifying key", vk.curve)
    return proof


def _input_acc(bundle, vk: VerifyingKey, xs: list[int], msm=None) -> np.ndarray:
    if not xs:
        return vk.ic[0]
    if msm is not None:
        return msm(vk.ic, bundle.Fr.ints_to_limbs([1] + xs))
    g1 = bundle.G1
    return g1.add(vk.ic[0], g1.linear_combination(vk.ic[1:], xs))


def verify(vk, public_inputs, proof, *, msm=None) -> bool:
    """True iff ``proof`` is valid for ``public_inputs`` under ``vk``.

    Args:
        vk: a :class:`VerifyingKey` or :class:`PreparedVerifyingKey` (faster when reused).
        public_inputs: ints in [0, r), as many as the circuit's public inputs.
        proof: a :class:`Proof` or its bellperson bytes (:meth:`Proof.to_bytes`).
        msm: optional G1 MSM ``(points, scalars) -> point`` (``cuzk.kernels.cpu.msm_g1``'s
            signature) for Σ x_i·IC_i instead of the group's own operations: the CPU prover
            passes its kernels, compiled already, so its first proof compiles no more point
            arithmetic (docs/perf/cold-start.md). The result is the same.

    Raises:
        InputError: wrong number or range of public inputs.
        ParamsFormatError: malformed proof bytes.
        KeyMismatchError: the proof and the key are over different curves (both named).
    """
    pvk = prepare_verifying_key(vk)
    c = pvk.bundle
    G1 = c.G1  # noqa: N806 (the group's name)
    xs = _check_inputs(pvk.vk, public_inputs, c.spec.fr.modulus)
    pr = _as_proof(proof, pvk.vk)
    acc = _input_acc(c, pvk.vk, xs, msm)
    return c.pairing.pairing_check(
        [(pr.a, pr.b), (pvk.neg_alpha_g1, pvk.beta), (G1.neg(acc), pvk.gamma), (G1.neg(pr.c), pvk.delta)]
    )


def verify_batch(vk, items, rng=None) -> bool:
    """Verify many proofs for one key at once (random linear combination, 128-bit weights).

    True iff (with overwhelming probability) every ``(public_inputs, proof)`` in ``items`` is valid;
    one Miller loop per proof plus three, one final exponentiation.
    """
    pvk = prepare_verifying_key(vk)
    cv = pvk.bundle
    G1 = cv.G1  # noqa: N806 (the group's name)
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise InputError(f"verify_batch takes an iterable of (public_inputs, proof) pairs, got {type(items).__name__}")
    items = list(items)
    for i, item in enumerate(items):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise InputError(f"verify_batch item {i} must be a (public_inputs, proof) pair, got {item!r:.60}")
    if rng is not None and not callable(getattr(rng, "bytes", None)):
        raise InputError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")
    if not items:
        return True
    pairs = []
    sum_rho = 0
    acc_terms, c_terms, rhos = [], [], []
    for inputs, proof in items:
        xs = _check_inputs(pvk.vk, inputs, cv.spec.fr.modulus)
        pr = _as_proof(proof, pvk.vk)
        rho = (secrets.randbits(128) if rng is None else int.from_bytes(rng.bytes(16), "little")) | 1
        rhos.append(rho)
        sum_rho += rho
        pairs.append((G1.mul(pr.a, rho), pr.b))
        acc_terms.append(_input_acc(cv, pvk.vk, xs))
        c_terms.append(pr.c)
    acc = G1.linear_combination(np.stack(acc_terms), rhos)
    c = G1.linear_combination(np.stack(c_terms), rhos)
    pairs += [
        (G1.mul(pvk.neg_alpha_g1, sum_rho % cv.spec.fr.modulus), pvk.beta),
        (G1.neg(acc), pvk.gamma),
        (G1.neg(c), pvk.delta),
    ]
    return cv.pairing.pairing_check(pairs)
