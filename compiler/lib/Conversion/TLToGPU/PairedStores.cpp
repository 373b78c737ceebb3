//===- PairedStores.cpp - one store per column pair of an Mma loop -------===//
//
// See PairedStores.h.
//
//===----------------------------------------------------------------------===//
#include "PairedStores.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace tl::gpu_lowering {
namespace {

/// `a` and `b` store at the same row, `b` one column after `a`: the leading
/// indices are equal (or are the two copies' row indices), the last are the
/// two copies' columns.
bool adjacent(memref::StoreOp a, memref::StoreOp b, const UnrolledStores &first,
              const UnrolledStores &second) {
  ValueRange ia = a.getIndices(), ib = b.getIndices();
  if (a.getMemRef() != b.getMemRef() || ia.size() != ib.size() || ia.size() < 2 ||
      a.getValue().getType() != b.getValue().getType())
    return false;
  if (ia.back() != first.indices[1] || ib.back() != second.indices[1])
    return false;
  for (size_t d = 0; d + 1 < ia.size(); ++d)
    if (ia[d] != ib[d] && !(ia[d] == first.indices[0] && ib[d] == second.indices[0]))
      return false;
  return true;
}

/// No op strictly between `a` and `b` (in their block) uses `tile`, but
/// those in `own`.
bool untouchedBetween(Operation *a, Operation *b, Value tile, ArrayRef<Operation *> own = {}) {
  for (Operation *op = a->getNextNode(); op && op != b; op = op->getNextNode()) {
    if (llvm::is_contained(own, op))
      continue;
    bool uses = false;
    op->walk([&](Operation *inner) {
      if (llvm::is_contained(inner->getOperands(), tile))
        uses = true;
    });
    if (uses)
      return false;
  }
  return true;
}

/// The store of `copy` to `tile` at the copy's own (row, column), of `type`,
/// that comes first in its list; null if none.
memref::StoreOp ownStore(const UnrolledStores &copy, Value tile, Type type) {
  for (memref::StoreOp store : copy.stores)
    if (store.getMemRef() == tile && store.getValue().getType() == type &&
        store.getIndices().size() == 2 && store.getIndices()[0] == copy.indices[0] &&
        store.getIndices()[1] == copy.indices[1])
      return store;
  return nullptr;
}

} // namespace

SmallVector<MatrixBlock> takeMatrixBlocks(MutableArrayRef<UnrolledStores> copies, int64_t tilesM,
                                          int64_t tilesN,
                                          llvm::function_ref<bool(Value)> matrixReady) {
  SmallVector<MatrixBlock> blocks;
  if (static_cast<int64_t>(copies.size()) != tilesM * tilesN * 4)
    return blocks;
  for (int64_t tileRow = 0; tileRow < tilesM; ++tileRow) {
    for (int64_t tileColumn = 0; tileColumn + 1 < tilesN; tileColumn += 2) {
      MutableArrayRef<UnrolledStores> eight = copies.slice((tileRow * tilesN + tileColumn) * 4, 8);
      if (llvm::any_of(eight, [](const UnrolledStores &c) { return c.indices.size() != 2; }))
        continue;
      // Each candidate of the first copy, with its matches in the other seven.
      for (size_t k = 0; k < eight[0].stores.size();) {
        memref::StoreOp first = eight[0].stores[k];
        Value tile = first.getMemRef();
        Type type = first.getValue().getType();
        MatrixBlock block{tile, tileRow, tileColumn, {}, nullptr};
        bool whole = matrixReady(tile) && ownStore(eight[0], tile, type) == first;
        for (int64_t i = 0; whole && i < 8; ++i) {
          block.stores[i] = ownStore(eight[i], tile, type);
          whole = block.stores[i] && block.stores[i]->getBlock() == first->getBlock();
        }
        if (!whole) {
          ++k;
          continue;
        }
        SmallVector<Operation *> own;
        for (memref::StoreOp store : block.stores)
          own.push_back(store);
        auto byPosition = [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); };
        Operation *earliest = *llvm::min_element(own, byPosition);
        Operation *latest = *llvm::max_element(own, byPosition);
        if (!untouchedBetween(earliest, latest, tile, own)) {
          ++k;
          continue;
        }
        block.last = cast<memref::StoreOp>(latest);
        for (int64_t i = 0; i < 8; ++i)
          llvm::erase(eight[i].stores, block.stores[i]);
        blocks.push_back(block); // eight[0].stores[k] is now the next one
      }
    }
  }
  return blocks;
}

int64_t pairColumnStores(RewriterBase &rewriter, ArrayRef<UnrolledStores> copies,
                         llvm::function_ref<bool(Value)> pairable) {
  int64_t merged = 0;
  for (size_t c = 0; c + 1 < copies.size(); c += 2) {
    const UnrolledStores &first = copies[c], &second = copies[c + 1];
    if (first.indices.size() != 2 || second.indices.size() != 2)
      continue;
    SmallVector<memref::StoreOp> later(second.stores);
    for (memref::StoreOp a : first.stores) {
      Value tile = a.getMemRef();
      auto type = cast<MemRefType>(tile.getType());
      if (!pairable(tile) || type.getDimSize(type.getRank() - 1) % 2 != 0)
        continue;
      auto match = llvm::find_if(
          later, [&](memref::StoreOp b) { return b && adjacent(a, b, first, second); });
      if (match == later.end() || a->getBlock() != (*match)->getBlock() ||
          !a->isBeforeInBlock(*match) || !untouchedBetween(a, *match, tile))
        continue;
      memref::StoreOp b = *match;
      rewriter.setInsertionPoint(b);
      auto pairType = VectorType::get({2}, a.getValue().getType());
      Value pair = vector::FromElementsOp::create(rewriter, b.getLoc(), pairType,
                                                  ValueRange{a.getValue(), b.getValue()});
      vector::StoreOp::create(rewriter, b.getLoc(), pair, tile, a.getIndices(), false,
                              llvm::MaybeAlign(2 * type.getElementTypeBitWidth() / 8));
      rewriter.eraseOp(a);
      rewriter.eraseOp(b);
      *match = nullptr;
      ++merged;
    }
  }
  return merged;
}

} // namespace tl::gpu_lowering
