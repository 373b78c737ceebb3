// Flash-attention backward with P and dS staged in shared memory: the same
// math as flashattn_bwd (the reference's), arranged as FlashAttention-2 does
// on the mma.sync path. The reference keeps P (and dS) in the registers of
// the warp that computed them, so its dV and dK gemms must give each warp
// whole rows of the [block_M, dim] accumulators (FullRow): every warp then
// reads the whole dO and Q tiles of the iteration from shared memory, and at
// 16 rows a warp the tensor cores wait on shared-memory bandwidth. Here both
// go through shared memory, and every gemm takes the most square warp tiles
// (Square): fewer ldmatrix per mma, at the price of two tile writes and the
// barriers around them. On wgmma, optionally, FlashAttention-3's orders: P
// computed while the dP gemm runs (p_while_dp), P kept in registers for the
// dV gemm (p_registers).
#include "mha/mha.h"

#include <cmath>

namespace tl::kernels::mha {
using namespace tl::dsl;

Program flashattn_bwd_staged(int batch, int heads, int seq_len, int dim, bool is_causal,
                             int block_M, int block_N, int threads, int num_stages,
                             bool deterministic, bool wgmma, bool dq_tile, bool convert_dq,
                             bool mma_tile_dq, bool producer_warpgroup, bool keys_fastest,
                             bool p_while_dp, bool p_registers, DType dtype, bool dq_first) {
  const double sm_scale = std::pow(1.0 / dim, 0.5);
  const double scale = sm_scale * 1.44269504; // log2(e)
  const DType accum_dtype = f32;

  Program p("flash_bwd");
  BackwardTensors t =
      backwardTensors(p, batch, heads, seq_len, dim, block_N, deterministic, convert_dq, dtype);
  auto [Q, K, V, dO, lse, Delta, dQ, dQTurns, dQCount, dK, dV, dQOut] = t;

  // Block (bx, by, bz): keys by*block_M .. +block_M of head bx, batch bz; it
  // walks the queries block_N at a time. Numbered heads fastest, or key
  // blocks fastest (keys_fastest); either way a head's key blocks launch in
  // key order, which a deterministic backward's turns follow.
  const std::int64_t key_blocks = ceildiv(seq_len, block_M);
  const std::vector<std::int64_t> grid = keys_fastest
                                             ? std::vector<std::int64_t>{key_blocks, heads, batch}
                                             : std::vector<std::int64_t>{heads, key_blocks, batch};
  p.kernel(grid, threads, [&](Expr block_x, Expr block_y, Expr bz) {
    Expr bx = keys_fastest ? block_y : block_x, by = keys_fastest ? block_x : block_y;
    // Not with convert_dq: its last_to_arrive tells the block's threads who
    // came last by a barrier with a reduction over all of them, which a
    // producer warpgroup's kernel cannot have (tl-check-sync). Nor where TMA
    // cannot load lse's and Delta's rows (seq_len x 4 bytes, a multiple of
    // 16): the loop then keeps the kernel's own loads, and its two P/dS loops.
    const bool producer = producer_warpgroup && !convert_dq && seq_len % 4 == 0;
    if (producer)
      use_producer_warpgroup();
    Buffer K_shared = alloc_shared({block_M, dim}, dtype);
    Buffer V_shared = alloc_shared({block_M, dim}, dtype);
    Buffer q = alloc_shared({block_N, dim}, dtype);
    Buffer do_ = alloc_shared({block_N, dim}, dtype);
    Buffer lse_shared = alloc_shared({block_N}, accum_dtype);
    Buffer delta = alloc_shared({block_N}, accum_dtype);
    // P^T in shared memory, or (p_registers, on wgmma) in registers: the dV
    // gemm then takes it from there (FlashAttention-3's backward).
    const bool p_in_registers = wgmma && p_registers;
    Buffer pT = p_in_registers ? alloc_fragment({block_M, block_N}, dtype)
                               : alloc_shared({block_M, block_N}, dtype);
    Buffer dsT_shared = alloc_shared({block_M, block_N}, dtype); // dS^T
    Buffer qkT = alloc_fragment({block_M, block_N}, accum_dtype);
    Buffer dpT = alloc_fragment({block_M, block_N}, accum_dtype);
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

    // mma.sync unless asked for wgmma: the mma.sync configurations' tiles and
    // register budgets are tuned for it (on wgmma the D=64 one spills). On
    // wgmma the gemms go in two batches, each left in flight (wg_wait = -1):
    // S^T and dP^T, then dV, dK and dQ; each batch waited for at once, or
    // (p_while_dp, p_registers) a gemm at a time (below).
    const GemmOptions square = {
        .policy = GemmWarpPolicy::Square, .allow_wgmma = wgmma, .wg_wait = -1};
    const GemmOptions squareBT = {
        .transpose_B = true, .policy = GemmWarpPolicy::Square, .allow_wgmma = wgmma, .wg_wait = -1};
    copy(K(bz, slice(by * block_M, block_M), bx, all), K_shared);
    copy(V(bz, slice(by * block_M, block_M), bx, all), V_shared);
    clear(dv);
    clear(dk);
    Expr loop_st = is_causal ? floordiv(by * block_M, block_N) : Expr(0);
    Expr loop_ed = ceildiv(seq_len, block_N);
    pipelined(loop_st, loop_ed, num_stages, [&](Expr step) {
      Expr k = queryBlockAt(step, loop_st, loop_ed, deterministic && is_causal);
      copy(Q(bz, slice(k * block_N, block_N), bx, all), q);
      copy(dO(bz, slice(k * block_N, block_N), bx, all), do_);
      copy(lse(bz, bx, slice(k * block_N, block_N)), lse_shared);
      copy(Delta(bz, bx, slice(k * block_N, block_N)), delta);
      clear(qkT);
      gemm(K_shared, q, qkT, squareBT);
      clear(dpT);
      gemm(V_shared, do_, dpT, squareBT);
      // P^T, and dS^T = P^T * (dP^T - Delta) * sm_scale, with the causal mask
      // where some query of the block precedes some key. In one pass after
      // both gemms; or (p_while_dp) P^T into qkT's registers and its tile
      // while dP^T still runs, then dS^T from them.
      const bool two_passes = wgmma && p_while_dp;
      wait_wgmma(two_passes ? 1 : 0);
      auto writePdS = [&](bool masked) {
        parallel({block_M, block_N}, [&](Expr i, Expr j) {
          Expr pij = exp2(qkT(i, j) * scale - lse_shared(j));
          if (masked)
            pij = if_then_else(by * block_M + i <= k * block_N + j, pij, 0);
          pT(i, j) = pij;
          if (two_passes)
            qkT(i, j) = pij;
          else
            dsT_shared(i, j) = pij * (dpT(i, j) - delta(j)) * sm_scale;
        });
      };
      if (is_causal && producer) {
        // One loop, masked throughout: the consumers' barriers after its
        // shared writes then stand under no condition on the block index,
        // which tl-check-sync could not follow in a warp-specialised kernel.
        writePdS(true);
      } else if (is_causal) {
        Expr crossesDiagonal = by * block_M + (block_M - 1) > k * block_N;
        if_(crossesDiagonal, [&] { writePdS(true); });
        if_(!crossesDiagonal, [&] { writePdS(false); });
      } else {
        writePdS(false);
      }
      // From registers the dV gemm goes as soon as P^T is there (in flight
      // while dS^T is computed).
      if (p_in_registers)
        gemm(pT, do_, dv, square);
      if (two_passes) {
        wait_wgmma(p_in_registers ? 1 : 0);
        parallel({block_M, block_N}, [&](Expr i, Expr j) {
          dsT_shared(i, j) = qkT(i, j) * (dpT(i, j) - delta(j)) * sm_scale;
        });
      }
      // dQ's gemm last, all three waited for at once; or (dq_first, on
      // wgmma) first, waited for alone: dQ's hand-over (its tile, its adds)
      // then runs while the dV and dK gemms do. Not where the consumers take
      // dQ's turns themselves (deterministic, without the producer's tile):
      // thread 0's wait for the turn, with gemms in flight, makes ptxas
      // serialise the wgmmas (C7518); nor with convert_dq, whose last block
      // (last_to_arrive) converts dQ, which waits for every gemm.
      const bool dq_ahead =
          wgmma && dq_first && !convert_dq && (!deterministic || (producer && dq_tile));
      auto dqGemm = [&] {
        clear(dq);
        gemm(dsT_shared, K_shared, dq,
             {.transpose_A = true,
              .policy = GemmWarpPolicy::Square,
              .allow_wgmma = wgmma,
              .wg_wait = -1});
      };
      if (dq_ahead)
        dqGemm();
      if (!p_in_registers)
        gemm(pT, do_, dv, square);
      gemm(dsT_shared, q, dk, square);
      if (!dq_ahead)
        dqGemm();
      // dq_ahead: in flight, oldest first, dV (from registers), dQ, dK, or
      // dQ, dV, dK: waiting for dQ leaves dK (and dV) running.
      wait_wgmma(dq_ahead ? (p_in_registers ? 1 : 2) : 0);
      if (dq_tile)
        copy(dq, dq_shared);
      // Queries past a ragged end have no dQ row; where seq_len is a
      // multiple of the block, every row exists and needs no test.
      addDQRows(t, bx, by, bz, k, seq_len, block_M, block_N, is_causal, dq, [&] {
        if (order != DqOrder::reference) { // one add of the whole tile; rows past
          // seq_len: dQ's padding rows (their dS columns are zero) or nothing
          atomic_add(dQ(bz, slice(k * block_N, block_N), bx, all), dq_tile ? dq_shared : dq);
          return;
        }
        parallel({block_N, dim}, [&](Expr i, Expr j) {
          auto accumulate = [&] { atomic_add(dQ(bz, k * block_N + i, bx, j), dq(i, j)); };
          if (seq_len % block_N == 0)
            accumulate();
          else
            if_(k * block_N + i < seq_len, accumulate);
        });
      });
      if (dq_ahead)
        wait_wgmma(0);
    });
    copy(dv, dv_shared);
    copy(dk, dk_shared);
    copy(dv_shared, dV(bz, slice(by * block_M, block_M), bx, all));
    copy(dk_shared, dK(bz, slice(by * block_M, block_M), bx, all));
  });
  return p;
}

} // namespace tl::kernels::mha
