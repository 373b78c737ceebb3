//===- LowerParallel.cpp - KernelLowering: parallel loops -----------------===//
//
// tl.parallel: one copy of the body per element a thread owns of the loop's
// driving fragment (unrolled for Mma layouts), or spread over the threads;
// the unrolled code then shares divisors, stores 16x16 blocks by stmatrix
// (an option) and pairs column stores, and an
// online-softmax rescale (tl.unit_rescale, UnitRescale.cpp) is skipped when
// every factor is 1.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"
#include "UnitRescale.h"

namespace tl::gpu_lowering {

bool KernelLowering::bodyTouches(Operation *op, bool fragmentsNotShared) {
  bool found = false;
  op->walk([&](Operation *inner) {
    Value buffer;
    bool write = false;
    if (auto l = dyn_cast<memref::LoadOp>(inner))
      buffer = l.getMemRef();
    else if (auto s = dyn_cast<memref::StoreOp>(inner))
      buffer = s.getMemRef(), write = true;
    else if (auto a = dyn_cast<AtomicAddOp>(inner))
      buffer = a.getDst(), write = true;
    if (!buffer)
      return;
    found |= fragmentsNotShared ? isFragment(buffer) : (write && isShared(buffer));
  });
  return found;
}

Value KernelLowering::drivingFragment(ParallelOp op) {
  Value driver;
  size_t rank = op.getExtents().size();
  op.walk([&](Operation *inner) {
    Value buffer;
    if (auto l = dyn_cast<memref::LoadOp>(inner))
      buffer = l.getMemRef();
    else if (auto s = dyn_cast<memref::StoreOp>(inner))
      buffer = s.getMemRef();
    if (!buffer || !isFragment(buffer))
      return;
    if (!driver || cast<MemRefType>(buffer.getType()).getRank() == static_cast<int64_t>(rank))
      driver = buffer;
  });
  return driver;
}

scf::IfOp KernelLowering::skipUnitScale(Location loc, Value scale) {
  const Fragment &f = fragments.find(scale)->second;
  auto &b = rewriter;
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  Value needed = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  for (int64_t slot = 0; slot < f.layout.count(); ++slot) {
    Value factor = memref::LoadOp::create(b, loc, f.storage, ValueRange{index(b, loc, slot)});
    needed = arith::OrIOp::create(
        b, loc, needed, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, factor, one));
  }
  Value everyLane = arith::ConstantIntOp::create(b, loc, -1, 32);
  Value anyLane =
      NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), everyLane, needed, NVVM::VoteSyncKind::any);
  return scf::IfOp::create(b, loc, anyLane, /*withElse=*/false);
}

LogicalResult KernelLowering::lowerParallel(ParallelOp op) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> extents = op.getExtents();
  Block &body = op.getBody().front();
  bool writesShared = bodyTouches(op, /*fragmentsNotShared=*/false);
  if (writesShared)
    barrier(loc);
  LogicalResult result = success();
  // One copy of the body per iteration point this thread runs (a loop body
  // for Row and spread iterations, an unrolled copy per Mma element).
  auto emitBody = [&](OpBuilder &b, ValueRange ivs, const Owned *owned) {
    IRMapping mapping;
    mapping.map(body.getArguments(), ivs);
    SmallVector<Operation *> copies;
    for (Operation &inner : body)
      copies.push_back(b.clone(inner, mapping));
    for (Operation *copy : copies) // after cloning: lowering replaces ops
      if (failed(lowerElementOps(copy, owned, ivs)))
        result = failure();
  };
  if (Value driver = drivingFragment(op)) {
    const FragmentLayout &layout = fragments.find(driver)->second.layout;
    std::optional<OpBuilder::InsertionGuard> afterSkip;
    Value scale = tlDialect(op).getUnitRescaleAttrHelper().isAttrPresent(op) ? unitRescaleFactor(op)
                                                                             : Value();
    if (scale) {
      scf::IfOp skip = skipUnitScale(loc, scale);
      afterSkip.emplace(rewriter);
      rewriter.setInsertionPoint(skip.thenBlock()->getTerminator());
    }
    Block *block = rewriter.getInsertionBlock();
    Operation *before = rewriter.getInsertionPoint() == block->begin()
                            ? nullptr
                            : &*std::prev(rewriter.getInsertionPoint());
    SmallVector<UnrolledStores> unrolled; // Mma: the stores of each copy of the body
    forOwned(loc, layout, extents, [&](OpBuilder &b, Location, const Owned &owned, ValueRange ivs) {
      Block::iterator end = rewriter.getInsertionPoint();
      bool atStart = end == block->begin();
      Block::iterator last = atStart ? end : std::prev(end);
      emitBody(b, ivs, &owned);
      if (layout.kind != FragmentLayout::Kind::Mma)
        return;
      UnrolledStores copy{SmallVector<Value, 2>(ivs.begin(), ivs.end()), {}};
      for (auto it = atStart ? block->begin() : std::next(last); it != rewriter.getInsertionPoint();
           ++it)
        if (auto store = dyn_cast<memref::StoreOp>(&*it))
          copy.stores.push_back(store);
      unrolled.push_back(std::move(copy));
    });
    if (layout.kind != FragmentLayout::Kind::Row) { // unrolled: straight-line code
      if (limits.fastMath) // x / y -> x * (1 / y): may differ in the last bit
        shareDivisors(before ? before->getNextNode() : &block->front(), op);
      OpBuilder::InsertionGuard guard(rewriter);
      storeMatrices(unrolled, layout);
      pairColumnStores(rewriter, unrolled,
                       [&](Value tile) { return isShared(tile) && !layouts.count(tile); });
    }
  } else {
    forSpread(loc, extents,
              [&](OpBuilder &b, Location, ValueRange ivs) { emitBody(b, ivs, nullptr); });
  }
  if (writesShared)
    barrier(loc);
  rewriter.eraseOp(op);
  return result;
}

