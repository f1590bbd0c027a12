"""Numba kernels of synthesis: the witness-program interpreter, CSR mat-vec, row checks.

All are ``@njit(cache=True, nogil=True)`` so several Python threads synthesize in parallel.
Field elements are rows of ``(n, 4)`` uint64 Montgomery arrays (``cuzk.field.fr``). The
interpreter trusts its program: :func:`validate_program` checks a loaded one first.

    >>> import numpy as np
    >>> from cuzk.field import Fr
    >>> indptr = np.array([0, 2], dtype=np.int64); indices = np.array([0, 1], dtype=np.int32)
    >>> data = Fr.from_ints([2, 3]); z = Fr.from_ints([5, 7])
    >>> Fr.to_ints(csr_matvec(indptr, indices, data, z))
    [31]
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from cuzk.circuit import ops
from cuzk.field import fr

__all__ = ["run_witness", "csr_matvec", "csr_matvec_parallel", "first_unsatisfied", "validate_program"]

OP_INPUT = np.int64(ops.OP_INPUT)
OP_CONST = np.int64(ops.OP_CONST)
OP_ADD = np.int64(ops.OP_ADD)
OP_SUB = np.int64(ops.OP_SUB)
OP_MUL = np.int64(ops.OP_MUL)
OP_LC = np.int64(ops.OP_LC)
OP_INV = np.int64(ops.OP_INV)
OP_ISZERO = np.int64(ops.OP_ISZERO)
OP_BITS = np.int64(ops.OP_BITS)
_U1 = np.uint64(1)
_U63 = np.uint64(63)
# Montgomery one (R mod r) limb by limb: coefficients equal to it skip the multiply.
_M0, _M1, _M2, _M3 = (np.uint64((fr.R0)), np.uint64(fr.R1), np.uint64(fr.R2), np.uint64(fr.R3))


@njit(cache=True, nogil=True)
def run_witness(code, consts, inputs, n_slots):
    """Execute a witness program; returns the ``(n_slots, 4)`` register file (reg 0 = one)."""
    reg = np.zeros((n_slots, 4), dtype=np.uint64)
    fr.store(reg, 0, fr.one())
    pc = 0
    n = code.shape[0]
    while pc < n:
        op = code[pc]
        dst = code[pc + 1]
        if op == OP_LC:
            m = code[pc + 2]
            acc = fr.zero()
            for j in range(m):
                k = code[pc + 3 + 2 * j]
                v = fr.load(reg, code[pc + 4 + 2 * j])
                if k != 0:
                    v = fr.mul(fr.load(consts, k), v)
                acc = fr.add(acc, v)
            fr.store(reg, dst, acc)
            pc += 3 + 2 * m
        elif op == OP_MUL:
            fr.store(reg, dst, fr.mul(fr.load(reg, code[pc + 2]), fr.load(reg, code[pc + 3])))
            pc += 4
        elif op == OP_ADD:
            fr.store(reg, dst, fr.add(fr.load(reg, code[pc + 2]), fr.load(reg, code[pc + 3])))
            pc += 4
        elif op == OP_SUB:
            fr.store(reg, dst, fr.sub(fr.load(reg, code[pc + 2]), fr.load(reg, code[pc + 3])))
            pc += 4
        elif op == OP_CONST:
            fr.store(reg, dst, fr.load(consts, code[pc + 2]))
            pc += 3
        elif op == OP_INPUT:
            fr.store(reg, dst, fr.load(inputs, code[pc + 2]))
            pc += 3
        elif op == OP_INV:
            fr.store(reg, dst, fr.inv(fr.load(reg, code[pc + 2])))
            pc += 3
        elif op == OP_ISZERO:
            fr.store(reg, dst, fr.one() if fr.is_zero(fr.load(reg, code[pc + 2])) else fr.zero())
            pc += 3
        else:  # OP_BITS (validate_program admits nothing else)
            c = fr.from_mont(fr.load(reg, code[pc + 2]))
            nb = code[pc + 3]
            for i in range(nb):
                limb = c[i >> 6]
                bit = (limb >> np.uint64(i & 63)) & _U1
                fr.store(reg, dst + i, fr.one() if bit == _U1 else fr.zero())
            pc += 4
    return reg


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


@njit(cache=True, nogil=True)
def _matvec_rows(indptr, indices, data, z, out, lo, hi):
    # Rows lo..hi-1 in one call: a helper called per row costs ~70 ns a row (measured).
    for r in range(lo, hi):
        acc = fr.zero()
        for k in range(indptr[r], indptr[r + 1]):
            v = fr.load(z, indices[k])
            if not (data[k, 0] == _M0 and data[k, 1] == _M1 and data[k, 2] == _M2 and data[k, 3] == _M3):
                v = fr.mul(fr.load(data, k), v)
            acc = fr.add(acc, v)
        fr.store(out, r, acc)


@njit(cache=True, nogil=True)
def csr_matvec(indptr, indices, data, z):
    """``M · z`` for a CSR matrix with Montgomery Fr coefficients; one thread."""
    rows = indptr.shape[0] - 1
    out = np.empty((rows, 4), dtype=np.uint64)
    _matvec_rows(indptr, indices, data, z, out, 0, rows)
    return out


_CHUNK = 4096  # rows per parallel task: large enough to amortize scheduling


@njit(cache=True, nogil=True, parallel=True)
def csr_matvec_parallel(indptr, indices, data, z):
    """``M · z`` with row chunks split over Numba's threads (``numba.set_num_threads``)."""
    rows = indptr.shape[0] - 1
    out = np.empty((rows, 4), dtype=np.uint64)
    n_chunks = (rows + _CHUNK - 1) // _CHUNK
    for t in prange(n_chunks):
        _matvec_rows(indptr, indices, data, z, out, t * _CHUNK, min(rows, (t + 1) * _CHUNK))
    return out


@njit(cache=True, nogil=True)
def first_unsatisfied(a, b, c):
    """Index of the first row with ``a·b != c``, or -1."""
    for r in range(a.shape[0]):
        if not fr.eq(fr.mul(fr.load(a, r), fr.load(b, r)), fr.load(c, r)):
            return r
    return -1
