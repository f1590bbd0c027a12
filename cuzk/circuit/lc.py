"""Traced values of the circuit DSL: linear combinations, variables and witness-only values.

* :class:`LinearCombination` — ``sum c_i * v_i`` over allocated variables (variable 0 is the
  constant one). ``+``, ``-``, scaling by a constant and negation stay linear; multiplying two
  non-constant combinations allocates a new variable and one constraint ``a * b = v``.
* :class:`Variable` — a combination with a single term of coefficient 1.
* :class:`Value` — a witness value that is *not* a variable: circuit inputs before ``cs.public`` /
  ``cs.private``, and hints (``inverse``, ``bits``, ``is_zero``). Arithmetic on values only
  extends the witness program; it adds no constraint.

None of these know their numeric value while ``define`` is traced, so asking for one (``if x``,
``x == 3``, ``int(x)``, ``range(x)``) raises :class:`cuzk.errors.ValueDependentTraceError`.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> x = cs.private(3)
    >>> y = x * x + 3 * x + 5        # one constraint (x * x = t), the rest is linear
    >>> len(y.terms), cs.n_constraints
    (3, 1)
"""

from __future__ import annotations

import operator

from cuzk.circuit.ops import OP_ADD, OP_INV, OP_ISZERO, OP_MUL, OP_SUB
from cuzk.errors import CircuitError, ValueDependentTraceError

__all__ = ["LinearCombination", "Variable", "Value", "MAX_TERMS", "lincomb"]

# A combination that grows past this many terms is replaced by a fresh variable (one constraint
# lc * 1 = v), so chains like x = x*x + 3*x + c keep O(1) nonzeros per step.
MAX_TERMS = 8


def _int_or_none(x):
    """``x`` as a Python int when it is an integer (int, bool, numpy integer), else None."""
    if isinstance(x, int):
        return x
    if isinstance(x, _Traced):  # its __index__ refuses with a tracing error; callers name the misuse
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _not_an_operand(x, what: str):
    return CircuitError(
        f"cannot use a {type(x).__name__} ({x!r:.40}) with a {what}: circuit arithmetic takes ints "
        "(reduced mod r) and combinations of the same constraint system"
    )


def _refuse(self, *args):
    raise ValueDependentTraceError(
        f"{type(self).__name__} has no value while the circuit is traced; branching or comparing on "
        "witness values in define() makes the trace depend on inputs. Use gadgets (select, is_equal, "
        "assert_equal) instead of Python control flow."
    )


class _Traced:
    """Blocks every conversion that would let Python code see a value during tracing."""

    __slots__ = ()
    __bool__ = __int__ = __index__ = __float__ = __complex__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = None


class LinearCombination(_Traced):
    """An immutable linear combination ``{variable index: coefficient}`` of one constraint system.

    Args:
        cs: the owning :class:`~cuzk.circuit.ConstraintSystem`.
        terms: dict of internal variable index -> coefficient (canonical int, nonzero).

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); a = cs.private(1)
    >>> (2 * a - a).terms == a.terms
    True
    """

    __slots__ = ("cs", "terms", "_slot")

    def __init__(self, cs, terms: dict):
        self.cs = cs
        self.terms = terms
        self._slot = None  # register of the witness program holding this value, once computed

    # -- helpers -------------------------------------------------------------------------
    def _coerce(self, other):
        if isinstance(other, LinearCombination):
            if other.cs is not self.cs:
                raise CircuitError("cannot combine terms of two different constraint systems")
            return other
        if isinstance(other, Value):
            raise CircuitError("a witness Value must be allocated (cs.private / cs.public) before use in constraints")
        c = _int_or_none(other)
        if c is None:  # a float or str here is a bug in define(); say so instead of a bare TypeError
            raise _not_an_operand(other, type(self).__name__)
        return self.cs.constant(c)

    def is_constant(self) -> bool:
        """True when the combination only uses the constant one (or is empty)."""
        return all(k == 0 for k in self.terms)

    def constant_value(self) -> int:
        """The coefficient of the constant one (0 when absent)."""
        return self.terms.get(0, 0)

    def _scaled(self, c: int) -> "LinearCombination":
        r = self.cs.modulus
        c %= r
        if c == 0:
            return LinearCombination(self.cs, {})
        if c == 1:
            return self
        return LinearCombination(self.cs, {k: v * c % r for k, v in self.terms.items()})

    @property
    def value(self) -> "Value":
        """The witness value of this combination, for hints (``x.value.inverse()``)."""
        return Value(self.cs, self.cs._slot_of(self))

    # -- operators -----------------------------------------------------------------------
    def __add__(self, other):
        other = self._coerce(other)
        return lincomb(((1, self), (1, other)))

    __radd__ = __add__

    def __sub__(self, other):
        other = self._coerce(other)
        return lincomb(((1, self), (-1, other)))

    def __rsub__(self, other):
        other = self._coerce(other)
        return lincomb(((1, other), (-1, self)))

    def __neg__(self):
        return self._scaled(-1)

    def __mul__(self, other):
        if isinstance(other, int):
            return self._scaled(other)
        other = self._coerce(other)
        if other.is_constant():
            return self._scaled(other.constant_value())
        if self.is_constant():
            return other._scaled(self.constant_value())
        return self.cs.mul(self, other)

    __rmul__ = __mul__

    def __pow__(self, e):
        if not isinstance(e, int) or isinstance(e, bool) or e < 1:
            raise CircuitError(f"exponent must be an int >= 1, got {e!r}")
        result, base = None, self
        while True:  # square-and-multiply: O(log e) constraints
            if e & 1:
                result = base if result is None else result * base
            e >>= 1
            if not e:
                return result
            base = base * base

    def __repr__(self):
        body = " + ".join(f"{v}*{'ONE' if k == 0 else f'v{k}'}" for k, v in self.terms.items()) or "0"
        return f"LinearCombination({body})"


