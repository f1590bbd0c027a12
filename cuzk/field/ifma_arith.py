"""Field arithmetic on 8 lanes at once as LLVM IR, for AVX-512 IFMA (``vpmadd52luq``/``vpmadd52huq``).

A lane value of Fq is the integer x·R' mod p with R' = 2^(52·L) (the *IFMA Montgomery form*),
held as L limbs of 52 bits: one ``<8 x i64>`` vector per limb carries that limb of all 8 lanes.
``vpmadd52l/h`` multiply the low 52 bits of two lanes and add the low (high) 52 bits of the
104-bit product to a 64-bit accumulator, so a Montgomery product is L rounds of 4L of them with
the carries left in the accumulators (a limb stays below 4L·2^52 < 2^64) and one carry pass at
the end. Every result is fully reduced (< p), so equal values have equal limbs.

:class:`VecArith` builds those operations into one LLVM function (the caller's ``builder``);
``cuzk.field.ifma`` wraps them into Numba intrinsics with their loads and stores. Fq2 is
Fq[u]/(u² + k) for a small k ≥ 1 (BLS12-381 and BN254: k = 1; BLS12-377: k = 5).

    >>> limbs52(2**52 + 3, 2)
    [3, 1]
    >>> limb_count(2**254 - 1)        # 254-bit p: 5 limbs (R' = 2^260 > 2p)
    5
"""

from __future__ import annotations

from llvmlite import ir

__all__ = ["LANES", "LIMB_BITS", "VecArith", "limbs52", "limb_count", "splat"]

LANES = 8
LIMB_BITS = 52
_MASK = (1 << LIMB_BITS) - 1
_I64 = ir.IntType(64)
_V = ir.VectorType(_I64, LANES)


def limbs52(x: int, n: int) -> list[int]:
    """x as n little-endian 52-bit limbs."""
    return [(x >> (LIMB_BITS * k)) & _MASK for k in range(n)]


def splat(c: int):
    """The constant ``<8 x i64>`` with c in every lane."""
    return ir.Constant(_V, [ir.Constant(_I64, c)] * LANES)


