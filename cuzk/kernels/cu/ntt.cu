// Radix-2 NTT over Fr (natural order in and out): decimation-in-time butterfly stages, several
// per launch in shared memory, the first pass reading in bit-reversed order; coset/inverse scaling
// by powers; the fused Groth16 H step h = (a*b - c) * Z^-1. Twiddles come from a table
// tw[e] = w^e (e < n/2) that cuzk/kernels/cuda.py builds once per (n, w) with fr_powers.
#include "field.cuh"
#include "launch.cuh"

// x[i] = scale * base^i (times_in = 0) or x[i] = in[i] * scale * base^i (times_in = 1: coset
// shift, 1/n, Montgomery -> canonical; in == x scales in place, another array copies and scales
// in one pass) for i < n; 1-D grid, thread t covers [t*per_thread, (t+1)*per_thread): one
// exponentiation, then one multiplication per element.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
fr_powers(uint32_t* x, const uint32_t* in, const uint32_t* base, const uint32_t* scale, uint32_t n,
    uint32_t per_thread, uint32_t times_in) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t i0 = t * per_thread;
    if (i0 >= n) return;
    const fr_t b = *(const fr_t*)base;
    fr_t w = fr_t::mul(*(const fr_t*)scale, fr_t::pow_u32(b, i0));
    fr_t* v = (fr_t*)x;
    const fr_t* src = (const fr_t*)in;
    for (uint32_t i = i0; i < n && i < i0 + per_thread; i++) {
        v[i] = times_in ? fr_t::mul(src[i], w) : w;
        w = fr_t::mul(w, b);
    }
}

// DIT stages s0 .. s0+k-1 on bit-reversed data, from `in` to `out` (the same array after the
// first pass); 2^(k-1) threads per block, each block owns the 2^k elements
// low + (j << s0) + (high << (s0+k)), j < 2^k, for block = high*2^s0 + low; dynamic shared
// memory 2^k * 32 bytes. bitrev_in: the first pass (s0 = 0) reads in[bitrev(i)], so the
// bit-reversal permutation costs no pass of its own.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_NTT)
ntt_stages(const uint32_t* in, uint32_t* x, const uint32_t* twiddles, uint32_t log_n, uint32_t s0, uint32_t k,
    uint32_t bitrev_in) {
    CUZK_DYN_SHARED(fr_t, tile);
    fr_t* v = (fr_t*)x;
    const fr_t* src = (const fr_t*)in;
    const fr_t* tw = (const fr_t*)twiddles;
    const uint32_t tid = threadIdx.x;
    const uint32_t low = blockIdx.x & ((1u << s0) - 1);
    const uint32_t high = blockIdx.x >> s0;
    const uint32_t base = low + (high << (s0 + k));
    const uint32_t half = 1u << (k - 1);
    const uint32_t i0 = base + (tid << s0), i1 = base + ((tid + half) << s0);
    tile[tid] = src[bitrev_in ? (__brev(i0) >> (32 - log_n)) : i0];
    tile[tid + half] = src[bitrev_in ? (__brev(i1) >> (32 - log_n)) : i1];
    __syncthreads();
    for (uint32_t t = 0; t < k; t++) {
        const uint32_t s = s0 + t;  // global stage: butterflies pair i and i + 2^s
        const uint32_t pos = tid & ((1u << t) - 1);
        const uint32_t j0 = ((tid >> t) << (t + 1)) + pos;
        const uint32_t j1 = j0 + (1u << t);
        // twiddle w_{2^(s+1)}^(i0 mod 2^s) = w_n^((i0 mod 2^s) << (log_n - 1 - s))
        const uint32_t e = (low + (pos << s0)) << (log_n - 1 - s);
        const fr_t u = tile[j0];
        const fr_t w = fr_t::mul(tile[j1], tw[e]);
        tile[j0] = fr_t::add(u, w);
        tile[j1] = fr_t::sub(u, w);
        __syncthreads();
    }
    v[i0] = tile[tid];
    v[i1] = tile[tid + half];
}

// out[i] = (a[i] * b[i] - c[i]) * z_inv for i < n (Groth16 H on the coset); one thread per element.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
ntt_h_pointwise(const uint32_t* a, const uint32_t* b, const uint32_t* c, const uint32_t* z_inv, uint32_t* out,
    uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const fr_t ab = fr_t::mul(((const fr_t*)a)[i], ((const fr_t*)b)[i]);
    ((fr_t*)out)[i] = fr_t::mul(fr_t::sub(ab, ((const fr_t*)c)[i]), *(const fr_t*)z_inv);
}
