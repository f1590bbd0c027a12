"""Reduce an R1CS instance to a Quadratic Arithmetic Program (bellperson's convention).

Like bellperson, the QAP holds the circuit's rows and then one row ``x_i · 0 = 0`` per input
(ONE included), so every public input has a non-zero IC point; the evaluation domain has
``m = next_pow2(rows + inputs)`` points ``ω^j`` with ω derived from the curve's Fr generator
(7 for BLS12-381, 5 for BN254), which is also the coset shift of the H computation.

Every function works over the Fr of ``curve`` (a ``cuzk.curves`` name, default BLS12-381); the
arrays have that field's limbs.

Two uses:

* setup evaluates every column polynomial at τ (:func:`evaluate_qap_at`);
* the prover pads ``A·z, B·z, C·z`` to the domain (:func:`witness_parts`, staged by the backend
  with ``rows=m``; :func:`witness_evaluations` on the host) and computes H (:func:`compute_h`).

    >>> domain_size(n_constraints=5, n_inputs=2)
    8
"""

from __future__ import annotations

import functools

import numpy as np

from cuzk import curves
from cuzk.errors import KeyMismatchError
from cuzk.kernels.staged_rows import stack_rows

__all__ = ["domain_size", "powers", "lagrange_at", "evaluate_qap_at", "witness_parts", "witness_evaluations",
           "compute_h", "coset_shift", "snarkjs_root_generator"]


def _fr(curve):
    return curves.resolve(curves.canonical(curve)).fr


def coset_shift(curve: str | None = None) -> int:
    """bellperson's coset generator for the H computation: the multiplicative generator of Fr.

    >>> coset_shift(), coset_shift("bn254")
    (7, 5)
    """
    return _fr(curve).generator


