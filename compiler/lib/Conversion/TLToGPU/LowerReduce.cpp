//===- LowerReduce.cpp - KernelLowering: reductions -----------------------===//
//
// tl.reduce: quad shuffles (and a shared scratch across warps) on Mma
// fragments, xor shuffles on split rows, loops elsewhere.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {

LogicalResult KernelLowering::lowerReduceMma(ReduceOp op) {
  Location loc = op.getLoc();
  const Fragment &src = fragments.find(op.getSrc())->second;
  const Fragment &dst = fragments.find(op.getDst())->second;
  const FragmentLayout &l = src.layout;
  auto &b = rewriter;
  auto slot = [&](Value storage, int64_t i) -> Value {
    return memref::LoadOp::create(b, loc, storage, ValueRange{index(b, loc, i)});
  };
  Type f32 = cast<MemRefType>(src.storage.getType()).getElementType();
  ReduceKind across = op.getKind() == ReduceKind::abssum ? ReduceKind::sum : op.getKind();
  SmallVector<Value> partial;
  for (int64_t q = 0; q < l.tilesM() * 2; ++q) {
    int64_t tm = q / 2, h = q % 2;
    Value acc = reductionIdentity(b, loc, op.getKind(), f32);
    for (int64_t tn = 0; tn < l.tilesN(); ++tn)
      for (int64_t e = 0; e < 2; ++e)
        acc = combineReduction(b, loc, op.getKind(), acc,
                               slot(src.storage, (tm * l.tilesN() + tn) * 4 + h * 2 + e));
    for (int32_t offset : {1, 2}) {
      Value other =
          gpu::ShuffleOp::create(b, loc, acc, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      acc = combineReduction(b, loc, across, acc, other);
    }
    partial.push_back(acc);
  }
  if (l.warpsN > 1) {
    Value scratch = allocateShared(loc, MemRefType::get({l.warpsN, l.rows}, f32));
    Value rowBase = mmaBases(loc, l).first;
    Value wn = warpGrid(loc, l).second;
    Value writer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         arith::RemUIOp::create(b, loc, lane, index(b, loc, 4)),
                                         index(b, loc, 0));
    auto rowOf = [&](int64_t q) {
      return add(loc, rowBase, (q / 2) * l.tileRowStep() + (q % 2) * 8);
    };
    barrier(loc);
    for (auto [q, acc] : llvm::enumerate(partial)) {
      Value row = rowOf(static_cast<int64_t>(q));
      scf::IfOp::create(b, loc, writer, [&](OpBuilder &b, Location loc) {
        memref::StoreOp::create(b, loc, acc, scratch, ValueRange{wn, row});
        scf::YieldOp::create(b, loc);
      });
    }
    barrier(loc);
    for (size_t q = 0; q < partial.size(); ++q) {
      Value row = rowOf(static_cast<int64_t>(q));
      Value acc = reductionIdentity(b, loc, across, f32);
      for (int64_t w = 0; w < l.warpsN; ++w)
        acc = combineReduction(
            b, loc, across, acc,
            memref::LoadOp::create(b, loc, scratch, ValueRange{index(b, loc, w), row}));
      partial[q] = acc;
    }
  }
  for (auto [q, acc] : llvm::enumerate(partial)) {
    Value result = acc;
    if (!op.getClear())
      result = combineReduction(b, loc, across, result, slot(dst.storage, q));
    memref::StoreOp::create(b, loc, result, dst.storage, ValueRange{index(b, loc, q)});
  }
  rewriter.eraseOp(op);
  return success();
}

