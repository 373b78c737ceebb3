// Flash-attention backward, line for line after the reference's flashattn_bwd.
// Two deviations: dv_shared and dk_shared are [block_M, dim] (they stage dv
// and dk, which are [block_M, dim]); the reference declares [block_N, dim],
// which only agrees when block_M == block_N and fails our copy verifier
// otherwise. And the causal mask is applied only to the blocks that cross the
// diagonal (elsewhere it keeps every element). Deterministic and causal (not
// the reference's), a block walks its query blocks from the last down
// (queryBlockAt). With `dq_tile` or
// `mma_tile_dq` (not the reference's) dQ goes out a tile at a time, with
// `convert_dq` (not the reference's either) the last key block to add
// converts it (mha.h).
#include "mha/mha.h"

#include <cmath>

namespace tl::kernels::mha {
using namespace tl::dsl;

Program flashattn_bwd(int batch, int heads, int seq_len, int dim, bool is_causal, int block_M,
                      int block_N, int threads, int num_stages, bool deterministic, bool dq_tile,
                      bool convert_dq, bool mma_tile_dq, DType dtype) {
  const double sm_scale = std::pow(1.0 / dim, 0.5);
  const double scale = std::pow(1.0 / dim, 0.5) * 1.44269504; // log2(e)
  const DType accum_dtype = f32;

  Program p("flash_bwd");
  BackwardTensors t =
      backwardTensors(p, batch, heads, seq_len, dim, block_N, deterministic, convert_dq, dtype);
  auto [Q, K, V, dO, lse, Delta, dQ, dQTurns, dQCount, dK, dV, dQOut] = t;

  p.kernel({heads, ceildiv(seq_len, block_M), batch}, threads, [&](Expr bx, Expr by, Expr bz) {
    Buffer K_shared = alloc_shared({block_M, dim}, dtype);
    Buffer dsT_shared = alloc_shared({block_M, block_N}, dtype);
    Buffer q = alloc_shared({block_N, dim}, dtype);
    Buffer V_shared = alloc_shared({block_M, dim}, dtype);
    Buffer qkT = alloc_fragment({block_M, block_N}, accum_dtype);
    Buffer dsT = alloc_fragment({block_M, block_N}, accum_dtype);
    Buffer qkT_cast = alloc_fragment({block_M, block_N}, dtype);
    Buffer dsT_cast = alloc_fragment({block_M, block_N}, dtype);
    Buffer lse_shared = alloc_shared({block_N}, accum_dtype);
    Buffer delta = alloc_shared({block_N}, accum_dtype);
    Buffer do_ = alloc_shared({block_N, dim}, dtype);
    Buffer dv = alloc_fragment({block_M, dim}, accum_dtype);
    Buffer dk = alloc_fragment({block_M, dim}, accum_dtype);
    Buffer dq = alloc_fragment({block_N, dim}, accum_dtype);
    Buffer dv_shared = alloc_shared({block_M, dim}, dtype);
    Buffer dk_shared = alloc_shared({block_M, dim}, dtype);
    Buffer dq_shared = dq_tile ? alloc_shared({block_N, dim}, accum_dtype) : Buffer();

    const DqOrder order = dqOrder(dq_tile, mma_tile_dq);
    annotateDqOrder(dQ, order);
    annotate_layout(dv_shared, make_swizzled_layout());
    annotate_layout(dk_shared, make_swizzled_layout());

    copy(K(bz, slice(by * block_M, block_M), bx, all), K_shared);
    copy(V(bz, slice(by * block_M, block_M), bx, all), V_shared);
    clear(dv);
    clear(dk);
    Expr loop_st = is_causal ? floordiv(by * block_M, block_N) : Expr(0);
    Expr loop_ed = ceildiv(seq_len, block_N);
    pipelined(loop_st, loop_ed, num_stages, [&](Expr step) {
      Expr k = queryBlockAt(step, loop_st, loop_ed, deterministic && is_causal);
      copy(Q(bz, slice(k * block_N, block_N), bx, all), q);
      clear(qkT);
      gemm(K_shared, q, qkT, {.transpose_B = true, .policy = GemmWarpPolicy::FullRow});
      copy(lse(bz, bx, slice(k * block_N, block_N)), lse_shared);
      parallel({block_M, block_N},
               [&](Expr i, Expr j) { qkT(i, j) = exp2(qkT(i, j) * scale - lse_shared(j)); });
      if (is_causal) { // only where some query precedes some key of the block
        if_(by * block_M + (block_M - 1) > k * block_N, [&] {
          parallel({block_M, block_N}, [&](Expr i, Expr j) {
            qkT(i, j) = if_then_else(by * block_M + i <= k * block_N + j, qkT(i, j), 0);
          });
        });
      }
      copy(dO(bz, slice(k * block_N, block_N), bx, all), do_);
      clear(dsT);
      gemm(V_shared, do_, dsT, {.transpose_B = true, .policy = GemmWarpPolicy::FullRow});
      copy(qkT, qkT_cast);
      gemm(qkT_cast, do_, dv, {.policy = GemmWarpPolicy::FullRow});

      copy(Delta(bz, bx, slice(k * block_N, block_N)), delta);

      parallel({block_M, block_N}, [&](Expr i, Expr j) {
        dsT_cast(i, j) = qkT(i, j) * (dsT(i, j) - delta(j)) * sm_scale;
      });
      gemm(dsT_cast, q, dk, {.policy = GemmWarpPolicy::FullRow});

      copy(dsT_cast, dsT_shared);
      clear(dq);
      gemm(dsT_shared, K_shared, dq, {.transpose_A = true});
      if (dq_tile)
        copy(dq, dq_shared);
      addDQRows(t, bx, by, bz, k, seq_len, block_M, block_N, is_causal, dq, [&] {
        if (order != DqOrder::reference) { // one add of the whole tile; rows past
          // seq_len: dQ's padding rows (their dS columns are zero) or nothing
          atomic_add(dQ(bz, slice(k * block_N, block_N), bx, all), dq_tile ? dq_shared : dq);
          return;
        }
        parallel({block_N, dim}, [&](Expr i, Expr j) {
          if_(k * block_N + i < seq_len,
              [&] { atomic_add(dQ(bz, k * block_N + i, bx, j), dq(i, j)); });
        });
      });
    });
    copy(dv, dv_shared);
    copy(dk, dk_shared);
    copy(dv_shared, dV(bz, slice(by * block_M, block_M), bx, all));
    copy(dk_shared, dK(bz, slice(by * block_M, block_M), bx, all));
  });
  return p;
}

BackwardTensors backwardTensors(Program &p, int batch, int heads, int seq_len, int dim, int block_N,
                                bool deterministic, bool convert_dq, DType dtype) {
  const std::vector<std::int64_t> shape = {batch, seq_len, heads, dim};
  const std::vector<std::int64_t> rows = {batch, heads, seq_len};
  const std::vector<std::int64_t> queryBlocks = dqTurnsShape(batch, heads, seq_len, block_N);
  BackwardTensors t;
  t.Q = p.tensor("Q", shape, dtype);
  t.K = p.tensor("K", shape, dtype);
  t.V = p.tensor("V", shape, dtype);
  t.dO = p.tensor("dO", shape, dtype);
  t.lse = p.tensor("lse", rows, f32);
  t.Delta = p.tensor("Delta", rows, f32);
  t.dQ = p.tensor("dQ", dqAccumulatorShape(batch, heads, seq_len, dim), f32);
  if (deterministic)
    t.dQTurns = p.tensor("dQ_turns", queryBlocks, i32);
  if (convert_dq)
    t.dQCount = p.tensor("dQ_count", queryBlocks, i32);
  t.dK = p.output("dK", shape, dtype);
  t.dV = p.output("dV", shape, dtype);
  if (convert_dq)
    t.dQOut = p.output("dQ_out", shape, dtype);
  return t;
}

std::vector<std::int64_t> dqTurnsShape(int batch, int heads, int seq_len, int block_N) {
  return {batch, heads, ceildiv(seq_len, block_N)};
}

void addDQRows(const BackwardTensors &t, Expr bx, Expr by, Expr bz, Expr k, int seq_len,
               int block_M, int block_N, bool is_causal, const Buffer &dq,
               const std::function<void()> &accumulate) {
  // Key block by adds into query block k from k = floor(by * block_M /
  // block_N) on when causal, from 0 otherwise: the blocks adding into k are
  // 0 .. last, and by's turn is by.
  auto last = [&] { // (built only where needed: no dead index math in the program)
    Expr last = Expr(ceildiv(seq_len, block_M) - 1);
    return is_causal ? min(last, floordiv((k + 1) * block_N - 1, block_M)) : last;
  };
  if (t.dQTurns.handle()) {
    Expr lastTurn = last();
    in_turn(t.dQTurns(bz, bx, k), by, if_then_else(by == lastTurn, 0, by + 1), accumulate);
  } else {
    accumulate();
  }
  if (!t.dQCount.handle())
    return;
  last_to_arrive(t.dQCount(bz, bx, k), last() + 1, [&] {
    auto rows = [&] { return t.dQ(bz, slice(k * block_N, block_N), bx, all); };
    copy(rows(), dq);
    copy(dq, t.dQOut(bz, slice(k * block_N, block_N), bx, all));
    clear(dq);
    copy(dq, rows());
  });
}

Expr queryBlockAt(Expr step, Expr first, Expr end, bool lastFirst) {
  return lastFirst ? first + end - 1 - step : step;
}

BlockSizes backwardBlocks(int dim) { return {128, dim <= 64 ? 128 : 32}; }

} // namespace tl::kernels::mha
