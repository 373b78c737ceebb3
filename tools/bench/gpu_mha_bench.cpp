// Benchmark (not a test): our flash-attention forward and backward on the
// GPU, at the shapes of shared/anchors.md (B*S = 16384, H*D = 2048) and the
// reference's own, causal and not. The backward is the preprocess (which
// zeroes the dQ accumulator, as FlashAttention-2's does), the main kernel and
// the postprocess (none, and no zeroing, when the main kernel converts dQ
// itself and leaves the accumulator zero). Two timings of each:
// - fwd_ms_queued, bwd_ms_queued: as sdpa_peer.py times the peers
//   (triton.testing.do_bench; tl::runtime::timeQueuedColdL2): L2 flushed before
//   each repeat, the backward's kernels queued back to back, the median. The
//   ratios against the peers use these.
// - fwd_ms, bwd_ms (= the sum of bwd_parts_ms): each kernel alone, an event
//   pair around one launch and a wait after it (GPUKernel::benchmark, median
//   of 20 after 5 warm-ups), on a warm L2. They count the host's launch
//   latency (a few microseconds a kernel) and are what results/ quoted up to
//   session 21.
// Prints one JSON object per line, like shared/bench/sdpa_peer.py, so the two
// can be joined into ratios.
//   tl-bench-gpu [--fwd M,N,THREADS,STAGES] [--bwd|--bwd-staged M,N,THREADS,STAGES]
//                [--autotune[=forward|backward]] [--autotune-warm] [--deterministic]
//                [--stage-o=0|1]
//                [--overlap=0|1] [--pingpong=0|1] [--fwd-producer=0|1] [--bwd-wgmma=0|1]
//                [--bwd-producer=0|1] [--dq-tile=0|1]
//                [--convert-dq=0|1] [--dq-mma-tiles=0|1] [--bwd-keys-fastest=0|1]
//                [--bwd-p-while-dp=0|1] [--bwd-p-registers=0|1] [--bwd-dq-first=0|1] [--bf16]
//                [--causal=0|1] [B,H,S,D ...]
// Without --fwd/--bwd it runs mha::tunedConfig (--bwd-staged: flashattn_bwd_staged); --fwd
// changes the forward's blocks, threads and stages only: its loop, producer warpgroup, pingpong
// and O tile stay tunedConfig's for the shape (D = 64 from S = 4096: the producer and pingpong)
// unless the flags below set them.
// --bwd-wgmma=0|1: the staged backward's gemms on wgmma or not (AttentionConfig::bwdWgmma).
// --bwd-producer=0|1: the staged backward's loads by a producer warpgroup or by its own threads
// (AttentionConfig::bwdProducer).
// --dq-tile=0|1: the backward adds dQ a tile at a time or an element at a time
// (AttentionConfig::bwdDqTile).
// --convert-dq=0|1: the backward's main kernel converts dQ to f16 itself (the last key block
// to add into a query block's rows) or the postprocess does (AttentionConfig::bwdConvertDq).
// --dq-mma-tiles=0|1: the dQ accumulator in accumulator tile order, added a gemm accumulator at
// a time (sm_90a: 16-byte vector reductions), or the reference's (AttentionConfig::bwdDqMmaTiles).
// --bwd-keys-fastest=0|1: the staged backward's grid numbers key blocks fastest or heads
// (AttentionConfig::bwdKeysFastest).
// --bwd-p-while-dp=0|1: the staged wgmma backward computes P while its dP gemm runs or after
// (AttentionConfig::bwdPWhileDp).
// --bwd-p-registers=0|1: the staged wgmma backward's dV gemm takes P from registers or from a
// shared tile (AttentionConfig::bwdPRegisters).
// --bwd-dq-first=0|1: the staged wgmma backward issues its dQ gemm first and waits for it alone
// (dQ's hand-over overlapping the dV and dK gemms) or last, the three waited for together
// (AttentionConfig::bwdDqFirst).
// --deterministic: the backward sums dQ in key-block order (mha::deterministicConfig).
// --bf16: Q, K, V, dO and the outputs in bf16, not f16 (the peers stay f16).
// --causal=0|1: only the non-causal or only the causal runs (both by default), so that a
// profiler's first launch of a kernel is the one wanted.
// --stage-o=0|1: the forward writes O through a shared tile or not (AttentionConfig::fwdStageO).
// --overlap=0|1: the forward's loop in FlashAttention-3's order or not
// (AttentionConfig::fwdOverlap).
// --pingpong=0|1: the forward's warpgroups issue its gemms in turn or not
// (AttentionConfig::fwdPingpong).
// --fwd-producer=0|1: the forward's K and V loaded by a producer warpgroup or not
// (AttentionConfig::fwdProducer).
// --autotune: tl::autotune picks the forward's and the backward main kernel's
// configurations (=forward, =backward: one of them) per shape from the spaces below (every
// candidate's time is printed, "peer": "tlc-candidate"), then the winners run as above.
// It times the candidates from a cold L2 (AutotuneOptions::coldL2), as the peers are timed;
// --autotune-warm: on a warm L2, as up to session 21.
#include "BenchArgs.h"
#include "mha/attention.h"
#include "mha/mha.h"
#include "tl/runtime/Autotune.h"
#include "tl/runtime/DeviceTensor.h"
#include "tl/runtime/GPUKernel.h"
#include "tl/runtime/QueuedTiming.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using tl::runtime::GPUKernel;
using tl::runtime::HostTensor;
namespace mha = tl::kernels::mha;

