// Benchmark (not a test): kernels/copy, the tile copy (TMA load and store on
// sm_90a), beside tools/bench/copy_peer.py (torch's device-to-device copy) in
// the same device call. For each shape tl::autotune picks the fastest tile
// configuration; one JSON object per configuration and one for the best:
//   tl-bench-copy [--dtype f16|bf16] [--config BM,BN,THREADS ...] M,N ...
// gbps counts the bytes read and written over the median of 50 timings.
#include "BenchArgs.h"
#include "copy/copy.h"
#include "tl/runtime/Autotune.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace copy = tl::kernels::copy;
using tl::runtime::HostTensor;

std::string describe(const copy::CopyConfig &c) {
  return std::to_string(c.block_M) + "x" + std::to_string(c.block_N) + "/" +
         std::to_string(c.threads);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<copy::CopyConfig> configs;
  std::vector<std::vector<int>> shapes;
  tl::DType dtype = tl::DType::f16;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--config" || arg == "--dtype") && i + 1 >= argc) {
      std::fprintf(stderr, "tl-bench-copy: %s needs a value\n", arg.c_str());
      return 2;
    }
    if (arg == "--config") {
      std::vector<int> v = tl::bench::numbers(argv[++i], "tl-bench-copy");
      if (v.size() != 3) {
        std::fprintf(stderr, "tl-bench-copy: --config BM,BN,THREADS\n");
        return 2;
      }
      configs.push_back({v[0], v[1], v[2]});
    } else if (arg == "--dtype") {
      dtype = std::string(argv[++i]) == "bf16" ? tl::DType::bf16 : tl::DType::f16;
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: tl-bench-copy [--dtype f16|bf16] [--config BM,BN,THREADS ...] M,N ...\n");
      return 0;
    } else {
      std::vector<int> v = tl::bench::numbers(arg, "tl-bench-copy");
      if (v.size() != 2) {
        std::fprintf(stderr, "tl-bench-copy: shapes are M,N (got '%s')\n", arg.c_str());
        return 2;
      }
      shapes.push_back(v);
    }
  }
  if (configs.empty())
    configs = {{64, 64, 128}, {128, 64, 128}, {64, 128, 128}, {128, 128, 128}, {256, 64, 128}};
  const char *dname = dtype == tl::DType::f16 ? "f16" : "bf16";
  for (const std::vector<int> &s : shapes) {
    int M = s[0], N = s[1];
    HostTensor A({M, N}, dtype);
    for (std::int64_t i = 0; i < A.numel(); ++i)
      A.set(i, static_cast<float>(i % 251) / 251.0f);
    double bytes = 2.0 * M * N * 2;
    auto line = [&](const char *what, const std::string &config, double ms, const char *extra) {
      std::printf("{\"tlc\": \"%s\", \"config\": \"%s\", \"M\": %d, \"N\": %d, \"dtype\": \"%s\", "
                  "\"ms\": %.5f, \"gbps\": %.1f%s}\n",
                  what, config.c_str(), M, N, dname, ms, bytes / ms * 1e-6, extra);
      std::fflush(stdout);
    };
    try {
      tl::AutotuneResult tuned =
          tl::autotune([&](const copy::CopyConfig &c) { return copy::tileCopy(M, N, dtype, c); },
                       configs, {&A}, {.target = tl::Target::gpu, .warmup = 10, .repeats = 50});
      for (std::size_t i = 0; i < tuned.timings.size(); ++i)
        if (tuned.timings[i].error.empty())
          line("copy", describe(configs[i]), tuned.timings[i].ms, "");
      HostTensor B({M, N}, dtype);
      double ms = tuned.kernel->benchmark({&A, &B}, 10, 50);
      line("copy-best", describe(configs[tuned.best]), ms,
           tuned.cacheHit ? ", \"autotune_cache_hit\": true" : ", \"autotune_cache_hit\": false");
    } catch (const std::exception &e) {
      std::fprintf(stderr, "tl-bench-copy: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
