// The kernels we ship (see mha.h).
#include "mha/attention.h"
#include "mha/mha.h"

namespace tl::kernels::mha {

std::vector<std::pair<std::string, dsl::Program>> shippedPrograms(const std::string &arch) {
  const int batch = 8, heads = 32, seq = 256, dim = 64;
  std::vector<std::pair<std::string, dsl::Program>> programs;
  BlockSizes fb = forwardBlocks(dim), bb = backwardBlocks(dim);
  for (bool causal : {false, true}) {
    std::string suffix = causal ? "_causal" : "";
    programs.emplace_back("flash_fwd" + suffix,
                          flashattn_fwd(batch, heads, seq, dim, causal, fb.block_M, fb.block_N));
    programs.emplace_back("flash_bwd" + suffix,
                          flashattn_bwd(batch, heads, seq, dim, causal, bb.block_M, bb.block_N));
  }
  for (int tunedDim : {64, 128, 256})
    for (bool causal : {false, true}) {
      std::string suffix = (causal ? "_causal_tuned_d" : "_tuned_d") + std::to_string(tunedDim);
      AttentionConfig c = tunedConfig(tunedDim, causal, seq, arch); // as run at this length
      programs.emplace_back("flash_fwd" + suffix,
                            forwardKernel(batch, heads, seq, tunedDim, causal, c));
      programs.emplace_back("flash_bwd" + suffix,
                            backwardKernel(batch, heads, seq, tunedDim, causal, c));
      programs.emplace_back( // dQ summed in key-block order (in_turn)
          "flash_bwd" + suffix + "_deterministic",
          backwardKernel(batch, heads, seq, tunedDim, causal,
                         deterministicConfig(c, tunedDim, causal, seq, arch)));
    }
  // The long launches' forwards, as tunedConfig gives S = 16384: off sm_90a
  // the causal D=64 one on 128-row blocks (from S = 2048); on sm_90a D=64's
  // on FlashAttention-3's 192-row blocks, three consumer warpgroups and a
  // producer (from 4096, causal from 16384), D=256's in FlashAttention-3's
  // loop (from 512) and D=128's causal one on 128-row blocks and two
  // warpgroups (from 1024).
  struct LongForward {
    int dim;
    bool causal;
  };
  for (LongForward f : {LongForward{64, true}, LongForward{64, false}, LongForward{256, false},
                        LongForward{256, true}, LongForward{128, true}})
    programs.emplace_back(std::string(f.causal ? "flash_fwd_causal_tuned_d" : "flash_fwd_tuned_d") +
                              std::to_string(f.dim) + "_long",
                          forwardKernel(batch, heads, seq, f.dim, f.causal,
                                        tunedConfig(f.dim, f.causal, 16384, arch)));
  programs.emplace_back("flash_bwd_prep", flashattn_bwd_preprocess(batch, heads, seq, dim));
  programs.emplace_back("flash_bwd_post", flashattn_bwd_postprocess(batch, heads, seq, dim));
  return programs;
}

} // namespace tl::kernels::mha
