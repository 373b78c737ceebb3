//===- TLToGPU.cpp - lower tl programs to per-thread GPU code -------------===//
//
// The pass: each func.func holding a tl.kernel becomes a gpu.func kernel in
// a gpu.module, which KernelLowering (KernelLowering.h) then lowers in place.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

#include "tl/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_CONVERTTLTOGPU
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

/// A kernel's plans that need sm_90a's instructions (recorded by an sm_90a
/// planning or by hand in tl text), compiled for another target: an error at
/// the op that carries the first, not a crash in LLVM's instruction
/// selection (the fuzzer found a TMA copy's proxy fence so on sm_80).
LogicalResult refuseSm90aPlans(KernelOp kernel, StringRef target) {
  TLDialect &tl = tlDialect(kernel);
  WalkResult walk = kernel.walk([&](Operation *op) {
    const char *what = nullptr;
    if (tl.getTmaCopyAttrHelper().isAttrPresent(op))
      what = "a TMA copy (tl.tma_copy)";
    else if (tl.getTmaLoadsAttrHelper().isAttrPresent(op))
      what = "TMA loads (tl.tma_loads)";
    else if (tl.getWarpSpecializedAttrHelper().isAttrPresent(op))
      what = "a producer warpgroup (tl.warp_specialized)";
    else if (tl.getProducerReduceAttrHelper().isAttrPresent(op))
      what = "a reduce-add by a producer warpgroup (tl.producer_reduce)";
    else if (tl.getWgmmaInFlightAttrHelper().isAttrPresent(op))
      what = "wgmma batches in flight (tl.wgmma_in_flight)";
    else if (Attribute layout = tl.getLayoutAttrHelper().getAttr(op);
             layout && isa<WgmmaLayoutAttr, WgmmaRowLayoutAttr>(layout))
      what = "a wgmma fragment layout";
    if (!what)
      return WalkResult::advance();
    op->emitOpError() << "is planned for " << what << ", which needs sm_90a; the target is "
                      << target;
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// use_swizzle: block (x, y) takes the work of the block at the same launch
/// position in an order that walks down `panel` rows of y before moving
/// along x. With p = y * gx + x, the panel's first row f = p / (panel * gx) *
/// panel and its rows r = panel, or gy % panel for a short last panel:
/// y' = f + (p % (panel * gx)) % r, x' = (p % (panel * gx)) / r (a permutation
/// of the grid). Every divisor is a constant, so the ops are pure (a producer
/// warpgroup computes them too) and cheap.
void swizzleBlocks(OpBuilder &b, Location loc, ArrayRef<int64_t> grid, int64_t panel,
                   SmallVectorImpl<Value> &blocks) {
  auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value p = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blocks[1], constant(grid[0])), blocks[0]);
  Value panelBlocks = constant(panel * grid[0]);
  Value first =
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, p, panelBlocks), constant(panel));
  Value within = arith::RemUIOp::create(b, loc, p, panelBlocks);
  Value row = arith::RemUIOp::create(b, loc, within, constant(panel));
  Value column = arith::DivUIOp::create(b, loc, within, constant(panel));
  if (int64_t tail = grid[1] % panel) {
    Value full = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, first,
                                       constant(grid[1] - tail));
    row = arith::SelectOp::create(b, loc, full, row,
                                  arith::RemUIOp::create(b, loc, within, constant(tail)));
    column = arith::SelectOp::create(b, loc, full, column,
                                     arith::DivUIOp::create(b, loc, within, constant(tail)));
  }
  blocks[1] = arith::AddIOp::create(b, loc, first, row);
  blocks[0] = column;
}

/// Moves a func.func holding a tl.kernel into a gpu.module as a gpu.func
/// kernel; block indices become gpu.block_id (reordered by use_swizzle).
gpu::GPUFuncOp outlineKernel(ModuleOp module, func::FuncOp func, KernelOp kernel) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = func.getLoc();
  auto gpuModule = gpu::GPUModuleOp::create(b, loc, (func.getName() + "_kernels").str());
  b.setInsertionPointToStart(gpuModule.getBody());
  auto gpuFunc = gpu::GPUFuncOp::create(b, loc, func.getName(), func.getFunctionType());
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  TLDialect &tl = tlDialect(kernel);
  tl.getGridAttrHelper().setAttr(gpuFunc, kernel.getGridAttr());
  tl.getThreadsAttrHelper().setAttr(gpuFunc, kernel.getThreadsAttr());
  if (StringAttr layouts = tl.getFragmentLayoutAttrHelper().getAttr(kernel))
    tl.getFragmentLayoutAttrHelper().setAttr(gpuFunc, layouts);
  Block &entry = gpuFunc.getBody().front();
  b.setInsertionPointToStart(&entry);
  const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
  Block &body = kernel.getBody().front();
  SmallVector<Value> blocks;
  // Each block index bounded by its grid extent, for integer range analysis.
  for (auto [d, arg] : llvm::enumerate(body.getArguments()))
    blocks.push_back(gpu::BlockIdOp::create(b, loc, dims[d], b.getIndexAttr(kernel.getGrid()[d])));
  if (IntegerAttr panel = tl.getSwizzlePanelAttrHelper().getAttr(kernel);
      panel && blocks.size() >= 2)
    swizzleBlocks(b, loc, kernel.getGrid(), panel.getInt(), blocks);
  for (auto [arg, block] : llvm::zip(body.getArguments(), blocks))
    arg.replaceAllUsesWith(block);
  for (auto [from, to] : llvm::zip(func.getArguments(), entry.getArguments()))
    from.replaceAllUsesWith(to);
  entry.getOperations().splice(entry.end(), body.getOperations());
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);
  func.erase();
  return gpuFunc;
}

struct ConvertTLToGPUPass : public tl::impl::ConvertTLToGPUBase<ConvertTLToGPUPass> {
  using ConvertTLToGPUBase::ConvertTLToGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, KernelOp>> kernels;
    module.walk([&](KernelOp kernel) {
      kernels.push_back({kernel->getParentOfType<func::FuncOp>(), kernel});
    });
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(&getContext()));
    for (auto [func, kernel] : kernels) {
      if (!func) {
        kernel.emitOpError("must be inside a func.func");
        return signalPassFailure();
      }
      if (!sm90aPlans && failed(refuseSm90aPlans(kernel, targetName)))
        return signalPassFailure();
      int64_t threads = static_cast<int64_t>(kernel.getThreads());
      gpu::GPUFuncOp gpuFunc = outlineKernel(module, func, kernel);
      // Index-map layouts of kernel parameters only: a tile's or fragment's
      // placement is the lowering's, and their ops are replaced as it goes
      // (a key left behind would dangle; the fuzzer found one reused).
      LayoutMap layouts;
      for (auto [buffer, layout] : indexMapLayouts(gpuFunc))
        if (auto argument = dyn_cast<BlockArgument>(buffer);
            argument && argument.getOwner() == &gpuFunc.getBody().front())
          layouts[buffer] = layout;
      ResourceLimits limits{.sharedBytes = sharedMemoryLimit,
                            .target = targetName,
                            .fastMath = fastMath,
                            .stmatrix = stmatrix,
                            .lowWordDescriptors = lowWordDescriptors,
                            .earlyTileHandBack = earlyTileHandBack};
      if (failed(KernelLowering(gpuFunc, threads, layouts, limits).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace tl::gpu_lowering
