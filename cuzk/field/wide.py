"""The lazy-reduction kernels of an Fq (``mul_wide``, ``redc_wide``, ``sub_wide``, ``sub_wide_mod``,
``add_nr``) as ``@intrinsic``s: each emits its whole limb sequence as LLVM IR into the caller.

The generated Fq modules used to write them as straight-line ``@njit(inline="always")``
functions of ~100 ``mac``/``adc``/``sbb`` calls each. Inlined at the Numba IR level (so that no
2L-limb tuple passes through a call: 3-10 % slower), the Fq2 product built from three products
and two reductions became one ~600-call function, and typing and lowering it took ~28 s of a
loaded machine's cold start, the most of any kernel (docs/perf/cold-start.md). Emitted here,
the same operations reach LLVM as the same IR (the ``cuzk.field.intrinsics`` forms of mac, adc
and sbb, the same branches), so the machine code is as before; Numba sees five calls.

Constants (p, −p⁻¹ mod 2^64, p²) are per field: :func:`wide_kernels` makes the five for one.

    >>> import numpy as np
    >>> from numba import njit
    >>> p = 2**100 + 277                                 # 2 limbs: any odd p < 2^126
    >>> W = wide_kernels(p, -pow(p, -1, 2**64) % 2**64, 2)
    >>> mul_wide, add_nr = W.mul_wide, W.add_nr          # module-level names, as in fq.py
    >>> @njit
    ... def f(a, b):
    ...     return mul_wide(a, b), add_nr(a, b)
    >>> u = lambda *v: tuple(np.uint64(x) for x in v)
    >>> f(u(7, 1), u(9, 0))                              # (7 + 2^64)·9, 7 + 2^64 + 9
    ((63, 9, 0, 0), (16, 1))
"""

from __future__ import annotations

from types import SimpleNamespace

from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic

__all__ = ["wide_kernels"]

_I1 = ir.IntType(1)
_I64 = ir.IntType(64)
_I128 = ir.IntType(128)
_ZERO = ir.Constant(_I64, 0)
_SHIFT = ir.Constant(_I128, 64)
_MASK = (1 << 64) - 1


def _mac(b, x, y):
    """x*y as (lo, hi): ``intrinsics.mac(ZERO, x, y, ZERO)`` (the zero addends fold away)."""
    r = b.mul(b.zext(x, _I128), b.zext(y, _I128))
    return b.trunc(r, _I64), b.trunc(b.lshr(r, _SHIFT), _I64)


def _overflow(b, name, x, y):
    fnty = ir.FunctionType(ir.LiteralStructType([_I64, _I1]), [_I64, _I64])
    res = b.call(b.module.declare_intrinsic(name, fnty=fnty), [x, y])
    return b.extract_value(res, 0), b.extract_value(res, 1)


def _adc(b, x, y, c):
    """``intrinsics.adc``: x + y + c as (sum, carry)."""
    s1, o1 = _overflow(b, "llvm.uadd.with.overflow.i64", x, y)
    s2, o2 = _overflow(b, "llvm.uadd.with.overflow.i64", s1, c)
    return s2, b.zext(b.or_(o1, o2), _I64)


def _sbb(b, x, y, c):
    """``intrinsics.sbb``: x − y − c as (difference, borrow)."""
    d1, o1 = _overflow(b, "llvm.usub.with.overflow.i64", x, y)
    d2, o2 = _overflow(b, "llvm.usub.with.overflow.i64", d1, c)
    return d2, b.zext(b.or_(o1, o2), _I64)


def _limbs(tup, b, n):
    return [b.extract_value(tup, k) for k in range(n)]


def _consts(x: int, n: int) -> list:
    return [ir.Constant(_I64, (x >> (64 * k)) & _MASK) for k in range(n)]


def _check(args, widths, name):
    for a, w in zip(args, widths):
        if not (isinstance(a, types.UniTuple) and a.count == w and a.dtype == types.uint64):
            raise errors.TypingError(f"{name} takes UniTuple(uint64, {w}) limbs, got {a}")


def _if_then(b, pred, then_fn, else_vals):
    """``then_fn() if pred else else_vals`` through a branch and phis, as Numba lowers an
    ``if``/``return`` pair (LLVM then keeps or if-converts it as it did before); ``then_fn``
    emits its instructions inside the branch."""
    before = b.block
    then_bb = b.append_basic_block("wide.then")
    merge_bb = b.append_basic_block("wide.merge")
    b.cbranch(pred, then_bb, merge_bb)
    b.position_at_end(then_bb)
    then_vals = then_fn()
    then_end = b.block
    b.branch(merge_bb)
    b.position_at_end(merge_bb)
    out = []
    for t, e in zip(then_vals, else_vals):
        phi = b.phi(_I64)
        phi.add_incoming(t, then_end)
        phi.add_incoming(e, before)
        out.append(phi)
    return out


def _phi_select(b, pred, then_vals, else_vals):
    """``then_vals if pred else else_vals`` (values computed before the branch)."""
    return _if_then(b, pred, lambda: then_vals, else_vals)


