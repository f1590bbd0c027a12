"""``Cube``: the smallest useful circuit, knowledge of x with x³ + x + 5 = out (DESIGN §7).

    >>> from cuzk.synth import Synthesizer
    >>> Synthesizer(Cube(), check=True).synthesize(**Cube().sample_inputs(seed=2)).public_inputs
    [15]
"""

from __future__ import annotations

from cuzk.circuit import Circuit
from cuzk.field import FR

__all__ = ["Cube"]


class Cube(Circuit):
    """Public ``out``, private ``x``, one statement ``x³ + x + 5 = out`` (3 constraints)."""

    def define(self, cs, x, out):
        x, out = cs.private(x), cs.public(out)
        cs.assert_equal(x * x * x + x + 5, out, name="cube")

    def public_inputs(self, inputs: dict) -> list[int]:
        """``[out]``: what a verifier passes for ``inputs``."""
        return [inputs["out"]]

    def sample_inputs(self, seed: int) -> dict:
        """The valid inputs for ``x = seed`` (mod r)."""
        x = seed % FR.modulus
        return {"x": x, "out": (x ** 3 + x + 5) % FR.modulus}
