// The main job: build the reference's four flash-attention programs for its
// test configuration (8, 32, 256, 64; causal and not), verify them, and print
// a summary of their tl IR (or the IR itself with --print-ir).
#include "mha/mha.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

namespace {

using tl::dsl::Program;

/// Counts `tl.xxx` op names in printed IR.
std::map<std::string, int> countTileOps(const std::string &ir) {
  std::map<std::string, int> counts;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find("tl.");
    if (at == std::string::npos || (at > 0 && line[at - 1] != ' '))
      continue;
    size_t end = line.find_first_of(" (", at);
    std::string name = line.substr(at, end - at);
    if (name.find('"') == std::string::npos && name.find('=') == std::string::npos)
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

} // namespace

int main(int argc, char **argv) {
  bool printIR = argc > 1 && std::strcmp(argv[1], "--print-ir") == 0;
  const int batch = 8, heads = 32, seq_len = 256, dim = 64;
  namespace mha = tl::kernels::mha;
  try {
    for (bool causal : {false, true}) {
      const char *config = causal ? "causal" : "non-causal";
      auto fwd = mha::forwardBlocks(dim), bwd = mha::backwardBlocks(dim);
      summarize(mha::flashattn_fwd(batch, heads, seq_len, dim, causal,
                                   fwd.block_M, fwd.block_N),
                config, printIR);
      summarize(mha::flashattn_bwd(batch, heads, seq_len, dim, causal,
                                   bwd.block_M, bwd.block_N),
                config, printIR);
    }
    summarize(mha::flashattn_bwd_preprocess(batch, heads, seq_len, dim), "", printIR);
    summarize(mha::flashattn_bwd_postprocess(batch, heads, seq_len, dim), "", printIR);
  } catch (const tl::dsl::Error &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  if (!printIR)
    std::printf("all four MHA programs built and verified (batch=%d heads=%d "
                "seq_len=%d dim=%d, causal and not)\n",
                batch, heads, seq_len, dim);
  return 0;
}
