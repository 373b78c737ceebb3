// The main job. Builds and verifies the reference's four flash-attention
// programs for its test configuration (8, 32, 256, 64; causal and not) and
// prints their tl IR summary; then runs forward and backward and prints the
// max error of O, lse, dQ, dK and dV against a naive fp64 reference: on the
// GPU when there is one (the reference's shape, in the reference's
// configuration and in the tuned one), else on the CPU backend (a small shape).
//
//   tl-mha                     summary + run
//   tl-mha --print-ir          the tl IR of the four programs, nothing else
//   tl-mha --print-shipped-ir  the tl IR of every shipped kernel (the fuzz
//                              corpus, tests/fuzz), each after a `// NAME` line
//   tl-mha --ptx ARCH DIR      writes DIR/<program>[_causal].ptx for ARCH and
//                              prints the kernels' launch shapes (compiled
//                              as the JIT would: TLC_STMATRIX=0 etc. apply)
//   tl-mha -h | --help         usage
//
// Exit codes: 0 ok, 1 a failure (an error too large, a file not written), 2
// a usage error.
#include "mha/attention.h"
#include "mha/mha.h"
#include "mha/reference.h"
#include "tl/Compiler/CrashHandler.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/runtime/CudaDriver.h"
#include "tl/runtime/KernelCache.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <system_error>

namespace {

using tl::dsl::Program;
using tl::runtime::HostTensor;
namespace mha = tl::kernels::mha;

/// Counts `tl.xxx` op names in printed IR.
std::map<std::string, int> countTileOps(const std::string &ir) {
  std::map<std::string, int> counts;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find(" tl.");
    if (at == std::string::npos)
      continue;
    size_t end = line.find_first_of(" (", at + 1);
    std::string name = line.substr(at + 1, end - at - 1);
    if (name.find_first_of("\"=") == std::string::npos)
      ++counts[name];
  }
  return counts;
}

void summarize(const Program &program, const char *config, bool printIR) {
  program.verify();
  std::string ir = program.str();
  if (printIR) {
    std::printf("%s", ir.c_str());
    return;
  }
  std::printf("%-16s %-10s params:", program.name().c_str(), config);
  for (const tl::dsl::Param &param : program.params())
    std::printf(" %s%s", param.name.c_str(), param.output ? "(out)" : "");
  std::printf("\n    ops:");
  for (const auto &[name, count] : countTileOps(ir))
    std::printf(" %s=%d", name.c_str(), count);
  std::printf("\n");
}

HostTensor randomHalf(const std::vector<std::int64_t> &shape, std::mt19937 &rng) {
  std::normal_distribution<float> normal;
  HostTensor t(shape, tl::dsl::f16);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, normal(rng));
  return t;
}

double maxError(const HostTensor &got, const std::vector<float> &want) {
  double worst = 0;
  for (std::int64_t i = 0; i < got.numel(); ++i)
    if (got.at(i) != want[i])
      worst = std::max(worst, std::fabs(double(got.at(i)) - want[i]));
  return worst;
}

/// Runs the four programs chained as the reference test chains them.
bool runAttention(mha::Backend backend, const char *config, int batch, int heads, int seq, int dim,
                  bool causal, mha::AttentionConfig tuning = {}) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::int64_t> shape = {batch, seq, heads, dim};
  std::mt19937 rng(42);
  HostTensor Q = randomHalf(shape, rng), K = randomHalf(shape, rng), V = randomHalf(shape, rng),
             dO = randomHalf(shape, rng);
  mha::AttentionResult r = mha::attentionForwardBackward(Q, K, V, dO, causal, backend, tuning);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The fp64 reference takes longer than the kernels: once per shape and mask
  // (every run draws the same inputs).
  static std::map<std::vector<int>, tl::testing::AttentionGrads> references;
  std::vector<int> key = {batch, heads, seq, dim, causal};
  if (!references.count(key))
    references[key] = tl::testing::attentionReference({batch, heads, seq, dim}, causal, Q.toFloat(),
                                                      K.toFloat(), V.toFloat(), dO.toFloat());
  const tl::testing::AttentionGrads &ref = references[key];
  struct Row {
    const char *name;
    double error;
  };
  Row rows[] = {{"O", maxError(r.O, ref.O)},
                {"lse", maxError(r.lse, ref.lse)},
                {"dQ", maxError(r.dQ, ref.dQ)},
                {"dK", maxError(r.dK, ref.dK)},
                {"dV", maxError(r.dV, ref.dV)}};
  bool ok = true;
  std::printf(
      "%s %-9s %d x %d x %d x %d %-10s max |error|:", backend == mha::Backend::gpu ? "gpu" : "cpu",
      config, batch, heads, seq, dim, causal ? "causal" : "non-causal");
  for (const Row &row : rows) {
    std::printf(" %s %.2e", row.name, row.error);
    ok = ok && row.error < 2e-2;
  }
  std::printf("  (%.2f s incl. JIT) %s\n", seconds, ok ? "ok" : "TOO LARGE");
  return ok;
}

const char *const kUsage =
    "usage: tl-mha                  build and verify the four MHA programs, then run\n"
    "                               them (on the GPU if there is one, else the CPU)\n"
    "       tl-mha --print-ir       print the programs' tl IR\n"
    "       tl-mha --print-shipped-ir\n"
    "                               print the tl IR of every kernel --ptx writes\n"
    "       tl-mha --ptx ARCH DIR   write the shipped kernels' PTX for ARCH (sm_80 or\n"
    "                               sm_90a) to DIR/<program>.ptx, creating DIR; the\n"
    "                               JIT's variables (TLC_WGMMA, TLC_STMATRIX, ...) apply\n"
    "       tl-mha -h | --help      print this message\n";

