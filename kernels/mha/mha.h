// The four programs of the reference flash-attention test
// (shared/reference/test_tilelang_kernel_mha_bwd.py), in the tl eDSL.
// Tensors are [batch, seq_len, heads, dim] f16; lse and Delta [batch, heads,
// seq_len] f32 (lse in the log2 domain, as in the reference).
#pragma once

#include "mha/attention.h"
#include "tl/dsl.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tl::kernels::mha {

/// O, lse = flashattn_fwd(Q, K, V)      (out_idx = [3, 4])
/// `num_stages` is the key/value loop's T.Pipelined num_stages (the
/// reference's 0: a plain loop; s >= 1: loads issued s iterations ahead).
/// `allow_wgmma` lets sm_90a run the two gemms as wgmma (Q K^T from shared
/// memory, P V with P from registers); off, they stay on mma.sync. Which is
/// faster depends on the blocks: tunedConfig takes wgmma on sm_90a with the
/// blocks the autotuner chose for it (results/2026-12-01-h200-mha-autotune.md).
/// `producer_warpgroup` asks for use_producer_warpgroup: on sm_90a, with
/// wgmma and K and V loaded by TMA, one more warpgroup issues the loads.
/// `stage_O` writes O through a shared tile (on sm_90a a TMA store) instead
/// of each thread's pairs straight from the accumulator, as the reference does.
/// `overlap` software-pipelines the key/value loop as FlashAttention-3 does:
/// iteration k issues S(k) = Q K(k)^T and P(k-1) V(k-1) with wg_wait = -1,
/// waits for S(k), runs its softmax while P V runs on the tensor cores, then
/// waits for P V and rescales O (on sm_90a's wgmma path; elsewhere the same
/// results in the same loop order, the gemms completing where they stand).
/// `pingpong` (FlashAttention-3's pingpong): the warpgroups issue the loop's
/// gemms in turn (tl::dsl::pingpong; the plain loop's S = Q K^T, the
/// overlapped loop's S(k) and P(k-1) V(k-1)), so that one warpgroup's
/// softmax runs while the next one's gemms take the tensor cores (on
/// sm_90a's wgmma path with two warpgroups or more; elsewhere nothing changes).
/// Every attention program takes its element type as `dtype` (the
/// reference's f16, or bf16: Q, K, V, dO, O, dQ, dK, dV and the shared tiles
/// and fragments that hold them; lse, Delta and the accumulators stay f32).
dsl::Program flashattn_fwd(int batch, int heads, int seq_len, int dim, bool is_causal, int block_M,
                           int block_N, int threads = 32, int num_stages = 0,
                           bool allow_wgmma = false, bool producer_warpgroup = false,
                           bool stage_O = false, bool overlap = false, bool pingpong = false,
                           dsl::DType dtype = dsl::f16);

/// Delta = rowsum(O * dO)               (out_idx = [2])
/// `zero_dq` (not the reference's): it also zeroes the dQ accumulator (a
/// parameter after dO, dqAccumulatorShape), as FlashAttention-2's does, so
/// that the backward needs no memset before it (out_idx = [3]).
dsl::Program flashattn_bwd_preprocess(int batch, int heads, int seq_len, int dim, int threads = 128,
                                      bool zero_dq = false, dsl::DType dtype = dsl::f16);

/// How the backward orders its f32 dQ accumulator (dqAccumulatorShape):
/// the reference's make_dq_layout; make_mma_tile_layout (not the
/// reference's: the dQ gemm's accumulator added a tile at a time, on sm_90a
/// one 16-byte vector reduction per 16x8 tile and thread, a quarter of the
/// reference's element atomics); or row-major (a backward with `dq_tile`).
enum class DqOrder { reference, mmaTiles, rows };
/// The order of a backward with or without `dq_tile` and `mma_tile_dq`.
inline DqOrder dqOrder(bool dq_tile, bool mma_tile_dq) {
  return dq_tile ? DqOrder::rows : mma_tile_dq ? DqOrder::mmaTiles : DqOrder::reference;
}
/// The layout an order annotates dQ with (none for rows).
void annotateDqOrder(const dsl::Buffer &dQ, DqOrder order);

/// dQ_out = f16(dQ read through make_dq_layout)   (out_idx = [1])
/// `order`: how the backward laid dQ out (DqOrder).
dsl::Program flashattn_bwd_postprocess(int batch, int heads, int seq_len, int dim,
                                       int threads = 128, DqOrder order = DqOrder::reference,
                                       dsl::DType dtype = dsl::f16);

