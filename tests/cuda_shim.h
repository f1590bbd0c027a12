// Host shim: compiles cuzk's CUDA sources as plain C++20 so their logic is tested on a CPU.
//   g++ -std=c++20 -O2 -include tests/cuda_shim.h tests/cuda_host/harness.cpp -shared -fPIC
// - CUDA qualifiers are mapped away, __shared__ becomes block-wide static storage;
// - threadIdx/blockIdx are thread_local, blockDim/gridDim are per launch;
// - cuzk_launch runs the blocks of a grid one after another; the threads of a block run on
//   std::threads meeting at a std::barrier for __syncthreads (or in one loop for kernels
//   that never synchronise, which is much faster);
// - the PTX carry chain (add.cc, madc.hi.cc, ...) is emulated with a thread_local carry bit,
//   so field.cuh's chains run unchanged. -DCUZK_BREAK_CARRY drops one carry on purpose (the
//   tests check that this makes them fail).
#pragma once
#define CUZK_HOST_SHIM 1

#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __constant__
#define __shared__ static
#define __align__(n) alignas(n)
#define __launch_bounds__(...)
#define CUZK_CONST static const
#define CUZK_NOINLINE

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

inline thread_local dim3 threadIdx{0, 0, 0};
inline thread_local dim3 blockIdx{0, 0, 0};
inline dim3 blockDim;
inline dim3 gridDim;

// ---- carry chain emulation: CC.CF as a thread-local bit (each shim thread is one CUDA thread)
inline thread_local uint32_t cuzk_cc = 0;

inline uint32_t add_cc(uint32_t a, uint32_t b) {
    uint64_t s = (uint64_t)a + b;
    cuzk_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t addc_cc(uint32_t a, uint32_t b) {
    uint64_t s = (uint64_t)a + b + cuzk_cc;
    cuzk_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + cuzk_cc; }
// PTX subtraction keeps the *borrow* in CC.CF.
inline uint32_t sub_cc(uint32_t a, uint32_t b) {
    cuzk_cc = a < b;
    return a - b;
}
inline uint32_t subc_cc(uint32_t a, uint32_t b) {
    uint64_t d = (uint64_t)a - b - cuzk_cc;
    cuzk_cc = (uint32_t)(d >> 63);
    return (uint32_t)d;
}
inline uint32_t subc(uint32_t a, uint32_t b) { return a - b - cuzk_cc; }
inline uint32_t mul_lo(uint32_t a, uint32_t b) { return a * b; }
inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint64_t s = (uint64_t)(uint32_t)(a * b) + c;
    cuzk_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
#ifdef CUZK_BREAK_CARRY
    uint64_t s = (uint64_t)(uint32_t)(a * b) + c;  // deliberately loses the incoming carry
#else
    uint64_t s = (uint64_t)(uint32_t)(a * b) + c + cuzk_cc;
#endif
    cuzk_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint64_t s = (((uint64_t)a * b) >> 32) + c;
    cuzk_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}
inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint64_t s = (((uint64_t)a * b) >> 32) + c + cuzk_cc;
    cuzk_cc = (uint32_t)(s >> 32);
    return (uint32_t)s;
}

// ---- device intrinsics used by the kernels
inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }  // CUDA's integer min/max overloads
inline uint32_t max(uint32_t a, uint32_t b) { return a < b ? b : a; }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

// Device-wide atomics: the blocks of a launch run one after another here, but a kernel's
// threads may be std::threads (sync launches), so use real atomics.
inline uint32_t atomicAdd(uint32_t* p, uint32_t v) { return std::atomic_ref<uint32_t>(*p).fetch_add(v); }

// ---- shared memory and block synchronisation
inline std::vector<unsigned char> cuzk_dyn_smem;
inline std::barrier<>* cuzk_block_barrier = nullptr;
#define CUZK_DYN_SHARED(T, name) T* name = reinterpret_cast<T*>(cuzk_dyn_smem.data())

inline void __syncthreads() {
    if (!cuzk_block_barrier) {
        std::fprintf(stderr, "cuda_shim: __syncthreads in a kernel launched without sync=true\n");
        std::abort();
    }
    cuzk_block_barrier->arrive_and_wait();
}

// ---- launcher: args is cuLaunchKernel's kernelParams (one pointer per parameter value)
template <class... A, std::size_t... I>
inline void cuzk_invoke(void (*f)(A...), void** args, std::index_sequence<I...>) {
    f(*reinterpret_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}

// One launch at a time, like one device queue: gridDim/blockDim, the shared-memory buffer and
// the block barrier are process-wide, and two Python threads may call in at once.
inline std::mutex cuzk_launch_mutex;

template <class... A>
void cuzk_launch(void (*f)(A...), dim3 grid, dim3 block, std::size_t smem, bool sync, void** args) {
    std::lock_guard<std::mutex> serial(cuzk_launch_mutex);
    gridDim = grid;
    blockDim = block;
    cuzk_dyn_smem.assign(smem + 16, 0);
    const unsigned nthreads = block.x;
    auto seq = std::index_sequence_for<A...>{};
    if (!sync) {
        for (unsigned b = 0; b < grid.x; b++) {
            blockIdx = dim3(b, 0, 0);
            for (unsigned t = 0; t < nthreads; t++) {
                threadIdx = dim3(t, 0, 0);
                cuzk_invoke(f, args, seq);
            }
        }
        return;
    }
    std::barrier<> bar((std::ptrdiff_t)nthreads);
    cuzk_block_barrier = &bar;
    std::vector<std::thread> pool;
    pool.reserve(nthreads);
    for (unsigned t = 0; t < nthreads; t++) {
        pool.emplace_back([&, t] {
            threadIdx = dim3(t, 0, 0);
            for (unsigned b = 0; b < grid.x; b++) {
                blockIdx = dim3(b, 0, 0);
                cuzk_invoke(f, args, seq);
                bar.arrive_and_wait();  // shared memory is reused by the next block
            }
        });
    }
    for (auto& th : pool) th.join();
    cuzk_block_barrier = nullptr;
}
