// Pippenger MSM sum_i s_i * P_i over G1 and G2 with signed c-bit digits. The launch plan
// (cuzk/kernels/cuda_msm.py), with no host round trip before the window sums come back:
//   msm_digit_count -> msm_scan_blocks (x2) -> msm_scan_add -> msm_digit_scatter: a counting sort
//     of the (bucket, point) pairs, bucket by bucket;
//   *_msm_bucket_acc: the sorted pairs cut into equal slices, one thread each (balanced whatever
//     the bucket sizes), writing whole buckets and the partial sums of buckets cut by a slice edge;
//   *_msm_heavy_tree (a few levels) + *_msm_bucket_fixup: each cut bucket summed from its pieces
//     (a bucket may own thousands of slices: every scalar 1 lands in one bucket);
//   *_msm_window_segments + *_msm_window_fold (levels): each window's weighted bucket sum;
// the host combines the nw window sums (c*(nw-1) dependent doublings: ~0.1 ms in Numba).
// Indices into the pairs are uint32 (cuzk/kernels/cuda_msm.py refuses nw*n >= 2^32); pointers
// into the scalars are computed in size_t.
#include "ec.cuh"
#include "launch.cuh"

#define CUZK_NO_KEY 0xffffffffu  // msm_bucket_acc: "this slice begins no cut bucket"

// Signed c-bit digits of scalar i, window by window: digit d of window w lies in
// [-2^(c-1), 2^(c-1)]; its bucket key is w*B + |d| - 1 (B = 2^(c-1) buckets per window) and
// value i with bit 31 set when d < 0; a zero digit has no bucket. Scalars are canonical FR_LIMBS
// x 32-bit limbs < r < 2^255 (scripts/cuzk_codegen/cuda_params.py refuses a larger r), and nw = floor(255 / c) + 1 windows leave room for the last carry.
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
        if (limb < FR_LIMBS) {
            uint64_t pair = s[limb];
            if (limb + 1 < FR_LIMBS) pair |= (uint64_t)s[limb + 1] << 32;
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
// With the scan and msm_digit_scatter this is a counting sort of the (bucket, point) pairs: two
// passes over the scalars and no nw*n key array, instead of a general sort of nw*n keys.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
msm_digit_count(const uint32_t* scalars, uint32_t n, uint32_t c, uint32_t nw, uint32_t* counts) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    msm_scalar_digits(scalars + (size_t)FR_LIMBS * i, i, c, nw, [&](uint32_t key, uint32_t) { atomicAdd(&counts[key], 1u); });
}

// Exclusive prefix sum, block level: block b scans x[b*8*blockDim ..) (8 consecutive values per
// thread, then the thread sums across the block in shared memory) into out, and writes the
// block's total to block_sum[b]; 1-D grid of ceil(n / (8 * blockDim)) blocks. Run a second time
// on block_sum with one block (its total lands in block_sum's own out slot), then msm_scan_add.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
msm_scan_blocks(const uint32_t* x, uint32_t n, uint32_t* out, uint32_t* block_sum) {
    __shared__ uint32_t part[CUZK_BLOCK_ELEMENTWISE];
    const uint32_t tid = threadIdx.x;
    const uint32_t i0 = (blockIdx.x * blockDim.x + tid) * 8;
    uint32_t v[8], sum = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        v[k] = i0 + k < n ? x[i0 + k] : 0;
        sum += v[k];
    }
    part[tid] = sum;
    __syncthreads();
    for (uint32_t off = 1; off < blockDim.x; off <<= 1) {  // Hillis-Steele inclusive scan of the thread sums
        const uint32_t add = tid >= off ? part[tid - off] : 0;
        __syncthreads();
        part[tid] += add;
        __syncthreads();
    }
    uint32_t run = part[tid] - sum;  // exclusive: what the threads before this one hold
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (i0 + k < n) out[i0 + k] = run;
        run += v[k];
    }
    if (tid == blockDim.x - 1) block_sum[blockIdx.x] = part[tid];
}

