//===- Passes.td - tl conversion passes --------------------*- tablegen -*-===//
#ifndef TL_CONVERSION_PASSES_TD
#define TL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTLToCPU : Pass<"convert-tl-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower tl programs to loops over memrefs that run on the host";
  let description = [{
    Each tile op becomes its loop nest over the whole tile (no thread
    partitioning): on-chip buffers become per-block stack allocations, gemm
    and reduce become scalar loop nests, parallel and pipelined loops become
    scf.for. Accesses to a global tensor with an index-map layout go through
    that map. The kernel's body becomes the function's body and its block
    indices trailing index arguments; the grid and thread count stay on the
    function as `tl.grid` and `tl.threads` for the host runtime, which runs
    the blocks on a thread pool.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def ConvertTLToGPU : Pass<"convert-tl-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower tl programs to per-thread code in a gpu.module";
  let description = [{
    Each kernel becomes a gpu.func in a gpu.module. This first GPU lowering
    uses one layout for every fragment: thread t owns the rows t, t + T,
    t + 2T, ... of dimension 0 (T threads), held in a per-thread array. Row
    vectors (scores_max) and the rows of 2-D fragments (acc_s, acc_o) thus
    live in the same thread, so parallel loops, row reductions, casts and gemm
    accumulators need no communication. Shared buffers are planned into
    dynamic shared memory (size in `tl.shared_bytes`); copies and loops that
    touch no fragment are spread over all threads, with a barrier before and
    after every write to shared memory. exp2/log2 use the approximate PTX
    instructions. The mma.sync layouts of issue 4 replace the row layout
    later; the ops' structure stays.

    A kernel whose planned shared memory exceeds `shared-memory-limit` bytes
    (when it is set) is an error at the alloc_shared whose tile crosses the
    limit, naming the figure, the limit and `target`.
  }];
  let options = [
    Option<"sharedMemoryLimit", "shared-memory-limit", "int64_t", /*default=*/"0",
           "Dynamic shared memory a block may use, in bytes (0: no limit)">,
    Option<"targetName", "target", "std::string", /*default=*/"\"the target\"",
           "The target named in resource-limit errors (sm_90a, ...)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // TL_CONVERSION_PASSES_TD
