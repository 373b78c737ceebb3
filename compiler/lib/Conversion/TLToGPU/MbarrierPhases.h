//===- MbarrierPhases.h - tl-check-sync's proof of mbarrier phases --------===//
#pragma once

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace tl::gpu_lowering {

/// Proves that every mbarrier wait of `func` passes on the one phase it is
/// meant to, in every order its threads can run in, and that nothing hangs;
/// otherwise emits an error at the op that breaks it (MbarrierPhases.cpp).
mlir::LogicalResult proveMbarrierPhases(mlir::gpu::GPUFuncOp func);

} // namespace tl::gpu_lowering