// Exclusive prefix sum, last step: starts[i] += block_off[i / (8*blockDim)] (the scanned block
// totals) and cursor[i] = starts[i] (msm_digit_scatter's write positions); 1-D grid as in
// msm_scan_blocks' first pass, one thread per 8 values.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
msm_scan_add(uint32_t* starts, uint32_t n, const uint32_t* block_off, uint32_t* cursor) {
    const uint32_t i0 = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    const uint32_t off = block_off[blockIdx.x];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (i0 + k < n) {
            const uint32_t s = starts[i0 + k] + off;
            starts[i0 + k] = s;
            cursor[i0 + k] = s;
        }
    }
}

// sorted_vals[cursor[key]++] = value for every non-zero digit, cursor starting at each bucket's
// offset (exclusive prefix sum of counts); 1-D grid, one thread per scalar. The order inside a
// bucket depends on the atomics; the bucket's sum does not.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
msm_digit_scatter(const uint32_t* scalars, uint32_t n, uint32_t c, uint32_t nw, uint32_t* cursor,
    uint32_t* sorted_vals) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    msm_scalar_digits(scalars + (size_t)FR_LIMBS * i, i, c, nw,
                      [&](uint32_t key, uint32_t val) { sorted_vals[atomicAdd(&cursor[key], 1u)] = val; });
}

// Thread t sums the pairs sorted_vals[t*S .. (t+1)*S) (all slices equally long, whatever the
// bucket sizes), flushing at every bucket boundary: a bucket wholly inside the slice goes to
// buckets[key]; the piece of a bucket that began before the slice goes to head[t] (head_key[t] =
// its key, else CUZK_NO_KEY), the piece of one that goes on past the slice to tail[t].
// starts[0..nb] is the exclusive prefix sum of the bucket sizes (starts[nb] = number of pairs).
template <class F>
__device__ __forceinline__ void msm_bucket_acc(const affine_t<F>* pts, const uint32_t* sorted_vals,
                                               const uint32_t* starts, uint32_t nb, uint32_t S, uint32_t nslices,
                                               xyzz_t<F>* buckets, xyzz_t<F>* head, xyzz_t<F>* tail,
                                               uint32_t* head_key) {
    typedef xyzz_t<F> P;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nslices) return;
    head_key[t] = CUZK_NO_KEY;
    const uint32_t total = starts[nb], lo = t * S;
    if (lo >= total) return;
    const uint32_t hi = min(lo + S, total);
    uint32_t key = 0, above = nb;  // the last bucket starting at or before lo: starts[key] <= lo < starts[above]
    while (above - key > 1) {
        const uint32_t mid = (key + above) >> 1;
        if (starts[mid] <= lo) key = mid; else above = mid;
    }
    uint32_t begin = starts[key], end = starts[key + 1];
    P acc = P::inf();
    for (uint32_t j = lo;; j++) {
        if (j == hi || j == end) {  // flush the piece of bucket `key` in [max(begin, lo), j)
            if (begin < lo) {
                head[t] = acc;
                head_key[t] = key;
            } else if (end > hi) {
                tail[t] = acc;
            } else {
                buckets[key] = acc;
            }
            if (j == hi) break;
            acc = P::inf();
            do {  // skip the empty buckets in between
                key++;
                begin = end;
                end = starts[key + 1];
            } while (end == j);
        }
        const uint32_t v = sorted_vals[j];
        acc = P::add_affine(acc, pts[v & 0x7fffffffu], (v >> 31) != 0);
    }
}

// Where level `level` (>= 1) of the heavy tree starts in its array: the node counts of levels
// 1 .. level-1, level m holding the nslices / fold^m whole nodes.
__device__ __forceinline__ uint64_t msm_tree_offset(uint32_t nslices, uint32_t fold, uint32_t level) {
    uint64_t off = 0, span = 1;
    for (uint32_t m = 1; m < level; m++) {
        span *= fold;
        off += nslices / span;
    }
    return off;
}

