// Flash-attention forward, line for line after the reference's flashattn_fwd,
// with four deviations that keep its results: keys past a ragged end are
// masked (in the last key block); the causal mask is built only for the key
// blocks that cross the diagonal (the others start from zeros, as the
// non-causal kernel does); causal query blocks run heaviest first (over
// groups of heads); and the loop sums its rows before P V, not after (the
// same arithmetic: see the loop). Optionally (stage_O) O leaves through a
// shared tile, (overlap) the loop takes FlashAttention-3's order, the
// softmax of one key block overlapping the gemm of the one before, and
// (pingpong) the warpgroups issue the loop's gemms in turn, one warpgroup's
// softmax overlapping the next one's gemms.
#include "mha/mha.h"

#include <cmath>

namespace tl::kernels::mha {
using namespace tl::dsl;

Program flashattn_fwd(int batch, int heads, int seq_len, int dim, bool is_causal, int block_M,
                      int block_N, int threads, int num_stages, bool allow_wgmma,
                      bool producer_warpgroup, bool stage_O, bool overlap, bool pingpong,
                      DType dtype) {
  const double scale = std::pow(1.0 / dim, 0.5) * 1.44269504; // log2(e)
  const std::vector<std::int64_t> shape = {batch, seq_len, heads, dim};
  const DType accum_dtype = f32;

  Program p("flash_fwd");
  Buffer Q = p.tensor("Q", shape, dtype);
  Buffer K = p.tensor("K", shape, dtype);
  Buffer V = p.tensor("V", shape, dtype);
  Buffer Output = p.output("Output", shape, dtype);
  Buffer lse = p.output("lse", {batch, heads, seq_len}, accum_dtype);

  const std::int64_t query_blocks = ceildiv(seq_len, block_M);
  // Causal blocks differ in work (block bx visits bx+1 key blocks' worth), so
  // causal blocks launch heaviest first over groups of heads: a group's
  // blocks are numbered query block (last first), then head, and the groups
  // (then the batches) follow one another. A group's K and V (4 * seq_len *
  // dim bytes a head) stay within 16 MiB of L2, so that a group is a large
  // part of a wave of blocks at the H200's shapes and its light blocks fill
  // its tail. Group sizes are powers of two (cheap index math).
  std::int64_t group = 1;
  while (heads % (2 * group) == 0 && 2 * group * 4 * seq_len * dim <= (16 << 20))
    group *= 2;
  const std::vector<std::int64_t> grid =
      is_causal ? std::vector<std::int64_t>{query_blocks * group, heads / group, batch}
                : std::vector<std::int64_t>{query_blocks, heads, batch};
  p.kernel(grid, threads, [&](Expr block_x, Expr block_y, Expr bz) {
    Expr bx = block_x, by = block_y;
    if (is_causal) {
      bx = Expr(query_blocks - 1) - floordiv(block_x, group);
      by = block_y * group + block_x % group;
    }
    if (producer_warpgroup)
      use_producer_warpgroup();
    Buffer Q_shared = alloc_shared({block_M, dim}, dtype);
    Buffer K_shared = alloc_shared({block_N, dim}, dtype);
    Buffer V_shared = alloc_shared({block_N, dim}, dtype);
    Buffer acc_s = alloc_fragment({block_M, block_N}, accum_dtype);
    Buffer acc_s_cast = alloc_fragment({block_M, block_N}, dtype);
    Buffer acc_o = alloc_fragment({block_M, dim}, accum_dtype);
    Buffer scores_max = alloc_fragment({block_M}, accum_dtype);
    Buffer scores_max_prev = alloc_fragment({block_M}, accum_dtype);
    Buffer scores_scale = alloc_fragment({block_M}, accum_dtype);
    Buffer scores_sum = alloc_fragment({block_M}, accum_dtype);
    Buffer logsum = alloc_fragment({block_M}, accum_dtype);

    annotate_layout(Q_shared, make_swizzled_layout());
    copy(Q(bz, slice(bx * block_M, block_M), by, all), Q_shared);
    fill(acc_o, 0);
    fill(logsum, 0);
    fill(scores_max, -infinity(accum_dtype));

    Expr loop_range =
        is_causal ? ceildiv((bx + 1) * block_M, block_N) : Expr(ceildiv(seq_len, block_N));
    // The loop's gemms, issued by one warpgroup at a time with `pingpong`.
    auto issue = [&](const std::function<void()> &gemms) {
      if (pingpong)
        tl::dsl::pingpong(gemms);
      else
        gemms();
    };
    // acc_s's start for key block k: 0, or -inf where the key is masked.
    auto mask = [&](Expr k) {
      if (is_causal) {
        // Block k has keys past some query of this block iff its last key
        // k*N + N-1 is past the first query bx*M.
        Expr crossesDiagonal = k * block_N + (block_N - 1) > bx * block_M;
        if_(crossesDiagonal, [&] {
          parallel({block_M, block_N}, [&](Expr i, Expr j) {
            acc_s(i, j) =
                if_then_else(bx * block_M + i >= k * block_N + j, 0, -infinity(accum_dtype));
          });
        });
        if_(!crossesDiagonal, [&] { clear(acc_s); });
      } else if (seq_len % block_N != 0) {
        // Not in the reference (whose shapes are multiples of the block):
        // keys past the end are zero-filled, so mask them out of the softmax
        // (in the last key block, the only one that has such keys).
        Expr last = k == loop_range - 1;
        if_(last, [&] {
          parallel({block_M, block_N}, [&](Expr i, Expr j) {
            acc_s(i, j) = if_then_else(k * block_N + j < seq_len, 0, -infinity(accum_dtype));
          });
        });
        if_(!last, [&] { clear(acc_s); });
      } else {
        clear(acc_s);
      }
    };
    // S = Q K^T into acc_s (added to mask's start), from K's tile `keys`.
    auto scoresGemm = [&](Buffer keys, int wg_wait) {
      gemm(Q_shared, keys, acc_s,
           {.transpose_B = true,
            .policy = GemmWarpPolicy::FullRow,
            .allow_wgmma = allow_wgmma,
            .wg_wait = wg_wait});
    };
    // The online softmax of acc_s: the new row maxima, the factor that
    // rescales what came before, P = exp2(S - max) in acc_s, its row sums.
    auto softmax = [&] {
      copy(scores_max, scores_max_prev);
      reduce_max(acc_s, scores_max, /*dim=*/1, /*clear=*/false);
      parallel({block_M}, [&](Expr i) {
        scores_scale(i) = exp2(scores_max_prev(i) * scale - scores_max(i) * scale);
      });
    };
    auto exponentiate = [&] {
      parallel({block_M, block_N}, [&](Expr i, Expr j) {
        acc_s(i, j) = exp2(acc_s(i, j) * scale - scores_max(i) * scale);
      });
    };
    auto rescale = [&] {
      parallel({block_M, dim}, [&](Expr i, Expr j) { acc_o(i, j) *= scores_scale(i); });
    };
    auto sum = [&] {
      reduce_sum(acc_s, scores_sum, /*dim=*/1);
      parallel({block_M}, [&](Expr i) { logsum(i) = logsum(i) * scores_scale(i) + scores_sum(i); });
    };
    auto values = [&](Buffer tile, int wg_wait) {
      gemm(acc_s_cast, tile, acc_o,
           {.policy = GemmWarpPolicy::FullRow, .allow_wgmma = allow_wgmma, .wg_wait = wg_wait});
    };
    if (!overlap) {
      pipelined(loop_range, num_stages, [&](Expr k) {
        copy(K(bz, slice(k * block_N, block_N), by, all), K_shared);
        mask(k);
        // In turns the gemm only issues (FlashAttention-3's), waited for after.
        issue([&] { scoresGemm(K_shared, pingpong ? -1 : 0); });
        if (pingpong)
          wait_wgmma(0);
        copy(V(bz, slice(k * block_N, block_N), by, all), V_shared);
        softmax();
        rescale();
        exponentiate();
        // The row sums before P V, not after: ptxas moves work that follows
        // a wgmma batch in between its wgmmas where it can, and then
        // serialises them (C7519, seen at seq_len 7, D = 64, causal).
        sum();
        copy(acc_s, acc_s_cast);
        values(V_shared, 0);
      });
    } else {
      // FlashAttention-3's intra-warpgroup overlap: iteration k issues S(k)
      // and then P(k-1) V(k-1), both left in flight; the softmax of S(k) runs
      // while P V does. Key block 0's scores come before the loop, the last
      // block's P V after it, each from a tile of its own (their bytes are
      // the loop's tiles', dead then; but K_first's with a producer
      // warpgroup, which fills the loop's tiles from the kernel's start).
      Buffer K_first = alloc_shared({block_N, dim}, dtype);
      copy(K(bz, slice(0, block_N), by, all), K_first);
      mask(0);
      scoresGemm(K_first, 0);
      softmax();
      exponentiate();
      sum();
      copy(acc_s, acc_s_cast);
      pipelined(1, loop_range, num_stages, [&](Expr k) {
        copy(K(bz, slice(k * block_N, block_N), by, all), K_shared);
        copy(V(bz, slice((k - 1) * block_N, block_N), by, all), V_shared);
        mask(k);
        issue([&] {
          scoresGemm(K_shared, -1);
          values(V_shared, -1);
        });
        wait_wgmma(1); // S(k) is in; P(k-1) V(k-1) still runs
        softmax();
        exponentiate();
        sum();
        wait_wgmma(0);
        rescale();
        copy(acc_s, acc_s_cast);
      });
      Buffer V_last = alloc_shared({block_N, dim}, dtype);
      copy(V(bz, slice((loop_range - 1) * block_N, block_N), by, all), V_last);
      values(V_last, 0);
    }
    parallel({block_M, dim}, [&](Expr i, Expr j) { acc_o(i, j) /= logsum(i); });
    if (stage_O) { // its bytes are the loop's tiles', which are dead by now
      Buffer O_shared = alloc_shared({block_M, dim}, dtype);
      copy(acc_o, O_shared);
      copy(O_shared, Output(bz, slice(bx * block_M, block_M), by, all));
    } else {
      copy(acc_o, Output(bz, slice(bx * block_M, block_M), by, all));
    }
    parallel({block_M}, [&](Expr i) { logsum(i) = log2(logsum(i)) + scores_max(i) * scale; });
    copy(logsum, lse(bz, by, slice(bx * block_M, block_M)));
  });
  return p;
}

BlockSizes forwardBlocks(int dim) { return {64, dim <= 128 ? 64 : 32}; }

} // namespace tl::kernels::mha
