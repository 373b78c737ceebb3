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

#endif // TL_CONVERSION_PASSES_TD
