"""AVX-512 IFMA kernels for batch-affine point additions: 8 lanes at once, as Numba intrinsics.

The batch-affine bucket additions of the CPU MSM spend ~75 % of their time in field products
(docs/perf/kernels.md). On a CPU with AVX-512 IFMA, :class:`VecField` does the arithmetic of 8
additions at once (``cuzk.field.ifma_arith``: the IFMA Montgomery form, 52-bit limbs): a BN254
Fq product costs ~5 ns per lane against ~20 ns for the scalar ``mulx`` form, and an MSM 1.6-1.8x
less time (docs/perf/kernels.md, "AVX-512 IFMA windows"; ``benchmarks/msm_ifma_bench.py``). Its intrinsics read and write point rows in the IFMA form,
``(rows, 2·D·L)`` uint64 arrays (x then y, each D coefficients of L limbs), and keep the batch
inversion's running products as SoA blocks of ``D·L·8`` uint64 ([coefficient][limb][lane]).
The generated ``msm_vec_g1``/``msm_vec_g2`` modules of each curve drive them
(scripts/cuzk_codegen/msm_vec.py).

Values cross from cuzk's 64-bit Montgomery form (x·R, R = 2^(64·L64)) by repacking the bits and
one product with R'²/R, and back with R (``to52``/``to64``).

``HAVE_IFMA`` says whether the CPU Numba compiles for has AVX-512F and IFMA; it is a function
of the feature string in Numba's cache key (``cuzk.field.intrinsics``), so machine code with
these instructions is never loaded on a CPU without them. Nothing here runs LLVM until a kernel
that calls an intrinsic compiles, so building a :class:`VecField` is safe on any CPU.

    >>> vf = VecField(2**127 - 1, 2)            # any odd p: here a 127-bit Mersenne prime
    >>> vf.L, vf.degree, int(vf.INV_BITS.sum()) == bin(2**127 - 3).count("1")
    (3, 1, True)
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from cuzk.field.ifma_arith import LANES, LIMB_BITS, VecArith, limb_count, limbs52, splat
from cuzk.field.intrinsics import _target_features

__all__ = ["VecField", "HAVE_IFMA", "ifma_in", "limbs52"]

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_V = ir.VectorType(_I64, LANES)
_PV = ir.VectorType(_I64.as_pointer(), LANES)
_MV = ir.VectorType(ir.IntType(1), LANES)
_ALL = ir.Constant(_MV, [1] * LANES)


def ifma_in(features: str) -> bool:
    """True when an LLVM feature string allows the 512-bit IFMA instructions.

    >>> ifma_in("+avx512f,+avx512ifma,+adx"), ifma_in("+avx512f,-avx512ifma"), ifma_in("+avx2")
    (True, False, False)
    """
    flags = set(features.split(","))
    return {"+avx512f", "+avx512ifma"} <= flags


HAVE_IFMA = ifma_in(_target_features())


def _splat_value(b, x):
    v = ir.Constant(_V, ir.Undefined)
    for lane in range(LANES):
        v = b.insert_element(v, x, ir.Constant(_I32, lane))
    return v


def _data(context, builder, ty, val):
    return context.make_array(ty)(context, builder, val).data


def _lanes_addr(b, base, offsets, const: int):
    """<8 x i64*>: &base[offsets[l] + const]."""
    start = _splat_value(b, b.ptrtoint(base, _I64))
    return b.inttoptr(b.add(start, b.shl(b.add(offsets, splat(const)), splat(3))), _PV)


def _gather(b, base, offsets, const: int):
    fn = b.module.declare_intrinsic("llvm.masked.gather.v8i64.v8p0i64",
                                    fnty=ir.FunctionType(_V, [_PV, _I32, _MV, _V]))
    return b.call(fn, [_lanes_addr(b, base, offsets, const), ir.Constant(_I32, 8), _ALL, ir.Constant(_V, ir.Undefined)])


def _scatter(b, base, offsets, const: int, v):
    # lanes that repeat an address (padding) carry equal values, so the order of their stores is moot
    fn = b.module.declare_intrinsic("llvm.masked.scatter.v8i64.v8p0i64",
                                    fnty=ir.FunctionType(ir.VoidType(), [_V, _PV, _I32, _MV]))
    b.call(fn, [v, _lanes_addr(b, base, offsets, const), ir.Constant(_I32, 8), _ALL])


class VecField:
    """The IFMA intrinsics of one coordinate field: Fq (``degree`` 1) or Fq2 (degree 2, u² =
    ``nonresidue``, which must be −k for a small k).

    Attributes:
        L: 52-bit limbs per Fq value; ``W`` = 2·degree·L uint64 per point row, ``BLOCK`` =
            degree·L·8 per SoA block.
        INV_BITS: the bits of p − 2 from the top (uint8), the exponent ``inv_lanes`` walks.
        ONE: the SoA block of 1 in every lane.
        P52: p as L limbs (uint64), for scalar code on IFMA-form rows.
        den_add, inv_back, chord, inv_lanes, mul_lanes, to52, to64: the intrinsics (below).
    """

    def __init__(self, p: int, limbs64: int, degree: int = 1, nonresidue: int | None = None):
        if degree not in (1, 2):
            raise ValueError(f"degree must be 1 or 2, got {degree}")
        k = (-nonresidue) % p if degree == 2 else 1
        if not 1 <= k <= 64:
            raise ValueError("the IFMA Fq2 needs u^2 = -k for a small k")
        self.p, self.L64, self.degree, self.k = p, limbs64, degree, k
        self.L = limb_count(p)
        self.W = 2 * degree * self.L
        self.BLOCK = degree * self.L * LANES
        r64, r52 = 1 << (64 * limbs64), 1 << (LIMB_BITS * self.L)
        self._to52 = r52 * r52 * pow(r64, -1, p) % p  # mont(x·R, R'^2/R) = x·R'
        self._to64 = r64 % p  # mont(x·R', R) = x·R
        self.INV_BITS = np.array([int(c) for c in bin(p - 2)[2:]], np.uint8)
        self.P52 = np.array(limbs52(p, self.L), np.uint64)
        self.ONE = np.zeros(self.BLOCK, np.uint64)  # coefficient 0 of every lane = R' mod p
        for j, v in enumerate(limbs52(r52 % p, self.L)):
            self.ONE[j * LANES:(j + 1) * LANES] = v
        self._build()

    def arith(self, builder) -> VecArith:
        return VecArith(builder, self.p, self.degree, self.k)

    # ----------------------------------------------------------------- memory
    def _load_point_coord(self, b, base, rows, coord):
        """Coordinate ``coord`` (0: x, 1: y) of the rows at uint64 offsets ``rows``."""
        D, L = self.degree, self.L
        return [[_gather(b, base, rows, (coord * D + c) * L + j) for j in range(L)] for c in range(D)]

    def _store_point_coord(self, b, base, rows, coord, val):
        D, L = self.degree, self.L
        for c in range(D):
            for j in range(L):
                _scatter(b, base, rows, (coord * D + c) * L + j, val[c][j])

    def _block_ptr(self, b, base, off, c, j):
        return b.bitcast(b.gep(base, [b.add(off, ir.Constant(_I64, (c * self.L + j) * LANES))]), _V.as_pointer())

    def _load_block(self, b, base, off):
        """The SoA block at uint64 offset ``off``."""
        return [[b.load(self._block_ptr(b, base, off, c, j), align=8) for j in range(self.L)]
                for c in range(self.degree)]

    def _store_block(self, b, base, off, val):
        for c in range(self.degree):
            for j in range(self.L):
                b.store(val[c][j], self._block_ptr(b, base, off, c, j), align=8)

    def _rows(self, b, idx_ptr, k0):
        """uint64 offsets of the rows idx[k0 .. k0+7] (an int64 array)."""
        v = b.load(b.bitcast(b.gep(idx_ptr, [k0]), _V.as_pointer()), align=8)
        return b.mul(v, splat(self.W))

    def _group_offset(self, b, k0):
        # schedule entries k0..k0+7 (k0 a multiple of 8) own the SoA block k0/8: offset k0·D·L
        return b.mul(k0, ir.Constant(_I64, self.degree * self.L))

    # ----------------------------------------------------------------- intrinsics
    def _build(self):
        vf = self

        def void(body):
            """(sig, codegen) of an intrinsic over ``args`` that runs ``body(builder, ptr, values)``,
            ``ptr(i)`` being the data pointer of array argument i."""

            def typer(*args):
                def codegen(context, builder, signature, values):
                    body(builder, lambda i: _data(context, builder, signature.args[i], values[i]), values)
                    return context.get_dummy_value()

                return types.void(*args), codegen

            return typer

        def den_add(b, ptr, v):
            # (pts, src, k0, den, pref, acc)
            f = vf.arith(b)
            rows = vf._rows(b, ptr(1), v[2])
            x1 = vf._load_point_coord(b, ptr(0), rows, 0)
            x2 = vf._load_point_coord(b, ptr(0), b.add(rows, splat(vf.W)), 0)
            d = f.esub(x2, x1)
            off, zero = vf._group_offset(b, v[2]), ir.Constant(_I64, 0)
            acc = vf._load_block(b, ptr(5), zero)
            vf._store_block(b, ptr(3), off, d)
            vf._store_block(b, ptr(4), off, acc)
            vf._store_block(b, ptr(5), zero, f.emul(acc, d))

        def inv_back(b, ptr, v):
            # (den, pref, inv, k0)
            f = vf.arith(b)
            off, zero = vf._group_offset(b, v[3]), ir.Constant(_I64, 0)
            inv = vf._load_block(b, ptr(2), zero)
            d = vf._load_block(b, ptr(0), off)
            vf._store_block(b, ptr(0), off, f.emul(inv, vf._load_block(b, ptr(1), off)))
            vf._store_block(b, ptr(2), zero, f.emul(inv, d))

        def chord(b, ptr, v):
            # (pts, src, dst, k0, den)
            f = vf.arith(b)
            rows = vf._rows(b, ptr(1), v[3])
            rows2 = b.add(rows, splat(vf.W))
            x1, y1 = vf._load_point_coord(b, ptr(0), rows, 0), vf._load_point_coord(b, ptr(0), rows, 1)
            x2, y2 = vf._load_point_coord(b, ptr(0), rows2, 0), vf._load_point_coord(b, ptr(0), rows2, 1)
            lam = f.emul(f.esub(y2, y1), vf._load_block(b, ptr(4), vf._group_offset(b, v[3])))
            x3 = f.esub(f.esub(f.esqr(lam), x1), x2)
            y3 = f.esub(f.emul(lam, f.esub(x1, x3)), y1)
            out = vf._rows(b, ptr(2), v[3])
            vf._store_point_coord(b, ptr(0), out, 0, x3)
            vf._store_point_coord(b, ptr(0), out, 1, y3)

        def mul_lanes(b, ptr, v):
            # (out, x, y)
            zero = ir.Constant(_I64, 0)
            prod = vf.arith(b).emul(vf._load_block(b, ptr(1), zero), vf._load_block(b, ptr(2), zero))
            vf._store_block(b, ptr(0), zero, prod)

        def inv_lanes(b, ptr, v):
            # (out, x, bits): Fermat on the norm, as an IR loop over the exponent bits
            f = vf.arith(b)
            zero = ir.Constant(_I64, 0)
            x = vf._load_block(b, ptr(1), zero)
            n = f.norm(x)
            start = b.block
            loop = b.function.append_basic_block("ifma_inv_loop")
            done = b.function.append_basic_block("ifma_inv_done")
            b.branch(loop)
            b.position_at_end(loop)
            i = b.phi(_I64)
            acc = [b.phi(_V) for _ in range(vf.L)]
            i.add_incoming(zero, start)
            for a, one in zip(acc, limbs52((1 << (LIMB_BITS * vf.L)) % vf.p, vf.L)):
                a.add_incoming(splat(one), start)
            sq = f.mul(acc, acc)
            taken = f.mul(sq, n)
            bit = b.load(b.gep(ptr(2), [i]))
            use = b.icmp_unsigned("!=", bit, ir.Constant(bit.type, 0))
            nxt = [b.select(use, t, s) for t, s in zip(taken, sq)]
            i2 = b.add(i, ir.Constant(_I64, 1))
            i.add_incoming(i2, loop)
            for a, val in zip(acc, nxt):
                a.add_incoming(val, loop)
            b.cbranch(b.icmp_signed("<", i2, ir.Constant(_I64, len(vf.INV_BITS))), loop, done)
            b.position_at_end(done)
            f = vf.arith(b)
            if vf.degree == 1:
                res = [nxt]
            else:  # 1/(a0 + a1 u) = (a0 − a1 u)/N
                res = [f.mul(x[0], nxt), f.sub([f.zero] * vf.L, f.mul(x[1], nxt))]
            vf._store_block(b, ptr(0), zero, res)

        def convert(to52: bool):
            L, L64 = vf.L, vf.L64
            width_in, width_out = (L64, L) if to52 else (L, L64)
            const = limbs52(vf._to52 if to52 else vf._to64, L)

            def body(b, ptr, v):
                # (src, dst, lo, hi): Fq elements lo..lo+7 of flat arrays, lanes past hi repeat hi-1
                f = vf.arith(b)
                lo, hi = v[2], v[3]
                idx = _splat_value(b, lo)
                idx = b.add(idx, ir.Constant(_V, [ir.Constant(_I64, k) for k in range(LANES)]))
                last = _splat_value(b, b.sub(hi, ir.Constant(_I64, 1)))
                idx = b.select(b.icmp_signed("<", idx, _splat_value(b, hi)), idx, last)
                src = b.mul(idx, splat(width_in))
                dst = b.mul(idx, splat(width_out))
                words = [_gather(b, ptr(0), src, k) for k in range(width_in)]
                if to52:
                    limbs = []
                    for j in range(L):
                        k, s = divmod(LIMB_BITS * j, 64)
                        x = b.lshr(words[k], splat(s))
                        if s > 64 - LIMB_BITS and k + 1 < L64:
                            x = b.or_(x, b.shl(words[k + 1], splat(64 - s)))
                        limbs.append(b.and_(x, f.mask))
                    for j, limb in enumerate(f.mul(limbs, [splat(c) for c in const])):
                        _scatter(b, ptr(1), dst, j, limb)
                    return
                limbs = f.mul(words, [splat(c) for c in const])
                for k in range(L64):
                    x = f.zero
                    for j in range(L):
                        at = LIMB_BITS * j - 64 * k  # where limb j starts in word k
                        if -LIMB_BITS < at < 64:
                            x = b.or_(x, b.shl(limbs[j], splat(at)) if at >= 0 else b.lshr(limbs[j], splat(-at)))
                    _scatter(b, ptr(1), dst, k, x)

            return body

        @intrinsic
        def den_add_(typingctx, pts, src, k0, den, pref, acc):
            """Schedule entries k0..k0+7 add rows src[k] and src[k]+1: their den block = x2 − x1,
            their pref block = acc, then acc *= den (8 lane-wise running products)."""
            return void(den_add)(pts, src, k0, den, pref, acc)

        @intrinsic
        def inv_back_(typingctx, den, pref, inv, k0):
            """Block k0/8, walked from the last: den <- inv·pref (each entry's inverse), inv <- inv·den."""
            return void(inv_back)(den, pref, inv, k0)

        @intrinsic
        def chord_(typingctx, pts, src, dst, k0, den):
            """Rows dst[k] <- rows src[k] + src[k]+1 for k in k0..k0+7, den's block holding 1/(x2 − x1)."""
            return void(chord)(pts, src, dst, k0, den)

        @intrinsic
        def mul_lanes_(typingctx, out, x, y):
            """SoA blocks: out = x·y lane-wise."""
            return void(mul_lanes)(out, x, y)

        @intrinsic
        def inv_lanes_(typingctx, out, x, bits):
            """SoA blocks: out = 1/x lane-wise (x != 0 in every lane; bits = INV_BITS)."""
            return void(inv_lanes)(out, x, bits)

        to52_body, to64_body = convert(True), convert(False)

        @intrinsic
        def to52_(typingctx, src, dst, lo, hi):
            """Fq elements lo..lo+7 (those < hi) of flat C-contiguous arrays: 64-bit Montgomery
            limbs -> IFMA form."""
            return void(to52_body)(src, dst, lo, hi)

        @intrinsic
        def to64_(typingctx, src, dst, lo, hi):
            """The inverse of to52."""
            return void(to64_body)(src, dst, lo, hi)

        self.den_add, self.inv_back, self.chord = den_add_, inv_back_, chord_
        self.mul_lanes, self.inv_lanes, self.to52, self.to64 = mul_lanes_, inv_lanes_, to52_, to64_
