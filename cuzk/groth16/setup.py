"""Development Groth16 setup (bellperson's layout and convention).

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

from cuzk.curve import G1, G2
from cuzk.errors import InputError
from cuzk.field import FR, Fr
from cuzk.groth16.keys import Density, ProvingKey, VerifyingKey
from cuzk.groth16.r1cs_to_qap import evaluate_qap_at, powers
from cuzk.kernels import cpu

__all__ = ["ToxicWaste", "setup", "setup_with_waste", "generator_multiples", "scaled"]


def _check_secret(name: str, v) -> None:
    # a zero (or unreduced) secret makes keys that prove anything or nothing
    if isinstance(v, bool) or not isinstance(v, int) or not 0 < v < FR.modulus:
        raise InputError(f"toxic waste {name} must be an int in [1, r)")


@attrs.frozen(repr=False)
class ToxicWaste:
    """Explicit setup secrets, for deterministic tests only (``repr`` hides them)."""

    tau: int = attrs.field(validator=lambda self, a, v: _check_secret(a.name, v))
    alpha: int = attrs.field(validator=lambda self, a, v: _check_secret(a.name, v))
    beta: int = attrs.field(validator=lambda self, a, v: _check_secret(a.name, v))
    gamma: int = attrs.field(validator=lambda self, a, v: _check_secret(a.name, v))
    delta: int = attrs.field(validator=lambda self, a, v: _check_secret(a.name, v))

    def __repr__(self) -> str:
        return "ToxicWaste(<hidden>)"

    @classmethod
    def draw(cls, rng=None) -> "ToxicWaste":
        """Five uniform non-zero scalars from ``secrets`` (or a seeded ``numpy`` Generator)."""
        if rng is not None and not callable(getattr(rng, "bytes", None)):
            raise InputError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")

        def one() -> int:
            if rng is None:
                return secrets.randbelow(FR.modulus - 1) + 1
            return int.from_bytes(rng.bytes(48), "little") % (FR.modulus - 1) + 1

        return cls(one(), one(), one(), one(), one())


def setup(r1cs, rng=None, *, threads=None) -> tuple[ProvingKey, VerifyingKey]:
    """Groth16 keys for ``r1cs`` with fresh toxic waste (development only, see the module note).

    Args:
        r1cs: the circuit (``Synthesizer.r1cs``).
        rng: optional ``numpy.random.Generator`` for reproducible dev keys; default ``secrets``.
        threads: cores for the fixed-base multiplications (None: all).

    Returns:
        ``(pk, vk)``; ``pk.vk is vk``.
    """
    pk = setup_with_waste(r1cs, ToxicWaste.draw(rng), threads=threads)
    return pk, pk.vk


def scaled(x: np.ndarray, k: int) -> np.ndarray:
    """Every Montgomery Fr row of ``x`` times the int ``k`` (reduced mod r first).

    >>> Fr.to_ints(scaled(Fr.from_ints([1, 2]), 3))
    [3, 6]
    """
    return Fr.mul(x, np.repeat(Fr.from_ints([k % FR.modulus]), x.shape[0], axis=0))


def generator_multiples(group, scalars_mont: np.ndarray, *, threads=None) -> np.ndarray:
    """``s_i·G`` for every Montgomery Fr row ``s_i`` and the generator G of ``group`` (G1 or G2).

    Fixed-base tables (:func:`cuzk.kernels.cpu.batch_mul_g1`); zero scalars give the point at
    infinity (all-zero limbs) without entering the kernel, since keys have many of them. Every
    setup (this module's, and the snarkjs-convention one in :mod:`cuzk.formats.snarkjs_setup`)
    turns its scalars into points here.

    Args:
        group: :data:`cuzk.curve.G1` or :data:`cuzk.curve.G2`.
        scalars_mont: ``(n, 4)`` uint64 Montgomery Fr.
        threads: cores for the multiplications (None: all).

    Returns:
        ``(n, 2, 6)`` (G1) or ``(n, 2, 2, 6)`` (G2) affine Montgomery points.

    >>> pts = generator_multiples(G1, Fr.from_ints([0, 2]))
    >>> bool(pts[0].any()), bool(G1.eq(pts[1], G1.mul(G1.generator(), 2)))
    (False, True)
    """
    kernel = cpu.batch_mul_g1 if group is G1 else cpu.batch_mul_g2
    out = np.zeros((scalars_mont.shape[0], 2) + ((6,) if group is G1 else (2, 6)), dtype=np.uint64)
    nz = np.flatnonzero(scalars_mont.any(axis=1))
    if nz.size:
        out[nz] = kernel(group.generator(), Fr.from_mont(np.ascontiguousarray(scalars_mont[nz])), threads=threads)
    return out


def _g1(scalars_mont: np.ndarray, threads) -> np.ndarray:
    return generator_multiples(G1, scalars_mont, threads=threads)


def _g2(scalars_mont: np.ndarray, threads) -> np.ndarray:
    return generator_multiples(G2, scalars_mont, threads=threads)


def setup_with_waste(r1cs, waste: ToxicWaste, *, threads=None) -> ProvingKey:
    """The deterministic core of :func:`setup`: the keys for the given secrets."""
    missing = [k for k in ("n_public", "n_vars", "n_constraints", "a", "b", "c", "digest") if not hasattr(r1cs, k)]
    if missing:
        raise InputError(f"setup needs a cuzk.synth.R1CS (Synthesizer(...).r1cs), got {type(r1cs).__name__}")
    if not isinstance(waste, ToxicWaste):
        raise InputError(f"waste must be a ToxicWaste, got {type(waste).__name__}")
    p = FR.modulus
    tau, alpha, beta, gamma, delta = waste.tau, waste.alpha, waste.beta, waste.gamma, waste.delta
    u, v, w, m = evaluate_qap_at(r1cs, tau)
    n_in = r1cs.n_public + 1
    density = Density.from_r1cs(r1cs)

    # (β·u_i + α·v_i + w_i): /γ for inputs (IC), /δ for aux (L)
    t = Fr.add(Fr.add(scaled(u, beta), scaled(v, alpha)), w)
    ic = scaled(t[:n_in], pow(gamma, -1, p))
    l = scaled(t[n_in:], pow(delta, -1, p))

    a = np.concatenate([u[:n_in], u[n_in:][density.a_aux]])
    b = np.concatenate([v[:n_in][density.b_input], v[n_in:][density.b_aux]])

    # H query: τ^i · Z(τ)/δ for i < m − 1, Z(x) = x^m − 1
    h = scaled(powers(tau, m - 1), (pow(tau, m, p) - 1) * pow(delta, -1, p) % p)

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
