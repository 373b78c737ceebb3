// tl-bench-compile: how long the compiler takes, program to PTX, for every
// shipped kernel (mha::shippedPrograms) and for the CPU backend's JIT of the
// reference's programs. Median of REPEATS compiles each, wall time, on this
// machine; JSON lines on stdout. Not a test: the figures go in results/.
//
//   tl-bench-compile [--arch sm_90a] [--repeats 7] [--filter SUBSTRING]
//
// TLC_TIMING=1 adds each compile's step-by-step report on stderr.
#include "mha/mha.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/Compiler/HostJIT.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace mha = tl::kernels::mha;

template <typename Compile> double medianMs(int repeats, Compile compile) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    compile();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int usage() {
  std::fprintf(stderr, "usage: tl-bench-compile [--arch ARCH] [--repeats N] [--filter TEXT]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string arch = "sm_90a", filter;
  int repeats = 7;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage();
    if (arg == "--arch")
      arch = argv[++i];
    else if (arg == "--repeats")
      repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--filter")
      filter = argv[++i];
    else
      return usage();
  }
  bool timing = std::getenv("TLC_TIMING") != nullptr;
  try {
    for (auto &[file, program] : mha::shippedPrograms(arch)) {
      if (!filter.empty() && file.find(filter) == std::string::npos)
        continue;
      tl::compileForGPU(program, arch); // warm: first-use initialisation is not the compile
      double ms = medianMs(repeats, [&] { tl::compileForGPU(program, arch, {.timing = timing}); });
      std::printf("{\"program\": \"%s\", \"target\": \"%s\", \"ms\": %.1f, \"repeats\": %d}\n",
                  file.c_str(), arch.c_str(), ms, repeats);
      std::fflush(stdout);
    }
    for (auto &[file, program] : mha::shippedPrograms(arch)) {
      if (file.find("tuned") != std::string::npos ||
          (!filter.empty() && file.find(filter) == std::string::npos))
        continue;
      double ms = medianMs(repeats, [&] { tl::HostExecutable::compile(program, timing); });
      std::printf("{\"program\": \"%s\", \"target\": \"cpu\", \"ms\": %.1f, \"repeats\": %d}\n",
                  file.c_str(), ms, repeats);
      std::fflush(stdout);
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "tl-bench-compile: %s\n", error.what());
    return 1;
  }
  return 0;
}
