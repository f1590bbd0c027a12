// Host build of cuzk's CUDA kernels (compiled with -include tests/cuda_shim.h): exports
// cuzk_host_launch(name, grid, block, smem, args) with cuLaunchKernel's argument
// convention, so cuzk.kernels.cuda's launch plans run unchanged against this library.
#include <cstring>

#include "../../cuzk/kernels/cu/arith.cu"
#ifndef CUZK_HARNESS_ARITH_ONLY  // the broken-carry build needs only the field kernels
#include "../../cuzk/kernels/cu/msm.cu"
#include "../../cuzk/kernels/cu/msm_bits.cu"
#include "../../cuzk/kernels/cu/ntt.cu"
#endif

namespace {
typedef void (*launcher)(dim3, dim3, std::size_t, void**);
struct entry {
    const char* name;
    launcher fn;
};
// sync: the kernel calls __syncthreads, so its threads must run concurrently.
#define CUZK_KERNEL(k, sync) \
    {#k, [](dim3 g, dim3 b, std::size_t s, void** a) { cuzk_launch(k, g, b, s, sync, a); }}
const entry kernels[] = {
    CUZK_KERNEL(fr_batch_op, false),
    CUZK_KERNEL(fq_batch_op, false),
    CUZK_KERNEL(fq2_batch_op, false),
    CUZK_KERNEL(g1_batch_op, false),
    CUZK_KERNEL(g2_batch_op, false),
#ifndef CUZK_HARNESS_ARITH_ONLY
    CUZK_KERNEL(fr_powers, false),
    CUZK_KERNEL(ntt_stages, true),
    CUZK_KERNEL(ntt_h_pointwise, false),
    CUZK_KERNEL(fr_count_noncanonical, false),
    CUZK_KERNEL(msm_digit_count, false),
    CUZK_KERNEL(msm_scan_blocks, true),
    CUZK_KERNEL(msm_scan_add, false),
    CUZK_KERNEL(msm_digit_scatter, false),
    CUZK_KERNEL(g1_msm_bucket_acc, false),
    CUZK_KERNEL(g1_msm_heavy_tree, false),
    CUZK_KERNEL(g1_msm_bucket_fixup, false),
    CUZK_KERNEL(g1_msm_window_segments, false),
    CUZK_KERNEL(g1_msm_window_fold, false),
    CUZK_KERNEL(g2_msm_bucket_acc, false),
    CUZK_KERNEL(g2_msm_heavy_tree, false),
    CUZK_KERNEL(g2_msm_bucket_fixup, false),
    CUZK_KERNEL(g2_msm_window_segments, false),
    CUZK_KERNEL(g2_msm_window_fold, false),
    CUZK_KERNEL(bits_gather_rows, false),
    CUZK_KERNEL(g1_bits_sum_points, true),
    CUZK_KERNEL(g1_bits_sum_xyzz, true),
    CUZK_KERNEL(g2_bits_sum_points, true),
    CUZK_KERNEL(g2_bits_sum_xyzz, true),
#endif
};
}  // namespace

extern "C" int cuzk_host_launch(const char* name, unsigned grid, unsigned block, unsigned smem, void** args) {
    for (const entry& e : kernels) {
        if (std::strcmp(e.name, name) == 0) {
            e.fn(dim3(grid), dim3(block), smem, args);
            return 0;
        }
    }
    return -1;
}

extern "C" unsigned cuzk_host_kernel_count() { return sizeof(kernels) / sizeof(kernels[0]); }
extern "C" const char* cuzk_host_kernel_name(unsigned i) { return kernels[i].name; }
