//===- KernelPlacement.h - where a tl.kernel sits and what it sees --------===//
//
// Both lowerings turn the function that holds a kernel into that kernel, so
// a kernel sits directly in a func.func, alone there but for the return, and
// takes from outside only the function's arguments, its global tensors.
// KernelOp's verifiers (TLOps.cpp) call these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Dialect/TL/TLDialect.h"

namespace tl {

/// Not nested in a kernel; directly in a func.func of one block that returns
/// nothing. (KernelOp::verify, before the body is verified.)
mlir::LogicalResult verifyKernelPlacement(KernelOp kernel);

/// The body uses no value defined outside the kernel but the function's
/// arguments; the function holds nothing else but its return; its arguments
/// are global tensors. (KernelOp::verifyRegions, once the body verified.)
mlir::LogicalResult verifyKernelSurroundings(KernelOp kernel);

} // namespace tl
