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
};

/// tl -> per-thread code in a gpu.module (convert-tl-to-gpu alone).
void buildGPULowering(mlir::OpPassManager &pm, const GPUPipelineOptions &options = {});

/// tl -> per-thread code in a gpu.module -> NVVM/LLVM dialect, ready to be
/// translated to LLVM IR and compiled by the NVPTX backend.
void buildGPUPipeline(mlir::OpPassManager &pm, const GPUPipelineOptions &options = {});

} // namespace tl
