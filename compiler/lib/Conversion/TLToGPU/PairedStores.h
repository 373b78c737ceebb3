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
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"

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

} // namespace tl::gpu_lowering