/// dK, dV = flashattn_bwd(Q, K, V, dO, lse, Delta, dQ); dQ accumulates
/// atomically through make_dq_layout    (out_idx = [7, 8])
/// `deterministic`: the key blocks add into each query block's dQ rows one
/// after another in key order (in_turn on a dQ_turns counter, a parameter
/// after dQ: see backwardTensors), so dQ has the same bits on every run;
/// causal, each block then walks its query blocks from the last down
/// (queryBlockAt).
/// `dq_tile`: a block adds its dQ rows as one tile (T.atomic_add on a
/// region) from a shared f32 tile, into a row-major dQ (no make_dq_layout):
/// on sm_90a TMA reduce-add boxes, which the copy engine adds in L2 while
/// the threads go on, instead of an atomic add per element.
/// `mma_tile_dq` (not the reference's; without `dq_tile`): dQ in
/// make_mma_tile_layout's order, each block's rows added as one atomic_add
/// of the dQ gemm's accumulator (DqOrder::mmaTiles).
/// `convert_dq` (not the reference's): the key block that adds last into a
/// query block's dQ rows (last_to_arrive on a dQ_count counter) writes them
/// out as `dtype` (the postprocess's work) and sets them back to zero, so the
/// backward needs neither the postprocess nor a zeroed dQ before each launch
/// (only before the first): one more output, dQ_out.
dsl::Program flashattn_bwd(int batch, int heads, int seq_len, int dim, bool is_causal, int block_M,
                           int block_N, int threads = 32, int num_stages = 0,
                           bool deterministic = false, bool dq_tile = false,
                           bool convert_dq = false, bool mma_tile_dq = false,
                           dsl::DType dtype = dsl::f16);
/// The backward main kernel's parameters, declared on `p` in the order both
/// backward programs take them (the attention API calls either alike): Q, K,
/// V, dO (`dtype`), lse, Delta (f32 rows), dQ (f32, accumulated), for a
/// deterministic backward dQ_turns, for one that converts dQ dQ_count (each
/// i32 [batch, heads, query blocks of block_N rows], zeros before the first
/// launch, zeros again after each), then the outputs dK, dV (`dtype`) and, when
/// it converts dQ, dQ_out (`dtype`).
struct BackwardTensors {
  dsl::Buffer Q, K, V, dO, lse, Delta, dQ, dQTurns, dQCount, dK, dV, dQOut;
};
BackwardTensors backwardTensors(dsl::Program &p, int batch, int heads, int seq_len, int dim,
                                int block_N, bool deterministic, bool convert_dq, dsl::DType dtype);
/// The shape of a deterministic backward's dQ_turns and of a converting
/// one's dQ_count: one counter per query block of block_N rows of each head.
std::vector<std::int64_t> dqTurnsShape(int batch, int heads, int seq_len, int block_N);
/// Adds a block's dQ rows of query block k (`accumulate`, its atomic adds) in
/// a backward whose block (bx, by, bz) = (head, key block, batch) walks query
/// blocks from floor(by * block_M / block_N) when causal: as is, or, in a
/// deterministic backward (t.dQTurns declared), in the turn of key block by
/// among the key blocks that add into query block k, the last of which sets
/// the counter back to 0. Where t.dQCount is declared, the last key block to
/// add then converts the rows into t.dQOut and zeroes them, through `dq`
/// (the [block_N, dim] f32 fragment the rows came from: each thread reads
/// and zeroes the same elements).
void addDQRows(const BackwardTensors &t, dsl::Expr bx, dsl::Expr by, dsl::Expr bz, dsl::Expr k,
               int seq_len, int block_M, int block_N, bool is_causal, const dsl::Buffer &dq,
               const std::function<void()> &accumulate);
