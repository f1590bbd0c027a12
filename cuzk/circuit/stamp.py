"""``cs.repeat``: trace a sub-circuit once on placeholder arguments, record it as a block of
``k`` instances (cuzk/circuit/blocks.py); the compile places the copies with numpy
(cuzk/synth/placement.py). DESIGN §8, "Repeated sub-circuits".

Why the result equals tracing each instance by hand: every DSL operation treats variables only
by identity (dict keys), so a trace on fresh parameter variables, renamed injectively onto an
instance's arguments, is that instance's trace. The binding checks make the renaming injective
(distinct parameters never meet the same variable, none is ONE) and the non-variable arguments
identical, and constants a template needs come from the enclosing system's shared registers.

    >>> from cuzk.circuit import ConstraintSystem
    >>> cs = ConstraintSystem()
    >>> root = cs.public(9)
    >>> def check(cs, x, root):
    ...     cs.assert_equal(x * x, root, name="square")
    >>> _ = cs.repeat(check, [(cs.private(3), root), (cs.private(-3), root)], name="c{i}")
    >>> cs.n_constraints, cs.n_private          # per instance: x, x*x and the check
    (4, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from cuzk.circuit.blocks import Block, index_dtype, key_of_position, position_of_key, var_segments
from cuzk.circuit.lc import LinearCombination, Value, Variable
from cuzk.errors import CircuitError

if TYPE_CHECKING:
    # cs.py imports this module for ConstraintSystem.repeat; a template is made with
    # cs._template(), so nothing here needs the classes at run time
    from cuzk.circuit.cs import ConstraintSystem, TemplateSystem

__all__ = ["Repeated", "repeat", "var_table", "keys_to_positions", "slots_of_keys"]


# -- variable tables -------------------------------------------------------------------------

def _stamped_before(cs, traced_keys: np.ndarray) -> np.ndarray:
    """Stamped variables allocated before each traced key (blocks come between traced ones)."""
    if not cs._blocks:
        return np.zeros_like(traced_keys)
    at = np.array([b.at_var for b in cs._blocks], dtype=np.int64)
    cum = np.concatenate(([0], np.cumsum([b.k * b.n_vars for b in cs._blocks])))
    return cum[np.searchsorted(at, traced_keys, side="right")]


def keys_to_positions(cs, keys: np.ndarray) -> np.ndarray:
    """Allocation positions (ONE = 0) of variable keys of ``cs`` (array in, int64 array out)."""
    keys = np.asarray(keys, dtype=np.int64)
    out = position_of_key(keys)
    t = keys >= 0
    if t.any():
        out[t] = keys[t] + _stamped_before(cs, keys[t])
    return out


def slots_of_keys(cs, keys: np.ndarray) -> np.ndarray:
    """Witness registers of variable keys of ``cs`` (vectorized over stamped keys)."""
    keys = np.asarray(keys, dtype=np.int64)
    out = np.empty(keys.shape, dtype=np.int64)
    t = keys >= 0
    if t.any():
        vs = cs._var_slot
        out[t] = np.fromiter((vs[x] for x in keys[t].tolist()), dtype=np.int64, count=int(t.sum()))
    if (~t).any():
        pos = position_of_key(keys[~t])
        bi = np.searchsorted(np.asarray(cs._block_starts, dtype=np.int64), pos, side="right") - 1
        res = np.empty(pos.shape, dtype=np.int64)
        for n in np.unique(bi).tolist():
            b = cs._blocks[n]
            sel = bi == n
            i, j = np.divmod(pos[sel] - b.var_pos, b.n_vars)
            res[sel] = b.slot_of(i, b.slots[j])
        out[~t] = res
    return out


def var_table(cs, lo: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(kinds int8, registers int64)`` of the variables of ``cs`` from position ``lo`` on, in
    allocation order, stamped instances expanded (numpy over ranges of instances)."""
    n = cs.n_vars
    kinds = np.empty(n - lo, dtype=np.int8)
    slots = np.empty(n - lo, dtype=np.int64)
    for pos, t0, t1, b in var_segments(cs):
        if b is None:
            a = max(pos, lo)
            if pos + t1 - t0 > a:
                kinds[a - lo:pos + t1 - t0 - lo] = cs._var_kind[t0 + a - pos:t1]
                slots[a - lo:pos + t1 - t0 - lo] = cs._var_slot[t0 + a - pos:t1]
            continue
        step = max(1, (1 << 20) // max(1, b.n_vars))  # instances per chunk: ~1M variables
        for i0 in range(0, b.k, step):
            i1 = min(b.k, i0 + step)
            p0, p1 = pos + i0 * b.n_vars, pos + i1 * b.n_vars
            if p1 <= lo:
                continue
            cut = max(0, lo - p0)
            kinds[p0 + cut - lo:p1 - lo] = np.tile(b.kinds, i1 - i0)[cut:]
            slots[p0 + cut - lo:p1 - lo] = b.map_slots(b.slots, i0, i1).ravel()[cut:]
    return kinds, slots


# -- arguments -------------------------------------------------------------------------------

def _flatten(tree, leaves: list, shape: list) -> None:
    if isinstance(tree, (list, tuple)):
        shape.append((type(tree), len(tree)))
        for x in tree:
            _flatten(x, leaves, shape)
    else:
        leaves.append(tree)


def _rebuild(tree, it):
    if isinstance(tree, list):
        return [_rebuild(x, it) for x in tree]
    if isinstance(tree, tuple):
        return tuple(_rebuild(x, it) for x in tree)
    return next(it)


def _spec(cs, leaf, where: str):
    """What instance 0's leaf asks of every instance: ("x",) a variable, ("l", signature) a
    combination, ("v",) a witness value, ("s", obj) a constant object."""
    if isinstance(leaf, LinearCombination):
        if leaf.cs is not cs:
            raise CircuitError(f"cs.repeat: {where} belongs to another constraint system")
        if type(leaf) is Variable and leaf.index != 0:
            return ("x",)
        return ("l", tuple((k != 0, v) for k, v in leaf.terms.items()))
    if isinstance(leaf, Value):
        if leaf.cs is not cs:
            raise CircuitError(f"cs.repeat: {where} belongs to another constraint system")
        return ("v",)
    return ("s", leaf)


def _bind(cs, items, k: int):
    """Instance 0's argument tree and leaf specs, and per instance the variable keys (k, T) and
    value registers (k, V) of its leaves. Raises CircuitError on any structural mismatch."""
    norm = [it if isinstance(it, tuple) else (it,) for it in items]
    leaves0, shape0 = [], []
    _flatten(norm[0], leaves0, shape0)
    specs = [_spec(cs, leaf, f"argument leaf {j} of instance 0") for j, leaf in enumerate(leaves0)]
    n_terms = sum(1 if s[0] == "x" else sum(1 for is_var, _ in s[1] if is_var) if s[0] == "l" else 0 for s in specs)
    n_vals = sum(1 for s in specs if s[0] == "v")
    keys = np.empty((k, n_terms), dtype=np.int64)
    vals = np.empty((k, n_vals), dtype=np.int64)
    kinds = [s[0] for s in specs]
    for i, item in enumerate(norm):
        if i == 0:
            leaves = leaves0
        else:
            leaves, shape = [], []
            _flatten(item, leaves, shape)
            if shape != shape0 or len(leaves) != len(leaves0):
                raise CircuitError(f"cs.repeat: instance {i}'s arguments are not shaped like instance 0's "
                                   "(same tuple/list nesting and lengths needed)")
        kt, kv = [], []
        for j, leaf in enumerate(leaves):
            kind = kinds[j]
            if kind == "x":
                if type(leaf) is not Variable or leaf.cs is not cs or leaf.index == 0:
                    raise CircuitError(f"cs.repeat: instance {i}, argument leaf {j}: instance 0 passes a variable "
                                       f"here, this one passes {_describe(leaf)}")
                kt.append(leaf.index)
            elif kind == "v":
                if not isinstance(leaf, Value) or leaf.cs is not cs:
                    raise CircuitError(f"cs.repeat: instance {i}, argument leaf {j}: instance 0 passes a witness "
                                       f"Value here, this one passes {_describe(leaf)}")
                kv.append(leaf.slot)
            elif kind == "l":
                sig = specs[j][1]
                if (type(leaf) is Variable or not isinstance(leaf, LinearCombination) or leaf.cs is not cs
                        or tuple((kk != 0, v) for kk, v in leaf.terms.items()) != sig):
                    raise CircuitError(f"cs.repeat: instance {i}, argument leaf {j}: instance 0 passes a combination "
                                       f"with these coefficients here, this one passes {_describe(leaf)}; only the "
                                       "variables may differ between instances")
                kt.extend(kk for kk in leaf.terms if kk != 0)
            else:
                if i and not _same(leaf, specs[j][1]):
                    raise CircuitError(f"cs.repeat: instance {i}, argument leaf {j}: {_describe(leaf)} differs from "
                                       f"instance 0's {_describe(specs[j][1])}; non-variable arguments (ints, "
                                       "names, sizes) are traced once and must be the same in every instance")
        keys[i] = kt
        vals[i] = kv
    return norm[0], specs, keys, vals


def _same(a, b) -> bool:
    if isinstance(a, (LinearCombination, Value)) or isinstance(b, (LinearCombination, Value)) or type(a) is not type(b):
        return False
    try:
        eq = a == b
    except Exception:  # an object without a usable == (numpy arrays compare elementwise)
        return False
    return eq is True or eq is np.True_


def _describe(x) -> str:
    if isinstance(x, Variable):
        return "ONE" if x.index == 0 else "a variable"
    if isinstance(x, LinearCombination):
        return f"a combination of {len(x.terms)} terms"
    if isinstance(x, Value):
        return "a witness Value"
    return f"{type(x).__name__} {x!r:.40}"


def _classes(keys: np.ndarray):
    """Parameters: one per distinct variable among instance 0's variable terms. Every instance
    must alias its terms exactly as instance 0 does (then the renaming is injective)."""
    k, t = keys.shape
    if t == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    _, first, inv = np.unique(keys[0], return_index=True, return_inverse=True)
    order = np.argsort(first)  # parameters numbered by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    reps = first[order]
    cls = rank[inv.ravel()]
    same = keys == keys[:, reps[cls]]
    if not same.all():
        i = int(np.flatnonzero(~same.all(axis=1))[0])
        raise CircuitError(f"cs.repeat: instance {i} passes different variables where instance 0 passes one "
                           "variable twice; every instance must alias its arguments as instance 0 does")
    if reps.shape[0] > 1:
        s = np.sort(keys[:, reps], axis=1)
        dup = (s[:, 1:] == s[:, :-1]).any(axis=1)
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise CircuitError(f"cs.repeat: instance {i} passes one variable in two places where instance 0 passes "
                               "two different ones; every instance must alias its arguments as instance 0 does")
    return cls, reps


def _template_args(t: TemplateSystem, tree0, specs, cls, n_params):
    params = [t._param_var(p) for p in range(n_params)]
    built, term, val = [], 0, 0
    for s in specs:
        if s[0] == "x":
            built.append(params[cls[term]])
            term += 1
        elif s[0] == "v":
            built.append(Value(t, t._param_slot(("value", val))))
            val += 1
        elif s[0] == "l":
            terms = {}
            for is_var, coef in s[1]:
                if is_var:
                    terms[params[cls[term]].index] = coef
                    term += 1
                else:
                    terms[0] = coef
            built.append(LinearCombination(t, terms))
        else:
            built.append(s[1])
    return _rebuild(tree0, iter(built))


# -- repeat ----------------------------------------------------------------------------------

def repeat(cs: ConstraintSystem, fn, args, *, name: str | None = None) -> "Repeated":
    """See :meth:`cuzk.circuit.ConstraintSystem.repeat`."""
    if not callable(fn):
        raise CircuitError(f"cs.repeat needs a function fn(cs, *args), got {type(fn).__name__}")
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise CircuitError(f"cs.repeat needs a sequence of argument tuples, got {type(args).__name__}")
    if name is not None and not isinstance(name, str):
        raise CircuitError(f"cs.repeat: name must be a str or None, got {type(name).__name__}")
    k = len(args)
    if k == 0:
        return Repeated(cs, None, 0)
    tree0, specs, keys, vals = _bind(cs, args, k)
    cls, reps = _classes(keys)
    t = cs._template()
    targs = _template_args(t, tree0, specs, cls, reps.shape[0])
    before = (len(cs._var_kind), len(cs.a), len(cs._blocks), len(cs.input_names))
    try:
        out = fn(t, *targs)
    except CircuitError as e:
        e.add_note("inside cs.repeat: the function sees only its arguments; pass variables of the enclosing "
                   "circuit as arguments instead of using them from a closure")
        raise
    if (len(cs._var_kind), len(cs.a), len(cs._blocks), len(cs.input_names)) != before:
        raise CircuitError("the function given to cs.repeat added to the enclosing constraint system; it must use "
                           "only the cs it is called with")
    return Repeated(cs, _record(cs, t, k, keys[:, reps], vals, name, out), k)


def _record(cs, t: TemplateSystem, k: int, bind_keys, vals, name, out) -> Block:
    n_params = bind_keys.shape[1]
    kinds, slots = var_table(t, 1 + n_params)
    n_slots_t = t.n_slots
    slot_col = np.full(n_slots_t, -1, dtype=np.int64)
    for s, c in t._slot_col.items():
        slot_col[s] = c
    own = slot_col < 0
    own[0] = False
    slot_rank = np.full(n_slots_t, -1, dtype=np.int64)
    slot_rank[own] = np.arange(int(own.sum()))
    n_own = int(own.sum())
    # parameter registers per instance: an argument variable's register, a Value's, a constant's
    cols = []
    var_slots = slots_of_keys(cs, bind_keys) if n_params else None
    for src in t._param_src:
        if src[0] == "var":
            cols.append(var_slots[:, src[1]])
        elif src[0] == "value":
            cols.append(vals[:, src[1]])
        else:
            cols.append(np.full(k, src[1], dtype=np.int64))
    slot_hi = cs.n_slots + k * n_own
    bind_slots = (np.stack(cols, axis=1) if cols else np.zeros((k, 0), np.int64)).astype(index_dtype(slot_hi))
    n_vars = kinds.shape[0]
    var_pos = cs.n_vars
    if var_pos + k * n_vars > (1 << 31) - 1:
        raise CircuitError(f"cs.repeat: {k} instances of {n_vars} variables take the circuit past 2^31 variables")
    b = Block(
        template=t, k=k, bind_keys=bind_keys.astype(index_dtype(var_pos + 1)), bind_slots=bind_slots,
        kinds=kinds, slots=slots, slot_rank=slot_rank, slot_col=slot_col,
        n_vars=n_vars, n_slots=n_own, n_rows=t.n_constraints, n_public=int((kinds == 1).sum()),
        at_var=len(cs._var_kind), at_row=len(cs.a), at_code=len(cs.code), var_pos=var_pos,
        row_pos=cs.n_constraints, slot_base=cs.n_slots, prefix=tuple(cs._prefix), name=name, outputs=out,
    )
    cs._blocks.append(b)
    cs._block_starts.append(var_pos)
    cs._n_stamped_vars += k * n_vars
    cs._n_stamped_rows += k * b.n_rows
    cs._n_slots += k * n_own
    if cs._progress is not None:
        cs._progress.traced(cs.n_constraints)
    return b


class Repeated(Sequence):
    """The ``k`` results of ``cs.repeat``; result ``i`` is made when it is asked for."""

    def __init__(self, cs, block: Block | None, k: int):
        self._cs, self._block, self._k = cs, block, k

    def __len__(self) -> int:
        return self._k

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._k))]
        if not -self._k <= i < self._k:
            raise IndexError(f"instance {i} of {self._k}")
        i %= self._k
        return _map_out(self._cs, self._block, i, self._block.outputs)