def wide_kernels(modulus: int, inv: int, limbs: int) -> SimpleNamespace:
    """The five lazy-reduction intrinsics of the field of ``modulus`` (``limbs`` 64-bit limbs,
    ``inv`` = −p⁻¹ mod 2^64). ``redc_wide`` needs T < p·R: an Fq2 product's sums (< 2p²) meet
    it for p < 2^(64L−2), which the tower's fields satisfy (checked by the generator)."""
    n = limbs
    if n < 2 or modulus >= 1 << (64 * n) or modulus * inv % (1 << 64) != (1 << 64) - 1:
        raise ValueError("wide kernels need L >= 2 limbs, p < 2^(64L) and inv = -p^-1 mod 2^64")
    p_l, pp_l, inv_c = _consts(modulus, n), _consts(modulus * modulus, 2 * n), ir.Constant(_I64, inv)
    t_n, t_2n = types.UniTuple(types.uint64, n), types.UniTuple(types.uint64, 2 * n)

    @intrinsic
    def mul_wide(typingctx, a, b):
        """The 2L-limb product a * b (no reduction; Montgomery inputs give a*b*R^2)."""
        _check((a, b), (n, n), "mul_wide")

        def codegen(context, builder, sig, args):
            x, y = (_limbs(v, builder, n) for v in args)
            t = [None] * (2 * n)
            for i in range(n):  # row form: products first, then two carry chains (as _mul_cios_rows)
                lo, hi = zip(*(_mac(builder, x[j], y[i]) for j in range(n)))
                if i == 0:
                    t[:n] = lo
                    t[n] = hi[n - 1]
                else:
                    t[i], c = _adc(builder, t[i], lo[0], _ZERO)
                    for j in range(1, n):
                        t[i + j], c = _adc(builder, t[i + j], lo[j], c)
                    t[i + n] = builder.add(hi[n - 1], c)
                t[i + 1], c = _adc(builder, t[i + 1], hi[0], _ZERO)
                for j in range(2, n):
                    t[i + j], c = _adc(builder, t[i + j], hi[j - 1], c)
                t[i + n] = builder.add(t[i + n], c)
            return context.make_tuple(builder, sig.return_type, t)

        return t_2n(t_n, t_n), codegen

    @intrinsic
    def redc_wide(typingctx, t):
        """T / R mod p for a 2L-limb T < p*R (Montgomery reduction of the low half, plus the high)."""
        _check((t,), (2 * n,), "redc_wide")

        def codegen(context, builder, sig, args):
            v = _limbs(args[0], builder, 2 * n)
            lo = v[:n]
            for _ in range(n):  # one reduction round: lo = (lo + m p) / 2^64
                m = builder.mul(lo[0], inv_c)
                ml, mh = zip(*(_mac(builder, m, p_l[j]) for j in range(n)))
                _, c = _adc(builder, lo[0], ml[0], _ZERO)  # the low limb becomes 0
                u = [None] * (n + 1)
                for j in range(1, n):
                    u[j], c = _adc(builder, lo[j], ml[j], c)
                u[n] = c
                u[1], c = _adc(builder, u[1], mh[0], _ZERO)
                for j in range(2, n):
                    u[j], c = _adc(builder, u[j], mh[j - 1], c)
                u[n] = builder.add(builder.add(u[n], mh[n - 1]), c)
                lo = u[1:]
            s = [None] * n
            s[0], c = _adc(builder, lo[0], v[n], _ZERO)  # + hi: the sum < 2p
            for j in range(1, n):
                s[j], c = _adc(builder, lo[j], v[n + j], c)
            d = [None] * n
            d[0], br = _sbb(builder, s[0], p_l[0], _ZERO)
            for j in range(1, n):
                d[j], br = _sbb(builder, s[j], p_l[j], br)
            out = _phi_select(builder, builder.icmp_unsigned("!=", br, _ZERO), s, d)  # borrowed: s < p
            return context.make_tuple(builder, sig.return_type, out)

        return t_n(t_2n), codegen

    def _sub_chain(builder, x, y):
        d = [None] * (2 * n)
        d[0], br = _sbb(builder, x[0], y[0], _ZERO)
        for k in range(1, 2 * n):
            d[k], br = _sbb(builder, x[k], y[k], br)
        return d, br

    @intrinsic
    def sub_wide(typingctx, x, y):
        """x − y on 2L limbs, wrapping mod 2^(128L) (for differences known to be >= 0)."""
        _check((x, y), (2 * n, 2 * n), "sub_wide")

        def codegen(context, builder, sig, args):
            d, _ = _sub_chain(builder, *(_limbs(v, builder, 2 * n) for v in args))
            return context.make_tuple(builder, sig.return_type, d)

        return t_2n(t_2n, t_2n), codegen

    @intrinsic
    def sub_wide_mod(typingctx, x, y):
        """x − y on 2L limbs for x, y < p², plus p² when negative: a result in [0, p²)."""
        _check((x, y), (2 * n, 2 * n), "sub_wide_mod")

        def codegen(context, builder, sig, args):
            d, br = _sub_chain(builder, *(_limbs(v, builder, 2 * n) for v in args))
            def add_pp():  # the conditional p^2, as an if block
                s = [None] * (2 * n)
                s[0], c = _adc(builder, d[0], pp_l[0], _ZERO)
                for k in range(1, 2 * n):
                    s[k], c = _adc(builder, d[k], pp_l[k], c)
                return s

            out = _if_then(builder, builder.icmp_unsigned("!=", br, _ZERO), add_pp, d)
            return context.make_tuple(builder, sig.return_type, out)

        return t_2n(t_2n, t_2n), codegen

    @intrinsic
    def add_nr(typingctx, a, b):
        """a + b < 2p without the reduction mod p (an operand of mul_wide)."""
        _check((a, b), (n, n), "add_nr")

        def codegen(context, builder, sig, args):
            x, y = (_limbs(v, builder, n) for v in args)
            s = [None] * n
            s[0], c = _adc(builder, x[0], y[0], _ZERO)
            for k in range(1, n):
                s[k], c = _adc(builder, x[k], y[k], c)
            return context.make_tuple(builder, sig.return_type, s)

        return t_n(t_n, t_n), codegen

    return SimpleNamespace(mul_wide=mul_wide, redc_wide=redc_wide, sub_wide=sub_wide,
                           sub_wide_mod=sub_wide_mod, add_nr=add_nr)
