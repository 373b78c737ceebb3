// The tile copy a newcomer writes: global -> shared -> global, one tile a block.
#include "copy/copy.h"

namespace tl::kernels::copy {
using namespace tl::dsl;

Program tileCopy(int M, int N, DType dtype, const CopyConfig &config) {
  const int bM = config.block_M, bN = config.block_N;
  Program p("tile_copy");
  Buffer A = p.tensor("A", {M, N}, dtype);
  Buffer B = p.output("B", {M, N}, dtype);
  p.kernel({ceildiv(N, bN), ceildiv(M, bM)}, config.threads, [&](Expr bx, Expr by) {
    Buffer tile = alloc_shared({bM, bN}, dtype);
    dsl::copy(A(slice(by * bM, bM), slice(bx * bN, bN)), tile);
    dsl::copy(tile, B(slice(by * bM, bM), slice(bx * bN, bN)));
  });
  return p;
}

} // namespace tl::kernels::copy