/// A usage error: the problem and the usage on stderr, exit code 2.
[[noreturn]] void usageError(const std::string &problem) {
  std::fprintf(stderr, "tl-mha: %s\n%s", problem.c_str(), kUsage);
  std::exit(2);
}

/// A failure to do what was asked: exit code 1.
int failure(const std::string &message) {
  std::fprintf(stderr, "tl-mha: error: %s\n", message.c_str());
  return 1;
}

/// Writes `text` to `path`, checking the open, the write and the close.
bool writeFile(const std::filesystem::path &path, const std::string &text, std::string &why) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    why = "cannot open '" + path.string() + "' for writing: " + std::strerror(errno);
    return false;
  }
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  int writeErrno = errno;
  bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    why = "cannot write '" + path.string() + "': " + std::strerror(written ? errno : writeErrno);
    return false;
  }
  return true;
}

/// Prints the tl IR of every shipped MHA program (mha::shippedPrograms).
int printShippedIR() {
  for (auto &[name, program] : mha::shippedPrograms()) {
    program.verify();
    std::printf("// %s\n%s", name.c_str(), program.str().c_str());
  }
  return 0;
}

/// Writes the PTX of every shipped MHA program (mha::shippedPrograms).
int writePTX(const std::string &arch, const std::string &dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return failure("cannot create the directory '" + dir + "': " + error.message());
  if (!std::filesystem::is_directory(dir))
    return failure("'" + dir + "' is not a directory");
  std::vector<std::pair<std::string, Program>> programs = mha::shippedPrograms(arch);
  for (auto &[file, program] : programs) {
    // As the JIT compiles it: its code-generation variables (TLC_WGMMA,
    // TLC_STMATRIX, ...) apply here too.
    tl::GPUBinary binary = tl::compileForGPU(program, arch, tl::runtime::gpuCompileOptions());
    std::string why;
    if (!writeFile(std::filesystem::path(dir) / (file + ".ptx"), binary.ptx, why))
      return failure(why);
    std::printf("%-22s %s grid", (file + ".ptx").c_str(), arch.c_str());
    for (std::int64_t g : binary.grid)
      std::printf(" %lld", static_cast<long long>(g));
    std::printf(" threads %lld shared %lld B fragments %s\n",
                static_cast<long long>(binary.threads), static_cast<long long>(binary.sharedBytes),
                binary.fragmentLayout.c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  tl::installCrashHandler(argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  if (argc > 1 && std::strcmp(argv[1], "--ptx") == 0) {
    if (argc != 4)
      usageError("--ptx takes ARCH and DIR");
    std::string arch = argv[2];
    if (arch != "sm_80" && arch != "sm_90a")
      usageError("--ptx takes the architecture sm_80 or sm_90a, got '" + arch + "'");
    try {
      return writePTX(arch, argv[3]);
    } catch (const std::exception &error) {
      std::fprintf(stderr, "%s\n", error.what());
      return 1;
    }
  }
  if (argc == 2 && std::strcmp(argv[1], "--print-shipped-ir") == 0) {
    try {
      return printShippedIR();
    } catch (const std::exception &error) {
      std::fprintf(stderr, "%s\n", error.what());
      return 1;
    }
  }
  bool printIR = argc == 2 && std::strcmp(argv[1], "--print-ir") == 0;
  if (argc > 1 && !printIR) {
    std::string first = argv[1];
    if (first == "--print-ir" || first == "--print-shipped-ir")
      usageError(first + " takes no arguments");
    usageError(first[0] == '-' ? "unknown option '" + first + "'"
                               : "unexpected argument '" + first + "'");
  }
  const int batch = 8, heads = 32, seq_len = 256, dim = 64;
  bool ok = true;
  try {
    for (bool causal : {false, true}) {
      const char *config = causal ? "causal" : "non-causal";
      auto fwd = mha::forwardBlocks(dim), bwd = mha::backwardBlocks(dim);
      summarize(mha::flashattn_fwd(batch, heads, seq_len, dim, causal, fwd.block_M, fwd.block_N),
                config, printIR);
      summarize(mha::flashattn_bwd(batch, heads, seq_len, dim, causal, bwd.block_M, bwd.block_N),
                config, printIR);
    }
    summarize(mha::flashattn_bwd_preprocess(batch, heads, seq_len, dim), "", printIR);
    summarize(mha::flashattn_bwd_postprocess(batch, heads, seq_len, dim), "", printIR);
    if (printIR)
      return 0;
    std::printf("all four MHA programs built and verified (batch=%d heads=%d "
                "seq_len=%d dim=%d, causal and not)\n\n",
                batch, heads, seq_len, dim);
    std::string why;
    if (tl::runtime::CudaDriver::get(&why)) {
      std::printf("On the GPU (%s), at the reference's shape:\n",
                  tl::runtime::CudaDriver::get()->arch().c_str());
      for (bool causal : {false, true}) {
        ok = runAttention(mha::Backend::gpu, "reference", batch, heads, seq_len, dim, causal) && ok;
        ok = runAttention(mha::Backend::gpu, "tuned", batch, heads, seq_len, dim, causal,
                          mha::tunedConfig(dim, causal, seq_len)) &&
             ok;
      }
    } else {
      std::printf("No GPU (%s): on the CPU backend, at a small shape.\n", why.c_str());
      for (bool causal : {false, true})
        ok = runAttention(mha::Backend::cpu, "reference", 2, 4, 128, 64, causal) && ok;
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return ok ? 0 : 1;
}
