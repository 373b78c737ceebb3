//===- CheckSynchronisation.cpp - tl-check-sync: Hopper sync, before it runs ===//
//
// The Hopper path synchronises through mechanisms the GPU does not check:
// an mbarrier armed for the wrong number of bytes never completes (a hang)
// or completes before its data (a race); a wgmma under control flow ptxas
// cannot prove uniform in its warpgroup, or whose accumulators something
// touches before a wait, is silently serialised. This pass checks the
// lowered kernel for each and makes it a compile error at the op's location
// (for the TMA arming, the pipelined loop's: the author's line), so that a
// lowering mistake shows here, not on the device.
//
//===----------------------------------------------------------------------===//
#include "MbarrierPhases.h"
#include "SyncTraces.h"

#include "tl/Conversion/Passes.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_CHECKSYNCHRONISATION
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

/// Every arming of an mbarrier for a constant byte count is matched by the
/// boxes issued after it in its block on the same mbarrier.
LogicalResult checkTransactionBytes(gpu::GPUFuncOp func) {
  WalkResult result = func.walk([&](NVVM::MBarrierArriveExpectTxOp arm) {
    APInt expected;
    if (!matchPattern(arm.getTxcount(), m_ConstantInt(&expected)))
      return WalkResult::advance();
    int64_t brought = 0;
    for (Operation *op = arm->getNextNode(); op; op = op->getNextNode()) {
      if (auto again = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op);
          again && again.getAddr() == arm.getAddr())
        break;
      auto box = dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
      if (!box || box.getMbar() != arm.getAddr())
        continue;
      std::optional<int64_t> bytes = tmaBoxBytes(func, box.getTmaDescriptor());
      if (!bytes) {
        box.emitError("a TMA box through a tensor map the kernel does not list");
        return WalkResult::interrupt();
      }
      brought += *bytes;
    }
    if (brought != expected.getSExtValue()) {
      arm.emitError() << "an mbarrier is armed for " << expected.getSExtValue()
                      << " bytes, but the TMA boxes issued on it bring " << brought
                      << ": its phase would "
                      << (brought < expected.getSExtValue() ? "never complete"
                                                            : "complete before its data");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// `value` depends on the thread index other than through a shuffle (whose
/// broadcast result is warp-uniform).
bool threadDependent(Value value, int depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 64 || isa<gpu::ShuffleOp>(def))
    return false;
  if (isa<gpu::ThreadIdOp, gpu::LaneIdOp, NVVM::ThreadIdXOp, NVVM::LaneIdOp>(def))
    return true;
  return llvm::any_of(def->getOperands(),
                      [&](Value operand) { return threadDependent(operand, depth + 1); });
}

/// An error at `at` with a note at `where`; stops the walk.
WalkResult refuse(Operation *at, const Twine &message, Location where, const Twine &note) {
  at->emitError(message).attachNote(where) << note;
  return WalkResult::interrupt();
}

/// A wgmma: the NVVM op (A from shared memory) or the lowering's inline PTX
/// (A from registers, which the dialect lacks).
bool isWgmma(Operation *op) {
  if (isa<NVVM::WgmmaMmaAsyncOp>(op))
    return true;
  auto assembly = dyn_cast<LLVM::InlineAsmOp>(op);
  return assembly && assembly.getAsmString().contains("wgmma.mma_async");
}

/// Passes a wgmma's accumulator on to wgmmas only (the register-A form takes
/// its accumulators one by one).
bool feedsWgmmaOnly(Operation *op) {
  return isa<LLVM::ExtractValueOp>(op) && !op->use_empty() &&
         llvm::all_of(op->getUsers(), [](Operation *user) { return isWgmma(user); });
}

/// Every wgmma sits under no branch on the thread index, and its
/// accumulators are used by nothing but wgmma before the next wait_group in
/// its block.
LogicalResult checkWgmma(gpu::GPUFuncOp func) {
  WalkResult result = func.walk([&](Operation *wgmma) {
    if (!isWgmma(wgmma))
      return WalkResult::advance();
    for (Operation *parent = wgmma->getParentOp(); parent && parent != func;
         parent = parent->getParentOp())
      if (auto branch = dyn_cast<scf::IfOp>(parent);
          branch && threadDependent(branch.getCondition()))
        return refuse(wgmma,
                      "a wgmma under a branch on the thread index: ptxas cannot prove it "
                      "uniform in the warpgroup and serialises every wgmma (branch on a "
                      "warpgroup index broadcast by a shuffle instead)",
                      branch.getLoc(), "the branch");
    for (Operation *op = wgmma->getNextNode(); op && !isa<NVVM::WgmmaWaitGroupSyncOp>(op);
         op = op->getNextNode()) {
      bool touches = false;
      if (!isWgmma(op) && !feedsWgmmaOnly(op))
        op->walk([&](Operation *inner) {
          touches |= llvm::is_contained(inner->getOperands(), wgmma->getResult(0));
        });
      if (touches)
        return refuse(op,
                      "touches a wgmma's accumulators before wgmma.wait_group: ptxas would "
                      "serialise the wgmma",
                      wgmma->getLoc(), "the wgmma");
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct CheckSynchronisationPass
    : public tl::impl::CheckSynchronisationBase<CheckSynchronisationPass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (failed(checkTransactionBytes(func)) || failed(checkWgmma(func)) ||
          failed(proveMbarrierPhases(func)))
        signalPassFailure();
    });
  }
};

} // namespace
} // namespace tl::gpu_lowering
