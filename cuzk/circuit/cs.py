"""The tracing constraint system: records constraints and the witness program of a circuit.

``Circuit.define(cs, **inputs)`` runs once against a :class:`ConstraintSystem` whose inputs are
symbolic :class:`~cuzk.circuit.Value` placeholders. Every allocation, product and hint appends
an op to a flat witness program; every constraint appends three sparse rows. The Synthesizer
(:mod:`cuzk.synth`) compiles that record into CSR matrices and an ``int64`` op array.

    >>> cs = ConstraintSystem()
    >>> x = cs.private(3); out = cs.public(35)
    >>> cs.assert_equal(x * x * x + x + 5, out)
    >>> cs.n_constraints, cs.n_public, cs.n_private
    (3, 1, 3)
"""

from __future__ import annotations

import contextlib

from cuzk.circuit.blocks import KIND_PARAM, find_block, position_of_key
from cuzk.circuit.lc import LinearCombination, Value, Variable, _int_or_none, lincomb
from cuzk.circuit.ops import OP_BITS, OP_CONST, OP_INPUT, OP_LC, OP_MUL
from cuzk.circuit.stamp import repeat
from cuzk import curves
from cuzk.errors import CircuitError

__all__ = ["ConstraintSystem", "TemplateSystem"]

_KIND_ONE, _KIND_PUBLIC, _KIND_PRIVATE = 0, 1, 2


