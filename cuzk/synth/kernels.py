"""Synthesis kernels of a curve, and the curve-free program check.

The interpreter, the CSR mat-vecs and the row check run over a curve's Fr, so each curve has
its own generated module (``synth_kernels``, rendered by ``scripts/generate.py`` from one
template); :func:`for_curve` hands it out. :func:`validate_program` only reads op codes and
indices, so it is written once here. The default curve's kernels are also reachable as
attributes of this module (``kernels.csr_matvec``), as before curves were data.

    >>> import numpy as np
    >>> from cuzk import curves
    >>> K = for_curve("bn254"); Fr = curves.get("bn254").Fr
    >>> indptr = np.array([0, 2], dtype=np.int64); indices = np.array([0, 1], dtype=np.int32)
    >>> Fr.to_ints(K.csr_matvec(indptr, indices, Fr.from_ints([2, 3]), Fr.from_ints([5, 7])))
    [31]
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from numba import njit

from cuzk import curves
from cuzk.circuit import ops

__all__ = ["for_curve", "validate_program", "run_witness", "csr_matvec", "csr_matvec_parallel", "first_unsatisfied"]

OP_INPUT = np.int64(ops.OP_INPUT)
OP_CONST = np.int64(ops.OP_CONST)
OP_ADD = np.int64(ops.OP_ADD)
OP_SUB = np.int64(ops.OP_SUB)
OP_MUL = np.int64(ops.OP_MUL)
OP_LC = np.int64(ops.OP_LC)
OP_INV = np.int64(ops.OP_INV)
OP_ISZERO = np.int64(ops.OP_ISZERO)
OP_BITS = np.int64(ops.OP_BITS)

_PER_CURVE = ("run_witness", "gather", "synthesize_serial", "csr_matvec", "csr_matvec_parallel", "first_unsatisfied", "columns_at")


def for_curve(curve) -> ModuleType:
    """The generated synthesis kernels of ``curve`` (a name, alias or :class:`cuzk.curves.CurveBundle`).

    Raises:
        cuzk.errors.UnsupportedCurveError: unknown curve name.
    """
    bundle = curve if isinstance(curve, curves.CurveBundle) else curves.get(curve)
    return bundle.module("synth_kernels")


def __getattr__(name: str):
    # kernels.csr_matvec & co.: the default curve's, for callers written before curves were data
    if name in _PER_CURVE:
        return getattr(for_curve(curves.DEFAULT), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@njit(cache=True, nogil=True)
def validate_program(code, n_consts, n_inputs, n_slots):
    """-1 if every op is well formed and in range, else the offset of the first bad op."""
    pc = 0
    n = code.shape[0]
    while pc < n:
        op = code[pc]
        if pc + 3 > n:  # every op has at least opcode, dst and one operand
            return pc
        dst = code[pc + 1]
        if dst < 1 or dst >= n_slots:
            return pc
        if op == OP_LC:
            m = code[pc + 2]
            if m < 0 or pc + 3 + 2 * m > n:
                return pc
            for j in range(m):
                k = code[pc + 3 + 2 * j]
                s = code[pc + 4 + 2 * j]
                if k < 0 or k >= n_consts or s < 0 or s >= n_slots:
                    return pc
            pc += 3 + 2 * m
        elif op == OP_MUL or op == OP_ADD or op == OP_SUB:
            if pc + 4 > n:
                return pc
            for s in (code[pc + 2], code[pc + 3]):
                if s < 0 or s >= n_slots:
                    return pc
            pc += 4
        elif op == OP_CONST or op == OP_INPUT:
            lim = n_consts if op == OP_CONST else n_inputs
            if code[pc + 2] < 0 or code[pc + 2] >= lim:
                return pc
            pc += 3
        elif op == OP_INV or op == OP_ISZERO:
            if code[pc + 2] < 0 or code[pc + 2] >= n_slots:
                return pc
            pc += 3
        elif op == OP_BITS:
            if pc + 4 > n:
                return pc
            nb = code[pc + 3]
            if code[pc + 2] < 0 or code[pc + 2] >= n_slots or nb < 1 or nb > 256 or dst + nb > n_slots:
                return pc
            pc += 4
        else:
            return pc
    return -1
