// Pippenger MSM sum_i s_i * P_i over G1 and G2 with signed c-bit digits. The launch plan
// (cuzk/kernels/cuda.py): msm_digit_count -> prefix sum -> msm_digit_scatter (a counting sort
// of (bucket, point) pairs) -> split buckets into tasks of at most `max_len` points -> *_msm_bucket_acc -> *_msm_bucket_merge ->
// *_msm_window_segments -> *_msm_bucket_merge (tree levels); the host combines the window sums
// (c*(nw-1) dependent doublings: one GPU thread would take milliseconds, Numba on the CPU ~0.1 ms).
#include "ec.cuh"
#include "launch.cuh"

// Signed c-bit digits of scalar i, window by window: digit d of window w lies in
// [-2^(c-1), 2^(c-1)]; its bucket key is w*B + |d| - 1 (B = 2^(c-1) buckets per window) and
// value i with bit 31 set when d < 0; a zero digit has no bucket. Scalars are canonical 8 x
// 32-bit limbs < r < 2^255, and nw = floor(255 / c) + 1 windows leave room for the last carry.
// visit(key, value) is called for each non-zero digit.
template <class Visit>
__device__ __forceinline__ void msm_scalar_digits(const uint32_t* s, uint32_t i, uint32_t c, uint32_t nw,
                                                  Visit visit) {
    const uint32_t B = 1u << (c - 1);
    const uint32_t mask = (1u << c) - 1;
    uint32_t carry = 0;
    for (uint32_t w = 0; w < nw; w++) {
        const uint32_t bit = w * c;
        const uint32_t limb = bit >> 5, off = bit & 31;
        uint32_t raw = 0;
        if (limb < 8) {
            uint64_t pair = s[limb];
            if (limb + 1 < 8) pair |= (uint64_t)s[limb + 1] << 32;
            raw = (uint32_t)(pair >> off) & mask;
        }
        uint32_t d = raw + carry;
        bool neg = false;
        if (d > B) {  // d - 2^c is negative: borrow 2^c from the next window
            d = (1u << c) - d;
            neg = true;
            carry = 1;
        } else {
            carry = 0;
        }
        if (d) visit(w * B + d - 1, i | (neg ? 0x80000000u : 0u));
    }
}

// Bucket sizes: counts[key] += 1 for every non-zero digit; 1-D grid, one thread per scalar.
// Together with msm_digit_scatter this is a counting sort of the (bucket, point) pairs: two
// passes over the scalars and no nw*n key array, instead of a general sort of nw*n keys.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
msm_digit_count(const uint32_t* scalars, uint32_t n, uint32_t c, uint32_t nw, uint32_t* counts) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    msm_scalar_digits(scalars + 8 * i, i, c, nw, [&](uint32_t key, uint32_t) { atomicAdd(&counts[key], 1u); });
}

// sorted_vals[cursor[key]++] = value for every non-zero digit, cursor starting at each bucket's
// offset (exclusive prefix sum of counts); 1-D grid, one thread per scalar. The order inside a
// bucket depends on the atomics; the bucket's sum does not.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
msm_digit_scatter(const uint32_t* scalars, uint32_t n, uint32_t c, uint32_t nw, uint32_t* cursor,
    uint32_t* sorted_vals) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    msm_scalar_digits(scalars + 8 * i, i, c, nw,
                      [&](uint32_t key, uint32_t val) { sorted_vals[atomicAdd(&cursor[key], 1u)] = val; });
}

// partial[t] = sum of the points of task t: sorted_vals[start[t] .. start[t] + len[t]),
// each negated when its sign bit is set; 1-D grid, one thread per task.
template <class F>
__device__ __forceinline__ void msm_bucket_acc(const affine_t<F>* pts, const uint32_t* sorted_vals,
                                               const uint32_t* start, const uint32_t* len, xyzz_t<F>* partial,
                                               uint32_t ntasks) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ntasks) return;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    const uint32_t b = start[t], e = b + len[t];
    for (uint32_t j = b; j < e; j++) {
        const uint32_t v = sorted_vals[j];
        acc = xyzz_t<F>::add_affine(acc, pts[v & 0x7fffffffu], (v >> 31) != 0);
    }
    partial[t] = acc;
}

// buckets[b] = sum of partial[task_off[b] .. task_off[b+1]); one thread per output. Also the
// tree levels that fold window segments into window sums (groups of up to 16).
template <class F>
__device__ __forceinline__ void msm_bucket_merge(const xyzz_t<F>* partial, const uint32_t* task_off,
                                                 xyzz_t<F>* buckets, uint32_t nb) {
    const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (uint32_t t = task_off[b]; t < task_off[b + 1]; t++) acc = xyzz_t<F>::add(acc, partial[t]);
    buckets[b] = acc;
}

// Window w's weighted sum sum_j (j+1) * bucket_j, split into nseg segments of B/nseg buckets:
// seg[w*nseg + g] = sum_{j in segment} (j+1) * bucket_j via a running sum from the top
// (weights j - lo + 1) plus lo * (segment sum); one thread per (window, segment).
template <class F>
__device__ __forceinline__ void msm_window_segments(const xyzz_t<F>* buckets, uint32_t B, uint32_t nw,
                                                    uint32_t nseg, xyzz_t<F>* seg) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nw * nseg) return;
    const uint32_t w = t / nseg, g = t % nseg, len = B / nseg, lo = g * len;
    const xyzz_t<F>* bk = buckets + (uint64_t)w * B;
    xyzz_t<F> run = xyzz_t<F>::inf(), acc = xyzz_t<F>::inf();
    for (uint32_t j = lo + len; j-- > lo;) {
        run = xyzz_t<F>::add(run, bk[j]);
        acc = xyzz_t<F>::add(acc, run);
    }
    seg[t] = xyzz_t<F>::add(acc, xyzz_t<F>::mul_u32(run, lo));
}

// extern "C" entry points (unmangled names for cupy.RawModule); G1 = Fq, G2 = Fq2 points.
#define CUZK_MSM_KERNELS(G, F)                                                                                \
    /* bucket accumulation over sorted (bucket, point) pairs; one thread per task */                          \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_bucket_acc(const uint32_t* pts, const uint32_t* sorted_vals, const uint32_t* start,               \
                       const uint32_t* len, uint32_t* partial, uint32_t ntasks) {                             \
        msm_bucket_acc<F>((const affine_t<F>*)pts, sorted_vals, start, len, (xyzz_t<F>*)partial, ntasks);     \
    }                                                                                                         \
    /* segmented sums (task partials -> buckets, segments -> windows); one thread per output */               \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_bucket_merge(const uint32_t* partial, const uint32_t* task_off, uint32_t* buckets, uint32_t nb) { \
        msm_bucket_merge<F>((const xyzz_t<F>*)partial, task_off, (xyzz_t<F>*)buckets, nb);                    \
    }                                                                                                         \
    /* running-sum reduction of bucket segments; one thread per (window, segment) */                          \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_window_segments(const uint32_t* buckets, uint32_t B, uint32_t nw, uint32_t nseg, uint32_t* seg) { \
        msm_window_segments<F>((const xyzz_t<F>*)buckets, B, nw, nseg, (xyzz_t<F>*)seg);                      \
    }

CUZK_MSM_KERNELS(g1, fq_t)
CUZK_MSM_KERNELS(g2, fq2_t)
