"""64-bit limb primitives for Numba: multiply-accumulate and add/subtract with carry.

Numba has no 128-bit integer type, so these are ``@intrinsic``s that emit LLVM IR directly.
LLVM lowers them to ``mulx``/``adc``/``sbb`` (no library calls); NUMBA_NOTES.md has the
measurements that chose this form (i128 multiply-accumulate, carries via
``llvm.uadd/usub.with.overflow``). All arguments and results are ``uint64``; carries and
borrows are 0 or 1.

``cuzk.field.mont_asm`` builds whole Montgomery products as one inline-asm block
(``mulx``/``adcx``/``adox``: two carry chains at once, which LLVM never emits from i128 code).
They need BMI2 and ADX; ``HAVE_ADX`` says whether the CPU Numba compiles for has them, and
generated kernels fall back to the i128 form when it does not. Numba's cache index already
keys every entry on the CPU name and feature string (``codegen.magic_tuple()``), and
``HAVE_ADX`` is a function of exactly that feature string, so a cache written on an ADX
machine is never loaded on one without ADX. ``ASM_BASE_FIELD`` (the asm products for the
coordinate field Fq too) is a function of the CPU name in the same key, likewise.

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

__all__ = ["mac", "adc", "sbb", "adx_in", "prefetch_row", "asm_wins_for_base_field", "HAVE_ADX", "CPU_NAME",
           "ASM_BASE_FIELD"]

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


@intrinsic
def prefetch_row(typingctx, arr, row, lines):
    """Hint the first ``lines`` (a literal int) 64-byte cache lines of row ``row`` of ``arr`` (its
    first axis) into all cache levels (``llvm.prefetch``: a read, locality 3). Changes no value
    and never faults, so a gather can ask for a row some iterations before it loads it: the
    bit-aware MSM's gathers of the ones' points, which skip rows the hardware prefetcher cannot
    predict (docs/perf/kernels.md, "Block sums of the key's points")."""
    if not isinstance(lines, types.IntegerLiteral):
        return None
    count = lines.literal_value
    sig = types.void(arr, types.int64, lines)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        stride = cgutils.unpack_tuple(builder, ary.strides, aryty.ndim)[0]
        addr = builder.add(builder.ptrtoint(ary.data, _I64), builder.mul(args[1], stride))
        i8p = ir.PointerType(ir.IntType(8))
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")  # the typed name; newer LLVM upgrades it
        for k in range(count):
            at = builder.inttoptr(builder.add(addr, ir.Constant(_I64, 64 * k)), i8p)
            builder.call(fn, [at, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

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


def asm_wins_for_base_field(cpu_name: str, have_adx: bool) -> bool:
    """Whether the inline-asm Fq product and square beat the i128 forms on ``cpu_name``.

    On AMD Zen the asm product ran 1.28x and the asm square 1.21x faster in a chain (Zen 3, Fq 6
    limbs: 48.0 vs 61.3 ns) and a one-thread G1 MSM 2^16 ~1.15x faster; on Intel (Sapphire
    Rapids) the 6-limb asm product was ~5 % slower than the i128 one (docs/perf/field.md). Other
    CPUs keep the i128 forms, which LLVM schedules on its own.

    >>> asm_wins_for_base_field("znver3", True), asm_wins_for_base_field("sapphirerapids", True)
    (True, False)
    >>> asm_wins_for_base_field("znver4", False)
    False
    """
    return have_adx and cpu_name.startswith("znver")


def _target_cpu() -> str:
    # The CPU name Numba compiles for, also part of its cache key (NUMBA_CPU_NAME, else the host's).
    return config.CPU_NAME or llvm.get_host_cpu_name()


HAVE_ADX = adx_in(_target_features(), platform.machine())
CPU_NAME = _target_cpu()
ASM_BASE_FIELD = asm_wins_for_base_field(CPU_NAME, HAVE_ADX)
if HAVE_ADX:
    llvm.initialize_native_asmparser()  # inline asm is parsed by LLVM's x86 asm parser