// Node i of tree level `level` (>= 1) = the sum of its fold children on the level below (level 0
// is head[]), i.e. of head[] over the fold^level slices from i*fold^level; written only when one
// bucket began before all of them (same head_key first and last): the only nodes
// msm_bucket_fixup reads. One thread per node of this level.
template <class F>
__device__ __forceinline__ void msm_heavy_tree(const xyzz_t<F>* head, const uint32_t* head_key, uint32_t nslices,
                                               uint32_t fold, uint32_t level, xyzz_t<F>* tree) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t span = 1;
    for (uint32_t m = 0; m < level; m++) span *= fold;
    if ((i + 1) * span > nslices) return;
    const uint32_t k0 = head_key[i * span], k1 = head_key[(i + 1) * span - 1];
    if (k0 == CUZK_NO_KEY || k0 != k1) return;
    const xyzz_t<F>* in = level == 1 ? head : tree + msm_tree_offset(nslices, fold, level - 1);
    xyzz_t<F> acc = in[(uint64_t)i * fold];
    for (uint32_t c = 1; c < fold; c++) acc = xyzz_t<F>::add(acc, in[(uint64_t)i * fold + c]);
    tree[msm_tree_offset(nslices, fold, level) + i] = acc;
}

// buckets[b] for every bucket msm_bucket_acc did not write whole: infinity when empty, else the
// tail piece of its first slice plus the head pieces of the slices after it, taken from the
// largest aligned msm_heavy_tree nodes that fit (levels 1..levels); one thread per bucket.
template <class F>
__device__ __forceinline__ void msm_bucket_fixup(const uint32_t* starts, uint32_t nb, uint32_t S, uint32_t nslices,
                                                 const xyzz_t<F>* head, const xyzz_t<F>* tail, const xyzz_t<F>* tree,
                                                 uint32_t fold, uint32_t levels, xyzz_t<F>* buckets) {
    const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    const uint32_t begin = starts[b], end = starts[b + 1];
    if (begin == end) {
        buckets[b] = xyzz_t<F>::inf();
        return;
    }
    const uint32_t t0 = begin / S, t1 = (end - 1) / S;
    if (t0 == t1) return;  // written whole by msm_bucket_acc
    xyzz_t<F> acc = tail[t0];
    for (uint64_t p = t0 + 1; p <= t1;) {
        uint32_t l = 0;  // the highest level whose node starting at p lies inside [p, t1]
        uint64_t span = 1;
        while (l < levels && p % (span * fold) == 0 && p + span * fold - 1 <= t1) {
            span *= fold;
            l++;
        }
        acc = xyzz_t<F>::add(acc, l ? tree[msm_tree_offset(nslices, fold, l) + p / span] : head[p]);
        p += span;
    }
    buckets[b] = acc;
}

// Window w's weighted bucket sum sum_j (j+1) * bucket_j, first level: segment g of L buckets
// gives out[2t] = S = sum_i (i+1) * bucket_{gL+i} (a running sum from the top) and out[2t+1] =
// T = L * sum_i bucket_{gL+i} (log2 L doublings), t = w*(B/L) + g; one thread per (window, segment).
template <class F>
__device__ __forceinline__ void msm_window_segments(const xyzz_t<F>* buckets, uint32_t B, uint32_t nw, uint32_t L,
                                                    xyzz_t<F>* out) {
    typedef xyzz_t<F> P;
    const uint32_t nseg = B / L;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nw * nseg) return;
    const P* bk = buckets + (size_t)t * L;  // segments are consecutive: window w, segment g = bucket w*B + g*L
    P run = P::inf(), acc = P::inf();
    for (uint32_t j = L; j-- > 0;) {
        run = P::add(run, bk[j]);
        acc = P::add(acc, run);
    }
    for (uint32_t m = L; m > 1; m >>= 1) run = P::dbl(run);
    out[2 * (size_t)t] = acc;
    out[2 * (size_t)t + 1] = run;
}

