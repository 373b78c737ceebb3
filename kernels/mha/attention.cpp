// Flash-attention forward and backward on either backend.
#include "mha/attention.h"

#include "mha/mha.h"
#include "tl/Compiler/GPUCompiler.h"
#include "tl/runtime/Jit.h"

#include <limits>
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

AttentionConfig tunedConfig(int dim, bool causal, int seqLen, const std::string &arch) {
  // Chosen by measurement on the H200 (tl-bench-gpu --fwd/--bwd M,N,THREADS,STAGES;
  // 2026-11-30, third session, after swizzled ldmatrix addressing took the
  // address registers out of the loops; TFLOP/s at S = 1024 / 4096,
  // non-causal and causal; results/raw/2026-11-30-h200-session3-sweep.jsonl):
  //   forward  D=64:  64x64/128 s1 262/192, 289/238; 128x64/128 s1 266/174, 312/246;
  //                   128x64/128 s2 263/169, 308/238; 128x32/128 s1 256/157, 289/216.
  //            D=128: 128x32/128 s1 277/199, 331/270; s2 276/194, 327/258;
  //                   64x64/128 s1 211/167, 240/213; 128x64/128 s1 271/173, 295/227
  //                   (it spills a little).
  //   backward D=64:  64x64/128 s1 186/135, 239/209; 64x16/128 s1 149/115, 176/161;
  //                   64x32/128 s1 132/107, 156/151; 128x64/256 s1 178/125, 221/196;
  //                   128x64/256 s2 180/127, 231/201.
  //   (forward D=64 128x64/128 s1 again after 32-bit index math: 257/179, 307/257.)
  //            D=128: 64x16/128 s1 155/118, 206/172; 64x32/128 s1 159/124, 200/193
  //                   (spilling 8 bytes); 128x32/256 s1 143/106, 177/163;
  //                   128x16/256 s1 144/108, 180/163; 64x64 no longer fits (Row).
  //                   After 32-bit index math, 64x32/128 s1 no longer spills
  //                   without the causal mask: 169/127, 212/192 (causal spills
  //                   4 bytes, so causal stays 64x16); 128x32/256 s1 146/111, 180/166.
  // Then (fourth session) the backward with P and dS staged in shared memory
  // (flashattn_bwd_staged, square warp tiles; --bwd-staged), same sweep,
  // before the preprocess fix (results/raw/2026-11-30-h200-session4-sweep.jsonl):
  //   backward D=128: staged 128x64/256 s1 193/135, 252/223 (spills 60 bytes);
  //                   s2 199/137, 268/231; s3 197/128, 268/208;
  //                   128x32/256 s1 119/94, 138/133; 64x32/128 s1 138/111, 167/160.
  //            D=64:  staged 128x128/256 s1 190/127, 245/202; s2 188/112, 245/167;
  //                   128x64/256 s1 167/121, 191/183; s2 169/126, 212/196;
  //                   64x64/128 s1 178/133, 213/202; s2 178/133, 224/206.
  // So: the forward runs 4 warps, one stage of cp.async loads ahead, and takes
  // 128 query rows (two m16 tiles per warp halve the ldmatrix per mma) except
  // where a causal D=64 launch is short enough that 64-row blocks balance
  // better. The backward stages P and dS (8 warps, 128 keys a block,
  // FlashAttention-2's arrangement).
  // After the preprocess fix and diagonal-only causal masks, causal D=64 at
  // S = 4096 / 16384 (bwd TFLOP/s): staged 128x128/256 s1 252/271, staged
  // 128x64/256 s2 216/226, the reference's 64x64/128 s1 233/241; forward
  // D=128 128x64/128 s1 against 128x32 at S = 1024: 0.477 ms vs 0.468,
  // causal 0.340 vs 0.319; forward causal D=64 128x64/128 s1 against 64x64
  // at S = 1024 / 4096: 196/271 TFLOP/s vs 206/266.
  // Fifth session, after barrier elision, paired stores and the skipped unit
  // rescale: forward causal D=64 128x64/128 s1 against 64x64 at S = 1024 /
  // 4096 / 16384, twice each: 223/288/314 and 224/290/316 TFLOP/s against
  // 228/282/284 and 227/280/284 (results/raw/2026-11-30-h200-session5-sweep-
  // fwd-causal-d64.jsonl): 64-row blocks balance the short causal launch
  // better, 128-row blocks win from S = 4096 on (by 11% at 16384).
  // Head dim 256 (2026-12-01, sixth session; tl-bench-gpu at (16, 16, 1024,
  // 256) / (4, 16, 4096, 256), non-causal and causal, TFLOP/s;
  // results/raw/2026-12-01-h200-session6-bench256.jsonl):
  //   forward  128x64/256 s1 257/214, 278/273; 128x32/256 s1 244/203,
  //            268/262; 64x64/128 s1 187/167, 199/194; 64x32/128 s2 163/146,
  //            171/169.
  //   backward staged 64x64/256 s1 224/196, 244/238; 64x32/256 s1 159/132,
  //            167/155; 64x32/256 s2 158/132, 163/154; 32x32/256 s1 116/103,
  //            119/115.
  // 128x64 forward blocks take 192 KiB of shared memory and 64x64 backward
  // blocks 209 KiB: sm_90a only. On sm_80 (163 KiB) the next best that fit:
  // the 128x32/256 forward (128 KiB) and the 64x32/256 backward (136.5 KiB),
  // both without spills there. With 4 warps the backward's accumulators need
  // 352 registers a thread (the Row layout).
  //
  // Architectures with less shared memory a block than the H200's 227 KiB:
  // 163 KiB (sm_80): the D=128 backward keeps one stage (161 KiB; two take
  // 193.5). 99 KiB (sm_86, sm_89): 4-warp backward blocks (64x64 at D=64, 65
  // KiB; 64x32 at D=128, 72.5 KiB), and at D=256 a 64x32/128 forward (96 KiB)
  // and a 32x32/256 backward without pipelining (68 KiB). Chosen to fit, not
  // measured.
  if (!supportedHeadDim(dim))
    throw std::invalid_argument("tunedConfig: head dim " + std::to_string(dim) +
                                " is not supported (64, 128 or 256)");
  const std::int64_t shared = sharedMemoryLimit(arch), KiB = 1024;
  if (shared < 99 * KiB)
    throw std::invalid_argument("tunedConfig: " + arch + " gives a block " +
                                std::to_string(shared / KiB) +
                                " KiB of shared memory; the attention configurations need "
                                "99 KiB or more (sm_80 and newer)");
  const bool large = shared >= 227 * KiB, medium = shared >= 163 * KiB;
  AttentionConfig c;
  c.fwdThreads = 128, c.fwdStages = 1;
  c.bwdThreads = 256, c.bwdStages = 1, c.bwdStaged = true;
  if (dim == 64) {
    c.fwdBlockM = causal && seqLen < 2048 ? 64 : 128, c.fwdBlockN = 64;
    c.bwdBlockM = 128, c.bwdBlockN = 128;
    if (!medium)
      c.bwdBlockM = 64, c.bwdBlockN = 64, c.bwdThreads = 128;
  } else if (dim == 128) {
    c.fwdBlockM = 128, c.fwdBlockN = 32;
    c.bwdBlockM = 128, c.bwdBlockN = 64, c.bwdStages = large ? 2 : 1;
    if (!medium)
      c.bwdBlockM = 64, c.bwdBlockN = 32, c.bwdThreads = 128;
  } else {
    c.fwdBlockM = 128, c.fwdBlockN = large ? 64 : 32, c.fwdThreads = 256;
    c.bwdBlockM = 64, c.bwdBlockN = large ? 64 : 32;
    if (!medium) {
      c.fwdBlockM = 64, c.fwdThreads = 128;
      c.bwdBlockM = 32, c.bwdStages = 0;
    }
  }
  return c;
}

