"""SHA-256 whose compressions are traced once and stamped: the same rows, variables and witness
as :func:`cuzk.circuit.gadgets.sha256`, at the compile speed of ``cs.repeat``.

``cs.repeat`` needs every instance's arguments before it records them, but block ``i + 1`` of a
hash reads block ``i``'s output. So a :class:`Sha256Stamper` traces a compression once per
*shape* (which of its 768 input bits — 512 message bits and 256 chaining bits — are variables,
negations or constants, and which of them repeat a variable) and records every later block of
that shape as a one-instance block of the same template (cuzk/circuit/stamp.py; the compile
builds each template's fragment once, docs/circuits.md "Repeated sub-circuits"). Blocks whose
inputs are all constants fold to constants and are traced by hand, as bellperson does.

Share one stamper between hashes (every label of a StackedCircuit) so their blocks share
templates; each block runs in the namespace ``block i`` like :func:`sha256`'s.

    >>> from cuzk.circuit import ConstraintSystem
    >>> from cuzk.circuit.gadgets.bit import Boolean
    >>> cs = ConstraintSystem()
    >>> bits = [Boolean.alloc(cs, i % 2) for i in range(8)]
    >>> st = Sha256Stamper(cs)
    >>> out = st.sha256(bits) + st.sha256(bits[::-1])   # the second hash reuses the template
    >>> cs.n_constraints - 8, len(st.templates)          # two one-block hashes, constants folded
    (48740, 1)
"""

from __future__ import annotations

import attrs
import numpy as np

from cuzk.circuit.blocks import index_dtype, key_of_position
from cuzk.circuit.gadgets.bit import CONSTANT, IS, NOT, AllocatedBit, Boolean
from cuzk.circuit.gadgets.sha256 import sha256_compression_function, sha256_iv, sha256_padding
from cuzk.circuit.gadgets.uint32 import UInt32
from cuzk.circuit.lc import Variable
from cuzk.circuit.stamp import _bind, _classes, keys_to_positions, slots_of_keys
from cuzk.errors import CircuitError

__all__ = ["Sha256Stamper", "sha256_stamped"]

_CODE = {IS: "I", NOT: "N"}


def _shape(bits):
    """``(pattern, variables)``: one letter per bit (I, N, 0, 1) and the variables of I/N bits."""
    pat, vs = [], []
    for b in bits:
        if b.kind is CONSTANT:
            pat.append("1" if b.bit else "0")
        else:
            pat.append(_CODE[b.kind])
            vs.append(b.bit.var)
    return "".join(pat), vs


def _compress(cs, pattern, vs):
    """The template: the compression of the bits ``pattern`` describes over the variables ``vs``."""
    it = iter(vs)
    bits = []
    for ch in pattern:
        if ch == "I":
            bits.append(Boolean(IS, AllocatedBit(next(it))))
        elif ch == "N":
            bits.append(Boolean(NOT, AllocatedBit(next(it))))
        else:
            bits.append(Boolean.constant(ch == "1"))
    out = sha256_compression_function(cs, bits[:512], _words(bits[512:]))
    # return plain (kind, variable | bool) pairs: cs.repeat maps variables inside tuples to instances
    return [(b.kind, b.bit.var if b.kind is not CONSTANT else b.bit) for w in out for b in w.bits]


def _words(bits) -> list:
    return [UInt32.from_bits(bits[32 * j:32 * j + 32]) for j in range(8)]


@attrs.frozen(eq=False)
class _Template:
    """A traced compression shape: its first block and where its 256 output bits live."""

    block: object  # the first cuzk.circuit.blocks.Block of this shape
    kinds: tuple  # per output bit: IS, NOT or CONSTANT
    consts: tuple  # per output bit: its bool when CONSTANT
    owned: np.ndarray  # per output bit: template-owned position offset (var_pos + i * n_vars + this), or -1
    param: np.ndarray  # per output bit: parameter column when it is an input passed through, or -1

    @classmethod
    def of(cls, block) -> "_Template":
        t, n_par = block.template, block.n_params
        kinds = tuple(k for k, _ in block.outputs)
        consts = tuple(v if k is CONSTANT else False for k, v in block.outputs)
        tkeys = np.array([v.index if k is not CONSTANT else 0 for k, v in block.outputs], dtype=np.int64)
        is_par = (tkeys > 0) & (tkeys <= n_par)
        own = (tkeys > n_par) | (tkeys < 0)
        owned = np.full(tkeys.shape, -1, dtype=np.int64)
        if own.any():
            owned[own] = keys_to_positions(t, tkeys[own]) - 1 - n_par
        param = np.where(is_par, tkeys - 1, -1)
        return cls(block, kinds, consts, owned, param)

    def outputs(self, cs, block) -> list:
        """The 8 output words of ``block`` (an instance of this shape) in ``cs``."""
        keys = np.where(self.owned >= 0, key_of_position(block.var_pos + self.owned), 0)
        if (self.param >= 0).any():
            p = self.param >= 0
            keys[p] = block.bind_keys[0, self.param[p]]
        bits = []
        for kind, c, key in zip(self.kinds, self.consts, keys.tolist()):
            bits.append(Boolean.constant(c) if kind is CONSTANT else Boolean(kind, AllocatedBit(Variable(cs, key))))
        return _words(bits)


