"""Bits as bellperson builds them: :class:`AllocatedBit` and :class:`Boolean` (``Is`` / ``Not`` /
``Constant``), with the same constant folding, the same allocation order and the same A/B/C terms
in every row, so a circuit written on them has the R1CS rust-fil-proofs builds.

A :class:`Boolean` is a variable, its negation or a constant; negation and constants cost nothing
and every operation folds them first (``xor`` with a constant is free, ``and_`` with a negated
bit uses the ``and not`` row). Witness values come from the witness program: a bit's value is its
variable's register, combined with :class:`~cuzk.circuit.Value` arithmetic (no Python ints).

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> a = Boolean.alloc(cs, 1); b = Boolean.alloc(cs, 0)
    >>> x = Boolean.xor(cs, a, b.not_())             # Is xor Not: one xor row, result negated
    >>> x.kind, cs.n_constraints                      # two boolean rows + one xor row
    ('not', 3)
    >>> Boolean.xor(cs, a, Boolean.constant(True)).kind, cs.n_constraints   # folded, no row
    ('not', 3)
"""

from __future__ import annotations

from cuzk.circuit.lc import LinearCombination, Value, Variable
from cuzk.circuit.ops import OP_MUL, OP_SUB
from cuzk.errors import CircuitError

__all__ = ["AllocatedBit", "Boolean", "IS", "NOT", "CONSTANT", "Not", "bare_xor", "bare_and", "bare_ch", "bare_maj",
           "add_bare_bit", "xor_vars", "and_vars", "and_not_vars", "nor_vars"]

IS, NOT, CONSTANT = "is", "not", "constant"


def _lc(cs, terms: dict) -> LinearCombination:
    return LinearCombination(cs, terms)


# The trace's hot path (a compression is ~26,000 rows) writes rows, variables and witness ops the
# way ConstraintSystem.enforce / private / Value arithmetic do (cuzk/circuit/cs.py), without the
# argument checks and the intermediate objects those public calls build.


def _reg(cs, var) -> int:
    """The witness register of a variable."""
    s = var._slot
    return s if s is not None else cs._slot_of(var)


def _value_reg(cs, value) -> int:
    if isinstance(value, LinearCombination):  # take its witness value: bellperson adds no row here
        return cs._slot_of(value)
    if isinstance(value, Value):
        if value.cs is not cs:
            raise CircuitError("value belongs to another constraint system")
        return value.slot
    return cs._value_slot(value)[0]


def _sub_terms(cs, x: dict, y: dict) -> dict:
    """``x - y`` over term dicts (zero coefficients dropped, as a sparse row has none)."""
    r = cs.modulus
    out = dict(x)
    for k, v in y.items():
        nv = (out.get(k, 0) - v) % r
        if nv:
            out[k] = nv
        else:
            out.pop(k, None)
    return out


