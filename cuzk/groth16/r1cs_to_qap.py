"""Reduce an R1CS instance to a Quadratic Arithmetic Program (bellperson's convention).

Like bellperson, the QAP holds the circuit's rows and then one row ``x_i · 0 = 0`` per input
(ONE included), so every public input has a non-zero IC point; the evaluation domain has
``m = next_pow2(rows + inputs)`` points ``ω^j`` with ω derived from the generator 7.

Two uses:

* setup evaluates every column polynomial at τ (:func:`evaluate_qap_at`);
* the prover pads ``A·z, B·z, C·z`` to the domain (:func:`witness_evaluations`) and
  computes H (:func:`compute_h`).

    >>> domain_size(n_constraints=5, n_inputs=2)
    8
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cuzk.field import FR, Fr, fr
from cuzk.errors import KeyMismatchError
from cuzk.kernels.ntt_cpu import powers

__all__ = ["domain_size", "powers", "lagrange_at", "evaluate_qap_at", "witness_evaluations", "compute_h", "COSET_SHIFT", "SNARKJS_ROOT_GENERATOR"]

#: bellperson's coset generator for the H computation (the multiplicative generator of Fr)
COSET_SHIFT = 7


def domain_size(n_constraints: int, n_inputs: int) -> int:
    """Smallest power of two holding the rows plus one row per input (ONE included)."""
    rows = n_constraints + n_inputs
    m = 1
    while m < rows:
        m <<= 1
    if m.bit_length() - 1 > FR.two_adicity:
        raise KeyMismatchError(f"{rows} QAP rows need a domain of 2^{m.bit_length() - 1} > 2^{FR.two_adicity}")
    return m


@njit(cache=True, nogil=True)
def _lagrange_finish(powers, inv_den, scale, out):
    s = fr.load(scale, 0)
    for j in range(out.shape[0]):
        fr.store(out, j, fr.mul(fr.mul(fr.load(powers, j), fr.load(inv_den, j)), s))


def lagrange_at(tau: int, m: int, root_generator: int = 7) -> np.ndarray:
    """``L_j(τ) = ω^j (τ^m − 1) / (m (τ − ω^j))`` for j < m, as (m, 4) Montgomery.

    Raises:
        KeyMismatchError: τ lies in the domain (τ^m = 1), which would break the setup.
    """
    p = FR.modulus
    if pow(tau, m, p) == 1:
        raise KeyMismatchError("tau lies in the evaluation domain; draw another")
    omega = FR.root_of_unity_for(m.bit_length() - 1, root_generator)
    om_j = powers(omega, m)
    den = Fr.sub(np.repeat(Fr.from_ints([tau]), m, axis=0), om_j)  # τ − ω^j
    scale = (pow(tau, m, p) - 1) * pow(m, -1, p) % p
    out = np.empty_like(om_j)
    _lagrange_finish(om_j, Fr.batch_inverse(den), Fr.from_ints([scale]), out)
    return out


@njit(cache=True, nogil=True)
def _columns_at(indptr, indices, data, lag, out):
    # out[col] += coeff · L_row(τ): the transposed sparse mat-vec Aᵀ·L
    for row in range(indptr.shape[0] - 1):
        lr = fr.load(lag, row)
        for k in range(indptr[row], indptr[row + 1]):
            col = indices[k]
            fr.store(out, col, fr.add(fr.load(out, col), fr.mul(fr.load(data, k), lr)))


def evaluate_qap_at(r1cs, tau: int, *, m: int | None = None,
                    root_generator: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """u_i(τ), v_i(τ), w_i(τ) for every variable, plus the domain size m.

    ``m`` and ``root_generator`` default to bellperson's domain; the snarkjs setup passes its
    own (a larger m, generator 5) — the per-input rows are the same in both conventions.

    Returns:
        ``(u, v, w, m)``: three (n_vars, 4) Montgomery arrays and m.
    """
    n_inputs = r1cs.n_public + 1
    m = domain_size(r1cs.n_constraints, n_inputs) if m is None else m
    lag = lagrange_at(tau, m, root_generator)
    cols = []
    for mat in (r1cs.a, r1cs.b, r1cs.c):
        out = np.zeros((r1cs.n_vars, 4), dtype=np.uint64)
        _columns_at(mat.indptr, mat.indices, mat.data, lag, out)
        cols.append(out)
    u = cols[0]
    # the per-input rows x_i · 0 = 0 put input i into A at row n_constraints + i
    rows = slice(r1cs.n_constraints, r1cs.n_constraints + n_inputs)
    u[:n_inputs] = Fr.add(u[:n_inputs], lag[rows])
    return cols[0], cols[1], cols[2], m


def witness_evaluations(synthesized, n_inputs: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A·z, B·z, C·z over the whole domain: the circuit's rows, the input rows, zero padding."""
    n_c = synthesized.a.shape[0]
    if n_c + n_inputs > m:
        raise KeyMismatchError(f"{n_c} rows + {n_inputs} inputs do not fit the key's domain of {m}")
    a = np.zeros((m, 4), dtype=np.uint64)
    b = np.zeros((m, 4), dtype=np.uint64)
    c = np.zeros((m, 4), dtype=np.uint64)
    a[:n_c] = synthesized.a
    b[:n_c] = synthesized.b
    c[:n_c] = synthesized.c
    a[n_c : n_c + n_inputs] = synthesized.z[:n_inputs]
    return a, b, c


