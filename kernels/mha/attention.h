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

/// Block sizes and threads of the forward and backward kernels; the default
/// is the reference's configuration.
struct AttentionConfig {
  int fwdBlockM = 0, fwdBlockN = 0, fwdThreads = 32; // 0: the reference's blocks
  int bwdBlockM = 0, bwdBlockN = 0, bwdThreads = 32;
};

/// Q, K, V, dO: [batch, seq, heads, dim] f16. Compiles the four programs for
/// this shape and runs them.
AttentionResult attentionForwardBackward(runtime::HostTensor &Q, runtime::HostTensor &K,
                                         runtime::HostTensor &V, runtime::HostTensor &dO,
                                         bool causal, Backend backend = Backend::cpu,
                                         AttentionConfig config = {});

} // namespace tl::kernels::mha