class AllocatedBit:
    """A private variable constrained to {0, 1}.

    Attributes:
        var: its :class:`~cuzk.circuit.Variable`.
    """

    __slots__ = ("var",)

    def __init__(self, var):
        self.var = var

    @property
    def value(self) -> Value:
        """The bit's witness value."""
        return self.var.value

    @classmethod
    def _from_reg(cls, cs, slot: int, name) -> "AllocatedBit":
        v = cs._private_at(slot)
        i = v.index
        cs._enforce_terms({0: 1, i: cs.modulus - 1}, {i: 1}, {},
             "boolean constraint" if name is None else f"{name}/boolean constraint")
        return cls(v)

    @classmethod
    def alloc(cls, cs, value, name: str | None = None) -> "AllocatedBit":
        """A new bit with witness ``value`` (a Value, an int or a combination's value) and the
        boolean row ``(1 - v) * v = 0``."""
        return cls._from_reg(cs, _value_reg(cs, value), name)

    @classmethod
    def alloc_conditionally(cls, cs, value, must_be_false: "AllocatedBit", name: str | None = None):
        """A new bit that must be 0 when ``must_be_false`` is 1: ``(1 - m - v) * v = 0``."""
        v = cs._private_at(_value_reg(cs, value))
        r = cs.modulus
        a = {0: 1, must_be_false.var.index: r - 1}
        a[v.index] = (a.get(v.index, 0) - 1) % r
        cs._enforce_terms({k: c for k, c in a.items() if c}, {v.index: 1}, {},
             "boolean constraint" if name is None else f"{name}/boolean constraint")
        return cls(v)

    @classmethod
    def xor(cls, cs, a: "AllocatedBit", b: "AllocatedBit", name: str = "xor constraint") -> "AllocatedBit":
        """``a ^ b``: new v and ``(2a) * b = a + b - v``."""
        return cls(xor_vars(cs, a.var, b.var, name))

    @classmethod
    def and_(cls, cs, a: "AllocatedBit", b: "AllocatedBit", name: str = "and constraint") -> "AllocatedBit":
        """``a & b``: new v and ``a * b = v``."""
        return cls(and_vars(cs, a.var, b.var, name))

    @classmethod
    def and_not(cls, cs, a: "AllocatedBit", b: "AllocatedBit", name: str = "and not constraint") -> "AllocatedBit":
        """``a & !b``: new v and ``a * (1 - b) = v``."""
        return cls(and_not_vars(cs, a.var, b.var, name))

    @classmethod
    def nor(cls, cs, a: "AllocatedBit", b: "AllocatedBit", name: str = "nor constraint") -> "AllocatedBit":
        """``!a & !b``: new v and ``(1 - a) * (1 - b) = v``."""
        return cls(nor_vars(cs, a.var, b.var, name))


# -- the rows of two allocated bits, on their bare variables (what AllocatedBit wraps) ----------

def xor_vars(cs, a, b, name: str = "xor constraint"):
    """:meth:`AllocatedBit.xor` of two bits' variables; the new variable."""
    d = cs._emit_value(OP_SUB, _reg(cs, a), _reg(cs, b))
    v = cs._private_at(cs._emit_value(OP_MUL, d, d))  # (a - b)^2 is a xor b on bits
    ai, bi, r = a.index, b.index, cs.modulus
    c = {ai: 2, v.index: r - 1} if ai == bi else {ai: 1, bi: 1, v.index: r - 1}
    cs._enforce_terms({ai: 2}, {bi: 1}, c, name)
    return v


def and_vars(cs, a, b, name: str = "and constraint"):
    """:meth:`AllocatedBit.and_` of two bits' variables; the new variable."""
    v = cs._private_at(cs._emit_value(OP_MUL, _reg(cs, a), _reg(cs, b)))
    cs._enforce_terms({a.index: 1}, {b.index: 1}, {v.index: 1}, name)
    return v


def and_not_vars(cs, a, b, name: str = "and not constraint"):
    """:meth:`AllocatedBit.and_not` of two bits' variables; the new variable."""
    nb = cs._emit_value(OP_SUB, 0, _reg(cs, b))  # register 0 holds the constant one
    v = cs._private_at(cs._emit_value(OP_MUL, _reg(cs, a), nb))
    cs._enforce_terms({a.index: 1}, {0: 1, b.index: cs.modulus - 1}, {v.index: 1}, name)
    return v


def nor_vars(cs, a, b, name: str = "nor constraint"):
    """:meth:`AllocatedBit.nor` of two bits' variables; the new variable."""
    na = cs._emit_value(OP_SUB, 0, _reg(cs, a))
    nb = cs._emit_value(OP_SUB, 0, _reg(cs, b))
    v = cs._private_at(cs._emit_value(OP_MUL, na, nb))
    m = cs.modulus - 1
    cs._enforce_terms({0: 1, a.index: m}, {0: 1, b.index: m}, {v.index: 1}, name)
    return v


