// Montgomery arithmetic for Fr, Fq and Fq2 on 32-bit limbs, built on named carry-chain
// functions. On the GPU each chain function is one PTX instruction; the host test shim
// (tests/cuda_shim.h, CUZK_HOST_SHIM) supplies the same functions with a modelled carry flag,
// so every chain below runs unchanged on the CPU in the tests.
#pragma once

#if defined(__CUDACC_RTC__)
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#elif !defined(CUZK_HOST_SHIM)
#include <cstdint>
#endif

#include "params_bls12_381.h"

#ifndef CUZK_HOST_SHIM
// ---- carry chain: PTX. `volatile` keeps the compiler from reordering the instructions of a
// chain, which would clobber the carry flag (CC.CF) between them.
#define CUZK_PTX2(name, op)                                                                \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {                    \
        uint32_t r;                                                                        \
        asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));                        \
        return r;                                                                          \
    }
#define CUZK_PTX3(name, op)                                                                \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) {        \
        uint32_t r;                                                                        \
        asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));            \
        return r;                                                                          \
    }
CUZK_PTX2(add_cc, "add.cc.u32")      // a + b, sets carry
CUZK_PTX2(addc_cc, "addc.cc.u32")    // a + b + carry, sets carry
CUZK_PTX2(addc, "addc.u32")          // a + b + carry
CUZK_PTX2(sub_cc, "sub.cc.u32")      // a - b, sets borrow
CUZK_PTX2(subc_cc, "subc.cc.u32")    // a - b - borrow, sets borrow
CUZK_PTX2(subc, "subc.u32")          // a - b - borrow
CUZK_PTX2(mul_lo, "mul.lo.u32")      // low word of a * b
CUZK_PTX3(mad_lo_cc, "mad.lo.cc.u32")    // lo(a * b) + c, sets carry
CUZK_PTX3(madc_lo_cc, "madc.lo.cc.u32")  // lo(a * b) + c + carry, sets carry
CUZK_PTX3(mad_hi_cc, "mad.hi.cc.u32")    // hi(a * b) + c, sets carry
CUZK_PTX3(madc_hi_cc, "madc.hi.cc.u32")  // hi(a * b) + c + carry, sets carry
#undef CUZK_PTX2
#undef CUZK_PTX3
// Curve operations are large (an Fq2 XYZZ addition is ~25k instructions): calling them
// instead of inlining every use keeps ptxas time and code size sane at no measurable cost.
#define CUZK_NOINLINE __noinline__
// Dynamic shared memory as a typed pointer (the host shim supplies its own definition).
#define CUZK_DYN_SHARED(T, name)                                \
    extern __shared__ __align__(16) unsigned char cuzk_smem[];  \
    T* name = reinterpret_cast<T*>(cuzk_smem)
#endif

// Field configuration traits: limb count, modulus, Montgomery one, R^2, -p^-1 mod 2^32.
struct fr_cfg {
    static constexpr int N = FR_LIMBS;
    static constexpr uint32_t M0 = FR_M0;
    static __device__ __forceinline__ uint32_t p(int i) { return FR_MODULUS[i]; }
    static __device__ __forceinline__ uint32_t one(int i) { return FR_ONE[i]; }
    static __device__ __forceinline__ uint32_t r2(int i) { return FR_R2[i]; }
};
struct fq_cfg {
    static constexpr int N = FQ_LIMBS;
    static constexpr uint32_t M0 = FQ_M0;
    static __device__ __forceinline__ uint32_t p(int i) { return FQ_MODULUS[i]; }
    static __device__ __forceinline__ uint32_t one(int i) { return FQ_ONE[i]; }
    static __device__ __forceinline__ uint32_t r2(int i) { return FQ_R2[i]; }
};

// An element of Z/pZ in Montgomery form (value * R mod p), fully reduced (< p).
// Both BLS12-381 moduli leave spare top bits (255 of 256, 381 of 384), so a + b never
// overflows N limbs and the CIOS accumulator stays below 2p.
template <class C>
struct __align__(16) mont_t {  // 16-byte aligned: element copies become 128-bit loads/stores
    static constexpr int N = C::N;
    uint32_t v[N];

