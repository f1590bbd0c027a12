"""Bit decomposition with range checks, and zero/equality tests.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); x = cs.private(6)
    >>> bits = to_bits(cs, x, 3)       # 3 booleans + 1 recomposition row: proves x < 8
    >>> len(bits), cs.n_constraints
    (3, 4)
"""

from __future__ import annotations

from cuzk.circuit.gadgets.operands import sequence
from cuzk.circuit.lc import MAX_TERMS, LinearCombination, lincomb
from cuzk.errors import CircuitError

__all__ = ["to_bits", "from_bits", "is_zero", "is_equal", "max_range_bits"]


def max_range_bits(cs) -> int:
    """The most bits :func:`to_bits` may decompose into over ``cs``'s field: r's bit length - 1.

    With 2^k < r < 2^(k+1) and at most k bits the decomposition of x is unique, so the
    recomposition row proves 0 <= x < 2^n; k + 1 bits would let x and x + r both pass
    (k = 254 for BLS12-381, 253 for BN254).

    >>> from cuzk.circuit import ConstraintSystem
    >>> max_range_bits(ConstraintSystem()), max_range_bits(ConstraintSystem("bn254"))
    (254, 253)
    """
    return cs.modulus.bit_length() - 1


def to_bits(cs, x, n: int, name: str | None = None) -> list:
    """The ``n`` low bits of ``x`` (least significant first) as boolean variables, proving x < 2^n.

    Costs n + 1 constraints (one ``assert_bool`` per bit and one recomposition row).

    Raises:
        CircuitError: n is not in [1, 254].
    """
    top = max_range_bits(cs)
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= top:
        raise CircuitError(f"to_bits needs 1 <= n <= {top} bits for a sound range check, got {n!r}")
    x = cs._lc(x)
    bits = [cs.private(v) for v in x.value.bits(n)]
    with cs.namespace(name or "to_bits"):
        for i, b in enumerate(bits):
            cs.assert_bool(b, name=f"bit{i}")
        cs.enforce(_weighted(cs, bits), cs.one, x, name="recompose")
    return bits


def _weighted(cs, bits) -> LinearCombination:
    terms, p = {}, 1
    for b in bits:
        for k, v in cs._lc(b).terms.items():
            terms[k] = (terms.get(k, 0) + v * p) % cs.modulus
        p <<= 1
    return LinearCombination(cs, {k: v for k, v in terms.items() if v})


def from_bits(cs, bits) -> LinearCombination:
    """``sum 2^i * bits[i]`` (bits assumed boolean); a variable when wider than MAX_TERMS."""
    bits = sequence(bits, "from_bits' bits")
    if not bits:
        raise CircuitError("from_bits needs at least one bit")
    lc = _weighted(cs, bits)
    return cs.materialize(lc) if len(lc.terms) > MAX_TERMS else lc


def is_zero(cs, x, name: str | None = None) -> LinearCombination:
    """1 if x == 0 else 0, with two constraints: ``x * inv = 1 - out`` and ``x * out = 0``.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); z = is_zero(cs, cs.private(0)); cs.n_constraints
    2
    """
    x = cs._lc(x)
    inv = cs.private(x.value.inverse())
    with cs.namespace(name or "is_zero"):
        m = cs.mul(x, inv, name="x*inv")
        out = lincomb(((1, cs.one), (-1, m)))  # 1 - x*inv: 0 when x has an inverse
        cs.enforce(x, out, 0, name="x*out")
    return out


def is_equal(cs, a, b, name: str | None = None) -> LinearCombination:
    """1 if a == b else 0 (two constraints)."""
    return is_zero(cs, cs._lc(a) - cs._lc(b), name=name or "is_equal")