// Next level of the window sums: group q of g = min(fold, per_in) consecutive (S_i, T_i) entries
// (each spanning len buckets, T_i = len * plain sum) -> S' = sum S_i + sum_i i*T_i (a second
// running sum) and T' = g * sum T_i (log2 g doublings; skipped on the last level, per_in <= fold);
// one thread per output entry, nw * per_in / g of them.
template <class F>
__device__ __forceinline__ void msm_window_fold(const xyzz_t<F>* in, uint32_t per_in, uint32_t fold, uint32_t nw,
                                                xyzz_t<F>* out) {
    typedef xyzz_t<F> P;
    const uint32_t g = min(fold, per_in), per_out = per_in / g;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nw * per_out) return;
    const P* e = in + 2 * (size_t)t * g;  // entry i: S at e[2i], T at e[2i+1]
    P run = e[2 * (g - 1) + 1], wsum = run, s = e[0];
    for (uint32_t i = g - 1; i-- > 1;) {  // wsum = sum_{i>=1} i*T_i: T_i enters i of the running sums
        run = P::add(run, e[2 * i + 1]);
        wsum = P::add(wsum, run);
    }
    if (g == 1) wsum = P::inf();
    for (uint32_t i = 1; i < g; i++) s = P::add(s, e[2 * i]);
    out[2 * (size_t)t] = P::add(s, wsum);
    if (per_out > 1) {
        run = g > 1 ? P::add(run, e[1]) : e[1];
        for (uint32_t m = g; m > 1; m >>= 1) run = P::dbl(run);
        out[2 * (size_t)t + 1] = run;
    }
}

// extern "C" entry points (unmangled names for cupy.RawModule); G1 = Fq, G2 = Fq2 points.
#define CUZK_MSM_KERNELS(G, F)                                                                                \
    /* equal slices of the sorted pairs -> whole buckets and cut pieces; one thread per slice */              \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_bucket_acc(const uint32_t* pts, const uint32_t* sorted_vals, const uint32_t* starts, uint32_t nb, \
                       uint32_t S, uint32_t nslices, uint32_t* buckets, uint32_t* head, uint32_t* tail,       \
                       uint32_t* head_key) {                                                                  \
        msm_bucket_acc<F>((const affine_t<F>*)pts, sorted_vals, starts, nb, S, nslices, (xyzz_t<F>*)buckets,  \
                          (xyzz_t<F>*)head, (xyzz_t<F>*)tail, head_key);                                      \
    }                                                                                                         \
    /* one level of sums over runs of head pieces of one bucket; one thread per node */                       \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_heavy_tree(const uint32_t* head, const uint32_t* head_key, uint32_t nslices, uint32_t fold,       \
                       uint32_t level, uint32_t* tree) {                                                      \
        msm_heavy_tree<F>((const xyzz_t<F>*)head, head_key, nslices, fold, level, (xyzz_t<F>*)tree);          \
    }                                                                                                         \
    /* cut and empty buckets; one thread per bucket */                                                        \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_bucket_fixup(const uint32_t* starts, uint32_t nb, uint32_t S, uint32_t nslices,                   \
                         const uint32_t* head, const uint32_t* tail, const uint32_t* tree, uint32_t fold,     \
                         uint32_t levels, uint32_t* buckets) {                                                \
        msm_bucket_fixup<F>(starts, nb, S, nslices, (const xyzz_t<F>*)head, (const xyzz_t<F>*)tail,           \
                            (const xyzz_t<F>*)tree, fold, levels, (xyzz_t<F>*)buckets);                       \
    }                                                                                                         \
    /* running sums over segments of L buckets; one thread per (window, segment) */                           \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_window_segments(const uint32_t* buckets, uint32_t B, uint32_t nw, uint32_t L, uint32_t* out) {    \
        msm_window_segments<F>((const xyzz_t<F>*)buckets, B, nw, L, (xyzz_t<F>*)out);                         \
    }                                                                                                         \
    /* one fold level of the window sums; one thread per output entry */                                      \
    extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)                                            \
    G##_msm_window_fold(const uint32_t* in, uint32_t per_in, uint32_t fold, uint32_t nw, uint32_t* out) {     \
        msm_window_fold<F>((const xyzz_t<F>*)in, per_in, fold, nw, (xyzz_t<F>*)out);                          \
    }

CUZK_MSM_KERNELS(g1, fq_t)
CUZK_MSM_KERNELS(g2, fq2_t)