struct Shape {
  int B, H, S, D;
};

HostTensor filled(const std::vector<std::int64_t> &shape, tl::dsl::DType dtype) {
  HostTensor t(shape, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f);
  return t;
}

int fwdOverride[4] = {0, 0, 0, 0}, bwdOverride[4] = {0, 0, 0, 0}; // M,N,THREADS,STAGES
bool bwdStagedOverride = false;                         // --bwd-staged: flashattn_bwd_staged
tl::dsl::DType elementType = tl::dsl::f16;              // --bf16: bf16
bool autotuneForward = false, autotuneBackward = false; // --autotune[=forward|backward]
bool deterministic = false; // --deterministic: dQ summed in key-block order
bool coldL2Autotune = true; // --autotune-warm: the autotuner times on a warm L2 (as before)
int causalOnly = -1;        // --causal=0|1: one of the two masks only
int stageO = -1;            // --stage-o=0|1: the forward's O through a shared tile or not
int overlap = -1;           // --overlap=0|1: the forward's softmax overlapping its P V gemm or not
int pingpong = -1;          // --pingpong=0|1: the forward's warpgroups issuing its gemms in turn
int fwdProducer = -1;       // --fwd-producer=0|1: the forward's loads by a producer warpgroup
int bwdWgmma = -1;          // --bwd-wgmma=0|1: the staged backward's gemms on wgmma or not
int bwdProducer = -1; // --bwd-producer=0|1: the staged backward's loads by a producer warpgroup
int dqTile = -1;            // --dq-tile=0|1: dQ added a tile at a time or not
int convertDq = -1;         // --convert-dq=0|1: the main kernel converts dQ or the postprocess
int dqMmaTiles = -1;        // --dq-mma-tiles=0|1: dQ in accumulator tile order or the reference's
int keysFastest = -1; // --bwd-keys-fastest=0|1: the staged backward's grid, key blocks fastest
int pWhileDp = -1;    // --bwd-p-while-dp=0|1: P while the dP gemm runs, or after
int pRegisters = -1;  // --bwd-p-registers=0|1: dV's gemm takes P from registers or shared
int dqFirst = -1;     // --bwd-dq-first=0|1: the dQ gemm first, waited for alone, or last

mha::AttentionConfig fwd(int m, int n, int threads, int stages, bool wgmma = false,
                         bool producer = false) {
  mha::AttentionConfig c;
  c.fwdBlockM = m, c.fwdBlockN = n, c.fwdThreads = threads, c.fwdStages = stages;
  c.fwdWgmma = wgmma, c.fwdProducer = producer;
  c.fwdStageO = wgmma && !producer; // (tunedConfig's forwards: the tile but D = 64 causal long)
  return c;
}

/// A wgmma forward whose loop takes FlashAttention-3's order (fwdOverlap).
mha::AttentionConfig fwdOverlapped(int m, int n, int threads, int stages, bool producer = false) {
  mha::AttentionConfig c = fwd(m, n, threads, stages, true, producer);
  c.fwdOverlap = true;
  return c;
}

/// `c` with O through a shared tile (fwdStageO; with a producer warpgroup).
mha::AttentionConfig withStageO(mha::AttentionConfig c) {
  c.fwdStageO = true;
  return c;
}

/// `c` with its warpgroups issuing the loop's gemms in turn (fwdPingpong).
mha::AttentionConfig fwdPingpong(mha::AttentionConfig c) {
  c.fwdPingpong = true;
  return c;
}

