"""Poseidon as a circuit gadget, for any :class:`~cuzk.circuit.gadgets.poseidon_spec.PoseidonSpec`.

Two constraint layouts (the spec's ``layout`` picks one; both agree with the native hash):

``compact`` (the ``cuzk`` and ``circomlib`` variants)
    each S-box costs three constraints (x^2, x^4, x^5) on its input combination; lanes that
    skip the S-box in partial rounds become variables only when they grow past ``MAX_TERMS``
    terms. Width 3 costs about 250 constraints.
``allocated`` (``neptune``)
    neptune's circuit row for row (:mod:`~cuzk.circuit.gadgets.poseidon_neptune`: compressed
    constants added after the S-box, sparse partial-round matrices): every S-box input that is
    not already a variable is first allocated (one row ``lc * 1 = v``), S-boxes of constants
    are folded, and the output element is allocated, so a hash of ``a`` allocated inputs costs
    ``3a + 4(R_F - 1)t + 4 R_P + 1`` constraints (311, 505, 598 for arities 2, 8, 11), as
    rust-fil-proofs counts them.

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

from cuzk import curves
from cuzk.circuit.gadgets.operands import sequence
from cuzk.circuit.gadgets.poseidon_neptune import neptune_gadget
from cuzk.circuit.gadgets.poseidon_spec import poseidon_spec
from cuzk.circuit.lc import lincomb
from cuzk.errors import CircuitError

__all__ = ["poseidon_permutation_gadget", "poseidon", "poseidon_gadget", "poseidon_rows"]


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
    with cs.namespace(name or "poseidon"):
        return poseidon_rows(cs, spec, inputs, tag=tag)


def poseidon_rows(cs, spec, inputs, *, tag: int | None = None):
    """:func:`poseidon_gadget`'s rows in the current namespace (a template stamped under a
    block name, cuzk/circuit/template_cache.py, takes its name from the block)."""
    inputs = sequence(inputs, "poseidon inputs")
    _check_curve(cs, spec)
    if not 1 <= len(inputs) <= spec.arity:
        raise CircuitError(f"{spec.variant} Poseidon of width {spec.t} hashes 1 to {spec.arity} inputs, got {len(inputs)}")
    state = [spec.tag if tag is None else tag, *inputs] + [0] * (spec.arity - len(inputs))
    if spec.layout == "allocated":
        return neptune_gadget(cs, spec, state, spec.output)
    return _compact(cs, spec, state)[spec.output]


def poseidon(cs, inputs, name: str | None = None):
    """Hash 2 or 8 inputs with the ``cuzk`` variant (lane 0 of the permutation of
    ``[0, *inputs]``), as the native :func:`~cuzk.circuit.gadgets.poseidon_params.poseidon_hash`.
    """
    inputs = sequence(inputs, "poseidon inputs")
    if len(inputs) not in (2, 8):
        raise CircuitError(f"poseidon takes 2 or 8 inputs, got {len(inputs)}")
    return poseidon_gadget(cs, poseidon_spec("cuzk", len(inputs) + 1), inputs, name=name)
