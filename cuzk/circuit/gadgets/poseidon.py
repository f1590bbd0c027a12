"""Poseidon (x^5, widths 3 and 9) as a circuit gadget; agrees with the native hash.

Constants and conventions are those of :mod:`cuzk.circuit.gadgets.poseidon_params`. Each S-box
costs three constraints (x^2, x^4, x^5); round constants and MDS layers are linear, and the
lanes that skip the S-box in partial rounds become variables only when they grow past
``MAX_TERMS`` terms. Width 3 costs about 250 constraints.

    >>> from cuzk.circuit import ConstraintSystem
    >>> from cuzk.circuit.gadgets.poseidon_params import poseidon_hash
    >>> cs = ConstraintSystem()
    >>> h = poseidon(cs, [cs.private(1), cs.private(2)])
    >>> 240 < cs.n_constraints < 280
    True
"""

from __future__ import annotations

from cuzk.circuit.gadgets.operands import sequence
from cuzk.circuit.gadgets.poseidon_params import poseidon_params
from cuzk.circuit.lc import lincomb
from cuzk.errors import CircuitError

__all__ = ["poseidon_permutation_gadget", "poseidon"]


def _sbox(x):
    x2 = x * x
    x4 = x2 * x2
    return x4 * x


def poseidon_permutation_gadget(cs, state) -> list:
    """The Poseidon permutation of ``state`` (t = 3 or 9 combinations or ints) in-circuit."""
    t = len(state)
    p = poseidon_params(t)
    s = [cs._lc(x) for x in state]
    half = p.r_f // 2
    k = 0
    for rnd in range(p.r_f + p.r_p):
        s = [x + p.round_constants[k + i] for i, x in enumerate(s)]
        k += t
        if rnd < half or rnd >= half + p.r_p:
            s = [_sbox(x) for x in s]
        else:
            s[0] = _sbox(s[0])
        s = [lincomb(zip(row, s)) for row in p.mds]
    return s


def poseidon(cs, inputs, name: str | None = None):
    """Hash 2 or 8 inputs (lane 0 of the permutation of ``[0, *inputs]``), as the native
    :func:`~cuzk.circuit.gadgets.poseidon_params.poseidon_hash`.
    """
    inputs = sequence(inputs, "poseidon inputs")
    if len(inputs) not in (2, 8):
        raise CircuitError(f"poseidon takes 2 or 8 inputs, got {len(inputs)}")
    with cs.namespace(name or "poseidon"):
        return poseidon_permutation_gadget(cs, [0, *inputs])[0]
