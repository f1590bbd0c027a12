"""Opcodes of the witness program: a flat ``int64`` array the Synthesizer's interpreter runs.

The tracer (:mod:`cuzk.circuit.cs`) emits these; :mod:`cuzk.synth.kernels` executes them
over a register file of Fr elements (register 0 holds the constant one). Layout per op::

    INPUT  dst k            reg[dst] = inputs[k]
    CONST  dst k            reg[dst] = consts[k]
    ADD    dst a b          reg[dst] = reg[a] + reg[b]      (SUB, MUL alike)
    LC     dst m (k s)*m    reg[dst] = sum consts[k] * reg[s]   (k == 0: coefficient one, no multiply)
    INV    dst a            reg[dst] = 1 / reg[a]  (0 for 0)
    ISZERO dst a            reg[dst] = 1 if reg[a] == 0 else 0
    BITS   dst a n          reg[dst + i] = bit i of reg[a] (canonical), i < n <= 256

    >>> OP_LEN[OP_ADD]
    4
"""

__all__ = [
    "OP_INPUT", "OP_CONST", "OP_ADD", "OP_SUB", "OP_MUL", "OP_LC", "OP_INV", "OP_ISZERO", "OP_BITS",
    "OP_LEN", "OP_NAMES",
]

OP_INPUT = 1
OP_CONST = 2
OP_ADD = 3
OP_SUB = 4
OP_MUL = 5
OP_LC = 6
OP_INV = 7
OP_ISZERO = 8
OP_BITS = 9

# Fixed op lengths (words, opcode included); OP_LC is variable: 3 + 2 * m.
OP_LEN = {OP_INPUT: 3, OP_CONST: 3, OP_ADD: 4, OP_SUB: 4, OP_MUL: 4, OP_INV: 3, OP_ISZERO: 3, OP_BITS: 4}
OP_NAMES = {v: k[3:] for k, v in dict(globals()).items() if k.startswith("OP_") and isinstance(v, int)}
