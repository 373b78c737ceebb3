// Backward preprocess: Delta = rowsum(O * dO), after the reference, with one
// deviation: the products are taken in f32, as FlashAttention-2 does. The
// reference multiplies the f16 elements in f16 (TVM's type rules), which
// rounds each product to 11 bits: Delta is then off by about 2e-4 * sqrt(dim)
// and dS = P * (dP - Delta) inherits it (dQ and dK at seq_len 1, where they
// are exactly zero, or where softmax is nearly one-hot and dP - Delta
// cancels). With `zero_dq` (not the reference's, which zeroes dQ with
// torch.zeros before the backward) it also zeroes the dQ accumulator, as
// FlashAttention-2's preprocess does (Clear_dQaccum): no memset launch.
#include "mha/mha.h"

namespace tl::kernels::mha {
using namespace tl::dsl;

Program flashattn_bwd_preprocess(int batch, int heads, int seq_len, int dim, int threads,
                                 bool zero_dq, DType dtype) {
  const DType accum_dtype = f32;
  const std::vector<std::int64_t> shape = {batch, seq_len, heads, dim};
  const int blk = 32;

  Program p("flash_bwd_prep");
  Buffer O = p.tensor("O", shape, dtype);
  Buffer dO = p.tensor("dO", shape, dtype);
  Buffer dQ = zero_dq ? p.tensor("dQ", dqAccumulatorShape(batch, heads, seq_len, dim), accum_dtype)
                      : Buffer();
  Buffer Delta = p.output("Delta", {batch, heads, seq_len}, accum_dtype);

  p.kernel({heads, ceildiv(seq_len, blk), batch}, threads, [&](Expr bx, Expr by, Expr bz) {
    Buffer o = alloc_fragment({blk, blk}, dtype);
    Buffer do_ = alloc_fragment({blk, blk}, dtype);
    Buffer acc = alloc_fragment({blk, blk}, accum_dtype);
    Buffer delta = alloc_fragment({blk}, accum_dtype);
    clear(acc);
    serial(ceildiv(dim, blk), [&](Expr k) {
      copy(O(bz, slice(by * blk, blk), bx, slice(k * blk, blk)), o);
      copy(dO(bz, slice(by * blk, blk), bx, slice(k * blk, blk)), do_);
      parallel({blk, blk}, [&](Expr i, Expr j) {
        acc(i, j) += cast(o(i, j), accum_dtype) * cast(do_(i, j), accum_dtype);
      });
    });
    reduce_sum(acc, delta, 1);
    copy(delta, Delta(bz, bx, slice(by * blk, blk)));
    if (zero_dq) { // every row of every head: any order of dQ's elements alike
      // A parallel store, spread over the threads (consecutive threads,
      // consecutive elements: each warp store fills whole 128-byte lines). A
      // {blk, dim} fragment copied out gave each thread a run of dim / 4
      // elements, so that each warp store touched 32 lines: at D = 128 the
      // preprocess took twice as long (results/2026-12-03-h200-session22.md).
      // The padding rows (dqAccumulatorShape) are zeroed; rows past them are not.
      const std::int64_t rows = dQ.shape()[1];
      parallel({blk, dim}, [&](Expr i, Expr j) {
        if_(by * blk + i < rows, [&] { dQ(bz, by * blk + i, bx, j) = 0; });
      });
    }
  });
  return p;
}

} // namespace tl::kernels::mha
