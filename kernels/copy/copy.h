// A tile copy as a TileLang-style program: B = A for a 2-D tensor, each block
// one block_M x block_N tile staged through shared memory. On sm_90a both
// copies go by TMA (tl-plan-tma-copies): the copy engine moves every byte and
// the threads only arm, issue and wait. Any M and N (the boxes clip at the
// edges), f16 or bf16 (16-bit elements; N a multiple of 8 for TMA's 16-byte
// strides, else plain copies). The CPU backend runs it as loops.
#pragma once

#include "tl/dsl.h"

namespace tl::kernels::copy {

struct CopyConfig {
  int block_M = 128, block_N = 128; // block_N * 2 bytes: 32, 64 or a multiple of 128 for TMA
  int threads = 128;
};

/// A is [M, N]; B = output [M, N] (out_idx = [1]).
dsl::Program tileCopy(int M, int N, DType dtype, const CopyConfig &config = {});

} // namespace tl::kernels::copy