    static __device__ __forceinline__ mont_t zero() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    static __device__ __forceinline__ mont_t one() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = C::one(i);
        return r;
    }
    __device__ __forceinline__ bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    __device__ __forceinline__ bool operator==(const mont_t& b) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ b.v[i];
        return acc == 0;
    }

    // t - p if that does not borrow, else t (t < 2p on entry).
    static __device__ __forceinline__ mont_t reduce_once(const mont_t& t) {
        mont_t d;
        d.v[0] = sub_cc(t.v[0], C::p(0));
#pragma unroll
        for (int i = 1; i < N; i++) d.v[i] = subc_cc(t.v[i], C::p(i));
        uint32_t borrow = subc(0, 0);  // 0xffffffff when t < p
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = borrow ? t.v[i] : d.v[i];
        return r;
    }

    // Operands are copied to registers first: read through a reference into global memory,
    // the limbs would be re-loaded one 32-bit word at a time between the (volatile) chain
    // instructions; a copy of the 16-byte aligned struct is two or three 128-bit loads.
    static __device__ __forceinline__ mont_t add(const mont_t& a_, const mont_t& b_) {
        const mont_t a = a_, b = b_;
        mont_t s;
        s.v[0] = add_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) s.v[i] = addc_cc(a.v[i], b.v[i]);
        return reduce_once(s);
    }

    static __device__ __forceinline__ mont_t sub(const mont_t& a_, const mont_t& b_) {
        const mont_t a = a_, b = b_;
        mont_t d;
        d.v[0] = sub_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) d.v[i] = subc_cc(a.v[i], b.v[i]);
        uint32_t mask = subc(0, 0);  // all ones when a < b: add p back
        mont_t r;
        r.v[0] = add_cc(d.v[0], C::p(0) & mask);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = addc_cc(d.v[i], C::p(i) & mask);
        return r;
    }

    static __device__ __forceinline__ mont_t neg(const mont_t& a) { return sub(zero(), a); }
    static __device__ __forceinline__ mont_t dbl(const mont_t& a) { return add(a, a); }

    // One Montgomery reduction round on an (N + 2)-limb accumulator: add m * p with
    // m = t_0 * M0 (making the low limb vanish; only its carry matters), then shift down a limb.
    static __device__ __forceinline__ void reduce_round(uint32_t (&t)[N + 2]) {
        const uint32_t m = mul_lo(t[0], C::M0);
        (void)mad_lo_cc(m, C::p(0), t[0]);
#pragma unroll
        for (int j = 1; j < N; j++) t[j] = madc_lo_cc(m, C::p(j), t[j]);
        t[N] = addc_cc(t[N], 0);
        t[N + 1] = addc(t[N + 1], 0);
        t[1] = mad_hi_cc(m, C::p(0), t[1]);
#pragma unroll
        for (int j = 1; j < N; j++) t[j + 1] = madc_hi_cc(m, C::p(j), t[j + 1]);
        t[N + 1] = addc(t[N + 1], 0);
#pragma unroll
        for (int j = 0; j <= N; j++) t[j] = t[j + 1];
        t[N + 1] = 0;
    }

    // CIOS Montgomery product a * b / R mod p: per limb of b, one chain adds a * b_i (low
    // words, then high words one limb up), then a reduction round.
    static __device__ __forceinline__ mont_t mul(const mont_t& a_, const mont_t& b_) {
        const mont_t a = a_, b = b_;
        uint32_t t[N + 2];
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint32_t bi = b.v[i];
            t[0] = mad_lo_cc(a.v[0], bi, t[0]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j] = madc_lo_cc(a.v[j], bi, t[j]);
            t[N] = addc_cc(t[N], 0);
            t[N + 1] = addc(0, 0);
            t[1] = mad_hi_cc(a.v[0], bi, t[1]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j + 1] = madc_hi_cc(a.v[j], bi, t[j + 1]);
            t[N + 1] = addc(t[N + 1], 0);
            reduce_round(t);
        }
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = t[i];
        return reduce_once(r);
    }

    // Dedicated square: the N(N-1)/2 cross products once (row i: a_i * a_j, j > i), doubled by
    // shifts, plus the N diagonal squares -- N(N+1)/2 products instead of N^2 -- then N
    // reduction rounds on the low half and the high half added: (lo + m p) / R <= p and
    // hi = a^2 / R < p, so the sum is < 2p and one conditional subtraction finishes it.
    // Both moduli leave the top bit of the top limb free, so 2 * (cross products) < 2^(64N).
    static __device__ __forceinline__ mont_t sqr(const mont_t& a_) {
        const mont_t a = a_;
        uint32_t t[2 * N];
#pragma unroll
        for (int i = 0; i < 2 * N; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N - 1; i++) {  // row i's carries land in t[i+N] and t[i+N+1] (each <= 2)
            t[2 * i + 1] = mad_lo_cc(a.v[i], a.v[i + 1], t[2 * i + 1]);
#pragma unroll
            for (int j = i + 2; j < N; j++) t[i + j] = madc_lo_cc(a.v[i], a.v[j], t[i + j]);
            t[i + N] = addc(t[i + N], 0);
            t[2 * i + 2] = mad_hi_cc(a.v[i], a.v[i + 1], t[2 * i + 2]);
#pragma unroll
            for (int j = i + 2; j < N; j++) t[i + j + 1] = madc_hi_cc(a.v[i], a.v[j], t[i + j + 1]);
            t[i + N + 1] = addc(t[i + N + 1], 0);
        }
#pragma unroll
        for (int k = 2 * N - 1; k > 0; k--) t[k] = (t[k] << 1) | (t[k - 1] >> 31);
        t[0] = mad_lo_cc(a.v[0], a.v[0], 0);  // t[0] was 0: no cross product lands there
        t[1] = madc_hi_cc(a.v[0], a.v[0], t[1]);
#pragma unroll
        for (int i = 1; i < N; i++) {
            t[2 * i] = madc_lo_cc(a.v[i], a.v[i], t[2 * i]);
            t[2 * i + 1] = madc_hi_cc(a.v[i], a.v[i], t[2 * i + 1]);
        }
        uint32_t u[N + 2];
#pragma unroll
        for (int i = 0; i < N; i++) u[i] = t[i];
        u[N] = 0;
        u[N + 1] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) reduce_round(u);
        mont_t r;
        r.v[0] = add_cc(u[0], t[N]);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = addc_cc(u[i], t[N + i]);
        return reduce_once(r);
    }

    static __device__ __forceinline__ mont_t to_mont(const mont_t& a) {
        mont_t r2;
#pragma unroll
        for (int i = 0; i < N; i++) r2.v[i] = C::r2(i);
        return mul(a, r2);
    }

    // a^e for a 32-bit exponent (twiddle tables, coset powers).
    static __device__ __forceinline__ mont_t pow_u32(const mont_t& a, uint32_t e) {
        mont_t r = one(), base = a;
        while (e) {
            if (e & 1) r = mul(r, base);
            e >>= 1;
            if (e) base = sqr(base);
        }
        return r;
    }

    __device__ __forceinline__ mont_t operator+(const mont_t& b) const { return add(*this, b); }
    __device__ __forceinline__ mont_t operator-(const mont_t& b) const { return sub(*this, b); }
    __device__ __forceinline__ mont_t operator*(const mont_t& b) const { return mul(*this, b); }
};

