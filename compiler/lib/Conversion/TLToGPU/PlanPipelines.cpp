//===- PlanPipelines.cpp - tl-plan-pipelines: async copies in the IR ------===//
//
// Records planPipelines' decisions (PipelinePlan.h) on the tile program, so
// that they can be read, tested and changed before the lowering follows them:
// a copy issued asynchronously carries `tl.async_copy` (bytes a piece), one
// issued ahead of its loop `tl.async_entry_copy`, a loop that waits for such
// copies `tl.waits_entry_copies`, one whose wgmma batches stay in flight
// `tl.wgmma_in_flight`, one whose copies go by TMA `tl.tma_loads`, and a tile with rotating copies
// `tl.rotating_copies`. readPipelinePlans rebuilds the plans from them.
//
//===----------------------------------------------------------------------===//
#include "PipelinePlan.h"

#include "tl/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_PLANPIPELINES
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {

PipelinePlans readPipelinePlans(Operation *root) {
  PipelinePlans plans;
  TLDialect &tl = tlDialect(root);
  root->walk([&](Operation *op) {
    if (auto alloc = dyn_cast<AllocSharedOp>(op)) {
      if (IntegerAttr copies = tl.getRotatingCopiesAttrHelper().getAttr(alloc))
        plans.buffers[alloc.getResult()] = copies.getInt();
    } else if (auto copy = dyn_cast<CopyOp>(op)) {
      if (IntegerAttr bytes = tl.getAsyncEntryCopyAttrHelper().getAttr(copy))
        plans.entryCopies[copy] = bytes.getInt();
    } else if (auto loop = dyn_cast<PipelinedOp>(op)) {
      PipelinePlan plan;
      plan.stages = static_cast<int64_t>(loop.getNumStages());
      plan.afterEntryCopies = tl.getWaitsEntryCopiesAttrHelper().isAttrPresent(loop);
      plan.wgmmaInFlight = tl.getWgmmaInFlightAttrHelper().isAttrPresent(loop);
      plan.tmaLoads = tl.getTmaLoadsAttrHelper().isAttrPresent(loop);
      plan.warpSpecialized = tl.getWarpSpecializedAttrHelper().isAttrPresent(loop);
      for (auto copy : loop.getBody().front().getOps<CopyOp>())
        if (IntegerAttr bytes = tl.getAsyncCopyAttrHelper().getAttr(copy)) {
          plan.copies.push_back(copy);
          plan.pieceBytes.push_back(bytes.getInt());
        }
      if (!plan.copies.empty())
        plans.loops[loop] = std::move(plan);
    }
  });
  return plans;
}

namespace {

struct PlanPipelinesPass : public tl::impl::PlanPipelinesBase<PlanPipelinesPass> {
  using PlanPipelinesBase::PlanPipelinesBase;
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      PipelinePlans plans =
          planPipelines(kernel, lowering::indexMapLayouts(kernel), tma, warpSpecialize);
      TLDialect &tl = tlDialect(kernel);
      // use_producer_warpgroup where a TMA loop cannot take one is the
      // author's error, not a request to drop (warpSpecializable's
      // conditions, PipelinePlan.h); with TMA or warp specialisation turned
      // off (TLC_TMA=0, TLC_WARP_SPECIALIZE=0) there is nothing to refuse.
      if (warpSpecialize && tl.getProducerWarpgroupAttrHelper().isAttrPresent(kernel) &&
          llvm::none_of(plans.loops, [](auto &entry) { return entry.second.warpSpecialized; }))
        for (auto &[loop, plan] : plans.loops)
          if (plan.tmaLoads) {
            loop->emitError(
                "use_producer_warpgroup: this pipelined loop loads by TMA but cannot take a "
                "producer warpgroup: it must stand directly in the kernel body, with bounds and "
                "load offsets computable at the kernel's start, at most 896 threads, and no "
                "op before it may touch the tiles the producer fills");
            return signalPassFailure();
          }
      Builder b(kernel.getContext());
      for (auto &[loop, plan] : plans.loops) {
        for (auto [copy, bytes] : llvm::zip(plan.copies, plan.pieceBytes))
          tl.getAsyncCopyAttrHelper().setAttr(copy, b.getI64IntegerAttr(bytes));
        if (plan.afterEntryCopies)
          tl.getWaitsEntryCopiesAttrHelper().setAttr(loop, b.getUnitAttr());
        if (plan.wgmmaInFlight)
          tl.getWgmmaInFlightAttrHelper().setAttr(loop, b.getUnitAttr());
        if (plan.tmaLoads)
          tl.getTmaLoadsAttrHelper().setAttr(loop, b.getUnitAttr());
        if (plan.warpSpecialized)
          tl.getWarpSpecializedAttrHelper().setAttr(loop, b.getUnitAttr());
      }
      for (auto &[tile, copies] : plans.buffers)
        tl.getRotatingCopiesAttrHelper().setAttr(tile.getDefiningOp(), b.getI64IntegerAttr(copies));
      for (auto &[copy, bytes] : plans.entryCopies)
        tl.getAsyncEntryCopyAttrHelper().setAttr(copy, b.getI64IntegerAttr(bytes));
    });
  }
};

} // namespace
} // namespace tl::gpu_lowering
