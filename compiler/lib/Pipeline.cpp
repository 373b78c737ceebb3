//===- Pipeline.cpp - the pass order of each target, in one place ---------===//
#include "tl/Compiler/Pipeline.h"

#include "tl/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace tl {
namespace {

/// The options of the tl-gpu-lowering pipeline (tl-opt), as
/// GPUPipelineOptions.
struct GPULoweringOptions : public mlir::PassPipelineOptions<GPULoweringOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("named in resource-limit errors; sm_90 and sm_90a add "
                                            "accumulator tiles with vector reductions"),
                             llvm::cl::init("sm_90a")};
  Option<int64_t> sharedMemoryLimit{
      *this, "shared-memory-limit",
      llvm::cl::desc("dynamic shared memory a block may use, in bytes (0: unchecked)"),
      llvm::cl::init(0)};
  Option<bool> fastMath{*this, "fast-math",
                        llvm::cl::desc("rewrites that may change results in the last bit"),
                        llvm::cl::init(true)};
  Option<bool> wgmma{*this, "wgmma", llvm::cl::desc("wgmma for the gemms that allow it (sm_90a)"),
                     llvm::cl::init(false)};
  Option<bool> tma{*this, "tma", llvm::cl::desc("TMA loads where the wgmma path allows them"),
                   llvm::cl::init(true)};
  Option<bool> warpSpecialize{*this, "warp-specialize",
                              llvm::cl::desc("a producer warpgroup for a TMA loop that allows one"),
                              llvm::cl::init(true)};
  Option<bool> elideAsyncBarriers{
      *this, "elide-async-barriers",
      llvm::cl::desc("tl-elide-barriers sees through wgmma, proxy fences and the consumers' "
                     "barrier (async-proxy)"),
      llvm::cl::init(false)};
  Option<bool> stmatrix{
      *this, "stmatrix",
      llvm::cl::desc("stmatrix.x4 for an Mma fragment's stores to a 16-bit shared tile, "
                     "a 16x16 block each (sm_90, sm_90a)"),
      llvm::cl::init(false)};
  Option<bool> lowWordDescriptors{
      *this, "low-word-descriptors",
      llvm::cl::desc("wgmma descriptors' steps add 32 bits to their low word"),
      llvm::cl::init(false)};
  Option<bool> earlyTileHandBack{
      *this, "early-tile-hand-back",
      llvm::cl::desc("in turns, the producer hands a reduce-added tile back once read, "
                     "before the turn passes"),
      llvm::cl::init(false)};
};

} // namespace

void registerTLPipelines() {
  mlir::PassPipelineRegistration<GPULoweringOptions>(
      "tl-gpu-lowering",
      "tl -> per-thread code in a gpu.module: tl-infer-layouts, tl-plan-pipelines, "
      "tl-plan-tma-copies (wgmma=1), tl-plan-shared-memory, convert-tl-to-gpu, "
      "tl-approximate-math, tl-elide-barriers",
      [](mlir::OpPassManager &pm, const GPULoweringOptions &options) {
        buildGPULowering(pm, {options.target, options.sharedMemoryLimit, options.fastMath,
                              options.wgmma, options.tma, options.warpSpecialize,
                              options.elideAsyncBarriers, options.stmatrix,
                              options.lowWordDescriptors, options.earlyTileHandBack});
      });
}

void buildCPUPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createConvertTLToCPU());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(mlir::createLoopInvariantCodeMotionPass());
  pm.addPass(mlir::createSCFToControlFlowPass());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(mlir::createConvertIndexToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
}

void buildGPUPlanning(mlir::OpPassManager &pm, const GPUPipelineOptions &options) {
  InferFragmentLayoutsOptions layouts;
  layouts.wgmma = options.wgmma;
  pm.addPass(createInferFragmentLayouts(layouts));
  pm.addPass(createMarkUnitRescales());
  PlanPipelinesOptions pipelines;
  pipelines.tma = options.tma;
  pipelines.warpSpecialize = options.warpSpecialize;
  pm.addPass(createPlanPipelines(pipelines));
  if (options.wgmma && options.tma) // sm_90a
    pm.addPass(createPlanTmaCopies());
  pm.addPass(createPlanSharedMemory());
}

void buildGPULowering(mlir::OpPassManager &pm, const GPUPipelineOptions &options) {
  ConvertTLToGPUOptions lowering;
  lowering.sharedMemoryLimit = options.sharedMemoryLimit;
  lowering.targetName = options.target;
  lowering.sm90aPlans = options.target == "sm_90a";
  lowering.fastMath = options.fastMath;
  lowering.stmatrix = options.stmatrix && options.target.starts_with("sm_90"); // sm_90 has it
  lowering.lowWordDescriptors = options.lowWordDescriptors;
  lowering.earlyTileHandBack = options.earlyTileHandBack;
  buildGPUPlanning(pm, options);
  pm.addPass(createConvertTLToGPU(lowering));
  pm.addPass(createApproximateMath());
  pm.addPass(createElideBarriers({.asyncProxy = options.elideAsyncBarriers}));
  pm.addPass(createCheckSynchronisation());
}

void buildGPUPipeline(mlir::OpPassManager &pm, const GPUPipelineOptions &options) {
  buildGPULowering(pm, options);
  mlir::GreedyRewriteConfig canon;
  canon.setRegionSimplificationLevel(mlir::GreedySimplifyRegionLevel::Disabled);
  pm.addPass(mlir::createCanonicalizerPass(canon));
  pm.addPass(mlir::createCSEPass());
  pm.addPass(mlir::createLoopInvariantCodeMotionPass());
  // Index math that integer range analysis proves fits 32 bits (thread and
  // loop indices, tile offsets) is done in 32 bits: half the registers, one
  // instruction per add or compare instead of two. The thread and block
  // indices carry their bounds as upper_bound on the ops (ConvertTLToGPU),
  // not as known launch extents on the gpu.func: those become .maxntid, which
  // moved ptxas's register allocation into spills for the backward kernels.
  // Loop counters are made i32 first where their bounds allow.
  pm.nest<mlir::gpu::GPUModuleOp>().addPass(createNarrowLoopIndices());
  mlir::arith::ArithIntRangeNarrowingOptions narrowing;
  narrowing.bitwidthsSupported = {32};
  pm.nest<mlir::gpu::GPUModuleOp>().addPass(mlir::arith::createArithIntRangeNarrowing(narrowing));
  pm.addPass(mlir::createCanonicalizerPass(canon));
  // The conversions below run one-shot: their patterns always succeed, so
  // the rollback bookkeeping (a tenth of the NVVM conversion) buys nothing.
  pm.addPass(mlir::createSCFToControlFlowPass({.allowPatternRollback = false}));
  mlir::OpPassManager &kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  kernels.addPass(mlir::memref::createExpandStridedMetadataPass());
  kernels.addPass(mlir::createLowerAffinePass());
  mlir::ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true; // kernel parameters are plain pointers
  nvvm.allowPatternRollback = false;
  kernels.addPass(mlir::createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createPassTensorMaps());
  // NVVM ops with no LLVM intrinsic (wgmma.mma_async) become inline PTX.
  kernels.addPass(mlir::createConvertNVVMToLLVMPass());
  kernels.addPass(mlir::createReconcileUnrealizedCastsPass());
}

} // namespace tl
