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

/// No op strictly between `a` and `b` (in their block) uses `tile`.
bool untouchedBetween(Operation *a, Operation *b, Value tile) {
  for (Operation *op = a->getNextNode(); op && op != b; op = op->getNextNode()) {
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

} // namespace

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
