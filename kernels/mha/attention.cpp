// Flash-attention forward and backward on either backend.
#include "mha/attention.h"

#include "mha/mha.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/runtime/Jit.h"

#include <limits>
#include <memory>
#include <stdexcept>

namespace tl::kernels::mha {

using runtime::HostTensor;
using runtime::Kernel;

namespace {
std::unique_ptr<Kernel> compile(const dsl::Program &program, Backend backend) {
  return jit(program, {.target = backend == Backend::gpu ? Target::gpu : Target::cpu});
}
} // namespace

bool takesDqFirst(const AttentionConfig &config, int seqLen) {
  return config.bwdWgmma && seqLen >= 1024;
}

AttentionConfig tunedConfig(int dim, bool causal, int seqLen, const std::string &arch) {
  // Chosen by measurement on the H200: on sm_90a, tl::autotune's choices
  // (tl-bench-gpu --autotune over the forward's and the backward's spaces of
  // the earlier sweeps' best, results/2026-12-01-h200-mha-autotune.md); the
  // rest by the sweeps of results/tuned-configurations.md.
  // The forward runs 4 warps (8 at D=256) one stage of cp.async loads ahead
  // with 128-row query blocks, two m16 tiles a warp, except causal D=64 below
  // S = 2048, whose short launch 64-row blocks balance better. On sm_90a its
  // gemms take wgmma (P V with P from registers) with one warpgroup on 64-row
  // blocks at D=64 (1.02-1.09x the mma.sync forward; in long launches three
  // on 192-row blocks, below), and two on 128-row blocks at D=256 (1.4-1.6x)
  // and at D=128 (below), in FlashAttention-3's loop order where that is
  // faster (below). The backward
  // stages P and dS in shared memory (flashattn_bwd_staged: square warp tiles, FlashAttention-2's
  // arrangement) with 8 warps and the largest key blocks that fit, except D=64 on sm_90a in short
  // launches, where the reference's program on wgmma is faster (below). Targets with less
  // shared memory a block than the H200's 227 KiB take the next configuration that fits (163 KiB:
  // sm_80; 99 KiB: sm_86, sm_89), chosen to fit, not measured; tests/unit/TunedConfigTest.cpp
  // checks every answer against its target.
  if (!supportedHeadDim(dim))
    throw std::invalid_argument("tunedConfig: head dim " + std::to_string(dim) +
                                " is not supported (64, 128 or 256)");
  const std::int64_t shared = sharedMemoryLimit(arch), KiB = 1024;
  if (shared < 99 * KiB)
    throw std::invalid_argument("tunedConfig: " + arch + " gives a block " +
                                std::to_string(shared / KiB) +
                                " KiB of shared memory; the attention configurations need "
                                "99 KiB or more (sm_80 and newer)");
  const bool large = shared >= 227 * KiB, medium = shared >= 163 * KiB;
  const bool hopper = arch == "sm_90a"; // wgmma
  AttentionConfig c;
  c.fwdThreads = 128, c.fwdStages = 1;
  c.bwdThreads = 256, c.bwdStages = 1, c.bwdStaged = true;
  if (dim == 64) {
    c.fwdBlockM = causal && seqLen < 2048 ? 64 : 128, c.fwdBlockN = 64;
    c.bwdBlockM = 128, c.bwdBlockN = 128;
    if (!medium)
      c.bwdBlockM = 64, c.bwdBlockN = 64, c.bwdThreads = 128;
    // sm_90a: the staged one on wgmma (below) from S = 1024, causal and not,
    // and from S = 512 not causal where its producer takes the dQ tile
    // (below); shorter launches are faster on the reference's program on
    // wgmma.
    const bool stagedShort = !causal && seqLen >= 512 && seqLen % 4 == 0;
    if (hopper && seqLen < 1024 && !stagedShort)
      c.bwdStaged = false, c.bwdBlockM = 64, c.bwdBlockN = 64, c.bwdThreads = 128;
  } else if (dim == 128) {
    c.fwdBlockM = 128, c.fwdBlockN = 32;
    c.bwdBlockM = 128, c.bwdBlockN = 64;
    if (!medium)
      c.bwdBlockM = 64, c.bwdBlockN = 32, c.bwdThreads = 128;
  } else {
    c.fwdBlockM = 128, c.fwdBlockN = large ? 64 : 32, c.fwdThreads = 256;
    c.bwdBlockM = 64, c.bwdBlockN = large ? 64 : 32;
    if (!medium) {
      c.fwdBlockM = 64, c.fwdThreads = 128;
      c.bwdBlockM = 32, c.bwdStages = 0;
    }
  }
  if (hopper) { // wgmma: one warpgroup on 64-row blocks, two on 128-row ones (D=128, D=256)
    c.fwdWgmma = true;
    if (dim != 256)
      c.fwdBlockM = 64, c.fwdBlockN = 64;
    // O leaves through a shared tile by a TMA store: 2-16% faster up to
    // S = 1024 (most at D=256), level to 2% faster from 4096
    // (results/2026-12-02-h200-ncu-forward.md).
    c.fwdStageO = true;
    // FlashAttention-3's loop order (the softmax of one key block while the
    // tensor cores run the P V gemm of the one before), from tl-bench-gpu
    // --autotune=forward (results/2026-12-02-h200-forward-overlap.md): the
    // fastest at D=128 (then; since sessions 20 and 27 not: below) and 256 at
    // every length measured (3-10% and 6-13%; at
    // D=256 it also beats the producer warpgroup by 6-7% from S = 4096), and
    // at D=64 non-causal from S = 1024 on 128-key blocks (1-4%). At D=64
    // causal it was within 1.5% either way, and at the reference's S = 256
    // (four iterations) 3-4% slower in two runs of three: those keep the
    // plain loop (which has since become 5-7% faster at D=64 causal from
    // S = 1024, summing its rows before P V: results/2026-12-02-h200-session15.md).
    // At D = 256 the short launches (S = 256, four key blocks) were measured
    // again in session 28 (tl-bench-gpu --autotune at 8,16,256,256 and
    // 8,16,512,256): at S = 256 the plain loop took 5.0% / 7.2% less time
    // (non-causal / causal), at S = 512 the overlapped one 3.6% less
    // non-causal (causal level) (results/2026-12-04-h200-session28.md):
    // the overlapped loop from S = 512.
    if ((dim == 256 && seqLen >= 512) || (dim == 64 && !causal && seqLen >= 1024))
      c.fwdOverlap = true;
    // 128-key blocks at D=64 in the overlapped loop on 64-row blocks.
    if (dim == 64 && c.fwdOverlap)
      c.fwdBlockN = 128;
    // At D=128: 128-row blocks on two warpgroups, the plain loop, 64-key
    // blocks. tl-bench-gpu --autotune=forward chose them in session 20 at
    // S = 1024, 4096 and 16384: 12%, 10% and 14% faster than the overlapped
    // 64x96 (causal 9%, 9%, 6%) (results/2026-12-03-h200-session20.md), and
    // in session 27 at 8,16,512,128 and 8,32,256,128: 20% and 23% less time
    // than the overlapped 64x96 (causal 6.5% and 15%; at 8,16,512,128 causal
    // the search chose the plain 64x64 on one warpgroup, 2.8% ahead in one
    // run: not a rule of its own)
    // (results/2026-12-04-h200-session27.md).
    // Not pingpong (fwdPingpong: the two warpgroups issuing S = Q K^T in
    // turn): side by side in session 29 it took 0.9-2.7% more warm time at
    // D = 128 from S = 4096 and 0.4-6.4% from 512, 7.5-13% more at D = 256
    // (two blocks a SM interleave their warpgroups already); the one-block
    // forwards with a producer warpgroup, pingpong or not, were 7-33% slower
    // (results/2026-12-04-h200-session29.md).
    if (dim == 128)
      c.fwdBlockM = 128, c.fwdThreads = 256;
    // Causal below S = 1024, 64-row blocks on one warpgroup two stages ahead:
    // the search chose them at 8,16,512,128 (4.6% less time than 128x64/256)
    // and 8,32,256,128 (1.0%) in session 28; at 8,16,512,128 in session 27
    // the one-stage 64x64, 2.8% ahead (results/2026-12-04-h200-session28.md).
    if (dim == 128 && causal && seqLen < 1024)
      c.fwdBlockM = 64, c.fwdThreads = 128, c.fwdStages = 2;
    // D = 64 in long launches: FlashAttention-3's blocks and schedule, 192
    // query rows on three consumer warpgroups, 128 keys, the overlapped loop,
    // a producer warpgroup loading K and V (one block a SM: 512 threads, the
    // consumers at 160 registers), the warpgroups in pingpong. Side by side
    // with the 64-row blocks, two or three runs each, cold L2
    // (results/2026-12-04-h200-session30.md, calls 2 and 3): non-causal 6.7%,
    // 10% and 12% less time at S = 4096, 8192 and 16384; causal 7-9% less at
    // 16384, but 1.2% more at 8192 and 8-12% more at 4096; at S = 1024
    // 23-26% more (causal 75-82%), where one block a SM leaves each block's
    // first loads and last stores exposed. Causal, O leaves by the threads'
    // own stores: through the shared tile without pingpong ptxas spills 4
    // bytes, and the variants were level (calls 2, 3).
    if (dim == 64 && seqLen >= (causal ? 16384 : 4096)) {
      c.fwdBlockM = 192, c.fwdBlockN = 128, c.fwdThreads = 384, c.fwdStages = 1;
      c.fwdProducer = c.fwdOverlap = c.fwdPingpong = true;
      c.fwdStageO = !causal;
    }
    // The staged backward's gemms on wgmma (two warpgroups; at D=128 and 256
    // dQ's columns split between them): 1.19-1.28x the mma.sync one at
    // S = 1024 and 4096, causal and not, at D=128 and 256 (tl-bench-gpu
    // --bwd-wgmma=0|1, results/2026-12-02-h200-backward-wgmma.md). At D=64
    // tl-bench-gpu --autotune=backward chose it, on 128x128 blocks, over the
    // reference's program at S = 1024 (4%, not causal), 4096 (18%; causal 5%)
    // and 16384 (17-18% over the staged one on mma.sync); the reference's
    // program stays faster at the reference's S = 256 (8-9% less time, 24%
    // causal) (results/2026-12-03-h200-session19.md). Causal, once its mask's
    // index math was 32-bit (bounded thread and block indices, i32 loop
    // counters; spills 252 -> 40 bytes), it chose the staged one too: 3.5%
    // at S = 1024, 12% at 4096 and 16384 (results/2026-12-03-h200-session20.md).
    c.bwdWgmma = c.bwdStaged;
    // From S = 1024, a producer warpgroup loads the staged backward's Q, dO,
    // lse and Delta by TMA (its consumers take 240 registers): 1-7% less
    // main-kernel time at D=128 and 256 and D=64 non-causal, S = 1024 and
    // 4096 (D=128 causal 1.0% and 2.6%), though it spills 4-44 bytes where it
    // spilled none (tl-bench-gpu --bwd-producer=1|0,
    // results/2026-12-03-h200-session21.md). At D=64 causal it was 4-7% slower
    // then (its one masked P/dS loop spilled 56 bytes against 40); with its dQ
    // tile it now spills 4 bytes and took 3.3%, 6.4% and 8.4% less backward
    // time at S = 1024, 4096 and 16384 (10% less main kernel under ncu at 4096),
    // both runs of two (tl-bench-gpu --causal=1 --bwd-producer=1 --dq-tile=1,
    // H100, results/2026-12-05-session38.md).
    // Below S = 1024 (tl-bench-gpu --autotune at S = 256 and 512, session
    // 28, results/2026-12-04-h200-session28.md) it took 1.7-11.6% less time
    // at D = 128 where it takes the dQ tile (below; without the tile 2.6%
    // more at 8,32,256,128), 7.5% / 9.3% at D = 256 non-causal (S = 256 /
    // 512; causal 0.5% more / 1.4% less), and at D = 64 non-causal, S = 512, the
    // staged program with it and the tile 3.4% less than the reference's.
    AttentionConfig withProducer = c;
    withProducer.bwdProducer = c.bwdWgmma;
    c.bwdProducer = c.bwdWgmma && (seqLen >= 1024 || dim == 256 ||
                                   producerTakesDqTile(withProducer, dim, seqLen));
    // With the producer, dQ goes a tile at a time: the consumers hand the
    // block's tile to the producer, which reduce-adds it by TMA
    // (tl.producer_reduce). Since its writes stopped spilling (session 22:
    // 112 -> 4 bytes at D = 128): 3.0-4.0% less backward time than element
    // adds at D = 64 (not causal), 5.8-8.4% at D = 128, S = 1024 and 4096
    // (tl-bench-gpu --dq-tile=1|0 and an A/B of the build, best of two
    // rounds each, results/2026-12-03-h200-session23.md).
    // Not at D = 256 (no shared memory left for the tile), nor where the
    // kernel keeps its own loads (lse rows TMA cannot load: seq_len not a
    // multiple of 4), where the consumers would issue the add themselves,
    // 6-13% slower than element adds (results/2026-12-03-h200-dq-tile.md).
    c.bwdDqTile = producerTakesDqTile(c, dim, seqLen);
    // From S = 1024 the staged wgmma backward's grid numbers key blocks
    // fastest where it was not slower beyond the spread of runs: not causal
    // (1.3% less backward time at 4,16,4096,128, 3.4% at 4,16,4096,256;
    // -0.6% to +0.2% at D = 64 and at 16,16,1024,128, where two runs of one
    // kernel differ by up to 5%) and causal at D = 256 (1.7%; D = 256 was
    // measured at S = 4096 only); causal at D = 64 and 128 it was 1-6% slower
    // (not profiled; with heads fastest a causal launch starts with every
    // head's longest key blocks and ends with its shortest, which may balance
    // its last wave better) (tl-bench-gpu --bwd-keys-fastest=0|1, best of two
    // alternating, results/2026-12-04-h200-session26.md).
    c.bwdKeysFastest = c.bwdWgmma && seqLen >= 1024 && (!causal || dim == 256);
    // From S = 1024, the dQ gemm first, waited for alone (its hand-over then
    // runs while the dV and dK gemms do): on the H100, S = 4096, 3% less
    // backward time at D = 128 (causal and not), 5-6% at D = 256, level at
    // D = 64 (0.7% less main-kernel time non-causal) (tl-bench-gpu
    // --bwd-dq-first=0|1, best of two alternating,
    // results/2026-12-05-session35.md). Below S = 1024 neither timed nor run
    // by the GPU tests (session 36 had no machine for it).
    c.bwdDqFirst = takesDqFirst(c, seqLen);
    // Not bwdPWhileDp (P while dP runs) nor bwdPRegisters: ptxas spills less
    // with the first at D = 64 causal and D = 128 non-causal
    // (results/2026-12-04-session31-ptxas.md), but on the H200 the main
    // kernel took 1-19% more time with it at every shape, up to 18% with P
    // in registers (results/2026-12-05-h200-session32.md).
  }
  return c;
}

bool producerTakesDqTile(const AttentionConfig &config, int dim, int seqLen) {
  // seqLen 0 (tunedConfig's "short", not known): it may be one TMA cannot load.
  return config.bwdProducer && config.bwdStaged && config.bwdWgmma && !config.bwdConvertDq &&
         seqLen > 0 && seqLen % 4 == 0 && config.bwdStages <= 1 && dim != 256;
}

AttentionConfig deterministicConfig(AttentionConfig config, int dim, bool causal, int seqLen,
                                    const std::string &arch) {
  config.deterministic = true;
  if (config.bwdDqMmaTiles) { // dQ in its own order, added a gemm accumulator at a time
    config.bwdDqTile = false;
    return config;
  }
  // In turns the consumers' element adds wait on every turn; a producer
  // warpgroup taking the turns with the tile lets them go on. tunedConfig's
  // short D = 64 backward on sm_90a (the reference's program on 64x64
  // blocks, below S = 1024) becomes the staged wgmma one on 128x128 blocks,
  // and a staged wgmma backward without the producer (D = 64 causal before
  // session 38; D = 128 below S = 1024 before session 28) gets it. Backward time against the
  // default, best of two (tl-bench-gpu [--deterministic], results/2026-12-04-h200-session26.md,
  // call 4): 8,32,256,64 +10.7% / +20.4% (non-causal / causal; the
  // reference's program in turns, call 2: +34% / +26%), 8,32,512,64 +2.1% /
  // +14.8% (+33% / +37%), 8,16,512,128 +1.1% / +5.8% (+20% / +16%);
  // 4,32,4096,64 causal -3.2% (+23% without the producer, session 25). Not
  // measured: D = 128 at S = 256.
  if (arch == "sm_90a" && dim == 64 && !config.bwdStaged && config.bwdBlockM == 64 &&
      config.bwdBlockN == 64) {
    AttentionConfig staged = config;
    staged.bwdStaged = true, staged.bwdWgmma = true, staged.bwdProducer = true;
    staged.bwdBlockM = 128, staged.bwdBlockN = 128, staged.bwdThreads = 256, staged.bwdStages = 1;
    if (producerTakesDqTile(staged, dim, seqLen))
      config = staged;
  }
  // Heads fastest in the grid: with key blocks fastest all of a head's key
  // blocks start at once and wait on each other's turns at every query
  // block; deterministic it cost 9-24% at D = 64 and 128 non-causal against
  // the default, where heads fastest cost -3% to +5%. (At D = 256, S = 4096
  // key blocks fastest cost +27% / +45% non-causal / causal against the
  // default of call 4, heads fastest +47% / +21% against that of call 1: by
  // the two calls' times, keys fastest took 18% less deterministic time
  // non-causal (results/2026-12-04-h200-session26.md and session27.md).)
  // Side by side in session 28 (tl-bench-gpu --deterministic
  // --bwd-keys-fastest=0|1, two rounds, results/2026-12-04-h200-session28.md)
  // keys fastest took 21% less at 4,16,4096,256 non-causal (10.24 ms against
  // 13.00-13.16), and more everywhere else measured: +17% causal there, +9% /
  // +23% at 16,16,1024,256, +4-6% / +19-20% at 4,16,4096,128. So keys fastest
  // stays at D = 256 non-causal from S = 4096 only.
  config.bwdKeysFastest = config.bwdKeysFastest && dim == 256 && !causal && seqLen >= 4096;
  AttentionConfig withProducer = config;
  withProducer.bwdProducer = true;
  if (producerTakesDqTile(withProducer, dim, seqLen))
    config.bwdProducer = true;
  config.bwdDqTile = producerTakesDqTile(config, dim, seqLen);
  return config;
}

bool supportedHeadDim(int dim) { return dim == 64 || dim == 128 || dim == 256; }

dsl::Program forwardKernel(int batch, int heads, int seq_len, int dim, bool is_causal,
                           const AttentionConfig &config, dsl::DType dtype) {
  BlockSizes b =
      config.fwdBlockM ? BlockSizes{config.fwdBlockM, config.fwdBlockN} : forwardBlocks(dim);
  return flashattn_fwd(batch, heads, seq_len, dim, is_causal, b.block_M, b.block_N,
                       config.fwdThreads, config.fwdStages, config.fwdWgmma, config.fwdProducer,
                       config.fwdStageO, config.fwdOverlap, config.fwdPingpong, dtype);
}

BlockSizes backwardBlocks(int dim, const AttentionConfig &config) {
  return config.bwdBlockM ? BlockSizes{config.bwdBlockM, config.bwdBlockN} : backwardBlocks(dim);
}

dsl::Program backwardKernel(int batch, int heads, int seq_len, int dim, bool is_causal,
                            const AttentionConfig &config, dsl::DType dtype) {
  BlockSizes b = backwardBlocks(dim, config);
  if (config.bwdStaged)
    return flashattn_bwd_staged(batch, heads, seq_len, dim, is_causal, b.block_M, b.block_N,
                                config.bwdThreads, config.bwdStages, config.deterministic,
                                config.bwdWgmma, config.bwdDqTile, config.bwdConvertDq,
                                config.bwdDqMmaTiles, config.bwdProducer, config.bwdKeysFastest,
                                config.bwdPWhileDp, config.bwdPRegisters, dtype, config.bwdDqFirst);
  return flashattn_bwd(batch, heads, seq_len, dim, is_causal, b.block_M, b.block_N,
                       config.bwdThreads, config.bwdStages, config.deterministic, config.bwdDqTile,
                       config.bwdConvertDq, config.bwdDqMmaTiles, dtype);
}

dsl::Program preprocessKernel(int batch, int heads, int seq_len, int dim,
                              const AttentionConfig &config, dsl::DType dtype) {
  return flashattn_bwd_preprocess(batch, heads, seq_len, dim, 128, !config.bwdConvertDq, dtype);
}

dsl::Program postprocessKernel(int batch, int heads, int seq_len, int dim,
                               const AttentionConfig &config, dsl::DType dtype) {
  return flashattn_bwd_postprocess(batch, heads, seq_len, dim, 128,
                                   dqOrder(config.bwdDqTile, config.bwdDqMmaTiles), dtype);
}

namespace {

/// Q, K, V and dO: tensors of one [batch, seq, heads, dim] shape and one
/// element type, f16 or bf16, with a head dim the programs take.
void checkAttentionInputs(const HostTensor &Q, const HostTensor &K, const HostTensor &V,
                          const HostTensor &dO) {
  const std::vector<std::int64_t> &shape = Q.shape();
  if (shape.size() != 4)
    throw std::invalid_argument("attention: Q must be [batch, seq, heads, dim], got " +
                                runtime::formatShape(shape));
  for (auto [name, tensor] : {std::pair{"Q", &Q}, {"K", &K}, {"V", &V}, {"dO", &dO}}) {
    if (tensor->shape() != shape)
      throw std::invalid_argument(std::string("attention: ") + name + " is " +
                                  runtime::formatShape(tensor->shape()) + " but Q is " +
                                  runtime::formatShape(shape));
    if (tensor->dtype() != dsl::f16 && tensor->dtype() != dsl::bf16)
      throw std::invalid_argument(std::string("attention: ") + name + " must be f16 or bf16, got " +
                                  dsl::toString(tensor->dtype()));
    if (tensor->dtype() != Q.dtype())
      throw std::invalid_argument(std::string("attention: ") + name + " is " +
                                  std::string(dsl::toString(tensor->dtype())) + " but Q is " +
                                  dsl::toString(Q.dtype()));
  }
  for (std::int64_t extent : shape)
    if (extent < 1 || extent > std::numeric_limits<int>::max())
      throw std::invalid_argument("attention: every extent of " + runtime::formatShape(shape) +
                                  " must be between 1 and 2^31 - 1");
  if (!supportedHeadDim(static_cast<int>(shape[3])))
    throw std::invalid_argument("attention: head dim " + std::to_string(shape[3]) +
                                " is not supported (64, 128 or 256)");
}

} // namespace

AttentionResult attentionForwardBackward(HostTensor &Q, HostTensor &K, HostTensor &V,
                                         HostTensor &dO, bool causal, Backend backend,
                                         AttentionConfig config, Outputs outputs) {
  checkAttentionInputs(Q, K, V, dO);
  const std::vector<std::int64_t> &shape = Q.shape();
  int batch = static_cast<int>(shape[0]), seq = static_cast<int>(shape[1]);
  int heads = static_cast<int>(shape[2]), dim = static_cast<int>(shape[3]);
  const dsl::DType dtype = Q.dtype();
  auto fwd = compile(forwardKernel(batch, heads, seq, dim, causal, config, dtype), backend);
  const bool zeroDq = !config.bwdConvertDq; // by the preprocess (preprocessKernel)
  auto prep = compile(preprocessKernel(batch, heads, seq, dim, config, dtype), backend);
  auto bwd = compile(backwardKernel(batch, heads, seq, dim, causal, config, dtype), backend);
  std::unique_ptr<Kernel> post;
  if (!config.bwdConvertDq)
    post = compile(postprocessKernel(batch, heads, seq, dim, config, dtype), backend);

  std::optional<float> fill;
  if (outputs == Outputs::poisoned)
    fill = std::numeric_limits<float>::quiet_NaN();
  std::vector<HostTensor> o_lse = (*fwd)({&Q, &K, &V}, fill);
  // Zeros for a converting main kernel; the preprocess zeroes it otherwise
  // (from NaN when poisoned: every element must be zeroed).
  const std::vector<std::int64_t> accumulator = dqAccumulatorShape(batch, heads, seq, dim);
  HostTensor dQ(accumulator, dsl::f32);
  if (zeroDq && fill)
    dQ = HostTensor::fromFloat(accumulator, dsl::f32,
                               std::vector<float>(static_cast<std::size_t>(dQ.numel()), *fill));
  std::vector<HostTensor *> prepInputs = {&o_lse[0], &dO};
  if (zeroDq)
    prepInputs.push_back(&dQ);
  std::vector<HostTensor> delta = (*prep)(prepInputs, fill);
  std::vector<HostTensor *> bwdInputs = {&Q, &K, &V, &dO, &o_lse[1], &delta[0], &dQ};
  // Zeros; the deterministic backward's turns, the converting one's counts.
  const std::vector<std::int64_t> counters =
      dqTurnsShape(batch, heads, seq, backwardBlocks(dim, config).block_N);
  HostTensor dQTurns(counters, dsl::i32), dQCount(counters, dsl::i32);
  if (config.deterministic)
    bwdInputs.push_back(&dQTurns);
  if (config.bwdConvertDq)
    bwdInputs.push_back(&dQCount);
  std::vector<HostTensor> dk_dv = (*bwd)(bwdInputs, fill);
  std::vector<HostTensor> dq =
      config.bwdConvertDq ? std::vector<HostTensor>{dk_dv[2]} : (*post)({&dQ}, fill);
  return {o_lse[0], o_lse[1], dq[0], dk_dv[0], dk_dv[1]};
}

} // namespace tl::kernels::mha
