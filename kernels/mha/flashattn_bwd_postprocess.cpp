// Backward postprocess: dQ (f32, in make_dq_layout order) -> f16 (or bf16), after the
// reference (whose dQ has seq_len rows: ours is padded to whole groups of 16,
// see dqAccumulatorShape; the copy drops the padding rows). It reads dQ in
// the order the backward wrote it (DqOrder).
#include "mha/mha.h"

namespace tl::kernels::mha {
using namespace tl::dsl;

Layout make_dq_layout() {
  // [b, l, h, d] -> [b, l // 8, h, d // 8, d % 2, 4 * (l % 8) + (d % 8) // 2]
  return Layout::indexMap([](IndexExpr b, IndexExpr l, IndexExpr h, IndexExpr d) {
    return std::vector<IndexExpr>{b, l / 8, h, d / 8, d % 2, 4 * (l % 8) + (d % 8) / 2};
  });
}

std::vector<std::int64_t> dqAccumulatorShape(int batch, int heads, int seq_len, int dim) {
  return {batch, (seq_len + 15) / 16 * 16, heads, dim};
}

void annotateDqOrder(const Buffer &dQ, DqOrder order) {
  if (order == DqOrder::reference)
    annotate_layout(dQ, make_dq_layout());
  else if (order == DqOrder::mmaTiles) // rows along dim 1, head dims along 3
    annotate_layout(dQ, make_mma_tile_layout(4, 1, 3));
}

Program flashattn_bwd_postprocess(int batch, int heads, int seq_len, int dim, int threads,
                                  DqOrder order, DType dtype) {
  const DType accum_dtype = f32;
  const std::vector<std::int64_t> shape = {batch, seq_len, heads, dim};
  const int blk = 64;

  Program p("flash_bwd_post");
  Buffer dQ = p.tensor("dQ", dqAccumulatorShape(batch, heads, seq_len, dim), accum_dtype);
  Buffer dQ_out = p.output("dQ_out", shape, dtype);

  p.kernel({ceildiv(seq_len, blk), heads, batch}, threads, [&](Expr bx, Expr by, Expr bz) {
    annotateDqOrder(dQ, order);
    copy(dQ(bz, slice(bx * blk, blk), by, all), dQ_out(bz, slice(bx * blk, blk), by, all));
  });
  return p;
}

} // namespace tl::kernels::mha
