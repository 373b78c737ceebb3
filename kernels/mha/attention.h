// Flash-attention forward and backward: the four programs chained as the
// reference test chains them (fwd -> preprocess -> bwd -> postprocess), with
// the reference's block sizes, on the CPU backend or the GPU. Light header.
#pragma once

#include "tl/runtime/HostTensor.h"

#include <string>

namespace tl::kernels::mha {

struct AttentionResult {
  runtime::HostTensor O, lse, dQ, dK, dV;
};

enum class Backend { cpu, gpu };

/// Block sizes, threads and pipeline stages of the forward and backward
/// kernels; the default is the reference's configuration.
struct AttentionConfig {
  int fwdBlockM = 0, fwdBlockN = 0, fwdThreads = 32, fwdStages = 0; // 0: the reference's blocks
  int bwdBlockM = 0, bwdBlockN = 0, bwdThreads = 32, bwdStages = 0;
  bool bwdStaged = false;   // flashattn_bwd_staged instead of the reference's flashattn_bwd
  bool bwdWgmma = false;    // sm_90a, with bwdStaged: its gemms as wgmma (flashattn_bwd_staged's)
  bool bwdProducer = false; // sm_90a, with bwdWgmma: a producer warpgroup loads Q, dO, lse, Delta
  bool fwdWgmma = false;    // sm_90a: the forward's gemms as wgmma (flashattn_fwd's allow_wgmma)
  bool fwdProducer = false; // sm_90a, with fwdWgmma: a producer warpgroup loads K and V
  bool fwdStageO = false;   // O goes out through a shared tile (sm_90a: a TMA store)
  bool fwdOverlap = false;  // FA3's loop: softmax(S(k)) while P(k-1) V(k-1) runs (flashattn_fwd)
  bool fwdPingpong = false; // the warpgroups issue the loop's gemms in turn (flashattn_fwd)
  bool bwdDqTile =
      false; // dQ added a tile at a time (sm_90a: TMA reduce-add; flashattn_bwd's dq_tile)
  /// The backward adds into dQ in a fixed order (key blocks one after another
  /// for each query block), so dQ has the same bits on every run; its main
  /// kernel then takes a dQ_turns tensor after dQ (mha.h's backwardTensors).
  /// deterministicConfig sets it on a tuned configuration.
  bool deterministic = false;
  /// The backward's main kernel converts dQ to f16 (bf16) itself (the key block
  /// that adds last into a query block's rows, flashattn_bwd's convert_dq)
  /// and leaves the accumulator zero: no postprocess kernel, no zeroing
  /// before each launch. It then takes a dQ_count tensor after dQ (and
  /// dQ_turns) and outputs dQ_out after dK and dV. Its last block reads dQ,
  /// so the kernel has no producer warpgroup and dQ's adds stay element adds:
  /// clear bwdDqTile with it (tunedConfig's tile would otherwise be added
  /// element by element from shared memory).
  bool bwdConvertDq = false;
  /// The dQ accumulator in accumulator tile order (make_mma_tile_layout,
  /// flashattn_bwd's mma_tile_dq; without bwdDqTile): each block's dQ rows go
  /// as one atomic_add of the dQ gemm's accumulator, on sm_90a one 16-byte
  /// vector reduction per tile and thread instead of four element atomics.
  bool bwdDqMmaTiles = false;
  /// The staged backward's grid numbers key blocks fastest, then heads
  /// (FlashAttention-2's and -3's order), instead of heads fastest (the
  /// reference's): the blocks resident at once then share fewer heads' Q,
  /// dO, lse and Delta in L2 (ncu, session 25: our backward's L2 hit rate
  /// 66-82% against cuDNN's 94-96%). tunedConfig sets it where it was
  /// faster (not causal, and D = 256, from S = 1024); deterministicConfig
  /// clears it (a head's key blocks then wait on each other's turns) except
  /// at D = 256 non-causal from S = 4096, where it was faster in turns too.
  bool bwdKeysFastest = false;
  /// The staged wgmma backward computes P^T (exp2, into S^T's registers and
  /// its shared tile) while the dP^T gemm still runs, then dS^T from P^T and
  /// dP^T: FlashAttention-3's order, the exponentials off the tensor cores'
  /// critical path. No effect on mma.sync.
  bool bwdPWhileDp = false;
  /// The staged wgmma backward keeps P^T in registers (f16, S^T's layout),
  /// and its dV gemm takes it from there (wgmma with A from registers)
  /// instead of a shared tile: FlashAttention-3's backward, one tile write
  /// and its barrier less an iteration, and the tile's bytes free. With
  /// bwdPWhileDp the dV gemm runs while dS^T is computed. Warpgroups along
  /// M only (wgmma's A from registers): not at D = 256's 64-row blocks, whose
  /// gemms would then leave wgmma. No effect on mma.sync.
  bool bwdPRegisters = false;
  /// The staged wgmma backward issues its dQ gemm before the dV and dK ones
  /// and waits for it alone: dQ's tile and adds then go while the dV and dK
  /// gemms run, where by default all three are waited for together (session
  /// 33: 10% of the D = 128 backward's stall samples at that wait).
  /// tunedConfig's on wgmma from S = 1024 since session 36. No effect on mma.sync, with
  /// bwdConvertDq, nor on a deterministic backward whose consumers take dQ's
  /// turns themselves (no producer tile).
  bool bwdDqFirst = false;
};

/// The head dims the attention programs take: 64, 128 and 256.
bool supportedHeadDim(int dim);

/// The configuration tuned for a head dim (64, 128 or 256; others throw
/// std::invalid_argument), causality and sequence length (0: short), on the
/// H200 for sm_90a. For another architecture it is the same where that fits
/// the architecture's shared memory per block (tl::sharedMemoryLimit), else a
/// smaller one that does (those are not tuned). The measurements that chose
/// each are next to it in attention.cpp.
AttentionConfig tunedConfig(int dim, bool causal, int seqLen = 0,
                            const std::string &arch = "sm_90a");

/// Whether `config`'s backward issues its dQ gemm first at length `seqLen`
/// (AttentionConfig::bwdDqFirst), as tunedConfig decides: on wgmma from S = 1024, where it was
/// timed and the GPU tests run it. tl-bench-gpu's backward candidates follow it too.
bool takesDqFirst(const AttentionConfig &config, int seqLen);

/// Whether `config`'s backward, at head dim `dim` and length `seqLen`, can
/// hand dQ to its producer warpgroup as a tile: the producer runs (the
/// staged program on wgmma, bwdProducer, dQ not converted in the kernel, lse
/// rows TMA can load: seqLen a multiple of 4, as flashattn_bwd_staged
/// decides; not 0, an unknown length) and the tile has room (one stage, not
/// D = 256). Elsewhere a bwdDqTile is added by the consumers themselves,
/// which is slower.
bool producerTakesDqTile(const AttentionConfig &config, int dim, int seqLen);

/// `config` with the deterministic backward (AttentionConfig::deterministic),
/// for head dim `dim`, causality, length `seqLen` and target `arch`, its dQ added the
/// faster way in turns: a tile at a time (bwdDqTile) exactly where the
/// producer warpgroup takes it (producerTakesDqTile): the consumers go on
/// while the producer waits for the turn, 24-30% less time than element adds
/// in turn (results/2026-12-04-h200-session25.md), while a tile the consumers
/// add themselves must complete before the turn passes (7-22% more time than
/// element adds in turn, results/2026-12-03-h200-session23.md). So a staged
/// wgmma backward without the producer gets it where it can take the tile,
/// and on sm_90a the reference's program on 64x64 blocks at D = 64
/// (tunedConfig's below S = 1024, causal or S < 512) becomes the staged wgmma one on 128x128
/// blocks with the producer (results/2026-12-04-h200-session26.md). With
/// bwdDqMmaTiles, dQ stays in that order (no tile, no producer added).
AttentionConfig deterministicConfig(AttentionConfig config, int dim, bool causal, int seqLen,
                                    const std::string &arch);

/// What the outputs hold before the kernels run: zeros (as out_idx allocates
/// them), or NaN, so that an element no kernel writes shows in the results
/// (tests). The dQ accumulator, which the preprocess zeroes, is NaN too (zeros
/// where the main kernel converts dQ: it must start zero).
enum class Outputs { zeroed, poisoned };

/// Q, K, V, dO: [batch, seq, heads, dim], f16 or bf16, all of one shape and
/// element type (the outputs O, dQ, dK, dV take it too), any batch,
/// seq and heads >= 1 and a head dim supportedHeadDim takes (else
/// std::invalid_argument). Compiles the four programs for this shape and
/// runs them.
AttentionResult attentionForwardBackward(runtime::HostTensor &Q, runtime::HostTensor &K,
                                         runtime::HostTensor &V, runtime::HostTensor &dO,
                                         bool causal, Backend backend = Backend::cpu,
                                         AttentionConfig config = {},
                                         Outputs outputs = Outputs::zeroed);

} // namespace tl::kernels::mha