# -- bare bits: a bool (constant), a Variable (Is) or a Not of one ------------------------------
# bellpepper's Boolean operations with its constant folding, on bits without wrapper objects: the
# SHA-256 circuit (cuzk/circuit/gadgets/sha256_bits.py) traces millions of them, and
# :class:`Boolean` converts and calls the same functions, so the folding exists once.

class Not:
    """The negation of an allocated bit (bellpepper's ``Boolean::Not``)."""

    __slots__ = ("var",)

    def __init__(self, var):
        self.var = var


def _not(b):
    if isinstance(b, bool):
        return not b
    if isinstance(b, Not):
        return b.var
    return Not(b)


def _value(b):
    """The witness of a bit: an int for a constant, else a Value."""
    if isinstance(b, bool):
        return int(b)
    if isinstance(b, Not):
        return 1 - b.var.value
    return b.value


def add_bare_bit(terms: dict, b, coeff: int, r: int) -> None:
    """``terms += coeff * b`` (bellpepper's ``Boolean::lc``)."""
    if b is False:
        return
    if b is True:
        terms[0] = (terms.get(0, 0) + coeff) % r
        return
    if isinstance(b, Not):
        terms[0] = (terms.get(0, 0) + coeff) % r
        k, coeff = b.var.index, -coeff
    else:
        k = b.index
    terms[k] = (terms.get(k, 0) + coeff) % r


def _terms(r: int, *pairs) -> dict:
    """``sum coeff * bit`` as reduced, zero-free terms {variable index: coefficient}."""
    terms = {}
    for coeff, b in pairs:
        if type(b) is Variable:  # an allocated bit: add_bare_bit's last line
            k = b.index
            terms[k] = (terms.get(k, 0) + coeff) % r
        else:
            add_bare_bit(terms, b, coeff, r)
    return {k: v for k, v in terms.items() if v}


# -- Boolean operations with bellpepper's constant folding ------------------------------------

def bare_xor(cs, a, b, name: str = "xor constraint"):
    """``Boolean::xor`` of two bare bits."""
    if a is False:
        return b
    if b is False:
        return a
    if a is True:
        return _not(b)
    if b is True:
        return _not(a)
    na, nb = isinstance(a, Not), isinstance(b, Not)
    if na != nb:  # a XOR (NOT b) = NOT (a XOR b)
        is_, not_ = (b, a) if na else (a, b)
        return _not(bare_xor(cs, is_, not_.var, name))
    if na:  # (NOT a) XOR (NOT b) = a XOR b
        return xor_vars(cs, a.var, b.var, name)
    return xor_vars(cs, a, b, name)


def bare_and(cs, a, b, name: str | None = None):
    """``Boolean::and`` of two bare bits (``name``: the row's, else its kind's)."""
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    na, nb = isinstance(a, Not), isinstance(b, Not)
    if not na and nb:
        return and_not_vars(cs, a, b.var, name or "and not constraint")
    if na and not nb:
        return and_not_vars(cs, b, a.var, name or "and not constraint")
    if na:
        return nor_vars(cs, a.var, b.var, name or "nor constraint")
    return and_vars(cs, a, b, name or "and constraint")


def _ch_value(a, b, c):
    av, bv, cv = _value(a), _value(b), _value(c)
    return cv + av * (bv - cv)  # (a and b) xor ((not a) and c) on bits


def bare_ch(cs, a, b, c, name: str = "ch computation"):
    """``Boolean::sha256_ch`` of bare bits: ``(a and b) xor ((not a) and c)``."""
    ca, cb, cc = isinstance(a, bool), isinstance(b, bool), isinstance(c, bool)
    if ca and cb and cc:
        return (a and b) ^ ((not a) and c)
    if a is False:
        return c
    if b is False:
        return bare_and(cs, _not(a), c)
    if c is False:
        return bare_and(cs, a, b)
    if c is True:
        return _not(bare_and(cs, a, _not(b)))
    if b is True:
        return _not(bare_and(cs, _not(a), _not(c)))
    ch = cs._private_at(_ch_value(a, b, c).slot)
    r = cs.modulus
    cs._enforce_terms(_terms(r, (1, b), (-1, c)), _terms(r, (1, a)), _terms(r, (1, ch), (-1, c)), name)
    return ch