/// The query block a backward block (walking query blocks [first, end))
/// works on at step `step` of its loop: `step` itself, or, with
/// `lastFirst`, the blocks from the last down. A deterministic causal
/// backward walks them so: every key block then reaches query block k at the
/// same step, as without the mask, and takes its turn on k's dQ rows in key
/// order without waiting; walking up from the diagonal, key block j would
/// wait for key block 0 to come up j blocks (a wavefront: 16-38% more time
/// than the atomic backward at D = 128 with the producer taking the turns,
/// 0.5-3.4% after; results/2026-12-04-h200-session25.md).
dsl::Expr queryBlockAt(dsl::Expr step, dsl::Expr first, dsl::Expr end, bool lastFirst);
/// The same backward as flashattn_bwd, with P and dS staged in shared memory
/// so that every gemm takes square warp tiles (FlashAttention-2's
/// arrangement): fewer shared-memory reads per mma than the reference's
/// register-resident P, for two tile writes more per iteration. With `wgmma`
/// (sm_90a) its gemms may take wgmma: every operand is then a shared tile,
/// and with two warpgroups on 64-row query blocks the dQ gemm splits its
/// columns between them (FlashAttention-3's backward arrangement).
/// `dq_tile`, `convert_dq` and `mma_tile_dq` as flashattn_bwd's. With
/// `producer_warpgroup` (sm_90a, with `wgmma`) a producer warpgroup loads
/// each query block's Q, dO, lse and Delta by TMA (use_producer_warpgroup),
/// where seq_len is a multiple of 4 (lse's and Delta's rows by TMA) and dQ
/// is not converted in the kernel (`convert_dq`); elsewhere the kernel's own
/// threads load them, as without. Causal, its P/dS loop is then one masked
/// loop. With `keys_fastest` the grid numbers key blocks fastest, then heads
/// (AttentionConfig::bwdKeysFastest). With `p_while_dp` (on wgmma) P^T is
/// computed while the dP^T gemm still runs, and dS^T after it
/// (AttentionConfig::bwdPWhileDp). With `p_registers` (on wgmma) P^T stays
/// in registers and the dV gemm takes it from there
/// (AttentionConfig::bwdPRegisters). With `dq_first` (on wgmma) the dQ gemm
/// goes before the dV and dK ones and is waited for alone
/// (AttentionConfig::bwdDqFirst).
dsl::Program flashattn_bwd_staged(int batch, int heads, int seq_len, int dim, bool is_causal,
                                  int block_M, int block_N, int threads = 128, int num_stages = 1,
                                  bool deterministic = false, bool wgmma = false,
                                  bool dq_tile = false, bool convert_dq = false,
                                  bool mma_tile_dq = false, bool producer_warpgroup = false,
                                  bool keys_fastest = false, bool p_while_dp = false,
                                  bool p_registers = false, dsl::DType dtype = dsl::f16,
                                  bool dq_first = false);

/// The reference's dQ layout: atomics cannot be vectorised, so dQ is stored
/// in the order of the 8x8 gemm fragment that produces it. It groups rows in
/// eights, so the accumulator it lays out has whole groups: see
/// dqAccumulatorShape.
dsl::Layout make_dq_layout();

/// The f32 dQ accumulator the backward adds into and the postprocess reads
/// (zeros before the backward, as the reference's torch.zeros_like): [batch,
/// seq_len rounded up to a multiple of 16, heads, dim]. The reference
/// allocates [batch, seq_len, heads, dim], which make_dq_layout overruns
/// when seq_len is not a multiple of 8 (make_mma_tile_layout when it is not
/// one of 16); the padding rows stay zero.
std::vector<std::int64_t> dqAccumulatorShape(int batch, int heads, int seq_len, int dim);

/// The block sizes the reference picks for a head dim.
struct BlockSizes {
  int block_M, block_N;
};
BlockSizes forwardBlocks(int dim);
BlockSizes backwardBlocks(int dim);
/// The backward's blocks under `config` (its own, or the reference's).
BlockSizes backwardBlocks(int dim, const AttentionConfig &config);

/// The forward and backward main kernels of `config` for a problem shape
/// (block sizes 0: the reference's for the head dim), on `dtype` (f16 or
/// bf16) Q, K, V, dO, O, dQ, dK and dV; lse, Delta and the dQ accumulator
/// are f32 either way.
dsl::Program forwardKernel(int batch, int heads, int seq_len, int dim, bool is_causal,
                           const AttentionConfig &config, dsl::DType dtype = dsl::f16);
dsl::Program backwardKernel(int batch, int heads, int seq_len, int dim, bool is_causal,
                            const AttentionConfig &config, dsl::DType dtype = dsl::f16);
/// The preprocess backwardKernel's main kernel follows: it zeroes the dQ
/// accumulator (a parameter after dO), unless config.bwdConvertDq (the main
/// kernel then leaves the accumulator zero itself).
dsl::Program preprocessKernel(int batch, int heads, int seq_len, int dim,
                              const AttentionConfig &config, dsl::DType dtype = dsl::f16);
/// The postprocess that reads the dQ accumulator backwardKernel writes (none
/// to run when config.bwdConvertDq: the main kernel converts dQ itself).
dsl::Program postprocessKernel(int batch, int heads, int seq_len, int dim,
                               const AttentionConfig &config, dsl::DType dtype = dsl::f16);

/// Every kernel we ship for `arch`, by file stem, at the reference test's
/// shape: the reference's configurations (causal and not) and the tuned ones
/// (tunedConfig for `arch`, D = 64, 128 and 256: gemms on tensor cores,
/// pipelined loads; "_tuned_dD"), plus pre- and postprocess. CI assembles
/// each with ptxas; `tl-mha --ptx` writes them out.
std::vector<std::pair<std::string, dsl::Program>>
shippedPrograms(const std::string &arch = "sm_90a");

} // namespace tl::kernels::mha
