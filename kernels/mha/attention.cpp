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

AttentionConfig tunedConfig(int /*dim*/, bool /*causal*/) {
  // Chosen by measurement on the H200 (tl-bench-gpu --fwd/--bwd M,N,THREADS,STAGES;
  // 2026-11-30; TFLOP/s at S = 1024 / 4096, non-causal and causal; the
  // other kernel at its tuned value; results/2026-11-30-h200-mha.md):
  //   forward  D=64:  64x64/128 s1 187/145, 204/176; s0 86/74, 101/91; s2 186/143, 205/172;
  //                   64x32/128 s1 179/141, 192/165; 128x32/128 s1 192/129, 210/170;
  //                   128x64/256 s1 141/109, 163/147; 128x64/128 s1 81/68, 84/78.
  //            D=128: 64x64/128 s1 196/158, 221/196; s2 198/158, 224/195;
  //                   64x32/128 s2 203/153, 224/184; 128x64/256 s1 187/142, 221/189;
  //                   128x32/128 37/29 (its fragments no longer fit in registers).
  //   backward D=64:  64x16/128 s1 130/92, 168/144; s2 105/88, 133/136; s3 126/90, 166/143;
  //                   64x32/128 s1 111/85, 144/132; s0 83/61, 80/82;
  //                   128x16/256 s1 89/70, 111/106; 64x64/128 s1 43/38, 46/46.
  //            D=128: 64x16/128 s1 125/96, 163/156; s2 123/90, 166/147; s3 126/92, 168/149;
  //                   64x32/128 s1 42/37, 46/45 (spills); 128x16/256 s1 119/86, 159/140.
  // So: 4 warps so that the gemms run on tensor cores (mma.sync), one stage
  // of cp.async loads ahead, forward blocks 64x64 and backward 64x16 (the
  // backward's dK/dV fragments leave few registers: narrower key blocks win).
  // Neither the head dim nor causality changed the winner.
  AttentionConfig c;
  c.fwdBlockM = 64, c.fwdBlockN = 64, c.fwdThreads = 128, c.fwdStages = 1;
  c.bwdBlockM = 64, c.bwdBlockN = 16, c.bwdThreads = 128, c.bwdStages = 1;
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