def compute_h(a, b, c, backend, *, threads=None, convention="bellperson") -> np.ndarray:
    """Coefficients of h = (A·B − C)/Z, the first m − 1 of them (bellperson's H query length).

    a, b, c are the evaluations over the domain; ``backend`` is ``cuzk.kernels.cpu`` or
    ``cuzk.kernels.cuda``. Steps: iNTT → coset NTT (shift 7) → (a·b − c)/Z(shift·ω^i), where
    Z = x^m − 1 is the constant 7^m − 1 on the coset → coset iNTT.

    ``convention="snarkjs"``: the m evaluations of a·b − c on the odd coset ω_2m·⟨ω_m⟩ (ω from
    the generator 5), neither divided by Z nor interpolated: snarkjs's H query (the odd-index
    Lagrange basis of the 2m domain, /δ) is built so that Σ p_i·H_i = h(τ)·Z(τ)/δ.
    """
    if convention == "snarkjs":
        return _odd_coset_evaluations(a, b, c, backend, threads)
    m = a.shape[0]
    p = FR.modulus
    z_inv = pow(pow(COSET_SHIFT, m, p) - 1, -1, p)
    on_coset = []
    for v in (a, b, c):
        coeffs = backend.ntt(v, inverse=True, threads=threads)
        on_coset.append(backend.ntt(coeffs, shift=COSET_SHIFT, threads=threads))
    h = backend.h_pointwise(*on_coset, z_inv)
    h = backend.ntt(h, inverse=True, shift=COSET_SHIFT, threads=threads)
    return h[: m - 1]


#: snarkjs's root generator for BLS12-381 Fr (its smallest quadratic non-residue)
SNARKJS_ROOT_GENERATOR = 5


def _odd_coset_evaluations(a, b, c, backend, threads) -> np.ndarray:
    m = a.shape[0]
    log_2m = m.bit_length()  # m is a power of two: log2(2m)
    if log_2m > FR.two_adicity:
        raise KeyMismatchError(f"a snarkjs domain of {m} has no odd coset inside 2^{FR.two_adicity}")
    shift = FR.root_of_unity_for(log_2m, SNARKJS_ROOT_GENERATOR)  # ω_2m: its odd powers are the odd coset
    on_coset = []
    for v in (a, b, c):
        coeffs = backend.ntt(v, inverse=True, root_generator=SNARKJS_ROOT_GENERATOR, threads=threads)
        on_coset.append(backend.ntt(coeffs, shift=shift, root_generator=SNARKJS_ROOT_GENERATOR, threads=threads))
    return backend.h_pointwise(*on_coset, 1)