typedef mont_t<fr_cfg> fr_t;
typedef mont_t<fq_cfg> fq_t;

// Fq2 = Fq[u]/(u^2 + 1): c0 + c1*u; same interface as mont_t so ec.cuh is generic.
template <class F>
struct fp2_t {
    F c0, c1;

    static __device__ __forceinline__ fp2_t make(const F& a, const F& b) {
        fp2_t r;
        r.c0 = a;
        r.c1 = b;
        return r;
    }
    static __device__ __forceinline__ fp2_t zero() { return make(F::zero(), F::zero()); }
    static __device__ __forceinline__ fp2_t one() { return make(F::one(), F::zero()); }
    __device__ __forceinline__ bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    __device__ __forceinline__ bool operator==(const fp2_t& b) const { return c0 == b.c0 && c1 == b.c1; }

    static __device__ __forceinline__ fp2_t add(const fp2_t& a, const fp2_t& b) {
        return make(F::add(a.c0, b.c0), F::add(a.c1, b.c1));
    }
    static __device__ __forceinline__ fp2_t sub(const fp2_t& a, const fp2_t& b) {
        return make(F::sub(a.c0, b.c0), F::sub(a.c1, b.c1));
    }
    static __device__ __forceinline__ fp2_t neg(const fp2_t& a) { return make(F::neg(a.c0), F::neg(a.c1)); }
    static __device__ __forceinline__ fp2_t dbl(const fp2_t& a) { return add(a, a); }

    // Karatsuba: 3 base multiplications. Not inlined: inlining every Fq2 product into the
    // G2 point formulas makes ptxas take minutes per kernel for no measurable gain.
    static __device__ CUZK_NOINLINE fp2_t mul(const fp2_t& a, const fp2_t& b) {
        F t0 = F::mul(a.c0, b.c0);
        F t1 = F::mul(a.c1, b.c1);
        F t2 = F::mul(F::add(a.c0, a.c1), F::add(b.c0, b.c1));
        return make(F::sub(t0, t1), F::sub(F::sub(t2, t0), t1));
    }
    // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: 2 base multiplications.
    static __device__ CUZK_NOINLINE fp2_t sqr(const fp2_t& a) {
        F t = F::mul(a.c0, a.c1);
        return make(F::mul(F::add(a.c0, a.c1), F::sub(a.c0, a.c1)), F::add(t, t));
    }

    __device__ __forceinline__ fp2_t operator+(const fp2_t& b) const { return add(*this, b); }
    __device__ __forceinline__ fp2_t operator-(const fp2_t& b) const { return sub(*this, b); }
    __device__ __forceinline__ fp2_t operator*(const fp2_t& b) const { return mul(*this, b); }
};

typedef fp2_t<fq_t> fq2_t;
