// Flash-attention forward and backward on either backend.
#include "mha/attention.h"

#include "mha/mha.h"
#include "tl/runtime/Jit.h"

#include <memory>

#include <stdexcept>

namespace tl::kernels::mha {

using runtime::HostTensor;
using runtime::Kernel;

namespace {
std::unique_ptr<Kernel> compile(const dsl::Program &program, Backend backend) {
  return jit(program, {.target = backend == Backend::gpu ? Target::gpu : Target::cpu});
}
} // namespace

AttentionConfig tunedConfig(int dim, bool causal) {
  (void)causal;
  // 4 warps so that the gemms run on tensor cores (mma.sync). Measured on
  // the H200 on 2026-11-30 (tl-bench-gpu --bwd, D = 64, S = 1024 and 4096):
  // backward 64x64/128 threads 39-41 TFLOP/s, 128x64/256 30-38, 64x32/128
  // 61-83 (fewer fragment registers, so its shared tiles are swizzled and more
  // blocks fit per SM). Stages: see results/ for the num_stages sweep.
  AttentionConfig c;
  c.fwdBlockM = 64, c.fwdBlockN = 64, c.fwdThreads = 128, c.fwdStages = 1;
  c.bwdBlockM = 64, c.bwdBlockN = dim <= 64 ? 32 : 16, c.bwdThreads = 128, c.bwdStages = 1;
  return c;
}

AttentionResult attentionForwardBackward(HostTensor &Q, HostTensor &K, HostTensor &V,
                                         HostTensor &dO, bool causal, Backend backend,
                                         AttentionConfig config) {
  const std::vector<std::int64_t> &shape = Q.shape();
  if (shape.size() != 4)
    throw std::invalid_argument("attention: Q must be [batch, seq, heads, dim], got " +
                                runtime::formatShape(shape));
  int batch = static_cast<int>(shape[0]), seq = static_cast<int>(shape[1]);
  int heads = static_cast<int>(shape[2]), dim = static_cast<int>(shape[3]);
  BlockSizes fb = forwardBlocks(dim), bb = backwardBlocks(dim);
  if (config.fwdBlockM)
    fb = {config.fwdBlockM, config.fwdBlockN};
  if (config.bwdBlockM)
    bb = {config.bwdBlockM, config.bwdBlockN};
  auto fwd = compile(flashattn_fwd(batch, heads, seq, dim, causal, fb.block_M, fb.block_N,
                                   config.fwdThreads, config.fwdStages),
                     backend);
  auto prep = compile(flashattn_bwd_preprocess(batch, heads, seq, dim), backend);
  auto bwd = compile(flashattn_bwd(batch, heads, seq, dim, causal, bb.block_M, bb.block_N,
                                   config.bwdThreads, config.bwdStages),
                     backend);
  auto post = compile(flashattn_bwd_postprocess(batch, heads, seq, dim), backend);

  std::vector<HostTensor> o_lse = (*fwd)({&Q, &K, &V});
  std::vector<HostTensor> delta = (*prep)({&o_lse[0], &dO});
  HostTensor dQ(shape, dsl::f32); // zeros, as torch.zeros_like
  std::vector<HostTensor> dk_dv = (*bwd)({&Q, &K, &V, &dO, &o_lse[1], &delta[0], &dQ});
  std::vector<HostTensor> dq = (*post)({&dQ});
  return {o_lse[0], o_lse[1], dq[0], dk_dv[0], dk_dv[1]};
}

} // namespace tl::kernels::mha
