// Element-wise field and curve kernels: the unit under test for field.cuh / ec.cuh, on the
// host shim in CI and on a GPU in benchmarks/gpu_check.py.
#include "ec.cuh"
#include "launch.cuh"

// Field operation codes; cuzk/kernels/cuda.py mirrors them in ArithOp.
enum arith_op : uint32_t { OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_SQR = 3, OP_NEG = 4, OP_DBL = 5 };

template <class F>
__device__ __forceinline__ void field_batch_op(uint32_t op, const F* a, const F* b, F* out, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const F x = a[i], y = b[i];
    F r;
    switch (op) {
        case OP_ADD: r = F::add(x, y); break;
        case OP_SUB: r = F::sub(x, y); break;
        case OP_MUL: r = F::mul(x, y); break;
        case OP_SQR: r = F::sqr(x); break;
        case OP_NEG: r = F::neg(x); break;
        default: r = F::dbl(x); break;
    }
    out[i] = r;
}

// out[i] = op(a[i], b[i]) over Fr; one thread per element, 1-D grid.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
fr_batch_op(uint32_t op, const uint32_t* a, const uint32_t* b, uint32_t* out, uint32_t n) {
    field_batch_op<fr_t>(op, (const fr_t*)a, (const fr_t*)b, (fr_t*)out, n);
}
// out[i] = op(a[i], b[i]) over Fq; one thread per element.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
fq_batch_op(uint32_t op, const uint32_t* a, const uint32_t* b, uint32_t* out, uint32_t n) {
    field_batch_op<fq_t>(op, (const fq_t*)a, (const fq_t*)b, (fq_t*)out, n);
}
// out[i] = op(a[i], b[i]) over Fq2; one thread per element.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_ELEMENTWISE)
fq2_batch_op(uint32_t op, const uint32_t* a, const uint32_t* b, uint32_t* out, uint32_t n) {
    field_batch_op<fq2_t>(op, (const fq2_t*)a, (const fq2_t*)b, (fq2_t*)out, n);
}

// Curve operation codes; mirrored in cuda.py's EcOp.
enum ec_op : uint32_t { EC_ADD_MIXED = 0, EC_SUB_MIXED = 1, EC_ADD = 2, EC_DBL = 3 };

template <class F>
__device__ __forceinline__ void ec_batch_op(uint32_t op, const affine_t<F>* p, const affine_t<F>* q, xyzz_t<F>* out,
                                            uint32_t n) {
    typedef xyzz_t<F> P;
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const P a = P::from_affine(p[i]);
    P r;
    switch (op) {
        case EC_ADD_MIXED: r = P::add_affine(a, q[i], false); break;
        case EC_SUB_MIXED: r = P::add_affine(a, q[i], true); break;
        case EC_ADD: r = P::add(a, P::from_affine(q[i])); break;
        default: r = P::dbl(a); break;
    }
    out[i] = r;
}

// out[i] = op(p[i], q[i]) for affine G1 inputs, XYZZ output; one thread per pair.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)
g1_batch_op(uint32_t op, const uint32_t* p, const uint32_t* q, uint32_t* out, uint32_t n) {
    ec_batch_op<fq_t>(op, (const g1_affine_t*)p, (const g1_affine_t*)q, (g1_xyzz_t*)out, n);
}
// out[i] = op(p[i], q[i]) for affine G2 inputs, XYZZ output; one thread per pair.
extern "C" __global__ void __launch_bounds__(CUZK_BLOCK_CURVE)
g2_batch_op(uint32_t op, const uint32_t* p, const uint32_t* q, uint32_t* out, uint32_t n) {
    ec_batch_op<fq2_t>(op, (const g2_affine_t*)p, (const g2_affine_t*)q, (g2_xyzz_t*)out, n);
}
