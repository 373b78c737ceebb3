// Benchmark (not a test): our flash-attention forward and backward on the
// GPU, at the shapes of shared/anchors.md (B*S = 16384, H*D = 2048) and the
// reference's own, causal and not. Kernel time only (CUDA events, median of
// 20 after 5 warm-ups); backward = preprocess + main kernel + postprocess.
// Prints one JSON object per line, like shared/bench/sdpa_peer.py, so the two
// can be joined into ratios.
//   tl-bench-gpu [--fwd M,N,THREADS,STAGES] [--bwd|--bwd-staged M,N,THREADS,STAGES]
//                [B,H,S,D ...]
// Without --fwd/--bwd it runs mha::tunedConfig (--bwd-staged: flashattn_bwd_staged).
#include "mha/attention.h"
#include "mha/mha.h"
#include "tl/runtime/GPUKernel.h"

#include <cstdio>
#include <cstdlib>
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
bool bwdStagedOverride = false; // --bwd-staged: flashattn_bwd_staged

void run(const Shape &s, bool causal) {
  mha::AttentionConfig c = mha::tunedConfig(s.D, causal, s.S);
  if (fwdOverride[0])
    c.fwdBlockM = fwdOverride[0], c.fwdBlockN = fwdOverride[1], c.fwdThreads = fwdOverride[2],
    c.fwdStages = fwdOverride[3];
  if (bwdOverride[0])
    c.bwdBlockM = bwdOverride[0], c.bwdBlockN = bwdOverride[1], c.bwdThreads = bwdOverride[2],
    c.bwdStages = bwdOverride[3], c.bwdStaged = bwdStagedOverride;
  std::vector<std::int64_t> shape = {s.B, s.S, s.H, s.D};
  std::vector<std::int64_t> rows = {s.B, s.H, s.S};
  GPUKernel fwd(mha::forwardKernel(s.B, s.H, s.S, s.D, causal, c));
  GPUKernel prep(mha::flashattn_bwd_preprocess(s.B, s.H, s.S, s.D));
  GPUKernel bwd(mha::backwardKernel(s.B, s.H, s.S, s.D, causal, c));
  GPUKernel post(mha::flashattn_bwd_postprocess(s.B, s.H, s.S, s.D));
  HostTensor Q = filled(shape, tl::dsl::f16), K = filled(shape, tl::dsl::f16),
             V = filled(shape, tl::dsl::f16), dO = filled(shape, tl::dsl::f16);
  HostTensor O(shape, tl::dsl::f16), lse(rows, tl::dsl::f32), delta(rows, tl::dsl::f32);
  HostTensor dQ(mha::dqAccumulatorShape(s.B, s.H, s.S, s.D), tl::dsl::f32),
      dQout(shape, tl::dsl::f16), dK(shape, tl::dsl::f16), dV(shape, tl::dsl::f16);
  double fwdMs = fwd.benchmark({&Q, &K, &V, &O, &lse});
  double prepMs = prep.benchmark({&O, &dO, &delta});
  double mainMs = bwd.benchmark({&Q, &K, &V, &dO, &lse, &delta, &dQ, &dK, &dV});
  double postMs = post.benchmark({&dQ, &dQout});
  double bwdMs = prepMs + mainMs + postMs;
  double flops = 4.0 * s.B * s.H * double(s.S) * s.S * s.D / (causal ? 2 : 1);
  std::printf("{\"peer\": \"tlc\", \"B\": %d, \"H\": %d, \"S\": %d, \"D\": %d, \"causal\": %d, "
              "\"fwd_ms\": %.4f, \"bwd_ms\": %.4f, \"bwd_parts_ms\": [%.4f, %.4f, %.4f], "
              "\"fwd_tflops\": %.2f, \"bwd_tflops\": %.2f, "
              "\"fwd_layout\": \"%s\", \"bwd_layout\": \"%s\", \"fwd_config\": \"%dx%d/%d/s%d\", "
              "\"bwd_config\": \"%s%dx%d/%d/s%d\"}\n",
              s.B, s.H, s.S, s.D, causal ? 1 : 0, fwdMs, bwdMs, prepMs, mainMs, postMs,
              flops / fwdMs * 1e-9, 2.5 * flops / bwdMs * 1e-9, fwd.binary().fragmentLayout.c_str(),
              bwd.binary().fragmentLayout.c_str(), c.fwdBlockM, c.fwdBlockN, c.fwdThreads,
              c.fwdStages, c.bwdStaged ? "staged " : "", c.bwdBlockM, c.bwdBlockN, c.bwdThreads,
              c.bwdStages);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
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
          "usage: tl-bench-gpu [--fwd M,N,T,S] [--bwd|--bwd-staged M,N,T,S] [B,H,S,D ...]\n");
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
