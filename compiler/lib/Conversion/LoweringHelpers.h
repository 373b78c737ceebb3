//===- LoweringHelpers.h - pieces shared by the CPU and GPU lowerings -----===//
#pragma once

#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace tl::lowering {

/// Index-map layouts of global tensors, from their annotate_layout ops.
using LayoutMap = llvm::DenseMap<mlir::Value, IndexMapLayoutAttr>;

/// The index-map layouts the annotate_layout ops under `root` give.
LayoutMap indexMapLayouts(mlir::Operation *root);

/// A buffer and the indices to load or store one element of it: through the
/// buffer's index-map layout when it has one.
struct ElementRef {
  mlir::Value memref;
  llvm::SmallVector<mlir::Value> indices;
};
ElementRef resolveElement(mlir::OpBuilder &b, mlir::Location loc, const LayoutMap &layouts,
                          mlir::Value buffer, mlir::ValueRange indices);

/// Every memref.load and memref.store under `root` of an element of a buffer
/// with an index-map layout (an access the kernel author wrote, e.g. in a
/// parallel loop) rewritten to go through the layout. Run it once: a
/// resolved view may fold back to the buffer.
void resolveElementAccesses(mlir::RewriterBase &rewriter, mlir::Operation *root,
                            const LayoutMap &layouts);

/// scf.for nest over [0, extent) per extent; `body` runs at the innermost
/// point with the induction variables. An empty `extents` runs body once.
void buildLoops(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> extents,
                llvm::function_ref<void(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body);

/// Converts a scalar, or a vector element by element, to the float type `to`
/// (extf / truncf) when its element type differs. A pair converted as a
/// vector<2xf32> becomes one cvt.rn.f16x2.f32 (bf16x2) in PTX; two scalar
/// conversions stay two, and their packing shifts and ors.
mlir::Value convertFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, mlir::Type to);

mlir::Value zeroOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type);

/// Element indices of one side of a tl.copy: unit dimensions stay at their
/// offset, the others advance with `squeezed` (one index per non-unit
/// extent, in order).
llvm::SmallVector<mlir::Value> regionIndices(mlir::OpBuilder &b, mlir::Location loc,
                                             mlir::ValueRange offsets,
                                             llvm::ArrayRef<int64_t> sizes,
                                             mlir::ValueRange squeezed);

/// The indices among `full` (one per extent of `shape`) whose extent is not 1:
/// the `squeezed` regionIndices takes.
llvm::SmallVector<mlir::Value> squeezeIndices(llvm::ArrayRef<int64_t> shape, mlir::ValueRange full);

/// Both sides' element indices (source, destination) of a copy-like op
/// (tl.copy, tl.atomic_add_tile) at `squeezed`.
template <typename CopyLikeOp>
std::pair<llvm::SmallVector<mlir::Value>, llvm::SmallVector<mlir::Value>>
regionPairIndices(mlir::OpBuilder &b, mlir::Location loc, CopyLikeOp op,
                  mlir::ValueRange squeezed) {
  return {regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), squeezed),
          regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), squeezed)};
}

/// The neutral element of a reduction (-inf for max, +inf for min, 0 for
/// sums; the extreme integers for integer max/min).
mlir::Value reductionIdentity(mlir::OpBuilder &b, mlir::Location loc, ReduceKind kind,
                              mlir::Type type);
/// acc (+) x for a reduction; abssum adds |x|.
mlir::Value combineReduction(mlir::OpBuilder &b, mlir::Location loc, ReduceKind kind,
                             mlir::Value acc, mlir::Value x);

/// i1: every index lies inside the buffer's extents.
mlir::Value insideBuffer(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                         mlir::ValueRange indices);

/// Whether `layout` is the eDSL's make_mma_tile_layout(rank, rowDim, colDim):
/// [.., l, .., d, ..] -> [.., l floordiv 16, .., d floordiv 8, .., 16 * (l mod
/// 8) + 4 * ((d mod 8) floordiv 2) + 2 * ((l mod 16) floordiv 8) + d mod 2],
/// the order of an m16n8 accumulator tile's elements by thread (lane 4 * (l
/// mod 8) + (d mod 8) / 2) and slot, so that one thread's four elements of a
/// tile lie in 16 consecutive bytes. Results compare as sums of the same
/// simplified terms in any order; a map of the same function spelled
/// otherwise (factored, say) is not recognised, and its adds stay element by
/// element.
bool isMmaTileOrder(IndexMapLayoutAttr layout, unsigned rowDim, unsigned colDim);

/// The row-major position of `indices` in a buffer of static `shape`.
mlir::Value linearIndex(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                        mlir::ValueRange indices);

/// A block counter's element (tl.in_turn's, tl.last_to_arrive's, i32): its
/// byte offset in `counter` (0 when `inside` is false, so that the address
/// stays in the tensor) and `inside`, whether the indices lie inside it.
struct CounterElement {
  mlir::Value byteOffset, inside;
};
CounterElement counterElement(mlir::OpBuilder &b, mlir::Location loc, mlir::Value counter,
                              mlir::ValueRange indices);

} // namespace tl::lowering

namespace tl::cpu {
void populateTileOpsToLoopsPatterns(mlir::RewritePatternSet &patterns,
                                    const lowering::LayoutMap &layouts);
} // namespace tl::cpu
