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
  // The attributes the compiler's passes leave on ops of other dialects, or
  // on tl ops, as results for later passes and the runtime (one place names
  // them; TLDialect.h has accessors).
  let discardableAttrs = (ins
    // func.func arguments: a parameter's name and whether it is an output.
    "::mlir::StringAttr":$name,
    "::mlir::UnitAttr":$output,
    // On a tl.kernel: use_swizzle's panel (block rows walked before x moves),
    // and use_producer_warpgroup's request.
    "::mlir::IntegerAttr":$swizzle_panel,
    "::mlir::UnitAttr":$producer_warpgroup,
    // The lowered kernel (gpu.func), for the runtime.
    "::mlir::DenseI64ArrayAttr":$grid,
    "::mlir::IntegerAttr":$threads,
    "::mlir::IntegerAttr":$shared_bytes,
    // tl-infer-layouts: "mma", "wgmma", or "row: <why not mma>" on the tl.kernel (and
    // the gpu.func); a fragment layout attribute on each tl.alloc_fragment.
    "::mlir::StringAttr":$fragment_layout,
    "::mlir::Attribute":$layout,
    // tl-mark-unit-rescales: on a tl.parallel, that it is online softmax's
    // rescale of an accumulator by a per-row factor.
    "::mlir::UnitAttr":$unit_rescale,
    // tl-plan-pipelines: on a tl.copy issued asynchronously, the bytes each
    // thread moves a piece (4, 8, 16); on a shared tile, its rotating copies;
    // on a tl.pipelined loop, that it waits for the entry copies before it,
    // and that its wgmma batches stay in flight across iterations.
    "::mlir::IntegerAttr":$async_copy,
    "::mlir::IntegerAttr":$async_entry_copy,
    "::mlir::IntegerAttr":$rotating_copies,
    "::mlir::UnitAttr":$waits_entry_copies,
    "::mlir::UnitAttr":$wgmma_in_flight,
    // ... and that its planned copies go by TMA (sm_90a), completing on
    // mbarriers; the lowered kernel then lists its tensor maps
    // (#tl.tensor_map, in the order of its extra parameters).
    "::mlir::UnitAttr":$tma_loads,
    // ... and that a producer warpgroup issues them (warp specialisation).
    "::mlir::UnitAttr":$warp_specialized,
    "::mlir::ArrayAttr":$tensor_maps,
    // tl-plan-tma-copies: a tl.copy at the kernel's top level between a
    // global tensor and a shared tile that goes by TMA (sm_90a): a load on an
    // mbarrier, or a bulk store.
    "::mlir::UnitAttr":$tma_copy,
    // ... and, on such a reduce-add (tl.atomic_add_tile) in a loop with a
    // producer warpgroup, that the producer issues it: the consumers hand the
    // tile over on mbarriers (LowerWarpSpecialized.cpp).
    "::mlir::UnitAttr":$producer_reduce,
    // tl-plan-shared-memory: a shared tile's byte offset in dynamic shared
    // memory.
    "::mlir::IntegerAttr":$offset,
    // A view of dynamic shared memory: the bytes [first, end) it may touch
    // (all copies of a rotating tile), for barrier elision.
    "::mlir::DenseI64ArrayAttr":$shared_range
  );
}

class TL_Op<string mnemonic, list<Trait> traits = []>
    : Op<TL_Dialect, mnemonic, traits>;

#endif // TL_DIALECT_TD
