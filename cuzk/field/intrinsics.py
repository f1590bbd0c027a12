"""64-bit limb primitives for Numba: multiply-accumulate and add/subtract with carry.

Numba has no 128-bit integer type, so these are ``@intrinsic``s that emit LLVM IR directly.
LLVM lowers them to ``mulx``/``adc``/``sbb`` (no library calls); NUMBA_NOTES.md has the
measurements that chose this form (i128 multiply-accumulate, carries via
``llvm.uadd/usub.with.overflow``). All arguments and results are ``uint64``; carries and
borrows are 0 or 1.

    >>> from numba import njit
    >>> import numpy as np
    >>> @njit
    ... def f(a, b):
    ...     return mac(np.uint64(0), a, b, np.uint64(0))
    >>> f(np.uint64(2**64 - 1), np.uint64(2**64 - 1))   # (2^64-1)^2 = (2^64-2)*2^64 + 1
    (1, 18446744073709551614)
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["mac", "adc", "sbb"]

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
