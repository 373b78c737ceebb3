// tl-bench-compile: how long the compiler takes, program to PTX, for every
// shipped kernel (mha::shippedPrograms) and for the CPU backend's JIT of the
// reference's programs, on this machine; JSON lines on stdout. Not a test: the
// figures go in results/. Each line gives the median and the minimum wall time
// of REPEATS compiles, and the median of the thread's CPU time: on a shared
// virtual machine the wall times of identical runs vary by a third, and the
// minimum is the steadier figure (the CPU time follows the wall time: the
// machine's speed varies, the compile does not wait). scripts/compile-
// instructions.sh counts instructions instead, for before/after comparisons.
//
//   tl-bench-compile [--arch sm_90a] [--repeats 7] [--filter SUBSTRING | --program NAME]
//
// TLC_TIMING=1 adds each compile's step-by-step report on stderr.
#include "mha/mha.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/Compiler/HostJIT.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

namespace mha = tl::kernels::mha;

double threadCpuMs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

struct CompileTimes {
  double medianMs, minMs, cpuMs;
};

template <typename Compile> CompileTimes timeCompiles(int repeats, Compile compile) {
  std::vector<double> wall, cpu;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    double cpuStart = threadCpuMs();
    compile();
    cpu.push_back(threadCpuMs() - cpuStart);
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], wall.front(), cpu[cpu.size() / 2]};
}

void print(const std::string &program, const std::string &target, CompileTimes times, int repeats) {
  std::printf("{\"program\": \"%s\", \"target\": \"%s\", \"ms\": %.1f, \"min_ms\": %.1f, "
              "\"cpu_ms\": %.1f, \"repeats\": %d}\n",
              program.c_str(), target.c_str(), times.medianMs, times.minMs, times.cpuMs, repeats);
  std::fflush(stdout);
}

int usage() {
  std::fprintf(
      stderr,
      "usage: tl-bench-compile [--arch ARCH] [--repeats N] [--filter TEXT | --program NAME]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string arch = "sm_90a", filter, exact;
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
    else if (arg == "--program")
      exact = argv[++i];
    else
      return usage();
  }
  bool timing = std::getenv("TLC_TIMING") != nullptr;
  auto skip = [&](const std::string &file) {
    return exact.empty() ? !filter.empty() && file.find(filter) == std::string::npos
                         : file != exact;
  };
  try {
    bool found = false;
    for (auto &[file, program] : mha::shippedPrograms(arch)) {
      if (skip(file))
        continue;
      found = true;
      tl::compileForGPU(program, arch); // warm: first-use initialisation is not the compile
      print(file, arch,
            timeCompiles(repeats, [&] { tl::compileForGPU(program, arch, {.timing = timing}); }),
            repeats);
    }
    for (auto &[file, program] : mha::shippedPrograms(arch)) {
      if (file.find("tuned") != std::string::npos || skip(file))
        continue;
      print(file, "cpu",
            timeCompiles(repeats, [&] { tl::HostExecutable::compile(program, timing); }), repeats);
    }
    if (!found && !exact.empty()) {
      std::fprintf(stderr,
                   "tl-bench-compile: no shipped program named '%s' (tl-mha --ptx "
                   "writes them, one file each)\n",
                   exact.c_str());
      return 2;
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "tl-bench-compile: %s\n", error.what());
    return 1;
  }
  return 0;
}
