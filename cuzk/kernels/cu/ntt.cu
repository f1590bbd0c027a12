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

// Bit-reversal of the low `bits` bits of x (bits may be 0).
__device__ __forceinline__ uint32_t ntt_bitrev(uint32_t x, uint32_t bits) { return bits ? __brev(x) >> (32 - bits) : 0; }

// DIT stages s0 .. s0+k-1 on bit-reversed data, from `in` to `x` (the same array after the first
// pass). The n elements form 2^(log_n-k) columns of 2^k rows (row j of column ci: low + (j << s0)
// + (high << (s0+k)), ci = low + (high << s0)); block b owns the C = 2^cols_log consecutive
// columns b*C .., 2^(k-1) * C threads (one per butterfly), dynamic shared memory 2^k * C * 32
// bytes. Lanes take consecutive columns, so a warp's loads and stores cover C consecutive
// elements (C >= 8: whole 256-byte runs) instead of one element per stride. The first pass
// (s0 = 0) reads in[bitrev(i)]: the columns are then taken in bit-reversed order, so their reads
// are consecutive, and it stores row-major per column (each column is 2^k consecutive elements).
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_NTT)
ntt_stages(const uint32_t* in, uint32_t* x, const uint32_t* twiddles, uint32_t log_n, uint32_t s0, uint32_t k,
    uint32_t cols_log) {
    CUZK_DYN_SHARED(fr_t, tile);  // tile[j * C + col]: row j of the block's column col
    fr_t* v = (fr_t*)x;
    const fr_t* src = (const fr_t*)in;
    const fr_t* tw = (const fr_t*)twiddles;
    const uint32_t C = 1u << cols_log, T = C << (k - 1);  // columns and threads of this block
    const uint32_t col_bits = log_n - k;                  // log2 of the number of columns
    const uint32_t tid = threadIdx.x;
    const uint32_t first_col = blockIdx.x << cols_log;
    // element index of row j of the block's column col (s0 > 0; the first pass maps columns itself)
    auto elem = [&](uint32_t col, uint32_t j) {
        const uint32_t ci = first_col + col;
        return (ci & ((1u << s0) - 1)) + (j << s0) + ((ci >> s0) << (s0 + k));
    };
    for (uint32_t e = tid; e < 2 * T; e += T) {  // load: lane -> column, then row
        const uint32_t col = e & (C - 1), j = e >> cols_log;
        tile[e] = s0 ? src[elem(col, j)] : src[(ntt_bitrev(j, k) << col_bits) + first_col + col];
    }
    __syncthreads();
    const uint32_t col = tid & (C - 1), bf = tid >> cols_log;
    const uint32_t low = s0 ? (first_col + col) & ((1u << s0) - 1) : 0;
    for (uint32_t t = 0; t < k; t++) {
        const uint32_t s = s0 + t;  // global stage: butterflies pair i and i + 2^s
        const uint32_t pos = bf & ((1u << t) - 1);
        const uint32_t j0 = ((bf >> t) << (t + 1)) + pos;
        const uint32_t j1 = j0 + (1u << t);
        // twiddle w_{2^(s+1)}^(i0 mod 2^s) = w_n^((i0 mod 2^s) << (log_n - 1 - s))
        const uint32_t e = (low + (pos << s0)) << (log_n - 1 - s);
        const fr_t u = tile[j0 * C + col];
        const fr_t w = fr_t::mul(tile[j1 * C + col], tw[e]);
        tile[j0 * C + col] = fr_t::add(u, w);
        tile[j1 * C + col] = fr_t::sub(u, w);
        __syncthreads();
    }
    for (uint32_t e = tid; e < 2 * T; e += T) {
        if (s0) {  // store as loaded: lane -> column
            v[elem(e & (C - 1), e >> cols_log)] = tile[e];
        } else {  // column ci = bitrev(first_col + c) holds the 2^k consecutive elements ci << k ..: lane -> row
            const uint32_t c = e >> k, j = e & ((1u << k) - 1);
            v[(ntt_bitrev(first_col + c, col_bits) << k) + j] = tile[j * C + c];
        }
    }
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

// bad[0] += the number of rows of x (n canonical Fr integers, FR_LIMBS x 32-bit limbs) that are >= r;
// one thread per row. Checks MSM scalars a caller hands over already on the device.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
fr_count_noncanonical(const uint32_t* x, uint32_t n, uint32_t* bad) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t* v = x + (size_t)FR_LIMBS * i;
    for (int k = FR_LIMBS - 1; k >= 0; k--) {  // compare from the top limb down
        if (v[k] != FR_MODULUS[k]) {
            if (v[k] > FR_MODULUS[k]) atomicAdd(bad, 1u);
            return;
        }
    }
    atomicAdd(bad, 1u);  // equal to r
}
