"""Run the PTX blocks of ``cuzk/kernels/cu/mont_asm_<curve>.h`` on the CPU.

The blocks are device-only text (the host shim runs field.cuh's named chains instead), so this
is how their arithmetic is tested without a GPU: the header's string literals are parsed back
into instructions and executed over numpy uint64 vectors (one lane per operand pair), with the
carry flag as PTX defines it (CC.CF: the carry out of an addition, the borrow out of a
subtraction). Only the instructions the generator emits are known; anything else is an error,
so a new instruction cannot be silently misread.

    >>> fn = load_blocks()["fq_mul"]             # doctest: +SKIP
    >>> r = fn(a_limbs, b_limbs)                 # (lanes, 12) uint32 in and out  # doctest: +SKIP
"""

from __future__ import annotations

import pathlib
import re

import numpy as np

__all__ = ["load_blocks", "parse_block", "HEADER", "header"]

_CU = pathlib.Path(__file__).resolve().parents[2] / "cuzk" / "kernels" / "cu"
HEADER = _CU / "mont_asm_bls12_381.h"


def header(curve: str = "bls12_381") -> pathlib.Path:
    """The generated PTX-block header of ``curve``."""
    return _CU / f"mont_asm_{curve}.h"
_MASK = np.uint64(0xFFFFFFFF)
_FUNC = re.compile(r"__device__ __forceinline__ void (\w+)_asm\((.*?)\) \{\s*asm\((.*?)\);\s*\}", re.S)


def _operand(tok: str):
    tok = tok.strip()
    if tok.startswith("%"):
        return ("op", int(tok[1:]))
    if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", tok):
        return ("imm", np.uint64(int(tok, 0)))
    if re.fullmatch(r"[a-z]\w*", tok):
        return ("reg", tok)
    raise ValueError(f"unknown operand {tok!r}")


def parse_block(text: str) -> list[tuple[str, list]]:
    """PTX text of one block -> [(opcode, operands)]; register declarations are checked, not kept."""
    declared, out = set(), []
    for line in text.split("\n"):
        line = line.split("//")[0].strip()
        if line in ("", "{", "}"):
            continue
        if line.startswith(".reg"):
            m = re.fullmatch(r"\.reg \.(u32|pred) (.+);", line)
            for name in m.group(2).split(","):
                name = name.strip()
                r = re.fullmatch(r"(\w+)<(\d+)>", name)
                declared.update([f"{r.group(1)}{i}" for i in range(int(r.group(2)))] if r else [name])
            continue
        m = re.fullmatch(r"([a-z.0-9]+) (.+);", line)
        if not m:
            raise ValueError(f"cannot parse {line!r}")
        ops = [_operand(t) for t in m.group(2).split(",")]
        for kind, v in ops:
            if kind == "reg" and v not in declared:
                raise ValueError(f"register {v} used but not declared in {line!r}")
        out.append((m.group(1), ops))
    return out


def _run(prog, operands: dict[int, np.ndarray], lanes: int) -> dict[int, np.ndarray]:
    regs: dict = {}
    cf = np.zeros(lanes, np.uint64)

    def get(o):
        kind, v = o
        if kind == "imm":
            return np.full(lanes, v, np.uint64)
        if kind == "op":
            return operands[v]
        if v not in regs:
            raise ValueError(f"register {v} read before it is written")
        return regs[v]

    def put(o, val):
        kind, v = o
        if kind == "imm":
            raise ValueError("write to an immediate")
        (operands if kind == "op" else regs)[v] = val

    for opc, ops in prog:
        d = ops[0]
        if opc == "mov.u32":
            put(d, get(ops[1]))
        elif opc in ("add.cc.u32", "addc.cc.u32", "addc.u32"):
            s = get(ops[1]) + get(ops[2]) + (cf if opc != "add.cc.u32" else 0)
            if opc != "addc.u32":
                cf = s >> np.uint64(32)
            put(d, s & _MASK)
        elif opc in ("sub.cc.u32", "subc.cc.u32", "subc.u32"):
            a, b = get(ops[1]), get(ops[2]) + (cf if opc != "sub.cc.u32" else 0)
            if opc != "subc.u32":
                cf = (a < b).astype(np.uint64)
            put(d, (a - b) & _MASK)  # uint64 wraps; the low 32 bits are the PTX result
        elif opc == "mul.lo.u32":
            put(d, (get(ops[1]) * get(ops[2])) & _MASK)
        elif opc in ("mad.lo.cc.u32", "madc.lo.cc.u32", "mad.hi.cc.u32", "madc.hi.cc.u32"):
            p = get(ops[1]) * get(ops[2])  # < 2^64: exact in uint64
            part = p & _MASK if ".lo." in opc else p >> np.uint64(32)
            s = part + get(ops[3]) + (cf if opc.startswith("madc") else 0)
            cf = s >> np.uint64(32)
            put(d, s & _MASK)
        elif opc == "shf.l.clamp.b32":  # d = high word of (b:a) << min(c, 32)
            a, b, c = get(ops[1]), get(ops[2]), np.uint64(min(int(get(ops[3])[0]), 32))
            put(d, ((b << c) | (a >> (np.uint64(32) - c))) & _MASK)
        elif opc == "and.b32":
            put(d, get(ops[1]) & get(ops[2]))
        elif opc == "setp.ne.u32":
            put(d, (get(ops[1]) != get(ops[2])).astype(np.uint64))
        elif opc == "selp.b32":
            q = get(ops[3]).astype(bool)
            put(d, np.where(q, get(ops[1]), get(ops[2])))
        else:
            raise ValueError(f"instruction {opc} is not modelled")
    return operands


def _c_string(body: str) -> str:
    text = body.split("\n        :")[0]  # the PTX literals; the operand lists follow (generator layout)
    lits = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    return "".join(lits).encode().decode("unicode_escape")


def load_blocks(text: str | None = None, curve: str = "bls12_381") -> dict:
    """{"fq_mul": fn, ...} from ``curve``'s header (or ``text``); ``fn(a, b)`` or ``fn(a)`` takes and
    returns ``(lanes, limbs)`` uint32 arrays of little-endian limbs."""
    text = header(curve).read_text() if text is None else text
    out = {}
    for name, params, body in _FUNC.findall(text):
        n = int(re.search(r"\[(\d+)\]", params).group(1))
        n_in = params.count("const uint32_t")
        prog = parse_block(_c_string(body))

        def fn(*args, prog=prog, n=n, n_in=n_in, name=name):
            assert len(args) == n_in, f"{name} takes {n_in} operands"
            lanes = args[0].shape[0]
            operands = {}
            for k, arr in enumerate(args):
                for i in range(n):
                    operands[n * (k + 1) + i] = np.ascontiguousarray(arr[:, i]).astype(np.uint64)
            res = _run(prog, operands, lanes)
            return np.stack([res[i] for i in range(n)], axis=1).astype(np.uint32)

        out[name] = fn
    return out
