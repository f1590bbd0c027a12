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

from cuzk.circuit.lc import LinearCombination, Value
from cuzk.circuit.ops import OP_ADD, OP_MUL, OP_SUB
from cuzk.errors import CircuitError

__all__ = ["AllocatedBit", "Boolean", "IS", "NOT", "CONSTANT"]

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
        d = cs._emit_value(OP_SUB, _reg(cs, a.var), _reg(cs, b.var))
        v = cs._private_at(cs._emit_value(OP_MUL, d, d))  # (a - b)^2 is a xor b on bits
        r = cs.modulus
        ai, bi = a.var.index, b.var.index
        if ai == bi:
            c = {ai: 2, v.index: r - 1}
        else:
            c = {ai: 1, bi: 1, v.index: r - 1}
        cs._enforce_terms({ai: 2}, {bi: 1}, c, name)
        return cls(v)

    @classmethod
    def and_(cls, cs, a: "AllocatedBit", b: "AllocatedBit", name: str = "and constraint") -> "AllocatedBit":
        """``a & b``: new v and ``a * b = v``."""
        v = cs._private_at(cs._emit_value(OP_MUL, _reg(cs, a.var), _reg(cs, b.var)))
        cs._enforce_terms({a.var.index: 1}, {b.var.index: 1}, {v.index: 1}, name)
        return cls(v)

    @classmethod
    def and_not(cls, cs, a: "AllocatedBit", b: "AllocatedBit", name: str = "and not constraint") -> "AllocatedBit":
        """``a & !b``: new v and ``a * (1 - b) = v``."""
        nb = cs._emit_value(OP_SUB, 0, _reg(cs, b.var))  # register 0 holds the constant one
        v = cs._private_at(cs._emit_value(OP_MUL, _reg(cs, a.var), nb))
        cs._enforce_terms({a.var.index: 1}, {0: 1, b.var.index: cs.modulus - 1}, {v.index: 1}, name)
        return cls(v)

    @classmethod
    def nor(cls, cs, a: "AllocatedBit", b: "AllocatedBit", name: str = "nor constraint") -> "AllocatedBit":
        """``!a & !b``: new v and ``(1 - a) * (1 - b) = v``."""
        na = cs._emit_value(OP_SUB, 0, _reg(cs, a.var))
        nb = cs._emit_value(OP_SUB, 0, _reg(cs, b.var))
        v = cs._private_at(cs._emit_value(OP_MUL, na, nb))
        m = cs.modulus - 1
        cs._enforce_terms({0: 1, a.var.index: m}, {0: 1, b.var.index: m}, {v.index: 1}, name)
        return cls(v)


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
    @staticmethod
    def xor(cs, a: "Boolean", b: "Boolean", name: str = "xor constraint") -> "Boolean":
        """``a ^ b``: free with a constant; one row otherwise (Is/Not mixes negate the result)."""
        ka, kb = a.kind, b.kind
        if ka is CONSTANT and not a.bit:
            return b
        if kb is CONSTANT and not b.bit:
            return a
        if ka is CONSTANT:
            return b.not_()
        if kb is CONSTANT:
            return a.not_()
        if ka is kb:
            return Boolean(IS, AllocatedBit.xor(cs, a.bit, b.bit, name))
        # one Is and one Not: !(is ^ not.not()), with the Is bit first as bellperson orders it
        is_, not_ = (a, b) if ka is IS else (b, a)
        return Boolean(NOT, AllocatedBit.xor(cs, is_.bit, not_.bit, name))

    @staticmethod
    def and_(cs, a: "Boolean", b: "Boolean", name: str | None = None) -> "Boolean":
        """``a & b``: free with a constant; else one of the and / and-not / nor rows."""
        ka, kb = a.kind, b.kind
        if (ka is CONSTANT and not a.bit) or (kb is CONSTANT and not b.bit):
            return _FALSE
        if ka is CONSTANT:
            return b
        if kb is CONSTANT:
            return a
        if ka is IS and kb is IS:
            return Boolean(IS, AllocatedBit.and_(cs, a.bit, b.bit, name or "and constraint"))
        if ka is NOT and kb is NOT:
            return Boolean(IS, AllocatedBit.nor(cs, a.bit, b.bit, name or "nor constraint"))
        is_, not_ = (a, b) if ka is IS else (b, a)
        return Boolean(IS, AllocatedBit.and_not(cs, is_.bit, not_.bit, name or "and not constraint"))

    @staticmethod
    def or_(cs, a: "Boolean", b: "Boolean") -> "Boolean":
        """``a | b`` as ``!(!a & !b)``."""
        return Boolean.and_(cs, a.not_(), b.not_(), "not and (not a) (not b)").not_()

    @staticmethod
    def sha256_ch(cs, a: "Boolean", b: "Boolean", c: "Boolean", name: str = "ch computation") -> "Boolean":
        """``(a & b) ^ (!a & c)``: the constant cases fold to at most one and-row; else a new
        bit ``ch`` and ``(b - c) * a = ch - c``."""
        ka, kb, kc = a.kind, b.kind, c.kind
        if ka is CONSTANT and kb is CONSTANT and kc is CONSTANT:
            return Boolean.constant((a.bit and b.bit) or (not a.bit and c.bit))
        if ka is CONSTANT and not a.bit:
            return c
        if kb is CONSTANT and not b.bit:
            return Boolean.and_(cs, a.not_(), c)
        if kc is CONSTANT and not c.bit:
            return Boolean.and_(cs, a, b)
        if kc is CONSTANT:  # c true
            return Boolean.and_(cs, a, b.not_()).not_()
        if kb is CONSTANT:  # b true
            return Boolean.and_(cs, a.not_(), c.not_()).not_()
        # a constant true, or nothing constant: the general row
        cr = c._reg(cs)
        t = cs._emit_value(OP_MUL, a._reg(cs), cs._emit_value(OP_SUB, b._reg(cs), cr))
        ch = cs._private_at(cs._emit_value(OP_ADD, cr, t))  # c + a * (b - c)
        r = cs.modulus
        ct = c.terms(r)
        cs._enforce_terms(_sub_terms(cs, b.terms(r), ct), a.terms(r), _sub_terms(cs, {ch.index: 1}, ct), name)
        return Boolean(IS, AllocatedBit(ch))

    @staticmethod
    def sha256_maj(cs, a: "Boolean", b: "Boolean", c: "Boolean", name: str = "maj computation") -> "Boolean":
        """``(a & b) ^ (a & c) ^ (b & c)``: constants fold to at most one and-row; else a new bit
        ``maj``, then ``bc = b & c`` and ``(2bc - b - c) * a = bc - maj``."""
        ka, kb, kc = a.kind, b.kind, c.kind
        if ka is CONSTANT and kb is CONSTANT and kc is CONSTANT:
            return Boolean.constant((a.bit + b.bit + c.bit) >= 2)
        if ka is CONSTANT and not a.bit:
            return Boolean.and_(cs, b, c)
        if kb is CONSTANT and not b.bit:
            return Boolean.and_(cs, a, c)
        if kc is CONSTANT and not c.bit:
            return Boolean.and_(cs, a, b)
        if kc is CONSTANT:
            return Boolean.and_(cs, a.not_(), b.not_()).not_()
        if kb is CONSTANT:
            return Boolean.and_(cs, a.not_(), c.not_()).not_()
        if ka is CONSTANT:
            return Boolean.and_(cs, b.not_(), c.not_()).not_()
        br, cr = b._reg(cs), c._reg(cs)
        d = cs._emit_value(OP_SUB, br, cr)
        t = cs._emit_value(OP_MUL, a._reg(cs), cs._emit_value(OP_MUL, d, d))
        # maj = bc + a * (b xor c) on bits; the maj variable comes before bc's, as in bellperson
        maj = cs._private_at(cs._emit_value(OP_ADD, cs._emit_value(OP_MUL, br, cr), t))
        bc = Boolean.and_(cs, b, c, "b and c")
        r = cs.modulus
        lhs = _sub_terms(cs, _sub_terms(cs, bc.terms(r, 2), b.terms(r)), c.terms(r))
        cs._enforce_terms(lhs, a.terms(r), _sub_terms(cs, bc.terms(r), {maj.index: 1}), name)
        return Boolean(IS, AllocatedBit(maj))

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
