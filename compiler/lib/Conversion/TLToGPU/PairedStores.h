//===- PairedStores.h - one store per column pair of an Mma loop ---------===//
//
// A parallel loop driven by an Mma accumulator is unrolled, one copy of its
// body per element the thread owns; elements 2i and 2i+1 are adjacent columns
// of one row. A body that writes a shared tile at the loop's own (row, column)
// (P^T and dS^T in the backward) then stores each pair with two 16-bit stores
// whose addresses LLVM cannot prove adjacent once the tile is swizzled (the
// swizzle moves 16-byte chunks, which keeps an even column's pair together).
// pairColumnStores merges such a pair into one 2-element vector store.
//
// On sm_90 one stmatrix.x4 stores four pairs at once: a 16x16 block of the
// tile from eight copies (two neighbouring 16x8 tiles of one row tile).
// takeMatrixBlocks finds the blocks whose eight stores can go as one; the
// lowering (LowerMatrixStores.cpp) emits the stmatrix.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>

namespace tl::gpu_lowering {

/// The stores one unrolled copy of a parallel body made (directly in the
/// block the copies share), with the copy's loop indices (row, column).
struct UnrolledStores {
  llvm::SmallVector<mlir::Value, 2> indices;
  llvm::SmallVector<mlir::memref::StoreOp> stores;
};

/// For each pair of copies (2i, 2i+1), whose columns are c and c+1 of one row
/// with c even: the k-th store of copy 2i to a tile `pairable` accepts at
/// [.., row, c], and the store of copy 2i+1 to the same tile at
/// [.., row, c+1], become one vector store where the second stood, when no op
/// between them touches the tile. Returns how many pairs it merged.
int64_t pairColumnStores(mlir::RewriterBase &rewriter, llvm::ArrayRef<UnrolledStores> copies,
                         llvm::function_ref<bool(mlir::Value)> pairable);

/// Eight stores that write one 16x16 block of a tile: copies 4t .. 4t+7 of
/// an Mma loop with `tilesN` 16x8 tiles per row tile (t = tileRow * tilesN +
/// tileColumn, tileColumn even), each copy's store at its own (row, column).
/// stores[i] is copy 4t+i's; the last in program order is `last`.
struct MatrixBlock {
  mlir::Value tile;
  int64_t tileRow = 0, tileColumn = 0;
  std::array<mlir::memref::StoreOp, 8> stores;
  mlir::memref::StoreOp last;
};

/// The blocks whose eight stores (to a tile `matrixReady` accepts, of one
/// element type, in one block) no other op touching the tile separates; their
/// stores are taken out of `copies` (the caller replaces them).
llvm::SmallVector<MatrixBlock> takeMatrixBlocks(llvm::MutableArrayRef<UnrolledStores> copies,
                                                int64_t tilesM, int64_t tilesN,
                                                llvm::function_ref<bool(mlir::Value)> matrixReady);

} // namespace tl::gpu_lowering