mha::AttentionConfig bwd(int m, int n, int threads, int stages, bool staged = true,
                         bool wgmma = false) {
  mha::AttentionConfig c;
  c.bwdBlockM = m, c.bwdBlockN = n, c.bwdThreads = threads, c.bwdStages = stages;
  c.bwdStaged = staged, c.bwdWgmma = wgmma;
  return c;
}

/// The staged backward with its gemms on wgmma (bwdWgmma), its loads by a
/// producer warpgroup or not (bwdProducer).
mha::AttentionConfig bwdWgmmaStaged(int m, int n, int threads, int stages, bool producer = false,
                                    bool dqTile = false, bool keysFastest = false) {
  mha::AttentionConfig c = bwd(m, n, threads, stages, true, true);
  c.bwdProducer = producer, c.bwdDqTile = dqTile, c.bwdKeysFastest = keysFastest;
  return c;
}

/// The forward configurations --autotune tries for a head dim: those the
/// earlier sweeps measured best or close (results/), the forward with its
/// gemms on wgmma (RS for P V; O through a shared tile, stage_O), that with a
/// producer warpgroup loading K and V (use_producer_warpgroup), and the
/// wgmma forward in FlashAttention-3's order (fwdOverlap) at the blocks that
/// fit its registers without spilling. Since session 27 also the plain wgmma
/// loop two stages ahead and, at D = 64, on 32- and 128-key blocks (for the
/// short lengths, where the plain 64x64 won; by hand, ptxas gave them 74-126
/// registers and no spills at 8,32,256,D on sm_90a; the autotuner prints a
/// candidate's spill warning or error where that changes). Since session 30
/// at D = 64 FlashAttention-3's blocks too: 192 query rows on three
/// warpgroups, 128 keys, plain, overlapped, with a producer warpgroup (512
/// threads, consumers at 160 registers), in pingpong, and so with O through the
/// shared tile (ptxas: no spills at S = 1000; PTXTest checks the tuned ones at
/// long lengths).
std::vector<mha::AttentionConfig> forwardSpace(int D) {
  if (D == 64)
    return {fwdOverlapped(64, 64, 128, 1),
            fwdOverlapped(64, 96, 128, 1),
            fwdOverlapped(64, 128, 128, 1),
            fwdOverlapped(128, 64, 256, 1),
            fwdOverlapped(128, 128, 256, 1),
            fwdOverlapped(64, 64, 128, 2),
            fwd(128, 64, 128, 1),
            fwd(64, 64, 128, 1),
            fwd(128, 64, 256, 1),
            fwd(128, 32, 256, 1),
            fwd(64, 64, 128, 2),
            fwd(64, 32, 128, 1),
            fwd(128, 64, 128, 1, true),
            fwd(128, 128, 256, 1, true),
            fwd(128, 64, 256, 1, true),
            fwd(64, 64, 128, 1, true),
            fwd(64, 64, 128, 2, true),
            fwd(64, 32, 128, 1, true),
            fwd(64, 128, 128, 1, true),
            fwd(64, 64, 128, 2, true, true),
            fwd(64, 64, 128, 3, true, true),
            fwdPingpong(fwd(128, 64, 256, 1, true)),
            fwdPingpong(fwdOverlapped(128, 128, 256, 1)),
            fwdPingpong(fwd(128, 128, 256, 2, true, true)),
            fwd(192, 128, 384, 1, true),
            fwdOverlapped(192, 128, 384, 1),
            fwdOverlapped(192, 128, 384, 1, true),
            fwdPingpong(fwdOverlapped(192, 128, 384, 1, true)),
            withStageO(fwdPingpong(fwdOverlapped(192, 128, 384, 1, true)))};
  if (D == 128)
    return {fwdOverlapped(64, 64, 128, 1),
            fwdOverlapped(64, 48, 128, 1),
            fwdOverlapped(64, 32, 128, 1),
            fwdOverlapped(64, 32, 128, 2),
            fwdOverlapped(64, 48, 128, 2),
            fwdOverlapped(64, 96, 128, 1),
            fwdOverlapped(64, 128, 128, 1),
            fwdOverlapped(128, 64, 256, 1),
            fwdOverlapped(128, 128, 256, 1),
            fwdOverlapped(128, 128, 256, 2),
            fwdOverlapped(64, 64, 128, 2),
            fwdOverlapped(128, 64, 256, 2),
            fwd(128, 32, 128, 1),
            fwd(128, 64, 128, 1),
            fwd(64, 64, 128, 1),
            fwd(128, 64, 256, 1),
            fwd(128, 32, 256, 1),
            fwd(64, 32, 128, 1),
            fwd(128, 32, 128, 1, true),
            fwd(128, 64, 128, 1, true),
            fwd(128, 64, 256, 1, true),
            fwd(128, 128, 256, 1, true),
            fwd(128, 64, 256, 2, true),
            fwd(64, 64, 128, 1, true),
            fwd(64, 64, 128, 2, true),
            fwd(64, 64, 128, 2, true, true),
            fwd(64, 64, 128, 3, true, true),
            fwd(128, 64, 256, 2, true, true),
            fwd(128, 128, 256, 2, true, true),
            fwdPingpong(fwd(128, 64, 256, 2, true, true)),
            fwdPingpong(fwd(128, 128, 256, 2, true, true)),
            fwdPingpong(fwd(128, 64, 256, 1, true)),
            fwdPingpong(fwdOverlapped(128, 64, 256, 1)),
            fwdPingpong(fwdOverlapped(128, 128, 256, 1)),
            fwdOverlapped(128, 64, 256, 2, true),
            fwdOverlapped(128, 128, 256, 1, true),
            fwdPingpong(fwdOverlapped(128, 64, 256, 2, true)),
            fwdPingpong(fwdOverlapped(128, 128, 256, 1, true))};
  return {fwdOverlapped(128, 64, 256, 1),
          fwdOverlapped(64, 64, 128, 1),
          fwdOverlapped(128, 32, 256, 1),
          fwdOverlapped(64, 32, 128, 1),
          fwd(128, 64, 256, 1),
          fwd(64, 64, 128, 1),
          fwd(128, 32, 256, 1),
          fwd(64, 32, 128, 2),
          fwd(128, 64, 256, 1, true),
          fwd(64, 64, 128, 1, true),
          fwd(128, 32, 256, 1, true),
          fwd(128, 64, 256, 1, true, true),
          fwdPingpong(fwdOverlapped(128, 64, 256, 1)),
          fwdPingpong(fwd(128, 64, 256, 1, true)),
          fwdPingpong(fwd(128, 64, 256, 1, true, true)),
          fwdOverlapped(128, 64, 256, 1, true),
          fwdPingpong(fwdOverlapped(128, 64, 256, 1, true))};
}

