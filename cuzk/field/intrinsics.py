"""64-bit limb primitives for Numba: multiply-accumulate and add/subtract with carry.

Numba has no 128-bit integer type, so these are ``@intrinsic``s that emit LLVM IR directly.
LLVM lowers them to ``mulx``/``adc``/``sbb`` (no library calls); NUMBA_NOTES.md has the
measurements that chose this form (i128 multiply-accumulate, carries via
``llvm.uadd/usub.with.overflow``). All arguments and results are ``uint64``; carries and
borrows are 0 or 1.

``mont_mul4_adx`` builds a whole 4-limb Montgomery product as one inline-asm block
(``mulx``/``adcx``/``adox``: two carry chains at once, which LLVM never emits from i128 code).
It needs BMI2 and ADX; ``HAVE_ADX`` says whether the CPU Numba compiles for has them, and
generated kernels fall back to the i128 form when it does not. Numba's cache index already
keys every entry on the CPU name and feature string (``codegen.magic_tuple()``), and
``HAVE_ADX`` is a function of exactly that feature string, so a cache written on an ADX
machine is never loaded on one without ADX.

    >>> from numba import njit
    >>> import numpy as np
    >>> @njit
    ... def f(a, b):
    ...     return mac(np.uint64(0), a, b, np.uint64(0))
    >>> f(np.uint64(2**64 - 1), np.uint64(2**64 - 1))   # (2^64-1)^2 = (2^64-2)*2^64 + 1
    (1, 18446744073709551614)
"""

from __future__ import annotations

import platform

import llvmlite.binding as llvm
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["mac", "adc", "sbb", "adx_in", "HAVE_ADX", "mont_mul4_adx"]

_I64 = ir.IntType(64)
_I128 = ir.IntType(128)
_U64 = types.uint64
_PAIR = types.UniTuple(types.uint64, 2)


@intrinsic
def mac(typingctx, t, a, b, c):
    """``t + a*b + c`` as ``(lo, hi)``; the sum is < 2^128, so it never overflows."""
    sig = _PAIR(_U64, _U64, _U64, _U64)

    def codegen(context, builder, signature, args):
        t_, a_, b_, c_ = [builder.zext(v, _I128) for v in args]
        r = builder.add(builder.add(builder.mul(a_, b_), t_), c_)
        lo = builder.trunc(r, _I64)
        hi = builder.trunc(builder.lshr(r, ir.Constant(_I128, 64)), _I64)
        return context.make_tuple(builder, signature.return_type, (lo, hi))

    return sig, codegen


def _with_overflow(builder, name, x, y):
    fnty = ir.FunctionType(ir.LiteralStructType([_I64, ir.IntType(1)]), [_I64, _I64])
    fn = builder.module.declare_intrinsic(name, fnty=fnty)
    res = builder.call(fn, [x, y])
    return builder.extract_value(res, 0), builder.extract_value(res, 1)


@intrinsic
def adc(typingctx, a, b, carry):
    """``a + b + carry`` as ``(sum mod 2^64, carry_out)``."""
    sig = _PAIR(_U64, _U64, _U64)

    def codegen(context, builder, signature, args):
        a_, b_, c_ = args
        s1, o1 = _with_overflow(builder, "llvm.uadd.with.overflow.i64", a_, b_)
        s2, o2 = _with_overflow(builder, "llvm.uadd.with.overflow.i64", s1, c_)
        co = builder.zext(builder.or_(o1, o2), _I64)
        return context.make_tuple(builder, signature.return_type, (s2, co))

    return sig, codegen


@intrinsic
def sbb(typingctx, a, b, borrow):
    """``a - b - borrow`` as ``(difference mod 2^64, borrow_out)``."""
    sig = _PAIR(_U64, _U64, _U64)

    def codegen(context, builder, signature, args):
        a_, b_, c_ = args
        d1, o1 = _with_overflow(builder, "llvm.usub.with.overflow.i64", a_, b_)
        d2, o2 = _with_overflow(builder, "llvm.usub.with.overflow.i64", d1, c_)
        bo = builder.zext(builder.or_(o1, o2), _I64)
        return context.make_tuple(builder, signature.return_type, (d2, bo))

    return sig, codegen


def adx_in(features: str, machine: str) -> bool:
    """True when an LLVM feature string (``"+adx,+bmi2,..."``) on ``machine`` allows mulx/adcx/adox.

    >>> adx_in("+adx,+bmi2,+avx2", "x86_64"), adx_in("+bmi2,-adx", "x86_64"), adx_in("+adx,+bmi2", "aarch64")
    (True, False, False)
    """
    flags = set(features.split(","))
    return machine.lower() in ("x86_64", "amd64") and {"+bmi2", "+adx"} <= flags


def _target_features() -> str:
    # The same string Numba compiles for and puts into its cache key (numba.core.codegen
    # uses NUMBA_CPU_FEATURES when set, else the host's features).
    if config.CPU_FEATURES is not None:
        return config.CPU_FEATURES
    return llvm.get_host_cpu_features().flatten()


HAVE_ADX = adx_in(_target_features(), platform.machine())
if HAVE_ADX:
    llvm.initialize_native_asmparser()  # inline asm is parsed by LLVM's x86 asm parser


