//===- OpaqueMove.h - a register move LLVM keeps where it is ---------------===//
//
// The lowering holds some values in place (wgmma descriptors, accumulator
// slots) with an inline-assembly `mov` marked as having side effects, so that
// LLVM neither hoists nor merges them (KernelLowering::opaqueMove). It
// touches no memory: tl-elide-barriers (async-proxy) sees through it by the
// same assembly text, defined here once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace tl::gpu_lowering {

/// The assembly of an opaque move of a 32-bit (f32) or 64-bit value.
inline llvm::StringRef opaqueMoveAssembly(bool wide) {
  return wide ? "mov.b64 $0, $1;" : "mov.b32 $0, $1;";
}

/// Whether `op` is an opaque move (KernelLowering::opaqueMove).
inline bool isOpaqueMove(mlir::Operation *op) {
  auto move = llvm::dyn_cast_or_null<mlir::LLVM::InlineAsmOp>(op);
  return move && move->getNumOperands() == 1 &&
         (move.getAsmString() == opaqueMoveAssembly(false) ||
          move.getAsmString() == opaqueMoveAssembly(true));
}

} // namespace tl::gpu_lowering
