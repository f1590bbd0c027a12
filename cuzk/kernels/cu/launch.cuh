// Threads per block of each kernel family. The launch plans (cuzk/kernels/cuda*.py) read these
// numbers from this file (cuda_runtime.BLOCK), and every kernel declares its family's size as
// __launch_bounds__, so ptxas keeps each kernel within the register file at the size it is
// launched with: a launch can never fail with "too many resources requested" on a device the
// code was not tried on.
#pragma once

#define CUZK_BLOCK_ELEMENTWISE 256  // one thread per element or scalar: Fr/Fq/Fq2 ops, powers, H, MSM digits
#define CUZK_BLOCK_CURVE 128        // one thread per point operation: G2 needs ~255 registers per thread
#define CUZK_NTT_MAX_STAGES 10      // butterfly stages of a one-column pass: 2^10 x 32 B = 32 KiB of a block's tile
#define CUZK_BLOCK_NTT 512          // columns x 2^(stages - 1) <= 2^(CUZK_NTT_MAX_STAGES - 1): one thread per butterfly
