"""Development Groth16 setup in snarkjs's convention: a key ``snarkjs groth16 prove`` can use.

The math is what ``snarkjs groth16 setup`` (``zkey new``) followed by contributions produces,
computed directly from one party's toxic waste instead of a powers-of-tau ceremony (which takes
many minutes per power on a small machine):

* domain m = 2^(⌊log2(n_constraints + n_public)⌋ + 1), roots ω = 5^((r−1)/2^32) (natural order);
* u, v, w = Aᵀ·L(τ), Bᵀ·L(τ), Cᵀ·L(τ) over *all* wires, plus the extra A row
  ``n_constraints + s`` (coefficient 1) for every input s = 0..n_public;
* A = u·G1, B1 = v·G1, B2 = v·G2 (all n_vars wires; zero → point at infinity);
* IC = (β·u + α·v + w)/γ over the inputs, C = (β·u + α·v + w)/δ over the private wires;
* H_i = L^{2m}_{2i+1}(τ)/δ: the odd-index Lagrange basis of the size-2m domain (the prover
  evaluates a·b − c on the odd coset and does not divide by Z).

The QAP evaluation and the fixed-base multiplications are :mod:`cuzk.groth16`'s
(:func:`~cuzk.groth16.r1cs_to_qap.evaluate_qap_at`, :func:`~cuzk.groth16.setup.generator_multiples`);
this module only picks snarkjs's domain, generator and H basis and builds the ``.zkey``-shaped key.

**Not for production** (see :mod:`cuzk.groth16.setup`): whoever keeps the waste can forge proofs.
The waste lives only in local variables and is dropped once the points are computed.

    >>> pk = setup_snarkjs(read_r1cs("chain.r1cs"))            # doctest: +SKIP
    >>> write_zkey(pk, "chain.zkey")      # then snarkjs groth16 prove  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np

from cuzk import curves
from cuzk.errors import InputError
from cuzk.formats.snarkjs import SnarkjsProvingKey
from cuzk.groth16.keys import Density, VerifyingKey
from cuzk.groth16.r1cs_to_qap import evaluate_qap_at, lagrange_at, snarkjs_root_generator
from cuzk.groth16.setup import ToxicWaste, generator_multiples, scaled

__all__ = ["setup_snarkjs", "snarkjs_domain_size"]


def snarkjs_domain_size(n_constraints: int, n_public: int) -> int:
    """snarkjs's domain: 2^(⌊log2(n_constraints + n_public)⌋ + 1) (``zkey_new.js``'s cirPower).

    >>> snarkjs_domain_size(4000, 2), snarkjs_domain_size(6, 2)
    (4096, 16)
    """
    return 2 ** (n_constraints + n_public).bit_length()


def setup_snarkjs(r1cs, rng=None, *, waste: ToxicWaste | None = None, threads=None) -> SnarkjsProvingKey:
    """A snarkjs-convention proving key for ``r1cs`` from fresh toxic waste (development only).

    Args:
        r1cs: the circuit, e.g. :func:`cuzk.formats.snarkjs.read_r1cs` of circom's ``.r1cs``
            (wires in circom order: ONE, outputs, public inputs, private...); the key is over
            its curve (bn128 for circom's default prime).
        rng: optional ``numpy.random.Generator`` for a reproducible key; default ``secrets``.
        waste: explicit secrets (tests only); overrides ``rng``.
        threads: cores for the fixed-base multiplications (None: all).

    Returns:
        a :class:`SnarkjsProvingKey` (``convention="snarkjs"``, the ``.r1cs`` attached, digest =
        the R1CS digest) that cuzk proves with and :func:`cuzk.formats.snarkjs_write.write_zkey`
        turns into a ``.zkey`` for ``snarkjs groth16 prove``.

    Raises:
        InputError: the circuit has no constraints, or its domain exceeds its Fr's 2-adicity.

    >>> pk = setup_snarkjs(read_r1cs("chain.r1cs"), np.random.default_rng(1))   # doctest: +SKIP
    >>> pk.convention, pk.domain_size                                             # doctest: +SKIP
    ('snarkjs', 1024)
    """
    n_in, n_c = r1cs.n_public + 1, r1cs.n_constraints
    if n_c < 1:
        raise InputError("setup_snarkjs: the circuit has no constraints")
    m = snarkjs_domain_size(n_c, r1cs.n_public)
    curve = getattr(r1cs, "curve", curves.DEFAULT)
    spec = curves.resolve(curve)
    Fr = curves.get(curve).Fr  # noqa: N806 (the field's name)
    if m.bit_length() - 1 >= spec.fr.two_adicity:  # the odd coset needs the 2m-th roots too
        raise InputError(f"setup_snarkjs: domain 2^{m.bit_length() - 1} is too large for {spec.title} Fr")
    waste = waste if waste is not None else ToxicWaste.draw(rng, curve=curve)
    p = Fr.modulus
    tau, alpha, beta, gamma, delta = waste.tau, waste.alpha, waste.beta, waste.gamma, waste.delta
    if not all(0 < x < p for x in (tau, alpha, beta, gamma, delta)):
        raise InputError(f"toxic waste must lie in [1, r) of {spec.title} Fr")
    gen = snarkjs_root_generator(curve)
    # includes the per-input A rows n_c + s, as in bellperson's QAP
    u, v, w, _ = evaluate_qap_at(r1cs, tau, m=m, root_generator=gen)

    def scale(x, k):
        return scaled(x, k, curve=curve)

    t = Fr.add(Fr.add(scale(u, beta), scale(v, alpha)), w)
    ic = scale(t[:n_in], pow(gamma, -1, p))
    l = scale(t[n_in:], pow(delta, -1, p))
    # odd-index Lagrange basis of the 2m domain (generator 5, so ω_2m² = ω_m as snarkjs uses)
    h = scale(lagrange_at(tau, 2 * m, root_generator=gen, curve=curve)[1::2], pow(delta, -1, p))
    consts = Fr.from_ints([alpha, beta, delta])
    consts2 = Fr.from_ints([beta, gamma, delta])
    del tau, alpha, beta, gamma, delta, waste

    def g1(x):
        return generator_multiples("g1", x, threads=threads, curve=curve)

    def g2(x):
        return generator_multiples("g2", x, threads=threads, curve=curve)

    g1c, g2c = g1(consts), g2(consts2)
    vk = VerifyingKey(alpha_g1=g1c[0], beta_g1=g1c[1], delta_g1=g1c[2], beta_g2=g2c[0], gamma_g2=g2c[1],
                      delta_g2=g2c[2], ic=g1(ic), curve=curve)
    # density as read_zkey derives it from the points: a wire keeps a base where its scalar ≠ 0
    nz_a, nz_b = u.any(axis=1), v.any(axis=1)
    density = Density(a_aux=nz_a[n_in:], b_input=nz_b[:n_in], b_aux=nz_b[n_in:])
    keep_a = np.concatenate([np.ones(n_in, bool), nz_a[n_in:]])
    return SnarkjsProvingKey(
        vk=vk, h=g1(h), l=g1(l), a=g1(u[keep_a]), b_g1=g1(v[nz_b]), b_g2=g2(v[nz_b]),
        density=density, convention="snarkjs", digest=r1cs.digest, n_constraints=n_c, matrix_a=r1cs.a,
        matrix_b=r1cs.b, r1cs=r1cs,
    )
