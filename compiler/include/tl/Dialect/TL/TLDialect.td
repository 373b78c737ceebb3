//===- TLDialect.td - the tile-level kernel dialect --------*- tablegen -*-===//
//
// `tl` mirrors TileLang's prim_func vocabulary: a kernel over a grid of
// blocks, on-chip buffers (shared, fragment, local), and tile operators
// (copy, fill, gemm, reduce, parallel, pipelined, atomic_add, layouts).
// Scalar and element math use the upstream arith/math/scf/memref dialects.
//
//===----------------------------------------------------------------------===//
#ifndef TL_DIALECT_TD
#define TL_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def TL_Dialect : Dialect {
  let name = "tl";
  let cppNamespace = "::tl";
  let summary = "Tile-level GPU kernel language (TileLang's vocabulary in MLIR)";
  let description = [{
    Buffers are memrefs. Global tensors are the function's arguments and carry
    no memory space; on-chip buffers carry `#tl.scope<shared|fragment|local>`.
    Tile operators name regions of buffers by per-dimension offsets (SSA index
    values) and static extents.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
}

class TL_Op<string mnemonic, list<Trait> traits = []>
    : Op<TL_Dialect, mnemonic, traits>;

#endif // TL_DIALECT_TD
