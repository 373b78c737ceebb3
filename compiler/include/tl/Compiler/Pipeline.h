//===- Pipeline.h - the pass order of each target, in one place -----------===//
#pragma once

namespace mlir {
class OpPassManager;
}

namespace tl {

/// tl -> loops over memrefs -> LLVM dialect, for the host JIT.
void buildCPUPipeline(mlir::OpPassManager &pm);

} // namespace tl
