"""A circuit with a few hundred points in every query, for the fixed-base table tests (no tests here)."""

from cuzk.circuit import Circuit

__all__ = ["STEPS", "WASTE", "Chain", "chain_out"]

STEPS = 150
WASTE = dict(tau=0x1234567890ABCDEF, alpha=11, beta=13, gamma=17, delta=19)


class Chain(Circuit):
    """x_{i+1} = x_i² + x_i·k + i for public k and out = x_STEPS."""

    def define(self, cs, x, k, out):
        v, k = cs.private(x), cs.public(k)
        for i in range(STEPS):
            v = v * v + v * k + i
        cs.assert_equal(v, cs.public(out))


def chain_out(x: int, k: int, r: int) -> int:
    """The public ``out`` of :class:`Chain` for x, k over a field of order r."""
    for i in range(STEPS):
        x = (x * x + x * k + i) % r
    return x