bool supportedHeadDim(int dim) { return dim == 64 || dim == 128 || dim == 256; }

dsl::Program forwardKernel(int batch, int heads, int seq_len, int dim, bool is_causal,
                           const AttentionConfig &config) {
  BlockSizes b = config.fwdBlockM ? BlockSizes{config.fwdBlockM, config.fwdBlockN}
                                  : forwardBlocks(dim);
  return flashattn_fwd(batch, heads, seq_len, dim, is_causal, b.block_M, b.block_N,
                       config.fwdThreads, config.fwdStages);
}

dsl::Program backwardKernel(int batch, int heads, int seq_len, int dim, bool is_causal,
                            const AttentionConfig &config) {
  BlockSizes b = config.bwdBlockM ? BlockSizes{config.bwdBlockM, config.bwdBlockN}
                                  : backwardBlocks(dim);
  auto program = config.bwdStaged ? flashattn_bwd_staged : flashattn_bwd;
  return program(batch, heads, seq_len, dim, is_causal, b.block_M, b.block_N,
                 config.bwdThreads, config.bwdStages);
}

namespace {

/// Q, K, V and dO: f16 tensors of one [batch, seq, heads, dim] shape, with a
/// head dim the programs take.
void checkAttentionInputs(const HostTensor &Q, const HostTensor &K, const HostTensor &V,
                          const HostTensor &dO) {
  const std::vector<std::int64_t> &shape = Q.shape();
  if (shape.size() != 4)
    throw std::invalid_argument("attention: Q must be [batch, seq, heads, dim], got " +
                                runtime::formatShape(shape));
  for (auto [name, tensor] : {std::pair{"Q", &Q}, {"K", &K}, {"V", &V}, {"dO", &dO}}) {
    if (tensor->shape() != shape)
      throw std::invalid_argument(std::string("attention: ") + name + " is " +
                                  runtime::formatShape(tensor->shape()) + " but Q is " +
                                  runtime::formatShape(shape));
    if (tensor->dtype() != dsl::f16)
      throw std::invalid_argument(std::string("attention: ") + name + " must be f16, got " +
                                  dsl::toString(tensor->dtype()));
  }
  for (std::int64_t extent : shape)
    if (extent < 1 || extent > std::numeric_limits<int>::max())
      throw std::invalid_argument("attention: every extent of " + runtime::formatShape(shape) +
                                  " must be between 1 and 2^31 - 1");
  if (!supportedHeadDim(static_cast<int>(shape[3])))
    throw std::invalid_argument("attention: head dim " + std::to_string(shape[3]) +
                                " is not supported (64, 128 or 256)");
}

/// Runs `kernel` on `inputs`, its outputs allocated here (zeros, or NaN for
/// Outputs::poisoned) and returned, as out_idx does.
std::vector<HostTensor> runWithOutputs(const Kernel &kernel, std::vector<HostTensor *> inputs,
                                       Outputs outputs) {
  std::vector<HostTensor> results;
  for (const dsl::Param &param : kernel.params())
    if (param.output) {
      results.emplace_back(param.shape, param.dtype);
      if (outputs == Outputs::poisoned)
        results.back().fill(std::numeric_limits<float>::quiet_NaN());
    }
  std::vector<HostTensor *> args;
  std::size_t nextInput = 0, nextOutput = 0;
  for (const dsl::Param &param : kernel.params())
    args.push_back(param.output ? &results.at(nextOutput++) : inputs.at(nextInput++));
  kernel.run(args);
  return results;
}

} // namespace