/// The backward main kernel's configurations --autotune tries for a head dim
/// (flashattn_bwd_staged; `false`: the reference's flashattn_bwd), the
/// staged one on wgmma at the blocks that fit without spilling (ptxas -v), with
/// a producer warpgroup, and with dQ handed to it as a tile (one stage: no room
/// for the tile with two; not at D = 256); the last ones again with the grid's
/// key blocks fastest (bwdKeysFastest). FlashAttention-3's loop orders (P
/// while dP runs, bwdPWhileDp; P in registers, bwdPRegisters) are not here:
/// at these blocks they made the main kernel 1-19% (P while dP) and up to
/// 18% (P in registers; level at D = 128 causal) slower on the H200 at the
/// shapes timed (results/2026-12-05-h200-session32.md);
/// --bwd-p-while-dp=1 and --bwd-p-registers=1 time them.
std::vector<mha::AttentionConfig> backwardSpace(int D) {
  if (D == 64)
    return {bwd(128, 128, 256, 1),
            bwd(128, 64, 256, 1),
            bwd(128, 64, 256, 2),
            bwd(64, 64, 128, 2),
            bwd(64, 32, 128, 1, false),
            bwd(64, 64, 128, 1, false),
            bwdWgmmaStaged(64, 64, 128, 1),
            bwdWgmmaStaged(64, 64, 128, 2),
            bwdWgmmaStaged(128, 128, 256, 1),
            bwdWgmmaStaged(128, 64, 256, 1),
            bwdWgmmaStaged(128, 128, 256, 1, true),
            bwdWgmmaStaged(128, 128, 256, 2, true),
            bwdWgmmaStaged(128, 128, 256, 1, true, true),
            bwdWgmmaStaged(128, 128, 256, 1, false, false, true),
            bwdWgmmaStaged(128, 128, 256, 1, true, true, true)};
  // The staged 64x64 blocks on 128 threads: at D = 256 their fragments hold
  // 384 registers a thread at once, so their gemms fall back to the CUDA
  // cores, as tlc warns (614 ms against 4 at D = 128, S = 4096, when D = 128
  // went so too). At D = 128 they hold 256 in all but at most 192 at once:
  // since session 31 (tl-infer-layouts counting the registers live at once)
  // mma.sync, no spills (ptxas, sm_80 and sm_90a): a candidate, not yet timed.
  if (D == 128)
    return {bwd(64, 64, 128, 1),
            bwd(128, 64, 256, 2),
            bwd(128, 64, 256, 1),
            bwd(128, 128, 256, 1),
            bwd(64, 32, 128, 1, false),
            bwdWgmmaStaged(128, 64, 256, 1),
            bwdWgmmaStaged(128, 64, 256, 1, true),
            bwdWgmmaStaged(128, 64, 256, 2, true),
            bwdWgmmaStaged(128, 64, 256, 1, true, true),
            bwdWgmmaStaged(128, 64, 256, 1, true, true, true)};
  return {bwd(64, 64, 256, 1),
          bwd(64, 32, 256, 2),
          bwd(32, 32, 256, 1),
          bwdWgmmaStaged(64, 64, 256, 1),
          bwdWgmmaStaged(64, 64, 256, 1, true),
          bwdWgmmaStaged(64, 64, 256, 1, true, false, true)};
}

