// A GEMM as a TileLang-style program: C = op(A) op(B), f16 or bf16 in, f32
// accumulation, f16/bf16/f32 out, any M, N, K (ragged edges are masked by the
// copies), either operand transposed. The same program runs on every
// backend: wgmma on sm_90a, mma.sync on sm_80, loops on the CPU.
#pragma once

#include "tl/dsl.h"

namespace tl::kernels::gemm {

struct GemmConfig {
  int block_M = 128, block_N = 128, block_K = 64;
  int threads = 128;
  int num_stages = 3;
  /// C goes out through a shared tile (TileLang's matmul example writes it
  /// so): on sm_90a a TMA store of swizzled boxes instead of every thread's
  /// pairs; the tile takes the bytes the K loop's tiles leave. 16-bit C only.
  bool stage_C = false;
  /// use_swizzle(swizzle_panel) when > 0: blocks walk down panels of this
  /// many block rows, for L2 reuse on large shapes.
  int swizzle_panel = 0;
};

/// A is [M, K] ([K, M] with trans_A), B is [K, N] ([N, K] with trans_B),
/// C = output [M, N] (out_idx = [2]).
dsl::Program gemm(int M, int N, int K, DType in_dtype, DType out_dtype, bool trans_A, bool trans_B,
                  const GemmConfig &config = {});

} // namespace tl::kernels::gemm
