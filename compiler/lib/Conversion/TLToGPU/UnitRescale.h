//===- UnitRescale.h - online softmax's rescale, recognised ---------------===//
#pragma once

#include "tl/Dialect/TL/TLDialect.h"

namespace tl::gpu_lowering {

/// The per-row factor of `op` when it is online softmax's rescale of an
/// accumulator, `acc[i, j] = acc[i, j] * scale[i]` with acc in an mma or
/// wgmma accumulator layout and scale in the matching row layout (the layouts
/// tl-infer-layouts recorded); null otherwise.
mlir::Value unitRescaleFactor(ParallelOp op);

} // namespace tl::gpu_lowering