class Variable(LinearCombination):
    """An allocated variable (a combination with the single term ``1 * v``).

    ``index`` is the allocation index inside the tracing constraint system; the Synthesizer
    renumbers variables to ``[ONE, public..., private...]``.
    """

    __slots__ = ("index",)

    def __init__(self, cs, index: int):
        # LinearCombination.__init__ written out (no super() call): circuits allocate millions
        self.cs = cs
        self.terms = {index: 1}
        self._slot = None
        self.index = index

    @property
    def is_public(self) -> bool:
        return self.cs._kind_of(self.index) == 1

    def __repr__(self):
        return "ONE" if self.index == 0 else f"Variable(v{self.index}, {'public' if self.is_public else 'private'})"


def lincomb(pairs, *, materialize: bool = True) -> LinearCombination:
    """``sum c * lc`` over ``(int c, LinearCombination lc)`` pairs, merged in one pass; an int
    ``lc`` is a constant term (so gadgets like ``or_(x, 1)`` work), but at least one must be a
    combination.

    When the result has more than :data:`MAX_TERMS` terms and ``materialize`` is true it is
    replaced by a new variable (one constraint). Gadgets use this for wide sums (MDS layers).

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); a, b = cs.private(1), cs.private(2)
    >>> lincomb([(2, a), (3, b), (-2, a)]).terms == {b.index: 3}
    True
    """
    cs, out, const = None, {}, 0
    for c, lc in pairs:
        if not isinstance(lc, LinearCombination):  # an int constant operand (or_(x, 1), select(c, 1, x))
            k = _int_or_none(c)
            v = _int_or_none(lc)
            if k is None or v is None:
                raise _not_an_operand(lc if v is None else c, "lincomb term")
            const += k * v
            continue
        cs = lc.cs if cs is None else cs
        if lc.cs is not cs:
            raise CircuitError("cannot combine terms of two different constraint systems")
        k = _int_or_none(c)
        if k is None:
            raise CircuitError(f"lincomb coefficients must be ints, got {type(c).__name__}")
        c = k % cs.modulus
        if c == 0:
            continue
        for k, v in lc.terms.items():
            if k in out:
                nv = (out[k] + c * v) % cs.modulus
                if nv:
                    out[k] = nv
                else:
                    del out[k]
            else:  # c, v nonzero mod a prime: the product is nonzero
                out[k] = v if c == 1 else c * v % cs.modulus
    if cs is None:
        raise CircuitError("lincomb needs at least one combination (all terms were constants or none were given)")
    if const % cs.modulus:
        nv = (out.get(0, 0) + const) % cs.modulus
        if nv:
            out[0] = nv
        else:
            del out[0]
    res = LinearCombination(cs, out)
    if materialize and len(out) > MAX_TERMS:
        return cs.materialize(res)
    return res


class Value(_Traced):
    """A witness-only value (input or hint); see the module docstring.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem(); x = cs.private(5)
    >>> inv = cs.private(x.value.inverse())     # hint: 1/x, then constrain it
    >>> cs.assert_equal(x * inv, 1)
    """

    __slots__ = ("cs", "slot")

    def __init__(self, cs, slot: int):
        self.cs = cs
        self.slot = slot

    def _other(self, other):
        if isinstance(other, Value):
            if other.cs is not self.cs:
                raise CircuitError("cannot combine values of two different constraint systems")
            return other.slot
        if isinstance(other, LinearCombination):
            raise CircuitError("mixing a witness Value with a constrained LinearCombination: allocate the value first")
        c = _int_or_none(other)
        if c is None:
            raise _not_an_operand(other, "Value")
        return self.cs._const_slot(c)

    def _binop(self, op, a, b):
        return Value(self.cs, self.cs._emit_value(op, a, b))

    def __add__(self, o):
        return self._binop(OP_ADD, self.slot, self._other(o))

    __radd__ = __add__

    def __sub__(self, o):
        return self._binop(OP_SUB, self.slot, self._other(o))

    def __rsub__(self, o):
        return self._binop(OP_SUB, self._other(o), self.slot)

    def __mul__(self, o):
        return self._binop(OP_MUL, self.slot, self._other(o))

    __rmul__ = __mul__

    def __neg__(self):
        return 0 - self

    def __truediv__(self, o):
        o = self._other(o)
        return self * Value(self.cs, o).inverse()

    def __rtruediv__(self, o):
        o = self._other(o)
        return Value(self.cs, o) * self.inverse()

    def inverse(self) -> "Value":
        """Hint ``1/x`` (0 when x = 0)."""
        return Value(self.cs, self.cs._emit_value(OP_INV, self.slot))

    def is_zero(self) -> "Value":
        """Hint ``1 if x == 0 else 0``."""
        return Value(self.cs, self.cs._emit_value(OP_ISZERO, self.slot))

    def bits(self, n: int) -> list:
        """Hint: the ``n`` low bits of x (canonical), least significant first."""
        return [Value(self.cs, s) for s in self.cs._emit_bits(self.slot, n)]

    def __repr__(self):
        return f"Value(r{self.slot})"
