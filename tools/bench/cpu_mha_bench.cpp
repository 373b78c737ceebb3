// Benchmark (not a test): the CPU backend's flash-attention forward and
// backward at the reference's shape (8, 32, 256, 64), causal and not.
// Prints the median of 3 runs and GFLOP/s in the FlashAttention convention
// (fwd = 4*B*H*S^2*D, halved when causal; bwd = 2.5 * fwd).
//   tl-bench-cpu [batch heads seq dim]
#include "mha/mha.h"
#include "tl/runtime/CPUKernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace {

using tl::runtime::CPUKernel;
using tl::runtime::HostTensor;
namespace mha = tl::kernels::mha;

double medianSeconds(const std::function<void()> &run, int repeats = 3) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int batch = 8, heads = 32, seq = 256, dim = 64;
  if (argc == 5) {
    batch = std::atoi(argv[1]);
    heads = std::atoi(argv[2]);
    seq = std::atoi(argv[3]);
    dim = std::atoi(argv[4]);
  }
  std::printf("CPU backend, %u hardware threads, shape B=%d H=%d S=%d D=%d\n",
              std::thread::hardware_concurrency(), batch, heads, seq, dim);
  std::vector<std::int64_t> shape = {batch, seq, heads, dim};
  HostTensor Q(shape, tl::dsl::f16), K(shape, tl::dsl::f16), V(shape, tl::dsl::f16),
      dO(shape, tl::dsl::f16);
  for (HostTensor *t : {&Q, &K, &V, &dO})
    for (std::int64_t i = 0; i < t->numel(); ++i)
      t->set(i, static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f);
  for (bool causal : {false, true}) {
    mha::BlockSizes fb = mha::forwardBlocks(dim), bb = mha::backwardBlocks(dim);
    auto compileStart = std::chrono::steady_clock::now();
    CPUKernel fwd(mha::flashattn_fwd(batch, heads, seq, dim, causal, fb.block_M, fb.block_N));
    CPUKernel prep(mha::flashattn_bwd_preprocess(batch, heads, seq, dim));
    CPUKernel bwd(mha::flashattn_bwd(batch, heads, seq, dim, causal, bb.block_M, bb.block_N));
    CPUKernel post(mha::flashattn_bwd_postprocess(batch, heads, seq, dim));
    double compile =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - compileStart).count();
    std::vector<HostTensor> o_lse, delta;
    double fwdSeconds = medianSeconds([&] { o_lse = fwd({&Q, &K, &V}); });
    double bwdSeconds = medianSeconds([&] {
      delta = prep({&o_lse[0], &dO});
      HostTensor dQ(shape, tl::dsl::f32);
      std::vector<HostTensor> dk_dv = bwd({&Q, &K, &V, &dO, &o_lse[1], &delta[0], &dQ});
      std::vector<HostTensor> dq = post({&dQ});
    });
    double flops = 4.0 * batch * heads * double(seq) * seq * dim * (causal ? 0.5 : 1.0);
    std::printf("%-10s compile %.2f s | fwd %8.1f ms %6.2f GFLOP/s | bwd %8.1f ms "
                "%6.2f GFLOP/s\n",
                causal ? "causal" : "non-causal", compile, fwdSeconds * 1e3,
                flops / fwdSeconds * 1e-9, bwdSeconds * 1e3, 2.5 * flops / bwdSeconds * 1e-9);
  }
  return 0;
}
