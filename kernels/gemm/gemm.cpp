// The GEMM a newcomer writes, as TileLang's matmul example does: one block a
// block_M x block_N tile of C, the K loop pipelined, gemm on shared tiles.
#include "gemm/gemm.h"

namespace tl::kernels::gemm {
using namespace tl::dsl;

Program gemm(int M, int N, int K, DType in_dtype, DType out_dtype, bool trans_A, bool trans_B,
             const GemmConfig &config) {
  const int bM = config.block_M, bN = config.block_N, bK = config.block_K;
  using Shape = std::vector<std::int64_t>;
  Program p("gemm");
  Buffer A = p.tensor("A", trans_A ? Shape{K, M} : Shape{M, K}, in_dtype);
  Buffer B = p.tensor("B", trans_B ? Shape{N, K} : Shape{K, N}, in_dtype);
  Buffer C = p.output("C", {M, N}, out_dtype);
  p.kernel({ceildiv(N, bN), ceildiv(M, bM)}, config.threads, [&](Expr bx, Expr by) {
    if (config.swizzle_panel > 0)
      use_swizzle(config.swizzle_panel);
    Buffer A_shared = alloc_shared(trans_A ? Shape{bK, bM} : Shape{bM, bK}, in_dtype);
    Buffer B_shared = alloc_shared(trans_B ? Shape{bN, bK} : Shape{bK, bN}, in_dtype);
    Buffer C_local = alloc_fragment({bM, bN}, f32);
    clear(C_local);
    pipelined(ceildiv(K, bK), config.num_stages, [&](Expr k) {
      if (trans_A)
        copy(A(slice(k * bK, bK), slice(by * bM, bM)), A_shared);
      else
        copy(A(slice(by * bM, bM), slice(k * bK, bK)), A_shared);
      if (trans_B)
        copy(B(slice(bx * bN, bN), slice(k * bK, bK)), B_shared);
      else
        copy(B(slice(k * bK, bK), slice(bx * bN, bN)), B_shared);
      gemm(A_shared, B_shared, C_local, {.transpose_A = trans_A, .transpose_B = trans_B});
    });
    if (config.stage_C && out_dtype != f32) {
      Buffer C_shared = alloc_shared({bM, bN}, out_dtype);
      copy(C_local, C_shared);
      copy(C_shared, C(slice(by * bM, bM), slice(bx * bN, bN)));
    } else {
      copy(C_local, C(slice(by * bM, bM), slice(bx * bN, bN)));
    }
  });
  return p;
}

} // namespace tl::kernels::gemm