AttentionResult attentionForwardBackward(HostTensor &Q, HostTensor &K, HostTensor &V,
                                         HostTensor &dO, bool causal, Backend backend,
                                         AttentionConfig config, Outputs outputs) {
  checkAttentionInputs(Q, K, V, dO);
  const std::vector<std::int64_t> &shape = Q.shape();
  int batch = static_cast<int>(shape[0]), seq = static_cast<int>(shape[1]);
  int heads = static_cast<int>(shape[2]), dim = static_cast<int>(shape[3]);
  auto fwd = compile(forwardKernel(batch, heads, seq, dim, causal, config), backend);
  auto prep = compile(flashattn_bwd_preprocess(batch, heads, seq, dim), backend);
  auto bwd = compile(backwardKernel(batch, heads, seq, dim, causal, config), backend);
  auto post = compile(flashattn_bwd_postprocess(batch, heads, seq, dim), backend);

  std::vector<HostTensor> o_lse = runWithOutputs(*fwd, {&Q, &K, &V}, outputs);
  std::vector<HostTensor> delta = runWithOutputs(*prep, {&o_lse[0], &dO}, outputs);
  HostTensor dQ(dqAccumulatorShape(batch, heads, seq, dim), dsl::f32); // zeros
  std::vector<HostTensor> dk_dv =
      runWithOutputs(*bwd, {&Q, &K, &V, &dO, &o_lse[1], &delta[0], &dQ}, outputs);
  std::vector<HostTensor> dq = runWithOutputs(*post, {&dQ}, outputs);
  return {o_lse[0], o_lse[1], dq[0], dk_dv[0], dk_dv[1]};
}

} // namespace tl::kernels::mha