def _mont4_asm() -> tuple[str, list[int]]:
    """AT&T text of the 4-limb no-carry CIOS and the output slots that hold t0..t3 at the end.

    Operands: $0..$4 accumulator t (5 limbs), $5/$6 scratch; inputs $7..$10 a0..a3,
    $11 -> b0..b3, $12 -> p0..p3, inv; rdx is clobbered. Each round
    adds a*b_i on the OF chain (adox) and the high halves on the CF chain (adcx), then m*p
    likewise. Registers are renamed instead of moving values: after the reduction t0 is zero,
    so it serves as the zero source for the last carry and then as the next top limb. Valid
    for p < 2^255 with top limb < 2^63 - 1: t stays below 2p and never needs a sixth limb.
    """
    T = [0, 1, 2, 3, 4]  # slots of t0..t4
    S = [5, 6]  # scratch slots (lo, hi)
    a, bp, kp = ["$7", "$8", "$9", "$10"], "$11", "$12"

    def t(k):
        return f"${T[k]}"

    def lo():
        return f"${S[0]}"

    def hi():
        return f"${S[1]}"

    s = [f"movq ({bp}), %rdx", f"mulxq {a[0]}, {t(0)}, {t(1)}", f"mulxq {a[1]}, {lo()}, {t(2)}", f"addq {lo()}, {t(1)}",
         f"mulxq {a[2]}, {lo()}, {t(3)}", f"adcq {lo()}, {t(2)}", f"mulxq {a[3]}, {lo()}, {t(4)}",
         f"adcq {lo()}, {t(3)}", f"adcq $$0, {t(4)}"]
    for i in range(4):
        if i:  # t4 is zero here
            s += [f"movq {8 * i}({bp}), %rdx", f"xorq {lo()}, {lo()}"]  # xor clears CF and OF
            for j in range(3):
                s += [f"mulxq {a[j]}, {lo()}, {hi()}", f"adoxq {lo()}, {t(j)}", f"adcxq {hi()}, {t(j + 1)}"]
            s += [f"mulxq {a[3]}, {lo()}, {hi()}", f"adoxq {lo()}, {t(3)}", f"adcxq {t(4)}, {hi()}", f"adoxq {t(4)}, {hi()}"]
            T[4], S[1] = S[1], T[4]  # hi + both carries is the new t4; the old zero t4 is scratch
        s += [f"movq {t(0)}, %rdx", f"imulq 32({kp}), %rdx", f"xorq {lo()}, {lo()}"]  # m = t0 * inv
        for j in range(4):
            s += [f"mulxq {8 * j}({kp}), {lo()}, {hi()}", f"adoxq {lo()}, {t(j)}", f"adcxq {hi()}, {t(j + 1)}"]
        s.append(f"adoxq {t(0)}, {t(4)}")  # t0 + lo(m*p0) == 0 mod 2^64: t0 is a zero register now
        T = T[1:] + T[:1]
    return "\n".join(s), T[:4]


_QUAD = types.UniTuple(types.uint64, 4)
_I32 = ir.IntType(32)


def mont_mul4_adx(modulus: int, inv: int):
    """An intrinsic ``(a, b) -> t`` for UniTuple(uint64, 4) Montgomery limbs: t = a*b/2^256
    mod p up to one p (t < 2p); the caller does the final conditional subtraction in plain
    Numba code. (Doing it in the asm and returning the borrow as a flag output, "={@ccb}",
    made LLVM 20 emit invalid machine code when the branch on it landed in another block.)

    ``inv`` is -p^-1 mod 2^64. Only call the result from @njit code when ``HAVE_ADX``.

    >>> from cuzk.field.params import FR
    >>> mont = mont_mul4_adx(FR.modulus, FR.inv)   # used by cuzk.field.fr.mul on ADX CPUs
    """
    assert modulus >> 192 < 2**63 - 1 and modulus % 2 == 1 and (modulus * inv + 1) % 2**64 == 0
    text, order = _mont4_asm()
    # b0 must not arrive in rdx: for a*a LLVM may then hand a0 the same register, and rdx is
    # overwritten by b1 (a wrong square, seen in testing). All of b goes through memory, and
    # every output is early-clobber so that none shares a register with an input.
    constraints = ",".join(["=&r"] * 7 + ["r"] * 6 + ["~{rdx}", "~{cc}", "~{memory}"])
    consts = [(modulus >> (64 * k)) & (2**64 - 1) for k in range(4)] + [inv]

    @intrinsic
    def mont(typingctx, a, b):
        sig = _QUAD(_QUAD, _QUAD)

        def codegen(context, builder, signature, args):
            a_, b_ = args
            init = ir.Constant(ir.ArrayType(_I64, 5), [ir.Constant(_I64, v) for v in consts])
            kptr = builder.bitcast(cgutils.global_constant(builder.module, "cuzk_mont4_p", init), _I64.as_pointer())
            # b goes through a stack slot: there are not enough registers for all of a, b and t
            slot = cgutils.alloca_once(builder, ir.ArrayType(_I64, 4))
            for k in range(4):
                builder.store(builder.extract_value(b_, k), builder.gep(slot, [ir.Constant(_I32, 0), ir.Constant(_I32, k)]))
            bptr = builder.bitcast(slot, _I64.as_pointer())
            ins = [builder.extract_value(a_, k) for k in range(4)] + [bptr, kptr]
            fnty = ir.FunctionType(ir.LiteralStructType([_I64] * 7), [_I64] * 4 + [bptr.type, kptr.type])
            res = builder.asm(fnty, text, constraints, ins, side_effect=False)
            return context.make_tuple(builder, signature.return_type, [builder.extract_value(res, k) for k in order])

        return sig, codegen

    return mont
