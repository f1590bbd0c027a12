"""bellperson-style selection gadgets of rust-fil-proofs' PoR: ``pick`` and ``insert`` (arity 2/4/8),
row for row as the Rust circuits have them (the index bits and the path packing are the PoRep
circuit's, :mod:`cuzk.circuits.filecoin.porep.circuit_num`).

``insert(cs, node, bits, siblings)`` places ``node`` among ``siblings`` at the position given by
``bits`` (least significant first) and returns the ``arity`` children as allocated variables.
Arity 2 costs 2 constraints, arity 4 costs 8, arity 8 costs 22 (two helper bits ``b0 NOR b1`` and
``b0 AND b1``, then 20 picks), so that a PoR level costs what rust-fil-proofs counts.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> bits = [cs.private(v) for v in (1, 0, 1)]
    >>> kids = insert(cs, cs.private(100), bits, [cs.private(v) for v in range(7)])
    >>> cs.n_constraints
    22
"""

from __future__ import annotations

from cuzk.circuit.lc import lincomb
from cuzk.errors import CircuitError

__all__ = ["pick", "insert"]


def pick(cs, cond, a, b, name: str = "pick"):
    """A new variable ``c = a if cond else b`` and one row ``(b - a) * cond = b - c``."""
    a, b, cond = cs._lc(a), cs._lc(b), cs._lc(cond)
    c = cs.private(b.value + cond.value * (a.value - b.value))
    cs.enforce(b - a, cond, b - c, name=name)
    return c


def _insert_4(cs, bits, a, s):
    b0, b1 = bits
    b, c, d = s
    p0 = pick(cs, b1, b, pick(cs, b0, b, a))
    p1 = pick(cs, b1, c, pick(cs, b0, a, b))
    p2 = pick(cs, b1, pick(cs, b0, d, a), c)
    p3 = pick(cs, b1, pick(cs, b0, a, d), d)
    return [p0, p1, p2, p3]


def _insert_8(cs, bits, a, s):
    b0, b1, b2 = bits
    b, c, d, e, f, g, h = s
    nor = cs.mul(1 - b0, 1 - b1, name="b0 nor b1")
    both = cs.mul(b0, b1, name="b0 and b1")
    p0 = pick(cs, b2, b, pick(cs, nor, a, b))
    p1 = pick(cs, b2, c, pick(cs, b1, c, pick(cs, b0, a, b)))
    p2 = pick(cs, b2, d, pick(cs, b1, pick(cs, b0, d, a), c))
    p3 = pick(cs, b2, e, pick(cs, both, a, d))
    p4 = pick(cs, b2, pick(cs, nor, a, f), e)
    p5 = pick(cs, b2, pick(cs, b1, g, pick(cs, b0, a, f)), f)
    p6 = pick(cs, b2, pick(cs, b1, pick(cs, b0, h, a), g), g)
    p7 = pick(cs, b2, pick(cs, both, a, h), h)
    return [p0, p1, p2, p3, p4, p5, p6, p7]


def insert(cs, node, bits, siblings) -> list:
    """The children of one tree level with ``node`` inserted at position ``bits`` (see module doc)."""
    arity = len(siblings) + 1
    if arity not in (2, 4, 8) or 1 << len(bits) != arity:
        raise CircuitError(f"insert supports arity 2, 4 or 8 with log2(arity) bits, got {arity} and {len(bits)} bits")
    if arity == 2:
        (b0,), (s0,) = bits, siblings
        return [pick(cs, b0, s0, node), pick(cs, b0, node, s0)]
    if arity == 4:
        return _insert_4(cs, bits, node, siblings)
    return _insert_8(cs, bits, node, siblings)