def _stamp_again(cs, b0, bind_keys: np.ndarray, vals: np.ndarray):
    """Record one more instance of ``b0``'s template at the current point of ``cs``.

    What ``cs.repeat`` records for a one-instance block (cuzk/circuit/stamp.py), with the
    template's variable and register tables taken from ``b0`` instead of being recomputed.
    """
    t = b0.template
    var_slots = slots_of_keys(cs, bind_keys) if bind_keys.shape[1] else None
    cols = []
    for src in t._param_src:
        if src[0] == "var":
            cols.append(var_slots[:, src[1]])
        elif src[0] == "value":
            cols.append(vals[:, src[1]])
        else:
            cols.append(np.full(1, src[1], dtype=np.int64))
    slot_hi = cs.n_slots + b0.n_slots
    bind_slots = (np.stack(cols, axis=1) if cols else np.zeros((1, 0), np.int64)).astype(index_dtype(slot_hi))
    var_pos = cs.n_vars
    if var_pos + b0.n_vars > (1 << 31) - 1:
        raise CircuitError("sha256 stamping takes the circuit past 2^31 variables")
    b = attrs.evolve(
        b0, k=1, bind_keys=bind_keys.astype(index_dtype(var_pos + 1)), bind_slots=bind_slots,
        at_var=len(cs._var_kind), at_row=len(cs.a), at_code=len(cs.code), var_pos=var_pos,
        row_pos=cs.n_constraints, slot_base=cs.n_slots, prefix=tuple(cs._prefix), name=None,
    )
    cs._blocks.append(b)
    cs._block_starts.append(var_pos)
    cs._n_stamped_vars += b.n_vars
    cs._n_stamped_rows += b.n_rows
    cs._n_slots += b.n_slots
    if cs._progress is not None:
        cs._progress.traced(cs.n_constraints)
    return b


class Sha256Stamper:
    """Compressions of ``cs`` traced once per input shape and stamped (see the module docstring).

    Attributes:
        templates: the shapes traced so far, keyed by ``(pattern, aliasing)``.
    """

    def __init__(self, cs):
        self.cs = cs
        self.templates: dict = {}

    def compression(self, input_bits, current_hash) -> list:
        """:func:`~cuzk.circuit.gadgets.sha256.sha256_compression_function`, stamped."""
        cs = self.cs
        bits = list(input_bits)
        if len(bits) != 512 or len(current_hash) != 8:
            raise CircuitError(f"a compression takes 512 bits and 8 words, got {len(bits)} and {len(current_hash)}")
        for w in current_hash:
            bits += w.bits
        pattern, vs = _shape(bits)
        if not vs:  # all constants: folds to constant words, no row to stamp
            return sha256_compression_function(cs, bits[:512], list(current_hash))
        args = [(pattern, vs)]
        _, _, keys, vals = _bind(cs, args, 1)
        cls, reps = _classes(keys)
        key = (pattern, cls.tobytes())
        tpl = self.templates.get(key)
        if tpl is None:
            rep = cs.repeat(_compress, args)
            tpl = self.templates[key] = _Template.of(rep._block)
            return tpl.outputs(cs, rep._block)
        return tpl.outputs(cs, _stamp_again(cs, tpl.block, keys[:, reps], vals))

    def sha256(self, bits) -> list:
        """:func:`~cuzk.circuit.gadgets.sha256`, its compressions stamped; 256 Booleans."""
        bits = list(bits)
        if len(bits) % 8:
            raise CircuitError(f"sha256 takes whole bytes, got {len(bits)} bits")
        padded = bits + sha256_padding(len(bits))
        cur = sha256_iv()
        for i in range(0, len(padded), 512):
            with self.cs.namespace(f"block {i // 512}"):
                cur = self.compression(padded[i:i + 512], cur)
        return [b for w in cur for b in w.into_bits_be()]


def sha256_stamped(cs, bits, stamper: Sha256Stamper | None = None) -> list:
    """:func:`~cuzk.circuit.gadgets.sha256` with stamped compressions; pass a shared
    :class:`Sha256Stamper` to reuse templates across hashes."""
    return (stamper or Sha256Stamper(cs)).sha256(bits)
