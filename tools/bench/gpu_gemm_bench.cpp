// Benchmark (not a test): kernels/gemm on the GPU, beside
// shared/bench/gemm_peer.py (cuBLAS through torch.matmul) in the same device
// call. For each shape and dtype it times every configuration given (or a
// default set) and prints one JSON object per configuration and one for the
// best, like the peer script, so the two join into ratios. The best is chosen
// by tl::autotune, and kept in the disk cache: a second run over the same
// shapes and configurations times only the winner.
//   tl-bench-gemm [--dtype f16|bf16|both] [--config BM,BN,BK,THREADS,STAGES[,STAGE_C[,PANEL]] ...]
//                 [--trans none|a|b|both] M,N,K ...
//   tl-bench-gemm --ptx ARCH DIR [--config ...]   (the PTX, no GPU needed)
// TLC_WGMMA=0 runs the same programs on mma.sync (sm_90a's other path).
#include "BenchArgs.h"
#include "gemm/gemm.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/runtime/Autotune.h"
#include "tl/runtime/GPUKernel.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace gemm = tl::kernels::gemm;
using tl::runtime::GPUKernel;
using tl::runtime::HostTensor;

std::string describe(const gemm::GemmConfig &c) {
  return std::to_string(c.block_M) + "x" + std::to_string(c.block_N) + "x" +
         std::to_string(c.block_K) + "/" + std::to_string(c.threads) + "/s" +
         std::to_string(c.num_stages) + (c.stage_C ? "/C" : "") +
         (c.swizzle_panel ? "/p" + std::to_string(c.swizzle_panel) : "");
}