std::string forwardText(const mha::AttentionConfig &c) {
  return std::to_string(c.fwdBlockM) + "x" + std::to_string(c.fwdBlockN) + "/" +
         std::to_string(c.fwdThreads) + "/s" + std::to_string(c.fwdStages) +
         (c.fwdWgmma ? " wgmma" : "") + (c.fwdProducer ? " producer" : "") +
         (c.fwdStageO ? " stage-O" : "") + (c.fwdOverlap ? " overlap" : "") +
         (c.fwdPingpong ? " pingpong" : "");
}

std::string backwardText(const mha::AttentionConfig &c) {
  return std::string(c.bwdStaged ? "staged " : "") + std::to_string(c.bwdBlockM) + "x" +
         std::to_string(c.bwdBlockN) + "/" + std::to_string(c.bwdThreads) + "/s" +
         std::to_string(c.bwdStages) + (c.bwdStaged && c.bwdWgmma ? " wgmma" : "") +
         (c.bwdProducer ? " producer" : "") + (c.bwdDqTile ? " dq-tile" : "") +
         (c.bwdConvertDq ? " convert-dq" : "") +
         (c.bwdDqMmaTiles && !c.bwdDqTile ? " dq-mma-tiles" : "") +
         (c.bwdStaged && c.bwdKeysFastest ? " keys-fastest" : "") +
         (c.bwdStaged && c.bwdWgmma && c.bwdPWhileDp ? " p-while-dp" : "") +
         (c.bwdStaged && c.bwdWgmma && c.bwdPRegisters ? " p-registers" : "") +
         (c.bwdStaged && c.bwdWgmma && c.bwdDqFirst ? " dq-first" : "");
}

/// tl::autotune over `space` for one kernel; prints every candidate's time
/// (or error) and returns the winner's configuration.
template <typename Generator>
mha::AttentionConfig tuned(const char *kernel, const Shape &s, bool causal,
                           const std::vector<mha::AttentionConfig> &space, Generator generator,
                           const std::vector<HostTensor *> &inputs,
                           std::string (*text)(const mha::AttentionConfig &)) {
  // Timed as the peers are (cold L2) unless --autotune-warm.
  tl::AutotuneOptions options{
      .target = tl::Target::gpu, .warmup = 5, .repeats = 20, .coldL2 = coldL2Autotune};
  tl::AutotuneResult result = tl::autotune(generator, space, inputs, options);
  for (std::size_t i = 0; i < result.timings.size(); ++i) {
    const tl::AutotuneTiming &t = result.timings[i];
    std::printf("{\"peer\": \"tlc-candidate\", \"kernel\": \"%s\", \"B\": %d, \"H\": %d, "
                "\"S\": %d, \"D\": %d, \"causal\": %d, \"config\": \"%s\", ",
                kernel, s.B, s.H, s.S, s.D, causal ? 1 : 0, text(space[i]).c_str());
    if (t.error.empty())
      std::printf("\"ms\": %.4f, \"best\": %s}\n", t.ms, i == result.best ? "true" : "false");
    else
      std::printf("\"error\": \"%s\"}\n", tl::bench::jsonEscaped(t.error).c_str());
  }
  std::fflush(stdout);
  return space[result.best];
}