LogicalResult KernelLowering::lowerReduceSplitRows(ReduceOp op) {
  Location loc = op.getLoc();
  const Fragment &src = fragments.find(op.getSrc())->second;
  const Fragment &dst = fragments.find(op.getDst())->second;
  Type element = cast<MemRefType>(src.storage.getType()).getElementType();
  ReduceKind across = op.getKind() == ReduceKind::abssum ? ReduceKind::sum : op.getKind();
  forOwnedRows(
      loc, src.layout.rows,
      [&](OpBuilder &b, Location loc, Value r, Value) {
        Value acc = reductionIdentity(b, loc, op.getKind(), element);
        for (int64_t c = 0; c < src.layout.colsPerThread(); ++c)
          acc = combineReduction(
              b, loc, op.getKind(), acc,
              memref::LoadOp::create(b, loc, src.storage, ValueRange{r, index(b, loc, c)}));
        for (int64_t offset = src.layout.split / 2; offset >= 1; offset /= 2) {
          Value other = gpu::ShuffleOp::create(b, loc, acc, static_cast<int32_t>(offset), 32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
          acc = combineReduction(b, loc, across, acc, other);
        }
        if (!op.getClear())
          acc = combineReduction(b, loc, across, acc,
                                 memref::LoadOp::create(b, loc, dst.storage, ValueRange{r}));
        memref::StoreOp::create(b, loc, acc, dst.storage, ValueRange{r});
      },
      src.layout.split);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult KernelLowering::lowerReduce(ReduceOp op) {
  Location loc = op.getLoc();
  Value src = op.getSrc(), dst = op.getDst();
  auto srcType = cast<MemRefType>(src.getType());
  auto dstType = cast<MemRefType>(dst.getType());
  auto dim = static_cast<int64_t>(op.getDim());
  if (!isa<FloatType>(srcType.getElementType()))
    return op.emitOpError("reduces integers; the GPU lowering reduces floats only");
  if (isFragment(src) && fragments.find(src)->second.layout.kind == FragmentLayout::Kind::Mma)
    return lowerReduceMma(op);
  if (isFragment(src) && fragments.find(src)->second.layout.split > 1)
    return lowerReduceSplitRows(op);
  if (isFragment(src) && (dim == 0 || !isFragment(dst))) {
    // The rows to combine belong to other threads: stage the source in
    // shared memory and reduce from there.
    Value staged = allocateShared(loc, srcType);
    barrier(loc);
    forOwned(loc, fragments.find(src)->second.layout, srcType.getShape(),
             [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange full) {
               memref::StoreOp::create(b, loc, load(b, loc, src, full, &owned), staged, full);
             });
    barrier(loc);
    src = staged;
  }
  auto reduceOne = [&](OpBuilder &b, Location loc, ValueRange dstIndices, ValueRange outer,
                       const Owned *r) {
    Value init = op.getClear() ? reductionIdentity(b, loc, op.getKind(), srcType.getElementType())
                               : load(b, loc, dst, dstIndices, r);
    auto loop = scf::ForOp::create(
        b, loc, index(b, loc, 0), index(b, loc, srcType.getDimSize(dim)), index(b, loc, 1),
        ValueRange{init}, [&](OpBuilder &b, Location loc, Value red, ValueRange acc) {
          SmallVector<Value> srcIndices(outer);
          srcIndices.insert(srcIndices.begin() + dim, red);
          scf::YieldOp::create(
              b, loc,
              combineReduction(b, loc, op.getKind(), acc[0], load(b, loc, src, srcIndices, r)));
        });
    store(b, loc, loop.getResult(0), dst, dstIndices, r);
  };
  SmallVector<int64_t> outerShape(srcType.getShape());
  outerShape.erase(outerShape.begin() + dim);
  if (isFragment(dst)) {
    forOwned(loc, fragments.find(dst)->second.layout, dstType.getShape(),
             [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange outer) {
               reduceOne(b, loc, outer, outer, &owned);
             });
  } else {
    bool toShared = isShared(dst);
    if (toShared)
      barrier(loc);
    auto body = [&](OpBuilder &b, Location loc, ValueRange outer) {
      SmallVector<Value> dstIndices(outer);
      if (dstIndices.empty())
        dstIndices.push_back(index(b, loc, 0));
      reduceOne(b, loc, dstIndices, outer, nullptr);
    };
    if (toShared)
      forSpread(loc, outerShape.empty() ? SmallVector<int64_t>{1} : outerShape,
                [&](OpBuilder &b, Location loc, ValueRange outer) {
                  body(b, loc, outerShape.empty() ? ValueRange{} : outer);
                });
    else
      buildLoops(rewriter, loc, outerShape, body);
    if (toShared)
      barrier(loc);
  }
  rewriter.eraseOp(op);
  return success();
}

} // namespace tl::gpu_lowering