HostTensor filled(const std::vector<std::int64_t> &shape, tl::DType dtype) {
  HostTensor t(shape, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f);
  return t;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<gemm::GemmConfig> configs;
  std::vector<std::vector<int>> shapes;
  std::vector<tl::DType> dtypes = {tl::DType::f16, tl::DType::bf16};
  bool ta = false, tb = false;
  std::string ptxArch, ptxDir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tl-bench-gemm: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--config") {
      std::vector<int> v = tl::bench::numbers(next(), "tl-bench-gemm");
      if (v.size() < 5 || v.size() > 7) {
        std::fprintf(stderr, "tl-bench-gemm: --config BM,BN,BK,THREADS,STAGES[,STAGE_C[,PANEL]]\n");
        return 2;
      }
      configs.push_back(
          {v[0], v[1], v[2], v[3], v[4], v.size() > 5 && v[5] != 0, v.size() > 6 ? v[6] : 0});
    } else if (arg == "--dtype") {
      std::string d = next();
      dtypes = d == "f16"    ? std::vector<tl::DType>{tl::DType::f16}
               : d == "bf16" ? std::vector<tl::DType>{tl::DType::bf16}
                             : std::vector<tl::DType>{tl::DType::f16, tl::DType::bf16};
    } else if (arg == "--trans") {
      std::string t = next();
      ta = t == "a" || t == "both";
      tb = t == "b" || t == "both";
    } else if (arg == "--ptx") {
      ptxArch = next();
      ptxDir = next();
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: tl-bench-gemm [--dtype f16|bf16|both] [--trans none|a|b|both]\n"
                  "                     [--config BM,BN,BK,THREADS,STAGES[,STAGE_C[,PANEL]] ...] "
                  "M,N,K ...\n"
                  "       tl-bench-gemm --ptx ARCH DIR [--config ...]\n");
      return 0;
    } else {
      std::vector<int> v = tl::bench::numbers(arg, "tl-bench-gemm");
      if (v.size() != 3) {
        std::fprintf(stderr, "tl-bench-gemm: shapes are M,N,K (got '%s')\n", arg.c_str());
        return 2;
      }
      shapes.push_back(v);
    }
  }
  if (configs.empty())
    configs = {{128, 128, 64, 128, 3},
               {128, 256, 64, 256, 3},
               {128, 128, 32, 128, 3},
               {128, 256, 64, 128, 2}};
  try {
    if (!ptxArch.empty()) {
      std::filesystem::create_directories(ptxDir);
      for (const gemm::GemmConfig &c : configs) {
        tl::GPUBinary binary = tl::compileForGPU(
            gemm::gemm(4096, 4096, 4096, tl::DType::f16, tl::DType::f16, ta, tb, c), ptxArch);
        std::string name = "gemm_" + std::to_string(c.block_M) + "x" + std::to_string(c.block_N) +
                           "x" + std::to_string(c.block_K) + "_" + std::to_string(c.threads) +
                           "_s" + std::to_string(c.num_stages) + (c.stage_C ? "_C" : "");
        std::ofstream(ptxDir + "/" + name + ".ptx") << binary.ptx;
        std::printf("%s/%s.ptx\n", ptxDir.c_str(), name.c_str());
      }
      return 0;
    }
    for (const std::vector<int> &s : shapes)
      for (tl::DType dtype : dtypes) {
        int M = s[0], N = s[1], K = s[2];
        HostTensor A =
            filled(ta ? std::vector<std::int64_t>{K, M} : std::vector<std::int64_t>{M, K}, dtype);
        HostTensor B =
            filled(tb ? std::vector<std::int64_t>{N, K} : std::vector<std::int64_t>{K, N}, dtype);
        HostTensor C({M, N}, dtype);
        const char *dname = dtype == tl::DType::f16 ? "f16" : "bf16";
        const char *trans = ta && tb ? "both" : ta ? "a" : tb ? "b" : "none";
        auto line = [&](const char *what, const std::string &config, double ms,
                        const std::string &extra) {
          std::printf("{\"tlc\": \"%s\", \"config\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, "
                      "\"dtype\": \"%s\", \"trans\": \"%s\", \"ms\": %.5f, \"tflops\": %.1f%s}\n",
                      what, config.c_str(), M, N, K, dname, trans, ms, 2.0 * M * N * K / ms * 1e-9,
                      extra.c_str());
          std::fflush(stdout);
        };
        // tl::autotune: the candidates compiled in parallel, timed one by one,
        // the winner kept in the disk cache (a second run times nothing).
        tl::AutotuneOptions options{.target = tl::Target::gpu, .warmup = 10, .repeats = 50};
        tl::AutotuneResult tuned;
        try {
          tuned = tl::autotune(
              [&](const gemm::GemmConfig &c) {
                return gemm::gemm(M, N, K, dtype, dtype, ta, tb, c);
              },
              configs, {&A, &B}, options);
        } catch (const std::exception &e) {
          std::printf("{\"tlc\": \"gemm\", \"M\": %d, \"N\": %d, \"K\": %d, \"dtype\": \"%s\", "
                      "\"error\": \"%s\"}\n",
                      M, N, K, dname, tl::bench::jsonEscaped(e.what()).c_str());
          continue;
        }
        for (std::size_t i = 0; i < tuned.timings.size(); ++i) {
          const tl::AutotuneTiming &t = tuned.timings[i];
          if (!t.error.empty())
            std::printf("{\"tlc\": \"gemm\", \"config\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, "
                        "\"dtype\": \"%s\", \"error\": \"%s\"}\n",
                        describe(configs[i]).c_str(), M, N, K, dname,
                        tl::bench::jsonEscaped(t.error).c_str());
          else
            line("gemm", describe(configs[i]), t.ms, "");
        }
        // The winner, timed once more (on a cache hit its stored time is the
        // one it was chosen with, in another run).
        double ms = tuned.kernel->benchmark({&A, &B, &C}, 10, 50);
        auto *gpu = dynamic_cast<GPUKernel *>(tuned.kernel.get());
        line("gemm-best", describe(configs[tuned.best]), ms,
             std::string(", \"autotune_cache_hit\": ") + (tuned.cacheHit ? "true" : "false") +
                 ", \"warnings\": " + std::to_string(gpu ? gpu->warnings().size() : 0));
      }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tl-bench-gemm: %s\n", e.what());
    return 1;
  }
  return 0;
}
