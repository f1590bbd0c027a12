"""Development Groth16 setup (bellperson's layout and convention), over the R1CS's curve.

**Not for production**: one party draws the toxic waste (τ, α, β, γ, δ) and anyone who keeps
it can forge proofs. The waste lives only in local variables of this module's functions, is
never stored, logged or returned, and is dropped when the key is built (Python ints cannot be
overwritten in place; a real deployment uses a multi-party ceremony instead).

    >>> import cuzk
    >>> pk, vk = cuzk.groth16.setup(synth.r1cs)        # doctest: +SKIP
"""

from __future__ import annotations

import secrets

import attrs
import numpy as np

from cuzk import curves
from cuzk.errors import InputError
from cuzk.groth16.keys import Density, ProvingKey, VerifyingKey
from cuzk.groth16.r1cs_to_qap import evaluate_qap_at, powers

__all__ = ["ToxicWaste", "setup", "setup_with_waste", "generator_multiples", "scaled"]


_SECRETS = ("tau", "alpha", "beta", "gamma", "delta")


def _check_secret(name: str, v, r: int) -> None:
    # a zero (or unreduced) secret makes keys that prove anything or nothing
    if isinstance(v, bool) or not isinstance(v, int) or not 0 < v < r:
        raise InputError(f"toxic waste {name} must be an int in [1, r)")