def bare_maj(cs, a, b, c, name: str = "maj computation"):
    """``Boolean::sha256_maj`` of bare bits: ``(a and b) xor (a and c) xor (b and c)``."""
    ca, cb, cc = isinstance(a, bool), isinstance(b, bool), isinstance(c, bool)
    if ca and cb and cc:
        return (a and b) ^ (a and c) ^ (b and c)
    if a is False:
        return bare_and(cs, b, c)
    if b is False:
        return bare_and(cs, a, c)
    if c is False:
        return bare_and(cs, a, b)
    if c is True:
        return _not(bare_and(cs, _not(a), _not(b)))
    if b is True:
        return _not(bare_and(cs, _not(a), _not(c)))
    if a is True:
        return _not(bare_and(cs, _not(b), _not(c)))
    av, bv, cv = _value(a), _value(b), _value(c)
    bc_v = bv * cv
    maj = cs._private_at((bc_v + av * (bv + cv - 2 * bc_v)).slot)  # maj before bc, as bellpepper allocates
    bc = bare_and(cs, b, c, "b and c")
    r = cs.modulus
    cs._enforce_terms(_terms(r, (2, bc), (-1, b), (-1, c)), _terms(r, (1, a)), _terms(r, (1, bc), (-1, maj)),
                      name)
    return maj


