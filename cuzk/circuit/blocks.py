"""Stamped blocks: the record ``cs.repeat`` leaves in a constraint system, and the index maps
that place instance ``i`` of a traced template into the enclosing system's numbering.

A template (:class:`cuzk.circuit.cs.TemplateSystem`) numbers its variables by allocation
position: 0 is ONE, ``1..P`` are the *parameters* (the enclosing variables an instance is given),
then the template's own variables. Its registers: 0 is one, some are *parameter registers*
(bound per instance to an enclosing register: an argument's register, or a shared constant's),
the rest are its own. Instance ``i`` of a block owns a contiguous range of the enclosing
system's variables and registers::

    variable position  P + 1 + j   ->  var_pos  + i * n_vars  + j
    register of rank r             ->  slot_base + i * n_slots + r
    parameter p / parameter column q -> bind_keys[i, p - 1] / bind_slots[i, q]

Variables of a block have negative keys in the enclosing system (``-1 - position``), so the
traced variables keep their list indices and a hand-traced circuit pays nothing for stamping.
Everything here is numpy on whole instance ranges: no per-instance Python objects.

    >>> key_of_position(5), position_of_key(-6)
    (-6, 5)
"""

from __future__ import annotations

import bisect

import attrs
import numpy as np

__all__ = ["Block", "KIND_PARAM", "key_of_position", "position_of_key", "find_block", "index_dtype", "var_segments"]

KIND_PARAM = 3  # a template's parameter variable (kinds 0, 1, 2: ONE, public, private)
_INT32_MAX = (1 << 31) - 1


def key_of_position(pos):
    """The enclosing key of a stamped variable at allocation position ``pos`` (int or array)."""
    return -1 - pos


def position_of_key(key):
    """Inverse of :func:`key_of_position`."""
    return -1 - key


def index_dtype(hi: int):
    """int32 when every value is below ``hi`` <= 2^31, else int64 (half the memory when it fits)."""
    return np.int32 if hi <= _INT32_MAX else np.int64


@attrs.frozen(eq=False)
class Block:
    """``k`` instances of one traced template, recorded at one point of the enclosing system.

    Positions (``at_*``) count the enclosing system's *traced* records before the block, so a
    compile can splice the block between them; ``var_pos``/``row_pos`` are the block's first
    allocation position and row in the enclosing system's full order.
    """

    template: object  # the TemplateSystem traced once
    k: int
    bind_keys: np.ndarray  # (k, P) enclosing keys of the parameter variables
    bind_slots: np.ndarray  # (k, Q) enclosing registers of the parameter registers
    kinds: np.ndarray  # int8 (n_vars,): kind of each template-owned variable
    slots: np.ndarray  # int64 (n_vars,): template register of each template-owned variable
    slot_rank: np.ndarray  # int64 (template registers,): rank among its own registers, or -1
    slot_col: np.ndarray  # int64 (template registers,): parameter column, or -1
    n_vars: int  # template-owned variables per instance
    n_slots: int  # template-owned registers per instance
    n_rows: int  # constraints per instance (nested blocks included)
    n_public: int  # public variables per instance
    at_var: int
    at_row: int
    at_code: int
    var_pos: int
    row_pos: int
    slot_base: int
    prefix: tuple  # the enclosing namespace when repeat was called
    name: str | None  # per-instance namespace; "{i}" is replaced by the instance index
    outputs: object = None  # the template's return value (template objects)

    @property
    def n_params(self) -> int:
        return int(self.bind_keys.shape[1])

    def instance_name(self, i: int) -> str | None:
        return None if self.name is None else self.name.replace("{i}", str(i))

    def map_slots(self, tslots: np.ndarray, i0: int, i1: int) -> np.ndarray:
        """``(i1 - i0, len(tslots))`` enclosing registers of template registers ``tslots``."""
        tslots = np.asarray(tslots, dtype=np.int64)
        rank = self.slot_rank[tslots]
        # most registers are the template's own: one broadcast add, then fix the others
        out = (self.slot_base + rank)[None, :] + (np.arange(i0, i1, dtype=np.int64) * self.n_slots)[:, None]
        other = np.flatnonzero(rank < 0)
        if other.shape[0]:
            col = self.slot_col[tslots[other]]
            par = col >= 0
            out[:, other[~par]] = 0  # register 0: the constant one
            if par.any():
                out[:, other[par]] = self.bind_slots[i0:i1][:, col[par]]
        return out

    def slot_of(self, i: np.ndarray, tslot: np.ndarray) -> np.ndarray:
        """Pointwise: the enclosing register of template register ``tslot[j]`` in instance ``i[j]``."""
        tslot = np.asarray(tslot, dtype=np.int64)
        i = np.asarray(i, dtype=np.int64)
        rank, col = self.slot_rank[tslot], self.slot_col[tslot]
        out = np.where(rank >= 0, self.slot_base + i * self.n_slots + rank, 0)
        par = col >= 0
        if par.any():
            out[par] = self.bind_slots[i[par], col[par]]
        return out


def find_block(blocks, starts, pos: int) -> Block:
    """The block whose variables hold allocation position ``pos`` (``starts``: their ``var_pos``)."""
    b = blocks[bisect.bisect_right(starts, pos) - 1]
    if not b.var_pos <= pos < b.var_pos + b.k * b.n_vars:
        raise KeyError(pos)
    return b


def var_segments(cs):
    """The variables of ``cs`` in allocation order, as ``(position, traced_lo, traced_hi, None)``
    runs of traced variables and ``(position, 0, 0, block)`` blocks."""
    t_at, pos = 0, 0
    for b in cs._blocks:
        if b.at_var > t_at:
            yield pos, t_at, b.at_var, None
            pos += b.at_var - t_at
            t_at = b.at_var
        yield pos, 0, 0, b
        pos += b.k * b.n_vars
    if len(cs._var_kind) > t_at:
        yield pos, t_at, len(cs._var_kind), None
