// Flash-attention forward and backward: the four programs chained as the
// reference test chains them (fwd -> preprocess -> bwd -> postprocess), with
// the reference's block sizes, on the CPU backend or the GPU. Light header.
#pragma once

#include "tl/runtime/HostTensor.h"

namespace tl::kernels::mha {

struct AttentionResult {
  runtime::HostTensor O, lse, dQ, dK, dV;
};

enum class Backend { cpu, gpu };

/// Block sizes, threads and pipeline stages of the forward and backward
/// kernels; the default is the reference's configuration.
struct AttentionConfig {
  int fwdBlockM = 0, fwdBlockN = 0, fwdThreads = 32, fwdStages = 0; // 0: the reference's blocks
  int bwdBlockM = 0, bwdBlockN = 0, bwdThreads = 32, bwdStages = 0;
  bool bwdStaged = false; // flashattn_bwd_staged instead of the reference's flashattn_bwd
};

/// The configuration tuned on the H200 for a head dim, causality and
/// sequence length (0: short; the measurements that chose it are next to it
/// in attention.cpp).
AttentionConfig tunedConfig(int dim, bool causal, int seqLen = 0);

/// Q, K, V, dO: [batch, seq, heads, dim] f16. Compiles the four programs for
/// this shape and runs them.
AttentionResult attentionForwardBackward(runtime::HostTensor &Q, runtime::HostTensor &K,
                                         runtime::HostTensor &V, runtime::HostTensor &dO,
                                         bool causal, Backend backend = Backend::cpu,
                                         AttentionConfig config = {});

} // namespace tl::kernels::mha
