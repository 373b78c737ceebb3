// Flash-attention forward and backward on the CPU backend: the four programs
// chained as the reference test chains them (fwd -> preprocess -> bwd ->
// postprocess), with the reference's block sizes. Light header.
#pragma once

#include "tl/runtime/HostTensor.h"

namespace tl::kernels::mha {

struct AttentionResult {
  runtime::HostTensor O, lse, dQ, dK, dV;
};

/// Q, K, V, dO: [batch, seq, heads, dim] f16. Compiles the four programs for
/// this shape and runs them.
AttentionResult attentionForwardBackwardCPU(runtime::HostTensor &Q,
                                            runtime::HostTensor &K,
                                            runtime::HostTensor &V,
                                            runtime::HostTensor &dO, bool causal);

} // namespace tl::kernels::mha
