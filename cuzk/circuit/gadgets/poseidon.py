"""Poseidon as a circuit gadget, for any :class:`~cuzk.circuit.gadgets.poseidon_spec.PoseidonSpec`.

Two constraint layouts (the spec's ``layout`` picks one; both agree with the native hash):

``compact`` (the ``cuzk`` and ``circomlib`` variants)
    each S-box costs three constraints (x^2, x^4, x^5) on its input combination; lanes that
    skip the S-box in partial rounds become variables only when they grow past ``MAX_TERMS``
    terms. Width 3 costs about 250 constraints.
``allocated`` (``neptune``)
    every S-box input that is not already a variable is first allocated (one row ``lc * 1 = v``),
    S-boxes of constants are folded, and the output element is allocated: neptune's circuit
    layout, so a hash of ``a`` allocated inputs costs ``3a + 4(R_F - 1)t + 4 R_P + 1``
    constraints (311, 505, 598 for arities 2, 8, 11), as rust-fil-proofs counts them.

    >>> from cuzk.circuit import ConstraintSystem
    >>> from cuzk.circuit.gadgets.poseidon_spec import poseidon_spec
    >>> cs = ConstraintSystem()
    >>> h = poseidon(cs, [cs.private(1), cs.private(2)])
    >>> 240 < cs.n_constraints < 280
    True
    >>> cs = ConstraintSystem()
    >>> h = poseidon_gadget(cs, poseidon_spec("neptune", 3), [cs.private(0), cs.private(1)])
    >>> cs.n_constraints
    311
"""

from __future__ import annotations

import functools

import numpy as np

from cuzk import curves
from cuzk.circuit.gadgets.operands import sequence
from cuzk.circuit.gadgets.poseidon_spec import ALPHA, poseidon_spec
from cuzk.circuit.lc import LinearCombination, Variable, _int_or_none, lincomb
from cuzk.errors import CircuitError

__all__ = ["poseidon_permutation_gadget", "poseidon", "poseidon_gadget"]


def _sbox(x):
    x2 = x * x
    x4 = x2 * x2
    return x4 * x


def _check_curve(cs, spec) -> None:
    curve = getattr(cs, "curve", None) or curves.DEFAULT  # a constraint system without a curve is the default's
    if curve != spec.curve:
        raise CircuitError(
            f"the {spec.variant} Poseidon works over {spec.curve}'s Fr but the constraint system is over {curve}'s"
        )


def _compact(cs, spec, state) -> list:
    t = spec.t
    s = [cs._lc(x) for x in state]
    half, k = spec.r_f // 2, 0
    for rnd in range(spec.r_f + spec.r_p):
        s = [x + spec.round_constants[k + i] for i, x in enumerate(s)]
        k += t
        if rnd < half or rnd >= half + spec.r_p:
            s = [_sbox(x) for x in s]
        else:
            s[0] = _sbox(s[0])
        s = [lincomb(zip(row, s)) for row in spec.mds]
    return s


def _is_variable(x) -> bool:
    return isinstance(x, Variable) and x.index != 0


def _allocated(cs, spec, state, output: int):
    """neptune's layout (see the module docstring); returns the allocated output element."""
    t, r, rc = spec.t, spec.modulus, spec.round_constants
    half = spec.r_f // 2
    u = []
    for i, x in enumerate(state):  # first full round: constants fold, variables skip allocation
        c = _int_or_none(x)
        if c is not None:
            u.append(pow((c + rc[i]) % r, ALPHA, r))
            continue
        x = cs._lc(x)
        v = x if _is_variable(x) else cs.private(x, name=f"input {i}")
        u.append(_sbox(v + rc[i]))
    lanes = _mix(cs, spec.mds, u)
    for rnd in range(1, half):
        u = _full_round(cs, lanes, rc[rnd * t:(rnd + 1) * t], rnd)
        lanes = _mix(cs, spec.mds, u)
    # partial rounds: every S-box input, and the state after them, are fixed affine maps of the
    # last full round's outputs u and the partial S-box outputs so far (partial_maps), so each
    # row is built directly in O(t + k) instead of re-mixing growing combinations every round
    inputs, final = partial_maps(spec)
    basis = [v.index for v in u]
    for k, row in enumerate(inputs):
        v = cs.private(_affine(cs, basis, row), name=f"round {half + k} s-box 0")
        basis.append(_sbox(v).index)
    lanes = [_affine(cs, basis, row) for row in final]
    for rnd in range(half + spec.r_p, spec.r_f + spec.r_p):
        u = _full_round(cs, lanes, rc[rnd * t:(rnd + 1) * t], rnd)
        lanes = _mix(cs, spec.mds, u)
    return cs.private(lanes[output], name="output")


