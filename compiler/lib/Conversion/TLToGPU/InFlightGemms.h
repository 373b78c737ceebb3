//===- InFlightGemms.h - where a gemm left in flight completes -------------===//
//
// A gemm with wg_wait = -1 stays in flight (wgmma's commit without a wait)
// until a tl.wait_wgmma N that leaves fewer than the gemms issued after it
// pending: wait_wgmma(N) completes all but the newest N. Until then the
// tensor cores read its operand tiles and write its accumulator, so what
// plans tiles and registers (tl-plan-shared-memory, tl-infer-layouts) keeps
// them live to that wait. The lowering itself (LowerWgmma.cpp) tracks the
// same queue as it goes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Dialect/TL/TLDialect.h"

namespace tl::gpu_lowering {

/// The tl.wait_wgmma that completes `gemm`, left in flight: the first after
/// it in its block (after the tl.pingpong that holds it: its body is issued
/// where it stands) with no more gemms pending than were issued since; null
/// for a gemm that completes where it stands, or if no wait follows.
inline WaitWgmmaOp completingWait(GemmOp gemm) {
  if (gemm.getWgWaitAttr().getInt() != -1)
    return nullptr;
  int64_t newer = 0;
  for (mlir::Operation *op = gemm.getOperation(); op;) {
    for (mlir::Operation *after = op->getNextNode(); after; after = after->getNextNode()) {
      after->walk([&](GemmOp issued) { newer += issued.getWgWaitAttr().getInt() == -1; });
      if (auto wait = llvm::dyn_cast<WaitWgmmaOp>(after);
          wait && wait.getPendingAttr().getInt() <= newer)
        return wait;
    }
    mlir::Operation *parent = op->getParentOp();
    op = parent && llvm::isa<PingpongOp>(parent) ? parent : nullptr;
  }
  return nullptr;
}

} // namespace tl::gpu_lowering