def _map_out(cs, b: Block, i: int, x):
    if isinstance(x, list):
        return [_map_out(cs, b, i, y) for y in x]
    if isinstance(x, tuple):
        return tuple(_map_out(cs, b, i, y) for y in x)
    t = b.template
    if isinstance(x, LinearCombination) and x.cs is t:
        if type(x) is Variable:
            return Variable(cs, _map_key(b, i, x.index))
        return LinearCombination(cs, {_map_key(b, i, key): v for key, v in x.terms.items()})
    if isinstance(x, Value) and x.cs is t:
        return Value(cs, int(b.slot_of(np.int64(i), np.int64(x.slot))))
    if isinstance(x, (LinearCombination, Value)) and x.cs is not cs:
        raise CircuitError("cs.repeat: the function returned a variable of another constraint system")
    return x


def _map_key(b: Block, i: int, tkey: int) -> int:
    """The enclosing key of template variable ``tkey`` in instance ``i``."""
    n_par = b.n_params
    if tkey == 0:
        return 0
    if 0 < tkey <= n_par:
        return int(b.bind_keys[i, tkey - 1])
    if tkey > 0 and not b.template._blocks:  # a traced key is its position when nothing was stamped
        pos = tkey                            # before it (numpy per key: 15 µs, 256 per SHA-256 block)
    else:
        pos = int(keys_to_positions(b.template, np.array([tkey]))[0])
    return int(key_of_position(b.var_pos + i * b.n_vars + pos - 1 - n_par))