def limb_count(p: int) -> int:
    """52-bit limbs of the IFMA form of Z/p: the least L with 2^(52·L) > 2p, so that a
    Montgomery product (< 2p before its final subtraction) fits without a top carry."""
    return -(-(p.bit_length() + 1) // LIMB_BITS)


class VecArith:
    """IR for Fq and Fq2 = Fq[u]/(u² + k) on 8 lanes, bound to one builder and one modulus.

    An Fq value is a list of L ``<8 x i64>`` limb vectors; an extension value (``e*`` methods) a
    list of ``degree`` Fq values (coefficients 1, u).

    Args:
        builder: the llvmlite IR builder to emit into.
        p: the modulus.
        degree: 1 (Fq) or 2 (Fq2).
        k: Fq2's non-residue is −k (u² = −k); ignored for degree 1.
    """

    def __init__(self, builder, p: int, degree: int = 1, k: int = 1):
        self.b = builder
        self.L = limb_count(p)
        self.degree = degree
        self.k = k
        self.p = [splat(v) for v in limbs52(p, self.L)]
        self.inv = splat((-pow(p, -1, 1 << LIMB_BITS)) % (1 << LIMB_BITS))  # -p^-1 mod 2^52
        self.zero = splat(0)
        self.mask = splat(_MASK)
        self.shift = splat(LIMB_BITS)
        fnty = ir.FunctionType(_V, [_V, _V, _V])
        module = builder.module
        self._lo = module.declare_intrinsic("llvm.x86.avx512.vpmadd52l.uq.512", fnty=fnty)
        self._hi = module.declare_intrinsic("llvm.x86.avx512.vpmadd52h.uq.512", fnty=fnty)

    # ------------------------------------------------------------------ Fq
    def _carry(self, t):
        """Limbs below 2^63 -> 52-bit limbs (the carry out of the top limb is dropped: callers
        guarantee the value fits)."""
        b = self.b
        out, carry = [], None
        for v in t:
            v = v if carry is None else b.add(v, carry)
            carry = b.lshr(v, self.shift)
            out.append(b.and_(v, self.mask))
        return out

    def _sub_limbs(self, x, y):
        """x − y limb-wise with borrows: (52-bit limbs of x − y mod 2^(52L), lanes where x < y)."""
        b = self.b
        out, borrow = [], None
        for xj, yj in zip(x, y):
            v = b.sub(xj, yj)
            v = v if borrow is None else b.add(v, borrow)
            borrow = b.ashr(v, self.shift)  # 0, or -1 when this limb went negative
            out.append(b.and_(v, self.mask))
        return out, b.icmp_signed("<", borrow, self.zero)

    def _reduce_once(self, t):
        """t − p where t ≥ p, else t (t < 2p, 52-bit limbs)."""
        d, below = self._sub_limbs(t, self.p)
        return [self.b.select(below, tj, dj) for tj, dj in zip(t, d)]

    def mul(self, x, y):
        """x·y·R'^-1 mod p (the Montgomery product: IFMA forms in, IFMA form out)."""
        b, L = self.b, self.L
        t = [self.zero] * (L + 1)
        for i in range(L):
            for j in range(L):
                t[j] = b.call(self._lo, [t[j], x[i], y[j]])
            for j in range(L):
                t[j + 1] = b.call(self._hi, [t[j + 1], x[i], y[j]])
            m = b.call(self._lo, [self.zero, t[0], self.inv])  # t0·(−p^-1) mod 2^52
            for j in range(L):
                t[j] = b.call(self._lo, [t[j], m, self.p[j]])
            for j in range(L):
                t[j + 1] = b.call(self._hi, [t[j + 1], m, self.p[j]])
            # t0 ≡ 0 mod 2^52 now: divide by 2^52, its carry moves into the next limb
            t = [b.add(t[1], b.lshr(t[0], self.shift))] + t[2:] + [self.zero]
        return self._reduce_once(self._carry(t[:L]))

    def add(self, x, y):
        """x + y mod p."""
        return self._reduce_once(self._carry([self.b.add(xj, yj) for xj, yj in zip(x, y)]))

    def sub(self, x, y):
        """x − y mod p."""
        b = self.b
        d, below = self._sub_limbs(x, y)
        e = self._carry([b.add(dj, pj) for dj, pj in zip(d, self.p)])  # + p, dropping 2^(52L)
        return [b.select(below, ej, dj) for dj, ej in zip(d, e)]

    def times(self, x, n: int):
        """n·x mod p for a small n ≥ 1 (double-and-add)."""
        acc, run = None, x
        while n:
            if n & 1:
                acc = run if acc is None else self.add(acc, run)
            n >>= 1
            if n:
                run = self.add(run, run)
        return acc

    # ------------------------------------------------------------------ Fq or Fq2
    def esub(self, x, y):
        return [self.sub(a, c) for a, c in zip(x, y)]

    def emul(self, x, y):
        """x·y in Fq (degree 1) or Fq2 (Karatsuba: three products)."""
        if self.degree == 1:
            return [self.mul(x[0], y[0])]
        a0b0, a1b1 = self.mul(x[0], y[0]), self.mul(x[1], y[1])
        s = self.mul(self.add(x[0], x[1]), self.add(y[0], y[1]))
        return [self.sub(a0b0, self.times(a1b1, self.k)), self.sub(self.sub(s, a0b0), a1b1)]

    def esqr(self, x):
        """x² (Fq2 with k = 1: (a0 + a1)(a0 − a1) + 2·a0·a1·u, two products)."""
        if self.degree == 1:
            return [self.mul(x[0], x[0])]
        if self.k != 1:
            return self.emul(x, x)
        t = self.mul(x[0], x[1])
        return [self.mul(self.add(x[0], x[1]), self.sub(x[0], x[1])), self.add(t, t)]

    def norm(self, x):
        """The Fq norm a0² + k·a1² of an Fq2 value (a0 + a1·u)(a0 − a1·u); x itself for Fq."""
        if self.degree == 1:
            return x[0]
        return self.add(self.mul(x[0], x[0]), self.times(self.mul(x[1], x[1]), self.k))
