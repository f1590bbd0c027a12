"""Plain Python-int synthesis of a compiled circuit: the slow oracle and benchmark baseline.

Runs the same witness program as the Numba interpreter, op by op on Python ints, and the
three mat-vecs as dict dot products.

    >>> from cuzk.circuit import Circuit
    >>> from cuzk.synth import Synthesizer
    >>> class Sq(Circuit):
    ...     def define(self, cs, x, y):
    ...         x = cs.private(x)
    ...         cs.assert_equal(x * x, cs.public(y))
    >>> z, a, b, c = python_synthesize(Synthesizer(Sq()), {"x": 3, "y": 9})
    >>> z
    [1, 9, 3, 9]
"""

from __future__ import annotations

from cuzk.circuit import ops
from cuzk import curves
from cuzk.synth.program import flatten_inputs

__all__ = ["python_synthesize", "run_program_ints"]

def run_program_ints(code, consts, inputs, n_slots, modulus: int | None = None) -> list[int]:
    """The witness program on Python ints (``consts`` canonical ints) mod ``modulus`` (default:
    the default curve's r); returns the registers."""
    _R = curves.resolve(curves.DEFAULT).fr.modulus if modulus is None else modulus
    reg = [0] * n_slots
    reg[0] = 1
    pc, n = 0, len(code)
    while pc < n:
        op, dst = code[pc], code[pc + 1]
        if op == ops.OP_LC:
            m = code[pc + 2]
            reg[dst] = sum(consts[code[pc + 3 + 2 * j]] * reg[code[pc + 4 + 2 * j]] for j in range(m)) % _R
            pc += 3 + 2 * m
            continue
        x = code[pc + 2]
        if op == ops.OP_MUL:
            reg[dst] = reg[x] * reg[code[pc + 3]] % _R
        elif op == ops.OP_ADD:
            reg[dst] = (reg[x] + reg[code[pc + 3]]) % _R
        elif op == ops.OP_SUB:
            reg[dst] = (reg[x] - reg[code[pc + 3]]) % _R
        elif op == ops.OP_CONST:
            reg[dst] = consts[x]
        elif op == ops.OP_INPUT:
            reg[dst] = inputs[x]
        elif op == ops.OP_INV:
            reg[dst] = pow(reg[x], _R - 2, _R)
        elif op == ops.OP_ISZERO:
            reg[dst] = int(reg[x] == 0)
        elif op == ops.OP_BITS:
            for i in range(code[pc + 3]):
                reg[dst + i] = (reg[x] >> i) & 1
        else:
            raise ValueError(f"unknown opcode {op} at word {pc}")
        pc += ops.OP_LEN[op]
    return reg


def python_synthesize(synth, inputs: dict, rows=None):
    """``(z, a, b, c)`` as lists of canonical ints for ``synth`` (a Synthesizer) and ``inputs``.

    ``rows`` (from ``synth.r1cs.rows_as_ints()``) can be passed in to amortize its conversion.
    """
    p, fr = synth.program, synth.r1cs.field
    flat = flatten_inputs(p.inputs, inputs, synth.r1cs.curve)
    reg = run_program_ints(p.code.tolist(), fr.to_ints(p.consts), flat, p.n_slots, fr.modulus)
    z = [reg[s] for s in p.var_slot.tolist()]
    rows = synth.r1cs.rows_as_ints() if rows is None else rows
    out = ([], [], [])
    for row in rows:
        for k in range(3):
            out[k].append(sum(v * z[i] for i, v in row[k].items()) % fr.modulus)
    return (z, *out)