class Boolean:
    """An :class:`AllocatedBit` (``kind == IS``), its negation (``NOT``) or a constant (``CONSTANT``,
    ``bit`` a bool). Operations are static methods taking the constraint system first."""

    __slots__ = ("kind", "bit")

    def __init__(self, kind: str, bit):
        self.kind = kind
        self.bit = bit

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def is_(cls, bit: AllocatedBit) -> "Boolean":
        return cls(IS, bit)

    @classmethod
    def constant(cls, b) -> "Boolean":
        return _TRUE if b else _FALSE

    @classmethod
    def alloc(cls, cs, value, name: str | None = None) -> "Boolean":
        """``Is`` of a new :class:`AllocatedBit` (one boolean row)."""
        return cls(IS, AllocatedBit.alloc(cs, value, name))

    def is_constant(self) -> bool:
        return self.kind is CONSTANT

    def not_(self) -> "Boolean":
        """The negation (free)."""
        if self.kind is CONSTANT:
            return _FALSE if self.bit else _TRUE
        return Boolean(NOT if self.kind is IS else IS, self.bit)

    def __repr__(self):
        if self.kind is CONSTANT:
            return f"Boolean.constant({self.bit})"
        return f"Boolean({self.kind}, v{self.bit.var.index})"

    # -- values and combinations -----------------------------------------------------------
    @property
    def value(self):
        """The witness value: a :class:`~cuzk.circuit.Value`, or an int (0/1) for a constant."""
        if self.kind is CONSTANT:
            return int(self.bit)
        v = self.bit.value
        return v if self.kind is IS else 1 - v

    def _reg(self, cs) -> int:
        """The witness register of the value (a constant's shared register; 0 holds one)."""
        k = self.kind
        if k is CONSTANT:
            return 0 if self.bit else cs._const_slot(0)
        s = _reg(cs, self.bit.var)
        return s if k is IS else cs._emit_value(OP_SUB, 0, s)

    def terms(self, r: int, coeff: int = 1) -> dict:
        """``coeff * self`` as a term dict over ``{index: coefficient}`` mod ``r`` (ONE is 0)."""
        k = self.kind
        if k is IS:
            return {self.bit.var.index: coeff}
        if k is NOT:
            return {0: coeff, self.bit.var.index: (-coeff) % r}
        return {0: coeff} if self.bit else {}

    def lc(self, cs, coeff: int = 1) -> LinearCombination:
        """``coeff * self`` as a combination (bellperson's ``Boolean::lc(one, coeff)``).

        >>> from cuzk.circuit import ConstraintSystem
        >>> cs = ConstraintSystem(); b = Boolean.alloc(cs, 1)
        >>> b.not_().lc(cs, 4).terms == {0: 4, b.bit.var.index: cs.modulus - 4}
        True
        """
        return _lc(cs, self.terms(cs.modulus, coeff % cs.modulus))

    # -- gates -----------------------------------------------------------------------------
    def bare(self):
        """The bit as :func:`bare_xor` and its kin take it: a bool, a Variable or a :class:`Not`."""
        k = self.kind
        return self.bit if k is CONSTANT else self.bit.var if k is IS else Not(self.bit.var)

    @staticmethod
    def of_bare(b) -> "Boolean":
        """The inverse of :meth:`bare`."""
        if isinstance(b, bool):
            return _TRUE if b else _FALSE
        if isinstance(b, Not):
            return Boolean(NOT, AllocatedBit(b.var))
        return Boolean(IS, AllocatedBit(b))

    @staticmethod
    def xor(cs, a: "Boolean", b: "Boolean", name: str = "xor constraint") -> "Boolean":
        """``a ^ b``: free with a constant; one row otherwise (Is/Not mixes negate the result)."""
        return Boolean.of_bare(bare_xor(cs, a.bare(), b.bare(), name))

    @staticmethod
    def and_(cs, a: "Boolean", b: "Boolean", name: str | None = None) -> "Boolean":
        """``a & b``: free with a constant; else one of the and / and-not / nor rows."""
        return Boolean.of_bare(bare_and(cs, a.bare(), b.bare(), name))

    @staticmethod
    def or_(cs, a: "Boolean", b: "Boolean") -> "Boolean":
        """``a | b`` as ``!(!a & !b)``."""
        return Boolean.and_(cs, a.not_(), b.not_(), "not and (not a) (not b)").not_()

    @staticmethod
    def sha256_ch(cs, a: "Boolean", b: "Boolean", c: "Boolean", name: str = "ch computation") -> "Boolean":
        """``(a & b) ^ (!a & c)``: the constant cases fold to at most one and-row; else a new
        bit ``ch`` and ``(b - c) * a = ch - c``."""
        return Boolean.of_bare(bare_ch(cs, a.bare(), b.bare(), c.bare(), name))

    @staticmethod
    def sha256_maj(cs, a: "Boolean", b: "Boolean", c: "Boolean", name: str = "maj computation") -> "Boolean":
        """``(a & b) ^ (a & c) ^ (b & c)``: constants fold to at most one and-row; else a new bit
        ``maj``, then ``bc = b & c`` and ``(2bc - b - c) * a = bc - maj``."""
        return Boolean.of_bare(bare_maj(cs, a.bare(), b.bare(), c.bare(), name))

    @staticmethod
    def enforce_equal(cs, a: "Boolean", b: "Boolean", name: str = "enforce equal") -> None:
        """Constrain ``a == b`` with one row ``0 * 0 = ...`` (none for two constants).

        Raises:
            CircuitError: two different constants.
        """
        r = cs.modulus
        ka, kb = a.kind, b.kind
        if ka is CONSTANT and kb is CONSTANT:
            if bool(a.bit) != bool(b.bit):
                raise CircuitError(f"{name}: the constants {a.bit} and {b.bit} can never be equal")
            return
        if (ka is CONSTANT and a.bit) or (kb is CONSTANT and b.bit):
            x = b if ka is CONSTANT else a
            cs._enforce_terms({}, {}, _sub_terms(cs, {0: 1}, x.terms(r)), name)
        elif ka is CONSTANT or kb is CONSTANT:
            x = b if ka is CONSTANT else a
            cs._enforce_terms({}, {}, x.terms(r), name)
        else:
            cs._enforce_terms({}, {}, _sub_terms(cs, a.terms(r), b.terms(r)), name)


_TRUE = Boolean(CONSTANT, True)
_FALSE = Boolean(CONSTANT, False)