void KernelLowering::shareDivisors(Operation *begin, Operation *end) {
  // Only fragment storage (a thread's own registers) is tracked: nothing
  // but this code reads or writes it.
  llvm::DenseSet<Value> storages;
  for (auto &entry : fragments)
    storages.insert(entry.second.storage);
  DenseMap<std::pair<Value, int64_t>, Value> loaded; // (storage, slot) -> value
  llvm::MapVector<Value, SmallVector<arith::DivFOp>> byDivisor;
  for (Operation *op = begin; op && op != end; op = op->getNextNode()) {
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && storages.count(load.getMemRef()) && load.getIndices().size() == 1) {
      if (std::optional<int64_t> slot = getConstantIntValue(load.getIndices()[0])) {
        auto [it, fresh] = loaded.try_emplace({load.getMemRef(), *slot}, load.getResult());
        if (!fresh)
          load.getResult().replaceAllUsesWith(it->second);
        continue;
      }
    }
    if (auto store = dyn_cast<memref::StoreOp>(op); store && storages.count(store.getMemRef())) {
      std::optional<int64_t> slot = store.getIndices().size() == 1
                                        ? getConstantIntValue(store.getIndices()[0])
                                        : std::nullopt;
      if (slot)
        loaded[{store.getMemRef(), *slot}] = store.getValue();
      else // an unknown slot: forget the buffer
        for (auto it = loaded.begin(); it != loaded.end();)
          it = it->first.first == store.getMemRef() ? (loaded.erase(it), loaded.begin())
                                                    : std::next(it);
      continue;
    }
    if (auto div = dyn_cast<arith::DivFOp>(op); div && div.getType().isF32())
      byDivisor[div.getRhs()].push_back(div);
    if (op->getNumRegions() != 0 &&
        op->walk([](memref::StoreOp) { return WalkResult::interrupt(); }).wasInterrupted())
      loaded.clear(); // a conditional store: known slots may change
  }
  for (auto &entry : byDivisor) {
    // The key may be a division an earlier group replaced: the divisions
    // themselves hold the current value.
    SmallVector<arith::DivFOp> &divisions = entry.second;
    if (divisions.size() < 2)
      continue;
    Value divisor = divisions.front().getRhs();
    rewriter.setInsertionPoint(divisions.front());
    Location loc = divisions.front().getLoc();
    Value one =
        arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(divisor.getType(), 1.0));
    Value reciprocal = arith::DivFOp::create(rewriter, loc, one, divisor);
    for (arith::DivFOp div : divisions) {
      rewriter.setInsertionPoint(div);
      rewriter.replaceOpWithNewOp<arith::MulFOp>(div, div.getLhs(), reciprocal);
    }
  }
  rewriter.setInsertionPoint(end);
}

LogicalResult KernelLowering::lowerElementOps(Operation *root, const Owned *owned, ValueRange ivs) {
  LogicalResult result = success();
  root->walk([&](Operation *op) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    auto own = [&](Value buffer, ValueRange indices) -> std::optional<SmallVector<Value>> {
      bool matches = owned && !indices.empty() && indices[0] == ivs[0];
      if (matches && owned->layout.kind != FragmentLayout::Kind::Row)
        for (auto [index, iv] : llvm::zip(indices, ivs))
          matches = matches && index == iv;
      if (!matches) {
        op->emitError("a fragment is indexed by something other than the "
                      "parallel loop's own indices; the thread that holds the "
                      "element may not be the one running the iteration");
        result = failure();
        return std::nullopt;
      }
      return localIndices(rewriter, op->getLoc(), buffer, indices, *owned);
    };
    if (auto l = dyn_cast<memref::LoadOp>(op); l && isFragment(l.getMemRef())) {
      if (auto local = own(l.getMemRef(), l.getIndices()))
        rewriter.replaceOpWithNewOp<memref::LoadOp>(l, fragments.lookup(l.getMemRef()).storage,
                                                    *local);
    } else if (auto s = dyn_cast<memref::StoreOp>(op); s && isFragment(s.getMemRef())) {
      if (auto local = own(s.getMemRef(), s.getIndices()))
        rewriter.replaceOpWithNewOp<memref::StoreOp>(
            s, s.getValue(), fragments.lookup(s.getMemRef()).storage, *local);
    } else if (auto a = dyn_cast<AtomicAddOp>(op)) {
      ElementRef ref = resolveElement(rewriter, a.getLoc(), layouts, a.getDst(), a.getIndices());
      auto kind = isa<FloatType>(a.getValue().getType()) ? arith::AtomicRMWKind::addf
                                                         : arith::AtomicRMWKind::addi;
      memref::AtomicRMWOp::create(rewriter, a.getLoc(), kind, a.getValue(), ref.memref,
                                  ref.indices);
      rewriter.eraseOp(a);
    } else if (isa<TLDialect>(op->getDialect())) {
      op->emitOpError("cannot appear inside a parallel loop");
      result = failure();
    }
  });
  return result;
}

} // namespace tl::gpu_lowering