void run(const Shape &s, bool causal) {
  mha::AttentionConfig c = mha::tunedConfig(s.D, causal, s.S);
  if (fwdOverride[0])
    c.fwdBlockM = fwdOverride[0], c.fwdBlockN = fwdOverride[1], c.fwdThreads = fwdOverride[2],
    c.fwdStages = fwdOverride[3];
  auto overrideBackward = [](mha::AttentionConfig &x) { // --bwd / --bwd-staged
    x.bwdBlockM = bwdOverride[0], x.bwdBlockN = bwdOverride[1], x.bwdThreads = bwdOverride[2],
    x.bwdStages = bwdOverride[3], x.bwdStaged = bwdStagedOverride;
  };
  if (bwdOverride[0])
    overrideBackward(c);
  std::vector<std::int64_t> shape = {s.B, s.S, s.H, s.D};
  std::vector<std::int64_t> rows = {s.B, s.H, s.S};
  const tl::dsl::DType dt = elementType;
  HostTensor Q = filled(shape, dt), K = filled(shape, dt), V = filled(shape, dt),
             dO = filled(shape, dt);
  HostTensor O(shape, dt), lse(rows, tl::dsl::f32), delta(rows, tl::dsl::f32);
  HostTensor dQ(mha::dqAccumulatorShape(s.B, s.H, s.S, s.D), tl::dsl::f32), dQout(shape, dt),
      dK(shape, dt), dV(shape, dt);
  if (autotuneForward) {
    mha::AttentionConfig f = tuned(
        "fwd", s, causal, forwardSpace(s.D),
        [&](const mha::AttentionConfig &x) {
          return mha::forwardKernel(s.B, s.H, s.S, s.D, causal, x, dt);
        },
        {&Q, &K, &V}, forwardText);
    c.fwdBlockM = f.fwdBlockM, c.fwdBlockN = f.fwdBlockN, c.fwdThreads = f.fwdThreads,
    c.fwdStages = f.fwdStages, c.fwdWgmma = f.fwdWgmma, c.fwdProducer = f.fwdProducer,
    c.fwdStageO = f.fwdStageO, c.fwdOverlap = f.fwdOverlap, c.fwdPingpong = f.fwdPingpong;
  }
  if (autotuneBackward) {
    // Each candidate takes dQ first where tunedConfig would (on wgmma from S = 1024).
    std::vector<mha::AttentionConfig> space = backwardSpace(s.D);
    for (mha::AttentionConfig &x : space)
      x.bwdDqFirst = mha::takesDqFirst(x, s.S);
    mha::AttentionConfig b = tuned(
        "bwd", s, causal, space,
        [&](const mha::AttentionConfig &x) {
          return mha::backwardKernel(s.B, s.H, s.S, s.D, causal, x, dt);
        },
        {&Q, &K, &V, &dO, &lse, &delta, &dQ}, backwardText);
    c.bwdBlockM = b.bwdBlockM, c.bwdBlockN = b.bwdBlockN, c.bwdThreads = b.bwdThreads,
    c.bwdStages = b.bwdStages, c.bwdStaged = b.bwdStaged, c.bwdWgmma = b.bwdWgmma;
    c.bwdProducer = b.bwdProducer, c.bwdDqTile = b.bwdDqTile, c.bwdKeysFastest = b.bwdKeysFastest;
    c.bwdPWhileDp = b.bwdPWhileDp, c.bwdPRegisters = b.bwdPRegisters;
    c.bwdDqFirst = b.bwdDqFirst;
  }
  // --deterministic after --autotune (its candidates are not): the consumers'
  // dQ tiles dropped unless --dq-tile=1 (below). --bwd keeps the reference's
  // program as asked, in turns (deterministicConfig would restage it at D = 64).
  if (deterministic) {
    c = mha::deterministicConfig(c, s.D, causal, s.S, "sm_90a");
    if (bwdOverride[0] && !bwdStagedOverride) {
      overrideBackward(c);
      c.bwdWgmma = false, c.bwdProducer = false, c.bwdDqTile = false;
    }
  }
  if (stageO >= 0) // after --autotune: the flags decide
    c.fwdStageO = stageO == 1;
  if (overlap >= 0)
    c.fwdOverlap = overlap == 1;
  if (pingpong >= 0)
    c.fwdPingpong = pingpong == 1;
  if (fwdProducer >= 0)
    c.fwdProducer = fwdProducer == 1;
  if (bwdWgmma >= 0)
    c.bwdWgmma = bwdWgmma == 1;
  if (bwdProducer >= 0)
    c.bwdProducer = bwdProducer == 1;
  if (dqTile >= 0)
    c.bwdDqTile = dqTile == 1;
  if (convertDq >= 0)
    c.bwdConvertDq = convertDq == 1;
  if (dqMmaTiles >= 0)
    c.bwdDqMmaTiles = dqMmaTiles == 1;
  if (keysFastest >= 0)
    c.bwdKeysFastest = keysFastest == 1;
  if (pWhileDp >= 0)
    c.bwdPWhileDp = pWhileDp == 1;
  if (pRegisters >= 0)
    c.bwdPRegisters = pRegisters == 1;
  if (dqFirst >= 0)
    c.bwdDqFirst = dqFirst == 1;
  // tunedConfig's dQ tile is the producer's to add: where the flags take away
  // what it needs (mha::producerTakesDqTile) or ask for adds in accumulator
  // tile order, it goes too, unless --dq-tile asks for it.
  if (dqTile < 0 && c.bwdDqTile && (!mha::producerTakesDqTile(c, s.D, s.S) || c.bwdDqMmaTiles))
    c.bwdDqTile = false;
  GPUKernel fwd(mha::forwardKernel(s.B, s.H, s.S, s.D, causal, c, dt));
  GPUKernel prep(mha::preprocessKernel(s.B, s.H, s.S, s.D, c, dt)); // zeroes dQ, or not
  GPUKernel bwd(mha::backwardKernel(s.B, s.H, s.S, s.D, causal, c, dt));
  double fwdMs = fwd.benchmark({&Q, &K, &V, &O, &lse});
  double prepMs =
      c.bwdConvertDq ? prep.benchmark({&O, &dO, &delta}) : prep.benchmark({&O, &dO, &dQ, &delta});
  // The deterministic backward's turn counters and the converting one's
  // arrival counters: zeros, and zeros again after every launch (the last
  // turn or arrival resets each), so launches repeat.
  const std::vector<std::int64_t> counters =
      mha::dqTurnsShape(s.B, s.H, s.S, mha::backwardBlocks(s.D, c).block_N);
  HostTensor dQTurns(counters, tl::dsl::i32), dQCount(counters, tl::dsl::i32);
  std::vector<HostTensor *> bwdArgs = {&Q, &K, &V, &dO, &lse, &delta, &dQ};
  if (c.deterministic)
    bwdArgs.push_back(&dQTurns);
  if (c.bwdConvertDq)
    bwdArgs.push_back(&dQCount);
  bwdArgs.insert(bwdArgs.end(), {&dK, &dV});
  if (c.bwdConvertDq)
    bwdArgs.push_back(&dQout);
  double mainMs = bwd.benchmark(bwdArgs);
  double postMs = 0;
  std::unique_ptr<GPUKernel> post;
  if (!c.bwdConvertDq) {
    post = std::make_unique<GPUKernel>(mha::postprocessKernel(s.B, s.H, s.S, s.D, c, dt));
    postMs = post->benchmark({&dQ, &dQout});
  }
  double bwdMs = prepMs + mainMs + postMs;

  // As the peers are timed (QueuedTiming.h): from a cold L2, the backward's
  // kernels queued back to back.
  tl::runtime::DeviceCopies device(
      {&Q, &K, &V, &O, &lse, &dO, &delta, &dQ, &dQTurns, &dQCount, &dK, &dV, &dQout});
  double fwdQueuedMs = tl::runtime::timeQueuedColdL2({{&fwd, device.of({&Q, &K, &V, &O, &lse})}});
  std::vector<tl::runtime::QueuedLaunch> backward = {
      {&prep, device.of(c.bwdConvertDq ? std::vector<HostTensor *>{&O, &dO, &delta}
                                       : std::vector<HostTensor *>{&O, &dO, &dQ, &delta})},
      {&bwd, device.of(bwdArgs)}};
  if (post)
    backward.push_back({post.get(), device.of({&dQ, &dQout})});
  double bwdQueuedMs = tl::runtime::timeQueuedColdL2(backward);
  double flops = 4.0 * s.B * s.H * double(s.S) * s.S * s.D / (causal ? 2 : 1);
  std::printf("{\"peer\": \"tlc\", \"dtype\": \"%s\", \"B\": %d, \"H\": %d, \"S\": %d, "
              "\"D\": %d, \"causal\": %d, "
              "\"fwd_ms\": %.4f, \"bwd_ms\": %.4f, \"bwd_parts_ms\": [%.4f, %.4f, %.4f], "
              "\"fwd_ms_queued\": %.4f, \"bwd_ms_queued\": %.4f, "
              "\"fwd_tflops\": %.2f, \"bwd_tflops\": %.2f, "
              "\"fwd_layout\": \"%s\", \"bwd_layout\": \"%s\", \"fwd_config\": \"%s\", "
              "\"bwd_config\": \"%s\", \"deterministic\": %s, \"autotuned\": %s}\n",
              tl::dsl::toString(dt), s.B, s.H, s.S, s.D, causal ? 1 : 0, fwdMs, bwdMs, prepMs,
              mainMs, postMs, fwdQueuedMs, bwdQueuedMs, flops / fwdMs * 1e-9,
              2.5 * flops / bwdMs * 1e-9, fwd.binary().fragmentLayout.c_str(),
              bwd.binary().fragmentLayout.c_str(), forwardText(c).c_str(), backwardText(c).c_str(),
              c.deterministic ? "true" : "false",
              autotuneForward && autotuneBackward ? "\"both\""
              : autotuneForward                   ? "\"forward\""
              : autotuneBackward                  ? "\"backward\""
                                                  : "false");
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--autotune" || arg == "--autotune=forward" || arg == "--autotune=backward") {
      autotuneForward = arg != "--autotune=backward";
      autotuneBackward = arg != "--autotune=forward";
      continue;
    }
    if (arg == "--autotune-warm") {
      coldL2Autotune = false;
      continue;
    }
    if (arg == "--deterministic") {
      deterministic = true;
      continue;
    }
    if (arg == "--bf16") {
      elementType = tl::dsl::bf16;
      continue;
    }
    const std::pair<std::string, int *> switches[] = {
        {"--stage-o", &stageO},           {"--overlap", &overlap},
        {"--pingpong", &pingpong},        {"--fwd-producer", &fwdProducer},
        {"--dq-tile", &dqTile},           {"--convert-dq", &convertDq},
        {"--bwd-wgmma", &bwdWgmma},       {"--dq-mma-tiles", &dqMmaTiles},
        {"--bwd-producer", &bwdProducer}, {"--bwd-keys-fastest", &keysFastest},
        {"--bwd-p-while-dp", &pWhileDp},  {"--bwd-p-registers", &pRegisters},
        {"--bwd-dq-first", &dqFirst},     {"--causal", &causalOnly}};
    auto flag = std::find_if(std::begin(switches), std::end(switches), [&](const auto &s) {
      return arg == s.first + "=0" || arg == s.first + "=1";
    });
    if (flag != std::end(switches)) {
      *flag->second = arg.back() - '0';
      continue;
    }
    if ((arg == "--fwd" || arg == "--bwd" || arg == "--bwd-staged") && i + 1 < argc) {
      int *o = arg == "--fwd" ? fwdOverride : bwdOverride;
      bwdStagedOverride = bwdStagedOverride || arg == "--bwd-staged";
      if (std::sscanf(argv[++i], "%d,%d,%d,%d", &o[0], &o[1], &o[2], &o[3]) == 4)
        continue;
      std::fprintf(stderr, "tl-bench-gpu: %s wants M,N,THREADS,STAGES\n", arg.c_str());
      return 2;
    }
    Shape s{};
    if (std::sscanf(argv[i], "%d,%d,%d,%d", &s.B, &s.H, &s.S, &s.D) != 4) {
      std::fprintf(
          stderr,
          "usage: tl-bench-gpu [--fwd M,N,T,S] [--bwd|--bwd-staged M,N,T,S] "
          "[--autotune[=forward|backward]] [--autotune-warm] [--deterministic] "
          "[--stage-o=0|1] [--overlap=0|1] [--pingpong=0|1] [--fwd-producer=0|1] [--bwd-wgmma=0|1] "
          "[--bwd-producer=0|1] [--dq-tile=0|1] "
          "[--convert-dq=0|1] [--dq-mma-tiles=0|1] [--bwd-keys-fastest=0|1] "
          "[--bwd-p-while-dp=0|1] [--bwd-p-registers=0|1] [--bwd-dq-first=0|1] [--bf16] "
          "[--causal=0|1] [B,H,S,D ...]\n");
      return 2;
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) // shared/anchors.md, then the reference test's shape
    shapes = {{16, 32, 1024, 64}, {4, 32, 4096, 64},   {1, 32, 16384, 64}, {16, 16, 1024, 128},
              {4, 16, 4096, 128}, {1, 16, 16384, 128}, {8, 32, 256, 64}};
  int failures = 0;
  for (const Shape &s : shapes)
    for (bool causal : {false, true})
      try {
        if (causalOnly >= 0 && causal != (causalOnly == 1))
          continue;
        run(s, causal);
      } catch (const std::exception &error) { // report it, go on with the next shape
        ++failures;
        std::printf("{\"peer\": \"tlc\", \"B\": %d, \"H\": %d, \"S\": %d, \"D\": %d, "
                    "\"causal\": %d, \"error\": \"see stderr\"}\n",
                    s.B, s.H, s.S, s.D, causal ? 1 : 0);
        std::fprintf(stderr, "%s\n", error.what());
      }
  return failures ? 1 : 0;
}
