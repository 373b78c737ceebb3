// Benchmark (not a test): our flash-attention forward and backward on the
// GPU, at the shapes of shared/anchors.md (B*S = 16384, H*D = 2048) and the
// reference's own, causal and not. Kernel time only (CUDA events, median of
// 20 after 5 warm-ups); backward = preprocess + main kernel + postprocess.
// Prints one JSON object per line, like shared/bench/sdpa_peer.py, so the two
// can be joined into ratios.
//   tl-bench-gpu [--bwd M,N,THREADS] [B,H,S,D ...]
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

/// The configuration measured here: 4 warps so that the gemms run on tensor
/// cores (mma.sync); forward blocks 64x64, backward 64x32. Measured on the
/// H200 on 2026-11-30 (--bwd, D = 64, S = 1024 and 4096): backward 64x64/128
/// threads 39-41 TFLOP/s, 128x64/256 30-38, 64x32/128 61-83 (fewer fragment
/// registers, so its shared tiles are swizzled and more blocks fit per SM).
struct Config {
  int fwdM, fwdN, fwdThreads, bwdM, bwdN, bwdThreads;
};
Config configFor(int) { return {64, 64, 128, 64, 32, 128}; }

HostTensor filled(const std::vector<std::int64_t> &shape, tl::dsl::DType dtype) {
  HostTensor t(shape, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f);
  return t;
}

int bwdOverride[3] = {0, 0, 0}; // --bwd M,N,THREADS

void run(const Shape &s, bool causal) {
  Config c = configFor(s.D);
  if (bwdOverride[0]) {
    c.bwdM = bwdOverride[0];
    c.bwdN = bwdOverride[1];
    c.bwdThreads = bwdOverride[2];
  }
  std::vector<std::int64_t> shape = {s.B, s.S, s.H, s.D};
  std::vector<std::int64_t> rows = {s.B, s.H, s.S};
  GPUKernel fwd(mha::flashattn_fwd(s.B, s.H, s.S, s.D, causal, c.fwdM, c.fwdN, c.fwdThreads));
  GPUKernel prep(mha::flashattn_bwd_preprocess(s.B, s.H, s.S, s.D));
  GPUKernel bwd(mha::flashattn_bwd(s.B, s.H, s.S, s.D, causal, c.bwdM, c.bwdN, c.bwdThreads));
  GPUKernel post(mha::flashattn_bwd_postprocess(s.B, s.H, s.S, s.D));
  HostTensor Q = filled(shape, tl::dsl::f16), K = filled(shape, tl::dsl::f16),
             V = filled(shape, tl::dsl::f16), dO = filled(shape, tl::dsl::f16);
  HostTensor O(shape, tl::dsl::f16), lse(rows, tl::dsl::f32), delta(rows, tl::dsl::f32);
  HostTensor dQ(shape, tl::dsl::f32), dQout(shape, tl::dsl::f16), dK(shape, tl::dsl::f16),
      dV(shape, tl::dsl::f16);
  double fwdMs = fwd.benchmark({&Q, &K, &V, &O, &lse});
  double bwdMs = prep.benchmark({&O, &dO, &delta}) +
                 bwd.benchmark({&Q, &K, &V, &dO, &lse, &delta, &dQ, &dK, &dV}) +
                 post.benchmark({&dQ, &dQout});
  double flops = 4.0 * s.B * s.H * double(s.S) * s.S * s.D / (causal ? 2 : 1);
  std::printf("{\"peer\": \"tlc\", \"B\": %d, \"H\": %d, \"S\": %d, \"D\": %d, \"causal\": %d, "
              "\"fwd_ms\": %.4f, \"bwd_ms\": %.4f, \"fwd_tflops\": %.2f, \"bwd_tflops\": %.2f, "
              "\"fwd_layout\": \"%s\", \"bwd_layout\": \"%s\", \"bwd_config\": \"%dx%d/%d\"}\n",
              s.B, s.H, s.S, s.D, causal ? 1 : 0, fwdMs, bwdMs, flops / fwdMs * 1e-9,
              2.5 * flops / bwdMs * 1e-9, fwd.binary().fragmentLayout.c_str(),
              bwd.binary().fragmentLayout.c_str(), c.bwdM, c.bwdN, c.bwdThreads);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--bwd" && i + 1 < argc &&
        std::sscanf(argv[++i], "%d,%d,%d", &bwdOverride[0], &bwdOverride[1],
                    &bwdOverride[2]) == 3)
      continue;
    Shape s{};
    if (std::sscanf(argv[i], "%d,%d,%d,%d", &s.B, &s.H, &s.S, &s.D) != 4) {
      std::fprintf(stderr, "usage: tl-bench-gpu [B,H,S,D ...]\n");
      return 2;
    }
    shapes.push_back(s);
  }
  if (shapes.empty()) // shared/anchors.md, then the reference test's shape
    shapes = {{16, 32, 1024, 64}, {4, 32, 4096, 64}, {1, 32, 16384, 64},
              {16, 16, 1024, 128}, {4, 16, 4096, 128}, {1, 16, 16384, 128},
              {8, 32, 256, 64}};
  try {
    for (const Shape &s : shapes)
      for (bool causal : {false, true})
        run(s, causal);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
