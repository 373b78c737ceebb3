//===- Pipeline.h - the pass order of each target, in one place -----------===//
#pragma once

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
}

namespace tl {

/// tl -> loops over memrefs -> LLVM dialect, for the host JIT.
void buildCPUPipeline(mlir::OpPassManager &pm);

/// What the GPU lowering checks against: the target's name and the dynamic
/// shared memory one block may use (0: unchecked).
struct GPUPipelineOptions {
  std::string target = "sm_90a";
  std::int64_t sharedMemoryLimit = 0;
  /// Rewrites that may change results in the last bit (shared divisors).
  bool fastMath = true;
  /// wgmma for the gemms that allow it (sm_90a only).
  bool wgmma = false;
  /// TMA loads for pipelined loops on the wgmma path whose copies allow them.
  bool tma = true;
  /// A producer warpgroup for the TMA loop that allows one.
  bool warpSpecialize = true;
  /// tl-elide-barriers also sees through the wgmma path's synchronisation
  /// (its `async-proxy` option; BarrierElision.h). Off: it timed level with
  /// the default (results/2026-12-05-session33.md).
  bool elideAsyncBarriers = false;
  /// stmatrix.x4 for an Mma fragment's 16-bit stores to a shared tile, a
  /// 16x16 block each (convert-tl-to-gpu's `stmatrix`; sm_90 and sm_90a only).
  /// Off here, as in tl-opt's pipeline (the lit tests); the compilers'
  /// GPUCompileOptions turn it on (since session 36).
  bool stmatrix = false;
  /// wgmma descriptors advanced by 32-bit adds to their low word
  /// (convert-tl-to-gpu's `low-word-descriptors`). Off here; on in
  /// GPUCompileOptions, as stmatrix.
  bool lowWordDescriptors = false;
  /// In turns, the producer hands a reduce-added tile back once read, before
  /// the turn passes (convert-tl-to-gpu's `early-tile-hand-back`;
  /// GPUCompileOptions::earlyTileHandBack).
  bool earlyTileHandBack = false;
};

/// The GPU path's decisions, recorded on the tl program as attributes:
/// tl-infer-layouts, tl-plan-pipelines, tl-plan-shared-memory.
void buildGPUPlanning(mlir::OpPassManager &pm, const GPUPipelineOptions &options = {});

/// tl -> per-thread code in a gpu.module: tl-infer-layouts,
/// tl-plan-pipelines, tl-plan-shared-memory, convert-tl-to-gpu,
/// tl-approximate-math, tl-elide-barriers.
void buildGPULowering(mlir::OpPassManager &pm, const GPUPipelineOptions &options = {});

/// Registers `tl-gpu-lowering` (buildGPULowering, with `target` and
/// `shared-memory-limit` options) for tl-opt.
void registerTLPipelines();

/// tl -> per-thread code in a gpu.module -> NVVM/LLVM dialect, ready to be
/// translated to LLVM IR and compiled by the NVPTX backend.
void buildGPUPipeline(mlir::OpPassManager &pm, const GPUPipelineOptions &options = {});

} // namespace tl
