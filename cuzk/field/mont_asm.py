"""Inline-asm Montgomery products (``mulx``/``adcx``/``adox``) for any limb count, as Numba intrinsics.

One builder serves Fr (4 limbs) and Fq (6 limbs): :func:`mont_asm_text` writes the no-carry
CIOS for ``limbs`` limbs, :func:`mont_mul_adx` wraps it in an ``@intrinsic``. Two carry chains
run at once (``adox`` for the low halves, ``adcx`` for the high halves), which LLVM never emits
from i128 code. The asm needs BMI2 and ADX: only call the intrinsic from @njit code when
``cuzk.field.intrinsics.HAVE_ADX`` (the generated ``fr.mul``/``fq.mul`` pick it or their i128
fallback at import).

Registers: x86-64 leaves 14 general registers besides ``rsp`` and ``rdx`` (``mulx``'s implicit
source). The accumulator t (L+1 limbs) and two scratch registers always stay in registers; b and
the constants (p, inv) are read from memory; ``a`` is kept in registers when they suffice
(L = 4: 4 + 7 + 2 pointers = 13) and read through a pointer otherwise (L = 6: 9 + 3 pointers).

    >>> print(mont_asm_text(4, a_in_regs=True)[0].splitlines()[0])
    movq ($11), %rdx
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from cuzk.field import intrinsics as _intrinsics  # noqa: F401  (registers LLVM's asm parser on ADX CPUs)

__all__ = ["mont_asm_text", "mont_sqr_asm_text", "a_fits_in_registers", "mont_mul_adx", "mont_sqr_adx"]

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_FREE_GPRS = 13  # rax rbx rcx rsi rdi rbp r8-r15 minus one spare (rbp may be the frame pointer)


def a_fits_in_registers(limbs: int) -> bool:
    """True when t (L+1), two scratch, a (L) and the b and constant pointers fit in the registers.

    >>> a_fits_in_registers(4), a_fits_in_registers(6)
    (True, False)
    """
    return (limbs + 3) + limbs + 2 <= _FREE_GPRS


def mont_asm_text(limbs: int, a_in_regs: bool) -> tuple[str, list[int]]:
    """AT&T text of the L-limb no-carry CIOS and the output operands holding t0..t(L-1) at the end.

    Operands: ``$0..$L`` the accumulator t (L+1 limbs), ``$(L+1)``/``$(L+2)`` scratch (lo, hi);
    then the inputs: a0..a(L-1) (``a_in_regs``) or a pointer to them, a pointer to b0..b(L-1),
    a pointer to p0..p(L-1), inv. ``rdx`` is clobbered. Each round adds a*b_i (``adox`` low
    halves, ``adcx`` high halves), then m*p with m = t0*inv likewise. Registers are renamed
    instead of moving values: after the reduction t0 is zero, so it is the zero source for the
    last carry and then the next round's empty top limb. Valid when p's top limb is < 2^63 - 1
    and a, b < p: then t + a*b_i + m*p < p*(2^65 + 1) < 2^(64(L+1)), so every partial sum fits
    L+1 limbs and the carries out of the top limb are always 0, and t stays below 2p.

    Args:
        limbs: L, the number of 64-bit limbs (>= 2).
        a_in_regs: take a0..a(L-1) as register operands instead of through a pointer.

    Returns:
        (asm text, operand numbers of t0..t(L-1) in output order).

    >>> text, order = mont_asm_text(6, a_in_regs=False)
    >>> text.count("mulxq"), order
    (72, [6, 8, 0, 1, 2, 3])
    """
    n = limbs
    assert n >= 2
    T = list(range(n + 1))  # operand numbers of t0..tL
    S = [n + 1, n + 2]  # scratch (lo, hi)
    first_in = n + 3
    if a_in_regs:
        A = [f"${first_in + j}" for j in range(n)]
        bp, kp = f"${first_in + n}", f"${first_in + n + 1}"
    else:
        ap = f"${first_in}"
        A = [f"{8 * j}({ap})" if j else f"({ap})" for j in range(n)]
        bp, kp = f"${first_in + 1}", f"${first_in + 2}"

    def t(k):
        return f"${T[k]}"

    lo = f"${S[0]}"

    # round 0: t = a*b0 on one plain add chain (t is empty, nothing to add on a second chain)
    s = [f"movq ({bp}), %rdx", f"mulxq {A[0]}, {t(0)}, {t(1)}"]
    for j in range(1, n):
        s += [f"mulxq {A[j]}, {lo}, {t(j + 1)}", f"{'addq' if j == 1 else 'adcq'} {lo}, {t(j)}"]
    s.append(f"adcq $$0, {t(n)}")
    for i in range(n):
        hi = f"${S[1]}"
        if i:  # tL is zero here
            s += [f"movq {8 * i}({bp}), %rdx", f"xorq {lo}, {lo}"]  # xor clears CF and OF
            for j in range(n - 1):
                s += [f"mulxq {A[j]}, {lo}, {hi}", f"adoxq {lo}, {t(j)}", f"adcxq {hi}, {t(j + 1)}"]
            s += [f"mulxq {A[n - 1]}, {lo}, {hi}", f"adoxq {lo}, {t(n - 1)}", f"adcxq {t(n)}, {hi}", f"adoxq {t(n)}, {hi}"]
            T[n], S[1] = S[1], T[n]  # hi + both carries is the new tL; the old zero tL is scratch
            hi = f"${S[1]}"
        T = _reduce_round(s, T, lo, hi, kp)
    return "\n".join(s), T[:n]


def _reduce_round(s: list[str], T: list[int], lo: str, hi: str, kp: str) -> list[int]:
    """Append one reduction round t = (t + m*p) / 2^64, m = t0 * inv, to ``s``; t = operands ``T``
    (L+1 limbs, the top one possibly non-zero). Returns the renamed T: t0 is zero after the
    round and becomes the (zero) top limb."""
    n = len(T) - 1

    def t(k):
        return f"${T[k]}"

    s += [f"movq {t(0)}, %rdx", f"imulq {8 * n}({kp}), %rdx", f"xorq {lo}, {lo}"]  # m = t0 * inv
    for j in range(n):
        s += [f"mulxq {8 * j}({kp}), {lo}, {hi}", f"adoxq {lo}, {t(j)}", f"adcxq {hi}, {t(j + 1)}"]
    s.append(f"adoxq {t(0)}, {t(n)}")  # t0 + lo(m*p0) == 0 mod 2^64: t0 is a zero register now
    return T[1:] + T[:1]


def mont_sqr_asm_text(limbs: int) -> tuple[str, list[int]]:
    """AT&T text of an L-limb Montgomery square a^2 / 2^(64L) (up to one p), and the output
    operands holding t0..t(L-1) at the end.

    Operands: ``$0..$(L+2)`` registers (outputs, early-clobber), ``$(L+3)`` a pointer to a
    3L-word stack slot holding a0..a(L-1) followed by 2L words of scratch, ``$(L+4)`` a pointer
    to p0..p(L-1), inv. ``rdx`` is clobbered. Four steps, L(L-1)/2 + L + L^2 ``mulx`` in all
    (57 for L = 6 against 72 for a product):

    1. the cross products S = sum_{i<j} a_i a_j 2^(64(i+j)), row by row (``adox`` low halves,
       ``adcx`` high halves), each column written to the scratch once it is final;
    2. T = 2S + sum a_i^2 2^(128i), column by column: ``adcx x, x`` doubles on the CF chain while
       ``adox`` adds the diagonal on the OF chain; T0..T(L-1) stay in registers, the rest goes
       back to the scratch;
    3. L reduction rounds of the low half (the product's rounds without the a*b_i part), which
       leave t = (T_low + M p) / 2^(64L) <= p;
    4. t += T_high with one ``adc`` chain: t = (T + M p) / 2^(64L) < (p^2 + 2^(64L) p) / 2^(64L)
       < 2p, so it fits L limbs (2p < 2^(64L)) and the caller subtracts p at most once.

    >>> text, order = mont_sqr_asm_text(6)
    >>> text.count("mulxq"), len(order)
    (57, 6)
    """
    n = limbs
    assert n >= 2
    free = list(range(n + 3))
    ap, kp = f"${n + 3}", f"${n + 4}"
    A = [f"{8 * j}({ap})" if j else f"({ap})" for j in range(n)]

    def S(k):  # scratch word k of the 2L-limb square
        return f"{8 * (n + k)}({ap})"

    def r(x):
        return f"${x}"

    s = []
    # 1. cross products; row i adds a_i * a_(i+1..L-1) into columns 2i+1 .. i+L
    col = {}
    lo = free.pop(0)
    s.append(f"movq {A[0]}, %rdx")
    col[1], col[2] = free.pop(0), free.pop(0)
    s.append(f"mulxq {A[1]}, {r(col[1])}, {r(col[2])}")
    for j in range(2, n):
        col[j + 1] = free.pop(0)
        s += [f"mulxq {A[j]}, {r(lo)}, {r(col[j + 1])}", f"{'addq' if j == 2 else 'adcq'} {r(lo)}, {r(col[j])}"]
    if n > 2:
        s.append(f"adcq $$0, {r(col[n])}")
    for i in range(1, n - 1):
        for k in (2 * i - 1, 2 * i):  # final since row i starts at column 2i+1
            s.append(f"movq {r(col[k])}, {S(k)}")
            free.append(col.pop(k))
        z, hi = free.pop(0), free.pop(0)
        s += [f"movq {A[i]}, %rdx", f"xorq {r(z)}, {r(z)}"]  # z = 0 and CF = OF = 0
        for j in range(i + 1, n - 1):
            s += [f"mulxq {A[j]}, {r(lo)}, {r(hi)}", f"adoxq {r(lo)}, {r(col[i + j])}", f"adcxq {r(hi)}, {r(col[i + j + 1])}"]
        s += [f"mulxq {A[n - 1]}, {r(lo)}, {r(hi)}", f"adoxq {r(lo)}, {r(col[i + n - 1])}"]
        s += [f"adcxq {r(z)}, {r(hi)}", f"adoxq {r(z)}, {r(hi)}"]  # the new top column: no carry out
        col[i + n] = hi
        free.append(z)
    for k in sorted(col):
        s.append(f"movq {r(col[k])}, {S(k)}")
        free.append(col.pop(k))
    free.append(lo)
    # 2. T_k = 2 S_k + diagonal_k + carries, S_0 = S_(2L-1) = 0
    T = []
    x = free.pop(0)
    s.append(f"xorq {r(x)}, {r(x)}")  # x = S_0 = 0 and CF = OF = 0
    for i in range(n):
        dlo, dhi = free.pop(0), free.pop(0)
        s += [f"movq {A[i]}, %rdx", f"mulxq %rdx, {r(dlo)}, {r(dhi)}"]
        for k, d in ((2 * i, dlo), (2 * i + 1, dhi)):
            if k:
                x = free.pop(0)
                s.append(f"movq {S(k)}, {r(x)}" if k < 2 * n - 1 else f"movq $$0, {r(x)}")  # mov keeps the flags
            s += [f"adcxq {r(x)}, {r(x)}", f"adoxq {r(d)}, {r(x)}"]
            if k < n:
                T.append(x)
            else:
                s.append(f"movq {r(x)}, {S(k)}")
                free.append(x)
            free.append(d)
    # 3. reduce the low half; t_L starts at zero
    z = free.pop(0)
    s.append(f"xorq {r(z)}, {r(z)}")
    T.append(z)
    lo, hi = r(free.pop(0)), r(free.pop(0))
    for _ in range(n):
        T = _reduce_round(s, T, lo, hi, kp)
    # 4. add the high half
    s += [f"{'addq' if k == 0 else 'adcq'} {S(n + k)}, {r(T[k])}" for k in range(n)]
    return "\n".join(s), T[:n]


def _stack_copy(builder, tup, n, words):
    """Spill a UniTuple(uint64, n) into the start of a ``words``-word stack slot; returns an i64* to it."""
    slot = cgutils.alloca_once(builder, ir.ArrayType(_I64, words))
    for k in range(n):
        builder.store(builder.extract_value(tup, k), builder.gep(slot, [ir.Constant(_I32, 0), ir.Constant(_I32, k)]))
    return builder.bitcast(slot, _I64.as_pointer())


def _check(modulus: int, inv: int, limbs: int) -> list[int]:
    """The constant block p0..p(L-1), inv, after checking the no-carry CIOS preconditions."""
    n = limbs
    assert modulus >> (64 * n - 64) < 2**63 - 1 and modulus % 2 == 1 and (modulus * inv + 1) % 2**64 == 0
    return [(modulus >> (64 * k)) & (2**64 - 1) for k in range(n)] + [inv]


def _const_ptr(builder, consts):
    init = ir.Constant(ir.ArrayType(_I64, len(consts)), [ir.Constant(_I64, v) for v in consts])
    g = cgutils.global_constant(builder.module, f"cuzk_mont{len(consts) - 1}_p", init)
    return builder.bitcast(g, _I64.as_pointer())


def _call_asm(builder, text, n_out, ins, n_in_regs):
    # Every output is early-clobber so that none shares a register with an input. The flags
    # clobber is "~{flags}" (EFLAGS), what clang emits for every x86 asm statement: LLVM ignores
    # GCC's "~{cc}", and with it alone LLVM kept a borrow in CF across an asm block (an Fq2
    # product whose borrow was read after the next asm block: wrong half the time, found with
    # asm forms of the lazy Fq2 pieces, since removed as slower; see docs/perf/field.md).
    constraints = ",".join(["=&r"] * n_out + ["r"] * n_in_regs + ["~{rdx}", "~{flags}", "~{memory}"])
    fnty = ir.FunctionType(ir.LiteralStructType([_I64] * n_out), [v.type for v in ins])
    return builder.asm(fnty, text, constraints, ins, side_effect=False)


def mont_mul_adx(modulus: int, inv: int, limbs: int, a_in_regs: bool | None = None):
    """An intrinsic ``(a, b) -> t`` for UniTuple(uint64, L) Montgomery limbs: t = a*b/2^(64L)
    mod p up to one p (t < 2p); the caller does the final conditional subtraction in plain
    Numba code. (Doing it in the asm and returning the borrow as a flag output, "={@ccb}",
    made LLVM 20 emit invalid machine code when the branch on it landed in another block.)

    ``inv`` is -p^-1 mod 2^64; p's top limb must be < 2^63 - 1 and a, b < p. Only call the
    result from @njit code when ``cuzk.field.intrinsics.HAVE_ADX``. ``a_in_regs`` None keeps
    ``a`` in registers when :func:`a_fits_in_registers`; False reads it through a pointer, which
    a product inlined into register-hungry code needs (4-limb Fq inside BN254's G2 formulas:
    "inline assembly requires more registers than available" with ``a`` in registers).

    >>> from cuzk.field import FQ
    >>> mont = mont_mul_adx(FQ.modulus, FQ.inv, FQ.limbs)   # fq._mul_adx on ADX CPUs
    """
    n = limbs
    consts = _check(modulus, inv, n)
    a_in_regs = a_fits_in_registers(n) if a_in_regs is None else a_in_regs
    text, order = mont_asm_text(n, a_in_regs)
    tup = types.UniTuple(types.uint64, n)

    @intrinsic
    def mont(typingctx, a, b):
        sig = tup(tup, tup)

        def codegen(context, builder, signature, args):
            a_, b_ = args
            # b0 must not arrive in rdx: for a*a LLVM may then hand a0 the same register, and
            # rdx is overwritten by b1 (a wrong square, seen in testing). All of b goes
            # through memory.
            bptr = _stack_copy(builder, b_, n, n)
            ains = [builder.extract_value(a_, k) for k in range(n)] if a_in_regs else [_stack_copy(builder, a_, n, n)]
            ins = ains + [bptr, _const_ptr(builder, consts)]
            res = _call_asm(builder, text, n + 3, ins, len(ins))
            return context.make_tuple(builder, signature.return_type, [builder.extract_value(res, k) for k in order])

        return sig, codegen

    return mont


def mont_sqr_adx(modulus: int, inv: int, limbs: int):
    """An intrinsic ``a -> t`` for UniTuple(uint64, L) Montgomery limbs: t = a^2/2^(64L) mod p
    up to one p (t < 2p), by :func:`mont_sqr_asm_text`; same contract as :func:`mont_mul_adx`.

    >>> from cuzk.field import FQ
    >>> sqr = mont_sqr_adx(FQ.modulus, FQ.inv, FQ.limbs)   # fq._sqr_adx on ADX CPUs
    """
    n = limbs
    consts = _check(modulus, inv, n)
    text, order = mont_sqr_asm_text(n)
    tup = types.UniTuple(types.uint64, n)

    @intrinsic
    def mont(typingctx, a):
        sig = tup(tup)

        def codegen(context, builder, signature, args):
            # one slot: a, then the 2L words the asm uses for the double-width square
            ins = [_stack_copy(builder, args[0], n, 3 * n), _const_ptr(builder, consts)]
            res = _call_asm(builder, text, n + 3, ins, len(ins))
            return context.make_tuple(builder, signature.return_type, [builder.extract_value(res, k) for k in order])

        return sig, codegen

    return mont
