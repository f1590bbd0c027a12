"""Shared circuits, toxic waste and helpers for the Groth16 and bellperson-format tests (no tests here).

``RandomCircuit`` turns a small drawn program into a DSL circuit, so hypothesis explores circuit
shapes (sparse/dense A and B columns, untouched public inputs, unused private variables) while
the reference prover stays fast enough (a handful of variables).
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from cuzk import Circuit, Synthesizer
from cuzk.field import FR
from cuzk.groth16 import ToxicWaste, setup_with_waste

R = FR.modulus

__all__ = ["R", "WASTE", "RandomCircuit", "programs", "witness_inputs", "CubeTag", "SquareTag", "keys_for"]

# Fixed, well-spread toxic waste: tests are deterministic and comparable with the reference.
WASTE = dict(
    tau=0x1234567890ABCDEF1234567890ABCDEF1234567890ABCDEF1234567890ABCDE,
    alpha=0x2B1E7C3A5F9D0E4C6A8B2D1F3E5C7A9B0D2F4E6C8A1B3D5F7E9C0A2B4D6F8E1,
    beta=0x3C2F8D4B6E0A1F5D7B9C3E2A4F6D8B0C1E3A5F7D9B2C4E6A8F0D1B3C5E7A9F2,
    gamma=0x4D3A9E5C7F1B2A6E8C0D4F3B5A7E9C1D2F4B6A8E0C3D5F7B9A1C2E4D6F8A0B3,
    delta=0x5E4B0F6D8A2C3B7F9D1E5A4C6B8F0D2E3A5C7B9F1D4E6A8C0B2D3F5E7A9C1D4,
)


class CubeTag(Circuit):
    """x³ + x + 5 = out, plus a public ``tag`` that no user constraint reads."""

    def define(self, cs, x, out, tag):
        x, out = cs.private(x), cs.public(out)
        cs.public(tag)
        cs.assert_equal(x * x * x + x + 5, out)


class SquareTag(Circuit):
    """x² + 2 = out with the same public shape as :class:`CubeTag` (a "different circuit")."""

    def define(self, cs, x, out, tag):
        x, out = cs.private(x), cs.public(out)
        cs.public(tag)
        cs.assert_equal(x * x + 2, out)


class RandomCircuit(Circuit):
    """A straight-line program over private inputs ``xs``; the values of ``outs`` become public
    outputs, ``tags`` are public inputs no constraint reads.

    ``steps``: ("mul", i, j, k) appends vars[i]·vars[j]; ("lin", i, j, k) appends k·vars[i] + vars[j]
    (materialised). Indices are taken modulo the number of variables so far.
    """

    def __init__(self, n_priv: int, n_tags: int, steps: tuple, outs: tuple):
        self.n_priv, self.n_tags, self.steps, self.outs = n_priv, n_tags, steps, outs

    def __repr__(self):
        return f"RandomCircuit({self.n_priv}, {self.n_tags}, {self.steps}, {self.outs})"

    def input_shapes(self):
        shapes = {"xs": (self.n_priv,)}
        if self.n_tags:  # the DSL refuses empty shapes
            shapes["tags"] = (self.n_tags,)
        return shapes

    def define(self, cs, xs, tags=()):
        for t in tags:
            cs.public(t)
        vs = [cs.private(x) for x in xs]
        for op, i, j, k in self.steps:
            a, b = vs[i % len(vs)], vs[j % len(vs)]
            vs.append(cs.mul(a, b) if op == "mul" else cs.materialize(a * k + b))
        for o in self.outs:
            cs.public(vs[o % len(vs)] + 0)


programs = st.builds(
    lambda n_priv, n_tags, steps, outs: RandomCircuit(n_priv, n_tags, tuple(steps), tuple(outs)),
    st.integers(1, 3),
    st.integers(0, 1),
    st.lists(st.tuples(st.sampled_from(["mul", "lin"]), st.integers(0, 7), st.integers(0, 7), st.integers(0, R - 1)),
             max_size=3),
    st.lists(st.integers(0, 7), min_size=1, max_size=2),
)


def witness_inputs(circuit: RandomCircuit, draw_int) -> dict:
    inputs = {"xs": [draw_int() for _ in range(circuit.n_priv)]}
    if circuit.n_tags:
        inputs["tags"] = [draw_int() for _ in range(circuit.n_tags)]
    return inputs


@functools.lru_cache(maxsize=None)
def keys_for(circuit_cls):
    """(synthesizer, fast proving key) of a fixed circuit class, built once per session."""
    synth = Synthesizer(circuit_cls())
    return synth, setup_with_waste(synth.r1cs, ToxicWaste(**WASTE))