def _full_round(cs, lanes, constants, rnd) -> list:
    out = []
    for i, (x, c) in enumerate(zip(lanes, constants)):
        x = lincomb(((1, x), (c, cs.one)), materialize=False)
        out.append(_sbox(cs.private(x, name=f"round {rnd} s-box {i}")))
    return out


def _affine(cs, basis, row) -> LinearCombination:
    """``sum row[i] * var(basis[i]) + row[-1]`` (row: canonical ints, the constant last)."""
    terms = {k: c for k, c in zip(basis, row) if c}
    if row[-1]:
        terms[0] = row[-1]
    return LinearCombination(cs, terms)


@functools.cache
def partial_maps(spec) -> tuple:
    """The partial rounds of ``spec`` as affine maps over the basis ``[u_0..u_{t-1}, s_0..s_{R_P-1}]``
    (u: the last initial full round's S-box outputs, s_k: partial round k's S-box output).

    Returns ``(inputs, final)``: ``inputs[k]`` is the S-box input of partial round k (round
    constant included) as ``t + k`` coefficients then the constant; ``final[j]`` is lane j after
    the last partial round's MDS, ``t + R_P`` coefficients then the constant.
    """
    t, r, m = spec.t, spec.modulus, spec.mds
    n = t + spec.r_p + 1  # basis plus the constant, last
    mds = np.array(m, dtype=object)
    lanes = np.zeros((t, n), dtype=object)
    lanes[:, :t] = mds  # X = M · u
    half, inputs = spec.r_f // 2, []
    for k in range(spec.r_p):
        rc = spec.round_constants[(half + k) * t:(half + k + 1) * t]
        lanes[:, -1] = (lanes[:, -1] + np.array(rc, dtype=object)) % r
        inputs.append(tuple(int(c) for c in lanes[0, :t + k]) + (int(lanes[0, -1]),))
        lanes[0, :] = 0
        lanes[0, t + k] = 1
        lanes = mds.dot(lanes) % r
    final = tuple(tuple(int(c) for c in row) for row in lanes)
    return tuple(inputs), final


def _mix(cs, mds, s) -> list:
    """``mds · s`` as unmaterialized combinations (constants fold into the ONE term)."""
    s = [x if isinstance(x, LinearCombination) else cs.constant(x) for x in s]
    return [lincomb(zip(row, s), materialize=False) for row in mds]


def poseidon_permutation_gadget(cs, state, spec=None) -> list:
    """The Poseidon permutation of ``state`` (t combinations or ints) in-circuit, compact layout.

    ``spec`` defaults to the ``cuzk`` variant of width ``len(state)`` (3 or 9).
    """
    state = sequence(state, "poseidon state")
    spec = poseidon_spec("cuzk", len(state)) if spec is None else spec
    _check_curve(cs, spec)
    if len(state) != spec.t:
        raise CircuitError(f"Poseidon state of width {spec.t} got {len(state)} elements")
    return _compact(cs, spec, state)


def poseidon_gadget(cs, spec, inputs, *, tag: int | None = None, name: str | None = None):
    """Hash 1 to t-1 ``inputs`` in-circuit as ``spec.hash`` does natively: element
    ``spec.output`` of the permutation of ``[tag, inputs..., 0...]`` (``tag`` defaults to the
    spec's). Returns a combination (compact layout) or an allocated variable (allocated layout).

    Raises:
        CircuitError: wrong input count, or the spec's curve is not the constraint system's.
    """
    inputs = sequence(inputs, "poseidon inputs")
    _check_curve(cs, spec)
    if not 1 <= len(inputs) <= spec.arity:
        raise CircuitError(f"{spec.variant} Poseidon of width {spec.t} hashes 1 to {spec.arity} inputs, got {len(inputs)}")
    state = [spec.tag if tag is None else tag, *inputs] + [0] * (spec.arity - len(inputs))
    with cs.namespace(name or "poseidon"):
        if spec.layout == "allocated":
            return _allocated(cs, spec, state, spec.output)
        return _compact(cs, spec, state)[spec.output]


def poseidon(cs, inputs, name: str | None = None):
    """Hash 2 or 8 inputs with the ``cuzk`` variant (lane 0 of the permutation of
    ``[0, *inputs]``), as the native :func:`~cuzk.circuit.gadgets.poseidon_params.poseidon_hash`.
    """
    inputs = sequence(inputs, "poseidon inputs")
    if len(inputs) not in (2, 8):
        raise CircuitError(f"poseidon takes 2 or 8 inputs, got {len(inputs)}")
    return poseidon_gadget(cs, poseidon_spec("cuzk", len(inputs) + 1), inputs, name=name)