class ConstraintSystem:
    """Recorder of variables, constraints ``<a,z> * <b,z> = <c,z>`` and witness ops.

    Attributes:
        one: the constant-one :class:`Variable` (index 0).
        a, b, c: per constraint, dict internal variable index -> canonical coefficient.
        names: per constraint, its name (``namespace/name``) or None.
        curve: the canonical name of the curve whose Fr the circuit is over.
        modulus: that Fr's modulus r; constants and coefficients are reduced mod r.

    Args:
        curve: a curve name or alias (``cuzk.curves``); default BLS12-381.
    """

    def __init__(self, curve: str | None = None):
        spec = curves.resolve(curves.DEFAULT if curve is None else curve)
        self.curve = spec.name
        self.modulus = spec.fr.modulus
        self._var_kind = [_KIND_ONE]
        self._var_slot = [0]  # witness register of each variable; register 0 is the constant one
        self._n_slots = 1
        self.code: list[int] = []
        self.consts: list[int] = [1]  # constant table; index 0 (= one) means "no multiply" in OP_LC
        self._const_index = {1: 0}
        self._const_slots: dict[int, int] = {1: 0}
        self.input_names: list[str] = []  # flat input index -> "name[i][j]"
        self.a: list[dict] = []
        self.b: list[dict] = []
        self.c: list[dict] = []
        self.names: list = []
        self._prefix: list[str] = []
        self._names_here: dict = {}  # name -> its full name under the current prefix (reset by namespace)
        self.one = Variable(self, 0)
        # cs.repeat records (cuzk/circuit/blocks.py); their variables have negative keys
        self._blocks: list = []
        self._block_starts: list[int] = []  # var_pos of each block, for bisect
        self._n_stamped_vars = 0
        self._n_stamped_rows = 0
        self._progress = None  # compile progress (cuzk/synth/progress.py), told every 2^14 rows

    # -- counts ----------------------------------------------------------------------------
    @property
    def n_constraints(self) -> int:
        return len(self.a) + self._n_stamped_rows

    @property
    def n_public(self) -> int:
        return self._var_kind.count(_KIND_PUBLIC) + sum(b.k * b.n_public for b in self._blocks)

    @property
    def n_private(self) -> int:
        return self._var_kind.count(_KIND_PRIVATE) + sum(b.k * (b.n_vars - b.n_public) for b in self._blocks)

    @property
    def n_vars(self) -> int:
        """Variables allocated so far, ONE included (stamped instances included)."""
        return len(self._var_kind) + self._n_stamped_vars

    def _stamped(self, k: int):
        """``(block, instance, template-owned index)`` of the stamped variable with key ``k`` < 0."""
        pos = position_of_key(k)
        b = find_block(self._blocks, self._block_starts, pos)
        i, j = divmod(pos - b.var_pos, b.n_vars)
        return b, i, j

    def _var_slot_of(self, k: int) -> int:
        """Witness register of the variable with key ``k`` (traced or stamped)."""
        if k >= 0:
            return self._var_slot[k]
        b, i, j = self._stamped(k)
        return int(b.slot_of(i, b.slots[j]))

    def _kind_of(self, k: int) -> int:
        """0 (ONE), 1 (public), 2 (private) or 3 (a template parameter) of the variable with key ``k``."""
        if k >= 0:
            return self._var_kind[k]
        b, _, j = self._stamped(k)
        return int(b.kinds[j])

    @property
    def n_slots(self) -> int:
        return self._n_slots

    # -- witness program -------------------------------------------------------------------
    def _new_slots(self, n: int = 1) -> int:
        s = self._n_slots
        self._n_slots += n
        return s

    def _const_id(self, c: int) -> int:
        c %= self.modulus
        k = self._const_index.get(c)
        if k is None:
            k = self._const_index[c] = len(self.consts)
            self.consts.append(c)
        return k

    def _const_slot(self, c: int) -> int:
        c %= self.modulus
        s = self._const_slots.get(c)
        if s is None:
            s = self._const_slots[c] = self._new_slots()
            self.code += (OP_CONST, s, self._const_id(c))
        return s

    def _emit_value(self, op: int, *srcs: int) -> int:
        dst = self._n_slots  # _new_slots() inlined: hundreds of thousands of calls per SHA-256 circuit
        self._n_slots = dst + 1
        self.code += (op, dst, *srcs)
        return dst

    def _emit_bits(self, src: int, n: int) -> range:
        if not isinstance(n, int) or not 1 <= n <= 256:
            raise CircuitError(f"bit count must be an int in [1, 256], got {n!r}")
        dst = self._new_slots(n)
        self.code += (OP_BITS, dst, src, n)
        return range(dst, dst + n)

    def _slot_of(self, lc: LinearCombination) -> int:
        """Register holding the value of ``lc``, emitting an OP_LC the first time."""
        if lc._slot is not None:
            return lc._slot
        t = lc.terms
        if len(t) == 1:
            ((k, v),) = t.items()
            if v == 1:
                lc._slot = self._var_slot[k] if k >= 0 else self._var_slot_of(k)
                return lc._slot
            if k == 0:
                lc._slot = self._const_slot(v)
                return lc._slot
        if not t:
            lc._slot = self._const_slot(0)
            return lc._slot
        dst = self._new_slots()
        code = [OP_LC, dst, len(t)]
        for k, v in t.items():
            code += (0 if v == 1 else self._const_id(v), self._var_slot[k] if k >= 0 else self._var_slot_of(k))
        self.code += code
        lc._slot = dst
        return dst

    def input_placeholder(self, label: str) -> Value:
        """A :class:`Value` read from the next flat input (used by the Synthesizer's tracer)."""
        k = len(self.input_names)
        self.input_names.append(label)
        return Value(self, self._emit_value(OP_INPUT, k))

    # -- allocation ------------------------------------------------------------------------
    def _value_slot(self, value) -> tuple[int, LinearCombination | None]:
        if isinstance(value, Value):
            if value.cs is not self:
                raise CircuitError("value belongs to another constraint system")
            return value.slot, None
        if isinstance(value, LinearCombination):
            if value.cs is not self:
                raise CircuitError("combination belongs to another constraint system")
            return self._slot_of(value), value
        c = _int_or_none(value)
        if c is not None:
            return self._const_slot(c), None
        raise CircuitError(f"cannot allocate a variable from {type(value).__name__}; pass an input, a Value or an int")

    def _alloc(self, kind: int, value, name) -> Variable:
        slot, lc = self._value_slot(value)
        v = self._new_var(kind, slot)
        if lc is not None:  # allocating from a combination: constrain the new variable to it
            self.enforce(lc, self.one, v, name=name)
        return v

    def public(self, value, name: str | None = None) -> Variable:
        """Allocate a public input variable with witness ``value``.

        ``value`` is an input placeholder, a hint :class:`Value`, an int constant, or a
        :class:`LinearCombination` (then one constraint ``lc * 1 = v`` ties them).
        """
        return self._alloc(_KIND_PUBLIC, value, name)

    def private(self, value, name: str | None = None) -> Variable:
        """Allocate a private (auxiliary) variable with witness ``value``; see :meth:`public`."""
        return self._alloc(_KIND_PRIVATE, value, name)

    def constant(self, c: int) -> LinearCombination:
        """The constant ``c`` (an int, reduced mod r) as a combination of the one variable."""
        k = _int_or_none(c)
        if k is None:  # a float would otherwise ride along as a coefficient until compile time
            raise CircuitError(f"a circuit constant must be an int, got {type(c).__name__} {c!r:.40}")
        c = k % self.modulus
        return LinearCombination(self, {0: c} if c else {})

    # -- constraints -----------------------------------------------------------------------
    def _lc(self, x) -> LinearCombination:
        if isinstance(x, LinearCombination):
            if x.cs is not self:
                raise CircuitError("combination belongs to another constraint system")
            return x
        if _int_or_none(x) is not None:
            return self.constant(x)
        if isinstance(x, Value):
            raise CircuitError("a witness Value must be allocated (cs.private / cs.public) before it is constrained")
        raise CircuitError(f"expected a LinearCombination or int, got {type(x).__name__}")

    def _name(self, name):
        if name is not None and not isinstance(name, str):
            name = str(name)
        full = self._names_here.get(name)  # a traced gadget names millions of rows with a few names
        if full is None and (name is not None or self._prefix):
            full = self._names_here[name] = "/".join(self._prefix + ([name] if name is not None else []))
        return full

    def enforce(self, a, b, c, name: str | None = None) -> None:
        """Add the constraint ``a * b = c`` (combinations or ints), bellman-style."""
        a, b, c = self._lc(a), self._lc(b), self._lc(c)
        self.a.append(a.terms)
        self.b.append(b.terms)
        self.c.append(c.terms)
        self.names.append(self._name(name))
        if self._progress is not None and not len(self.a) & 0x3FFF:
            self._progress.traced(self.n_constraints)

    # -- lean paths for gadgets inside cuzk that trace millions of rows (SHA-256) ----------------
    # They skip the public methods' checks and LinearCombination objects: the caller hands over
    # what those would have produced (cuzk/circuit/gadgets/sha256_bits.py).
    def _enforce_terms(self, a: dict, b: dict, c: dict, name: str | None = None) -> None:
        """:meth:`enforce` of three reduced, zero-free term dicts {variable index: coefficient}
        of this system (the dicts are kept, not copied)."""
        self.a.append(a)
        self.b.append(b)
        self.c.append(c)
        self.names.append(self._name(name))
        if self._progress is not None and not len(self.a) & 0x3FFF:
            self._progress.traced(self.n_constraints)

    def _private_at(self, slot: int) -> Variable:
        """A private variable whose witness is register ``slot`` of this system."""
        return self._new_var(_KIND_PRIVATE, slot)

    def _new_var(self, kind: int, slot: int) -> Variable:
        idx = len(self._var_kind)
        self._var_kind.append(kind)
        self._var_slot.append(slot)
        v = Variable(self, idx)
        v._slot = slot
        return v

    def mul(self, x, y, name: str | None = None) -> Variable:
        """A new private variable ``v = x * y`` and the constraint ``x * y = v``."""
        x, y = self._lc(x), self._lc(y)
        dst = self._emit_value(OP_MUL, self._slot_of(x), self._slot_of(y))
        idx = len(self._var_kind)
        self._var_kind.append(_KIND_PRIVATE)
        self._var_slot.append(dst)
        v = Variable(self, idx)
        v._slot = dst
        self.a.append(x.terms)
        self.b.append(y.terms)
        self.c.append(v.terms)
        self.names.append(self._name(name))
        if self._progress is not None and not len(self.a) & 0x3FFF:
            self._progress.traced(self.n_constraints)
        return v

    def materialize(self, lc, name: str | None = None) -> Variable:
        """A variable equal to ``lc`` (itself if it already is one): constraint ``lc * 1 = v``."""
        lc = self._lc(lc)
        if isinstance(lc, Variable) and lc.index != 0:
            return lc
        return self._alloc(_KIND_PRIVATE, lc, name)

    def assert_equal(self, x, y, name: str | None = None) -> None:
        """Constrain ``x == y`` (one row ``x * 1 = y``)."""
        self.enforce(x, self.one, y, name=name)

    def assert_bool(self, x, name: str | None = None) -> None:
        """Constrain ``x`` to 0 or 1 (one row ``x * (1 - x) = 0``)."""
        x = self._lc(x)
        self.enforce(x, lincomb(((1, self.one), (-1, x)), materialize=False), 0, name=name)

    def repeat(self, fn, args, *, name: str | None = None):
        """``[fn(cs, *a) for a in args]``, traced once and stamped ``len(args)`` times.

        ``fn(cs, *a)`` is traced a single time on placeholder arguments; every instance then gets
        copies of its rows, variables and witness ops with their indices offset (numpy, at
        compile time), which gives the same R1CS rows in the same order, the same variable
        numbering and the same witness as calling ``fn`` once per item (docs/circuits.md,
        "Repeated sub-circuits"). Each item of ``args`` is a tuple of positional arguments (any
        other item is the single argument). An argument is a variable or combination of this
        system, a witness ``Value`` (inputs, hints), a list/tuple of those, or any other object
        (an int, a name, an arity) that is the same in every item. ``fn`` must reach the
        enclosing circuit only through its arguments, and every item must pass the same kinds of
        arguments, aliased the same way (instance 0's trace is everyone's).

        With ``name``, instance ``i`` runs in the namespace ``name`` with ``{i}`` replaced by
        ``i``. Returns a sequence of the ``k`` results, built on access.

        >>> cs = ConstraintSystem()
        >>> root = cs.public(30)
        >>> xs = [cs.private(v) for v in (1, 2, 3, 4)]
        >>> sums = cs.repeat(lambda cs, x, r: x * x + r, [(x, root) for x in xs], name="sq{i}")
        >>> cs.n_constraints, len(sums), sums[2].terms[root.index]   # one product per instance
        (4, 4, 1)

        Raises:
            CircuitError: items of different structure, kinds, constants or aliasing, or ``fn``
                using the enclosing system directly.
        """
        return repeat(self, fn, args, name=name)

    def _template(self) -> "TemplateSystem":
        """A fresh system to trace one ``cs.repeat`` template on, enclosed by this one."""
        return TemplateSystem(self)

    @contextlib.contextmanager
    def namespace(self, name: str):
        """Prefix the names of constraints added inside the block with ``name/``.

        >>> cs = ConstraintSystem(); x = cs.private(1)
        >>> with cs.namespace("check"):
        ...     cs.assert_bool(x, name="x")
        >>> cs.names
        ['check/x']
        """
        self._prefix.append(str(name))
        outer, self._names_here = self._names_here, {}
        try:
            yield self
        finally:
            self._prefix.pop()
            self._names_here = outer


class TemplateSystem(ConstraintSystem):
    """The constraint system one template is traced on: parameters first, shared constants.

    Its ``_const_slot`` hands out parameter registers bound to the enclosing system's register
    of the same constant, so every instance reads one shared register (as a hand trace does).
    """

    def __init__(self, parent: ConstraintSystem):
        super().__init__(parent.curve)
        self.parent = parent
        self._param_src: list = []  # per parameter column: ("var", p) | ("value", j) | ("const", slot)
        self._slot_col: dict[int, int] = {}

    def _param_slot(self, src) -> int:
        s = self._new_slots()
        self._slot_col[s] = len(self._param_src)
        self._param_src.append(src)
        return s

    def _param_var(self, p: int) -> Variable:
        return self._new_var(KIND_PARAM, self._param_slot(("var", p)))

    def _const_slot(self, c: int) -> int:
        c %= self.modulus
        s = self._const_slots.get(c)
        if s is None:
            s = self._const_slots[c] = self._param_slot(("const", self.parent._const_slot(c)))
        return s

    def input_placeholder(self, label: str) -> Value:
        raise CircuitError("a function given to cs.repeat cannot create circuit inputs: pass them as arguments")