@functools.cache
def snarkjs_root_generator(curve: str | None = None) -> int:
    """snarkjs's root generator: the smallest quadratic non-residue of Fr (ffjavascript's ``nqr``).

    >>> snarkjs_root_generator("bls12_381"), snarkjs_root_generator("bn254")
    (5, 5)
    """
    f = _fr(curve)
    g = 2
    while pow(g, (f.modulus - 1) // 2, f.modulus) != f.modulus - 1:
        g += 1
    return g


def powers(x: int, n: int, scale: int = 1, *, curve: str | None = None) -> np.ndarray:
    """``[scale·x^0, ..., scale·x^(n-1)]`` as (n, L) Montgomery rows of the curve's Fr.

    >>> curves.get("bn254").Fr.to_ints(powers(3, 4, scale=2, curve="bn254"))
    [2, 6, 18, 54]
    """
    return curves.get(curves.canonical(curve)).kernels.powers(x, n, scale)


def domain_size(n_constraints: int, n_inputs: int, *, curve: str | None = None) -> int:
    """Smallest power of two holding the rows plus one row per input (ONE included)."""
    rows = n_constraints + n_inputs
    m = 1
    while m < rows:
        m <<= 1
    adicity = _fr(curve).two_adicity
    if m.bit_length() - 1 > adicity:
        raise KeyMismatchError(f"{rows} QAP rows need a domain of 2^{m.bit_length() - 1} > 2^{adicity}")
    return m


def lagrange_at(tau: int, m: int, root_generator: int | None = None, *, curve: str | None = None) -> np.ndarray:
    """``L_j(τ) = ω^j (τ^m − 1) / (m (τ − ω^j))`` for j < m, as (m, L) Montgomery; ω from
    ``root_generator`` (default: the curve's Fr generator, bellperson's convention).

    Raises:
        KeyMismatchError: τ lies in the domain (τ^m = 1), which would break the setup.
    """
    bundle = curves.get(curves.canonical(curve))
    fr, field = bundle.spec.fr, bundle.Fr
    p = fr.modulus
    if pow(tau, m, p) == 1:
        raise KeyMismatchError("tau lies in the evaluation domain; draw another")
    omega = fr.root_of_unity_for(m.bit_length() - 1, fr.generator if root_generator is None else root_generator)
    om_j = bundle.kernels.powers(omega, m)
    den = field.sub(np.repeat(field.from_ints([tau]), m, axis=0), om_j)  # τ − ω^j
    scale = (pow(tau, m, p) - 1) * pow(m, -1, p) % p
    return field.mul(field.mul(om_j, field.batch_inverse(den)), np.repeat(field.from_ints([scale]), m, axis=0))


def evaluate_qap_at(r1cs, tau: int, *, m: int | None = None,
                    root_generator: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """u_i(τ), v_i(τ), w_i(τ) for every variable, plus the domain size m, over ``r1cs.curve``.

    ``m`` and ``root_generator`` default to bellperson's domain; the snarkjs setup passes its
    own (a larger m, generator 5) — the per-input rows are the same in both conventions.

    Returns:
        ``(u, v, w, m)``: three (n_vars, L) Montgomery arrays and m.
    """
    curve = getattr(r1cs, "curve", curves.DEFAULT)
    bundle = curves.get(curve)
    n_inputs = r1cs.n_public + 1
    m = domain_size(r1cs.n_constraints, n_inputs, curve=curve) if m is None else m
    lag = lagrange_at(tau, m, root_generator, curve=curve)
    kern = bundle.module("synth_kernels")
    cols = []
    for mat in (r1cs.a, r1cs.b, r1cs.c):
        out = np.zeros((r1cs.n_vars, bundle.spec.fr.limbs), dtype=np.uint64)
        kern.columns_at(mat.indptr, mat.indices, mat.data, lag, out)
        cols.append(out)
    u = cols[0]
    # the per-input rows x_i · 0 = 0 put input i into A at row n_constraints + i
    rows = slice(r1cs.n_constraints, r1cs.n_constraints + n_inputs)
    u[:n_inputs] = bundle.Fr.add(u[:n_inputs], lag[rows])
    return cols[0], cols[1], cols[2], m


def witness_parts(synthesized, n_inputs: int, m: int) -> tuple[tuple, tuple, tuple]:
    """A·z, B·z, C·z over the domain as parts for a backend's ``stage(..., rows=m)``: A's rows
    then the input rows (z's first ``n_inputs``), B's rows, C's rows; zero padding to ``m``
    left to the backend (on CUDA a memset on the device, no domain-sized host array).

    Raises:
        KeyMismatchError: the rows and inputs do not fit the key's domain of ``m``.
    """
    n_c = synthesized.a.shape[0]
    if n_c + n_inputs > m:
        raise KeyMismatchError(f"{n_c} rows + {n_inputs} inputs do not fit the key's domain of {m}")
    return (synthesized.a, synthesized.z[:n_inputs]), (synthesized.b,), (synthesized.c,)


def witness_evaluations(synthesized, n_inputs: int, m: int,
                        threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A·z, B·z, C·z over the whole domain, on the host: the circuit's rows, the input rows,
    zero padding (:func:`witness_parts` stacked)."""
    a, b, c = (stack_rows(list(p), m, threads) for p in witness_parts(synthesized, n_inputs, m))
    return a, b, c


def compute_h(a, b, c, backend, *, threads=None, convention="bellperson", curve: str | None = None) -> np.ndarray:
    """Coefficients of h = (A·B − C)/Z, the first m − 1 of them (bellperson's H query length).

    a, b, c are the evaluations over the domain; ``backend`` holds the curve's kernels
    (``cuzk.kernels.cpu``, ``cuzk.kernels.cuda`` or ``cuzk.curves.get(curve).kernels``). Steps:
    iNTT → coset NTT (shift g, the Fr generator) → (a·b − c)/Z(g·ω^i), where Z = x^m − 1 is the
    constant g^m − 1 on the coset → coset iNTT. ω comes from g too.

    ``convention="snarkjs"``: the m evaluations of a·b − c on the odd coset ω_2m·⟨ω_m⟩ (ω from
    the smallest non-residue, 5), neither divided by Z nor interpolated: snarkjs's H query (the
    odd-index Lagrange basis of the 2m domain, /δ) is built so that Σ p_i·H_i = h(τ)·Z(τ)/δ.
    """
    if convention == "snarkjs":
        return _odd_coset_evaluations(a, b, c, backend, threads, curve)
    m = a.shape[0]
    fr = _fr(curve)
    p, g = fr.modulus, fr.generator
    z_inv = pow(pow(g, m, p) - 1, -1, p)
    on_coset = []
    for v in (a, b, c):
        coeffs = backend.ntt(v, inverse=True, root_generator=g, threads=threads)
        on_coset.append(backend.ntt(coeffs, shift=g, root_generator=g, threads=threads))
    h = backend.h_pointwise(*on_coset, z_inv)
    h = backend.ntt(h, inverse=True, shift=g, root_generator=g, threads=threads)
    return h[: m - 1]


def _odd_coset_evaluations(a, b, c, backend, threads, curve) -> np.ndarray:
    m = a.shape[0]
    fr = _fr(curve)
    log_2m = m.bit_length()  # m is a power of two: log2(2m)
    if log_2m > fr.two_adicity:
        raise KeyMismatchError(f"a snarkjs domain of {m} has no odd coset inside 2^{fr.two_adicity}")
    gen = snarkjs_root_generator(curve)
    shift = fr.root_of_unity_for(log_2m, gen)  # ω_2m: its odd powers are the odd coset
    on_coset = []
    for v in (a, b, c):
        coeffs = backend.ntt(v, inverse=True, root_generator=gen, threads=threads)
        on_coset.append(backend.ntt(coeffs, shift=shift, root_generator=gen, threads=threads))
    return backend.h_pointwise(*on_coset, 1)