@attrs.frozen(repr=False)
class ToxicWaste:
    """Explicit setup secrets, for deterministic tests only (``repr`` hides them); each in
    [1, r) of ``curve``'s Fr (default BLS12-381). A setup checks them again against its own
    circuit's r."""

    tau: int
    alpha: int
    beta: int
    gamma: int
    delta: int
    curve: str = attrs.field(default=curves.DEFAULT, converter=curves.canonical)

    def __attrs_post_init__(self):
        r = curves.resolve(self.curve).fr.modulus
        for name in _SECRETS:
            _check_secret(name, getattr(self, name), r)

    def __repr__(self) -> str:
        return "ToxicWaste(<hidden>)"

    @classmethod
    def draw(cls, rng=None, *, curve: str | None = None) -> "ToxicWaste":
        """Five uniform non-zero scalars of ``curve``'s Fr from ``secrets`` (or a seeded ``numpy`` Generator)."""
        if rng is not None and not callable(getattr(rng, "bytes", None)):
            raise InputError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")
        curve = curves.canonical(curve)
        r = curves.resolve(curve).fr.modulus

        def one() -> int:
            if rng is None:
                return secrets.randbelow(r - 1) + 1
            # 128 bits beyond r's size make the reduction's bias negligible (48 bytes for 255-bit r)
            return int.from_bytes(rng.bytes(-(-r.bit_length() // 8) + 16), "little") % (r - 1) + 1

        return cls(one(), one(), one(), one(), one(), curve=curve)


def setup(r1cs, rng=None, *, threads=None) -> tuple[ProvingKey, VerifyingKey]:
    """Groth16 keys for ``r1cs`` with fresh toxic waste (development only, see the module note).

    Args:
        r1cs: the circuit (``Synthesizer.r1cs``); the keys are over its curve (``r1cs.curve``).
        rng: optional ``numpy.random.Generator`` for reproducible dev keys; default ``secrets``.
        threads: cores for the fixed-base multiplications (None: all).

    Returns:
        ``(pk, vk)``; ``pk.vk is vk``.
    """
    pk = setup_with_waste(r1cs, ToxicWaste.draw(rng, curve=getattr(r1cs, "curve", None)), threads=threads)
    return pk, pk.vk


def scaled(x: np.ndarray, k: int, *, curve: str | None = None) -> np.ndarray:
    """Every Montgomery Fr row of ``x`` times the int ``k`` (reduced mod r first), in ``curve``'s Fr.

    >>> Fr = curves.get("bn254").Fr
    >>> Fr.to_ints(scaled(Fr.from_ints([1, 2]), 3, curve="bn254"))
    [3, 6]
    """
    fr = curves.get(curves.canonical(curve)).Fr
    return fr.mul(x, np.repeat(fr.from_ints([k % fr.modulus]), x.shape[0], axis=0))


def generator_multiples(group, scalars_mont: np.ndarray, *, threads=None, curve: str | None = None) -> np.ndarray:
    """``s_i·G`` for every Montgomery Fr row ``s_i`` and the generator G of ``group`` ("g1" or
    "g2", or the curve's ``G1``/``G2`` object), over ``curve`` (default BLS12-381).

    Fixed-base tables (:func:`cuzk.kernels.cpu.batch_mul_g1`); zero scalars give the point at
    infinity (all-zero limbs) without entering the kernel, since keys have many of them. Every
    setup (this module's, and the snarkjs-convention one in :mod:`cuzk.formats.snarkjs_setup`)
    turns its scalars into points here.

    Args:
        group: ``"g1"`` or ``"g2"`` (or the curve's ``G1``/``G2``).
        scalars_mont: ``(n, 4)`` uint64 Montgomery Fr.
        threads: cores for the multiplications (None: all).
        curve: a ``cuzk.curves`` name (default BLS12-381).

    Returns:
        ``(n, 2, L)`` (G1) or ``(n, 2, 2, L)`` (G2) affine Montgomery points, L the Fq limbs.

    >>> bn = curves.get("bn254")
    >>> pts = generator_multiples("g1", bn.Fr.from_ints([0, 2]), curve="bn254")
    >>> bool(pts[0].any()), bool(bn.G1.eq(pts[1], bn.G1.mul(bn.G1.generator(), 2)))
    (False, True)
    """
    c = curves.get(curves.canonical(curve))
    is_g1 = group == "g1" or group is c.G1
    if not is_g1 and not (group == "g2" or group is c.G2):
        raise InputError(f"group must be 'g1' or 'g2' (or {c.spec.title}'s G1/G2), got {group!r:.60}")
    g = c.G1 if is_g1 else c.G2
    kernel = c.kernels.batch_mul_g1 if is_g1 else c.kernels.batch_mul_g2
    limbs = c.spec.fq.limbs
    out = np.zeros((scalars_mont.shape[0], 2) + ((limbs,) if is_g1 else (2, limbs)), dtype=np.uint64)
    nz = np.flatnonzero(scalars_mont.any(axis=1))
    if nz.size:
        out[nz] = kernel(g.generator(), c.Fr.from_mont(np.ascontiguousarray(scalars_mont[nz])), threads=threads)
    return out


def setup_with_waste(r1cs, waste: ToxicWaste, *, threads=None) -> ProvingKey:
    """The deterministic core of :func:`setup`: the keys for the given secrets."""
    missing = [k for k in ("n_public", "n_vars", "n_constraints", "a", "b", "c", "digest") if not hasattr(r1cs, k)]
    if missing:
        raise InputError(f"setup needs a cuzk.synth.R1CS (Synthesizer(...).r1cs), got {type(r1cs).__name__}")
    if not isinstance(waste, ToxicWaste):
        raise InputError(f"waste must be a ToxicWaste, got {type(waste).__name__}")
    curve = getattr(r1cs, "curve", curves.DEFAULT)
    Fr = curves.get(curve).Fr  # noqa: N806 (the field's name)
    p = Fr.modulus
    for name in _SECRETS:  # checked against the circuit's r: waste of a larger field may exceed it
        _check_secret(name, getattr(waste, name), p)
    tau, alpha, beta, gamma, delta = waste.tau, waste.alpha, waste.beta, waste.gamma, waste.delta
    u, v, w, m = evaluate_qap_at(r1cs, tau)

    def _g1(scalars_mont, threads):
        return generator_multiples("g1", scalars_mont, threads=threads, curve=curve)

    def _g2(scalars_mont, threads):
        return generator_multiples("g2", scalars_mont, threads=threads, curve=curve)

    def scale(x, k):
        return scaled(x, k, curve=curve)

    n_in = r1cs.n_public + 1
    density = Density.from_r1cs(r1cs)

    # (β·u_i + α·v_i + w_i): /γ for inputs (IC), /δ for aux (L)
    t = Fr.add(Fr.add(scale(u, beta), scale(v, alpha)), w)
    ic = scale(t[:n_in], pow(gamma, -1, p))
    l = scale(t[n_in:], pow(delta, -1, p))

    a = np.concatenate([u[:n_in], u[n_in:][density.a_aux]])
    b = np.concatenate([v[:n_in][density.b_input], v[n_in:][density.b_aux]])

    # H query: τ^i · Z(τ)/δ for i < m − 1, Z(x) = x^m − 1
    h = scale(powers(tau, m - 1, curve=curve), (pow(tau, m, p) - 1) * pow(delta, -1, p) % p)

    g1_consts = _g1(Fr.from_ints([alpha, beta, delta]), threads)
    g2_consts = _g2(Fr.from_ints([beta, gamma, delta]), threads)
    del tau, alpha, beta, gamma, delta, waste
    vk = VerifyingKey(
        alpha_g1=g1_consts[0],
        beta_g1=g1_consts[1],
        delta_g1=g1_consts[2],
        beta_g2=g2_consts[0],
        gamma_g2=g2_consts[1],
        delta_g2=g2_consts[2],
        ic=_g1(ic, threads),
        curve=curve,
    )
    return ProvingKey(
        vk=vk,
        h=_g1(h, threads),
        l=_g1(l, threads),
        a=_g1(a, threads),
        b_g1=_g1(b, threads),
        b_g2=_g2(b, threads),
        density=density,
        convention="bellperson",
        digest=r1cs.digest,
        n_constraints=r1cs.n_constraints,
    )
