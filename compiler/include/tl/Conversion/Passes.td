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
    Each kernel becomes a gpu.func in a gpu.module, lowered by one walker
    (KernelLowering) over its body in program order:

    - fragment layouts: the mma.sync layout (m16n8k16 warp tiles; row
      reductions by quad shuffles) where every fragment can take it, else the
      Row layout (thread t owns rows t, t + T, ...), which works for every
      program; the reason is kept in `tl.fragment_layout`;
    - pipelined loops: the copies that can go asynchronous are issued as
      cp.async groups `num_stages` iterations ahead into rotating copies of
      their tiles;
    - shared memory: tiles whose lives do not overlap share bytes (first fit,
      128-byte aligned), the total in `tl.shared_bytes`;
    - each tile op to per-thread code (ldmatrix + mma.sync, 16-byte vector
      copies, swizzled tiles, shuffles), with a barrier around every shared
      write; then element accesses through index maps, swizzled addresses,
      exp2/log2 as the PTX approximations, shared divisors, paired stores and
      the removal of barriers that order nothing.

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
