// Bit-aware MSM: sum_i s_i * P_i = sum_{s_i = 1} P_i + MSM(the rows with other scalars), the
// zeros skipped. The launch plan (cuzk/kernels/cuda_bits.py), given the host's split of the
// scalars (cuzk/kernels/bit_split.py):
//   *_bits_sum_points: the points whose scalar is 1, gathered by index and summed, one partial
//     sum per block (grid-stride mixed additions per thread, then a tree over the block's
//     threads in shared memory);
//   *_bits_sum_xyzz (levels): the same tree over the partial sums, until few are left for the
//     host to add (Numba, with the general MSM's result of the other rows);
//   bits_gather_rows: the other rows' points (and nothing else) copied out of the resident key
//     for the general MSM (msm.cu).
// One source for every curve and both groups (G1 = Fq, G2 = Fq2 points; cu/curve.h).
#include "ec.cuh"
#include "launch.cuh"

// out[blockIdx.x] = the sum of the threads' acc over the block: the upper half of the threads
// park theirs in dynamic shared memory (blockDim.x / 2 XYZZ points), the lower half add them,
// then halving steps down to part[0]. blockDim.x must be a power of two.
template <class F>
__device__ __forceinline__ void bits_block_sum(xyzz_t<F> acc, xyzz_t<F>* out) {
    typedef xyzz_t<F> P;
    CUZK_DYN_SHARED(P, part);
    const uint32_t t = threadIdx.x, half = blockDim.x >> 1;
    if (half == 0) {
        out[blockIdx.x] = acc;
        return;
    }
    if (t >= half) part[t - half] = acc;
    __syncthreads();
    if (t < half) part[t] = P::add(acc, part[t]);
    __syncthreads();
    for (uint32_t s = half >> 1; s > 0; s >>= 1) {
        if (t < s) part[t] = P::add(part[t], part[t + s]);
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = part[0];
}

// out[b] = sum of pts[idx[j]] over the j < m that block b's threads visit (thread t: j = b*blockDim
// + t, then steps of gridDim*blockDim); 1-D grid, dynamic shared memory of blockDim/2 XYZZ points.
// The indices may repeat and the points may be infinity (add_affine handles P + P and P + -P).
template <class F>
__device__ __forceinline__ void bits_sum_points(const affine_t<F>* pts, const uint32_t* idx, uint32_t m,
                                                xyzz_t<F>* out) {
    xyzz_t<F> acc = xyzz_t<F>::inf();
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < m; j += stride)
        acc = xyzz_t<F>::add_affine(acc, pts[idx[j]], false);
    bits_block_sum<F>(acc, out);
}

// out[b] = sum of in[j] over the j < m block b's threads visit (as bits_sum_points); one tree level.
template <class F>
__device__ __forceinline__ void bits_sum_xyzz(const xyzz_t<F>* in, uint32_t m, xyzz_t<F>* out) {
    xyzz_t<F> acc = xyzz_t<F>::inf();
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < m; j += stride) acc = xyzz_t<F>::add(acc, in[j]);
    bits_block_sum<F>(acc, out);
}

// out[j] = rows[idx[j]] for j < m, rows of `words` 32-bit words (affine points of either group);
// one thread per (row, word), 1-D grid over m * words (consecutive threads copy consecutive words).
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
bits_gather_rows(const uint32_t* rows, const uint32_t* idx, uint32_t m, uint32_t words, uint32_t* out) {
    const uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= (uint64_t)m * words) return;
    const uint32_t j = (uint32_t)(k / words), w = (uint32_t)(k % words);
    out[k] = rows[(size_t)idx[j] * words + w];
}

// extern "C" entry points (unmangled names for cupy.RawModule); G1 = Fq, G2 = Fq2 points.
#define CUZK_BITS_KERNELS(G, F)                                                                              \
    /* partial sums of the gathered points, one per block; shared memory blockDim/2 XYZZ points */          \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                           \
    G##_bits_sum_points(const uint32_t* pts, const uint32_t* idx, uint32_t m, uint32_t* out) {               \
        bits_sum_points<F>((const affine_t<F>*)pts, idx, m, (xyzz_t<F>*)out);                                \
    }                                                                                                        \
    /* one tree level over XYZZ partial sums, one per block; shared memory as above */                       \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                           \
    G##_bits_sum_xyzz(const uint32_t* in, uint32_t m, uint32_t* out) {                                       \
        bits_sum_xyzz<F>((const xyzz_t<F>*)in, m, (xyzz_t<F>*)out);                                          \
    }

CUZK_BITS_KERNELS(g1, fq_t)
CUZK_BITS_KERNELS(g2, fq2_t)
