//===- Pipeline.h - the pass order of each target, in one place -----------===//
#pragma once

namespace mlir {
class OpPassManager;
}

namespace tl {

/// tl -> loops over memrefs -> LLVM dialect, for the host JIT.
void buildCPUPipeline(mlir::OpPassManager &pm);

/// tl -> per-thread code in a gpu.module -> NVVM/LLVM dialect, ready to be
/// translated to LLVM IR and compiled by the NVPTX backend.
void buildGPUPipeline(mlir::OpPassManager &pm);

} // namespace tl
