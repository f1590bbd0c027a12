// Short-Weierstrass points (a = 0) in affine and XYZZ coordinates, generic over the
// coordinate field: G1 = <fq_t>, G2 = <fq2_t>. XYZZ (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2) makes
// a mixed addition 8M + 2S with no inversion; formulas from the Explicit-Formulas Database
// (add-2008-s, madd-2008-s, dbl-2008-s-1, mdbl-2008-s-1).
#pragma once

#include "field.cuh"

// Affine point; (0, 0) encodes infinity (it lies on neither BLS12-381 curve; DESIGN §3).
template <class F>
struct affine_t {
    F x, y;
    __device__ __forceinline__ bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

// XYZZ point; ZZ = ZZZ = 0 encodes infinity.
template <class F>
struct xyzz_t {
    F X, Y, ZZ, ZZZ;

    static __device__ __forceinline__ xyzz_t inf() {
        xyzz_t r;
        r.X = F::one();
        r.Y = F::one();
        r.ZZ = F::zero();
        r.ZZZ = F::zero();
        return r;
    }
    __device__ __forceinline__ bool is_inf() const { return ZZ.is_zero(); }

    static __device__ __forceinline__ xyzz_t from_affine(const affine_t<F>& a) {
        if (a.is_inf()) return inf();
        xyzz_t r;
        r.X = a.x;
        r.Y = a.y;
        r.ZZ = F::one();
        r.ZZZ = F::one();
        return r;
    }

    // 2P (dbl-2008-s-1): 2M + 5S (+ M·ZZ, M·ZZZ).
    static __device__ CUZK_NOINLINE xyzz_t dbl(const xyzz_t& p) {
        if (p.is_inf()) return p;
        F U = F::dbl(p.Y);
        F V = F::sqr(U);
        F W = F::mul(U, V);
        F S = F::mul(p.X, V);
        F X2 = F::sqr(p.X);
        F M = F::add(F::dbl(X2), X2);
        xyzz_t r;
        r.X = F::sub(F::sqr(M), F::dbl(S));
        r.Y = F::sub(F::mul(M, F::sub(S, r.X)), F::mul(W, p.Y));
        r.ZZ = F::mul(V, p.ZZ);
        r.ZZZ = F::mul(W, p.ZZZ);
        return r;
    }

    // 2Q for affine Q (mdbl-2008-s-1); Q must not be infinity.
    static __device__ CUZK_NOINLINE xyzz_t dbl_affine(const F& x, const F& y) {
        F U = F::dbl(y);
        F V = F::sqr(U);
        F W = F::mul(U, V);
        F S = F::mul(x, V);
        F X2 = F::sqr(x);
        F M = F::add(F::dbl(X2), X2);
        xyzz_t r;
        r.X = F::sub(F::sqr(M), F::dbl(S));
        r.Y = F::sub(F::mul(M, F::sub(S, r.X)), F::mul(W, y));
        r.ZZ = V;
        r.ZZZ = W;
        return r;
    }

    // P + (±Q) for affine Q (madd-2008-s); negate picks -Q (signed bucket digits).
    static __device__ CUZK_NOINLINE xyzz_t add_affine(const xyzz_t& p, const affine_t<F>& q, bool negate) {
        if (q.is_inf()) return p;
        const F qy = negate ? F::neg(q.y) : q.y;
        if (p.is_inf()) {
            xyzz_t r;
            r.X = q.x;
            r.Y = qy;
            r.ZZ = F::one();
            r.ZZZ = F::one();
            return r;
        }
        F U2 = F::mul(q.x, p.ZZ);
        F S2 = F::mul(qy, p.ZZZ);
        F P = F::sub(U2, p.X);
        F R = F::sub(S2, p.Y);
        if (P.is_zero()) {
            if (R.is_zero()) return dbl_affine(q.x, qy);
            return inf();  // P = -Q
        }
        F PP = F::sqr(P);
        F PPP = F::mul(P, PP);
        F Q = F::mul(p.X, PP);
        xyzz_t r;
        r.X = F::sub(F::sub(F::sqr(R), PPP), F::dbl(Q));
        r.Y = F::sub(F::mul(R, F::sub(Q, r.X)), F::mul(p.Y, PPP));
        r.ZZ = F::mul(p.ZZ, PP);
        r.ZZZ = F::mul(p.ZZZ, PPP);
        return r;
    }

    // P + Q (add-2008-s): 12M + 2S.
    static __device__ CUZK_NOINLINE xyzz_t add(const xyzz_t& p, const xyzz_t& q) {
        if (p.is_inf()) return q;
        if (q.is_inf()) return p;
        F U1 = F::mul(p.X, q.ZZ);
        F U2 = F::mul(q.X, p.ZZ);
        F S1 = F::mul(p.Y, q.ZZZ);
        F S2 = F::mul(q.Y, p.ZZZ);
        F P = F::sub(U2, U1);
        F R = F::sub(S2, S1);
        if (P.is_zero()) {
            if (R.is_zero()) return dbl(p);
            return inf();
        }
        F PP = F::sqr(P);
        F PPP = F::mul(P, PP);
        F Q = F::mul(U1, PP);
        xyzz_t r;
        r.X = F::sub(F::sub(F::sqr(R), PPP), F::dbl(Q));
        r.Y = F::sub(F::mul(R, F::sub(Q, r.X)), F::mul(S1, PPP));
        r.ZZ = F::mul(F::mul(p.ZZ, q.ZZ), PP);
        r.ZZZ = F::mul(F::mul(p.ZZZ, q.ZZZ), PPP);
        return r;
    }
};

typedef affine_t<fq_t> g1_affine_t;
typedef affine_t<fq2_t> g2_affine_t;
typedef xyzz_t<fq_t> g1_xyzz_t;
typedef xyzz_t<fq2_t> g2_xyzz_t;
