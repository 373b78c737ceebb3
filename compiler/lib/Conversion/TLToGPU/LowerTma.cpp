//===- LowerTma.cpp - KernelLowering: TMA loads and stores (sm_90a) -------===//
//
// A pipelined loop planned with `tl.tma_loads` (PipelinePlan.h) loads its
// tiles with the TMA engine instead of cp.async: per rotating copy of the
// tiles one mbarrier (arrival count 1), and per iteration one thread arms
// the mbarrier of the iteration's copy with the bytes to come
// (mbarrier.arrive.expect_tx) and issues one cp.async.bulk.tensor box per
// swizzle-atom column block of each tile; the box lands in the wgmma layout
// (WgmmaOperands.h), which is TMA's swizzle (a vector tile, one box without
// swizzle: tmaVectorBoxable). Every thread waits for the
// iteration's phase (mbarrier.try_wait.parity: the n-th use of a copy
// completes phase n) where the first copy stood.
//
// A copy planned `tl.tma_copy` (tl-plan-tma-copies) moves its whole tile
// once: a load on an mbarrier of its own, which thread 0 arms and every
// thread waits for before the first op that could touch the tile and before
// its block ends (loads in a row into different bytes, with allocations,
// fragment fills and index math between them, are in flight together:
// waitTmaLoadsBefore); a store after a proxy fence (the
// threads' writes made visible to the copy engine) and a barrier, thread 0
// then waiting for its bulk group to have read the tile.
//
// The boxes read and write through tensor maps, which the kernel takes as extra
// parameters after its own: one per (tensor, box, swizzle), listed on the
// kernel as `tl.tensor_maps` for the runtime, which encodes them at launch;
// tl-pass-tensor-maps later makes them 128-byte by-value grid constants.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {

Value KernelLowering::tensorMapArgument(Location loc, Value tensor, ArrayRef<int64_t> box,
                                        int64_t swizzle) {
  auto source = cast<BlockArgument>(tensor);
  MLIRContext *context = rewriter.getContext();
  auto map = TensorMapAttr::get(context, source.getArgNumber(), box, swizzle);
  auto known = llvm::find(tensorMaps, map);
  unsigned userParams = func.getNumArguments() - tensorMaps.size();
  if (known != tensorMaps.end())
    return func.getArgument(userParams + (known - tensorMaps.begin()));
  // A generic pointer for now; tl-pass-tensor-maps makes it by value.
  unsigned position = func.getNumArguments();
  (void)func.insertArgument(position, LLVM::LLVMPointerType::get(context),
                            DictionaryAttr::get(context), loc);
  tensorMaps.push_back(map);
  return func.getArgument(position);
}

Value KernelLowering::mbarrierAddress(Location loc, Value barriers, Value slot) {
  return LLVM::IntToPtrOp::create(rewriter, loc,
                                  LLVM::LLVMPointerType::get(rewriter.getContext(), 3),
                                  sharedAddress(loc, barriers, ValueRange{slot}));
}

SmallVector<Value> KernelLowering::initMbarriers(Location loc, int64_t count,
                                                 ArrayRef<int64_t> arrivals) {
  SmallVector<Value> arrays;
  for (size_t a = 0; a < arrivals.size(); ++a)
    arrays.push_back(
        allocateShared(loc, MemRefType::get({count}, rewriter.getI64Type()), /*swizzle=*/false));
  Value first =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, tid, index(rewriter, loc, 0));
  auto guard = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
  OpBuilder::InsertionGuard inside(rewriter);
  rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
  SmallVector<Value> counts;
  for (int64_t n : arrivals)
    counts.push_back(arith::ConstantIntOp::create(rewriter, loc, n, 32));
  for (int64_t i = 0; i < count; ++i)
    for (auto [array, n] : llvm::zip(arrays, counts))
      NVVM::MBarrierInitOp::create(rewriter, loc,
                                   mbarrierAddress(loc, array, index(rewriter, loc, i)), n,
                                   /*predicate=*/Value());
  return arrays; // the caller's barrier publishes the initialisation
}

void KernelLowering::armMbarrier(Location loc, Value address, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(rewriter, loc, /*res=*/Type(), address,
                                         arith::ConstantIntOp::create(rewriter, loc, bytes, 32),
                                         NVVM::MemScopeKind::CTA, /*relaxed=*/false,
                                         /*predicate=*/Value());
}

void KernelLowering::issueTmaIteration(Location loc, const PipelinePlan &plan, Block &body, Value k,
                                       Value end, Value start, Value barriers) {
  auto &b = rewriter;
  Value live = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, k, end),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, 0)));
  auto guard = scf::IfOp::create(b, loc, live, /*withElse=*/false);
  OpBuilder::InsertionGuard inside(b);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  issueTmaBoxes(loc, plan, body, k, start, barriers);
}

void KernelLowering::issueTmaBoxes(Location loc, const PipelinePlan &plan, Block &body, Value k,
                                   Value start, Value barriers) {
  auto &b = rewriter;
  MLIRContext *context = b.getContext();
  int64_t copies = plan.rotatingCopies();
  Value slot = arith::RemUIOp::create(b, loc, arith::SubIOp::create(b, loc, k, start),
                                      index(b, loc, copies));
  Value barrier = mbarrierAddress(loc, barriers, slot);
  int64_t bytes = 0;
  for (CopyOp copy : ArrayRef<CopyOp>(plan.copies)) {
    auto tile = cast<MemRefType>(copy.getDst().getType());
    bytes += tile.getNumElements() * tile.getElementTypeBitWidth() / 8;
  }
  armMbarrier(loc, barrier, bytes);
  for (CopyOp copy : ArrayRef<CopyOp>(plan.copies)) {
    Location at = copy.getLoc();
    IRMapping mapping;
    mapping.map(body.getArgument(0), k);
    SmallVector<Value> offsets;
    for (Value offset : copy.getSrcOffsets())
      offsets.push_back(atIteration(offset, body, mapping));
    Value tile = memref::ExtractAlignedPointerAsIndexOp::create(
        b, at, stageView(at, copy.getDst(), k, start));
    issueTileBoxes(at, copy.getSrc(), offsets, copy.getSrcSizes(),
                   cast<MemRefType>(copy.getDst().getType()), tile, barrier);
  }
}

void KernelLowering::issueTileBoxes(Location at, Value tensor, ValueRange offsets,
                                    ArrayRef<int64_t> sizes, MemRefType tileType, Value tile,
                                    Value mbarrier, bool reduceAdd) {
  auto &b = rewriter;
  MLIRContext *context = b.getContext();
  // A 2-D tile in the swizzle-atom layout takes one box per atom-wide column
  // block; a vector tile (tmaVectorBoxable) one unswizzled box.
  bool vector = tileType.getRank() == 1;
  int64_t columns = tileType.getDimSize(tileType.getRank() - 1);
  int64_t rows = vector ? 1 : tileType.getDimSize(0);
  int64_t atom =
      vector ? columns * tileType.getElementTypeBitWidth() / 8 : wgmmaAtomBytes(tileType);
  int64_t atomElements = atom * 8 / tileType.getElementTypeBitWidth();
  // The box: the region's extents, the innermost one atom wide.
  SmallVector<int64_t> box(sizes);
  box.back() = atomElements;
  Value map = tensorMapArgument(at, tensor, box, vector ? 0 : atom);
  SmallVector<Value> coordinates; // innermost first
  for (Value offset : llvm::reverse(offsets))
    coordinates.push_back(arith::IndexCastOp::create(b, at, b.getI32Type(), offset));
  for (int64_t block = 0; block * atomElements < columns; ++block) {
    SmallVector<Value> corner(coordinates);
    corner.front() = arith::AddIOp::create(
        b, at, corner.front(), arith::ConstantIntOp::create(b, at, block * atomElements, 32));
    Value address = arith::IndexCastOp::create(
        b, at, b.getI32Type(),
        arith::AddIOp::create(b, at, tile, index(b, at, block * rows * atom)));
    Value shared = LLVM::IntToPtrOp::create(b, at, LLVM::LLVMPointerType::get(context, 3), address);
    if (reduceAdd) {
      NVVM::CpAsyncBulkTensorReduceOp::create(b, at, map, shared, NVVM::TMAReduxKind::ADD,
                                              NVVM::TMAStoreMode::TILE, corner,
                                              /*l2CacheHint=*/Value());
      continue;
    }
    if (!mbarrier) {
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          b, at, map, shared, corner, /*l2CacheHint=*/Value(), NVVM::TMAStoreMode::TILE,
          /*predicate=*/Value());
      continue;
    }
    Value dst =
        LLVM::AddrSpaceCastOp::create(b, at, LLVM::LLVMPointerType::get(context, 7), shared);
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, at, dst, map, corner, mbarrier, /*im2colOffsets=*/ValueRange(),
        /*multicastMask=*/Value(), /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
  }
}

LogicalResult KernelLowering::lowerTmaCopy(CopyOp op) {
  auto &b = rewriter;
  Location loc = op.getLoc();
  bool load = isShared(op.getDst());
  Value tile = load ? op.getDst() : op.getSrc();
  auto tileType = cast<MemRefType>(tile.getType());
  Value zero = index(b, loc, 0);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, zero);
  if (load) {
    // The barrier orders earlier accesses of the tile's bytes before the
    // boxes (the proxy fence, the threads' writes there: another tile may have
    // had them) and publishes the mbarrier's initialisation; the mbarrier
    // completes its first phase (parity 0) when the boxes' bytes have landed.
    fenceProxyAsync(loc);
    Value mbarrier = initMbarriers(loc, 1, {1}).front();
    barrier(loc);
    auto issue = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard inside(b);
      b.setInsertionPoint(issue.thenBlock()->getTerminator());
      Value address = mbarrierAddress(loc, mbarrier, zero);
      armMbarrier(loc, address, tileType.getNumElements() * tileType.getElementTypeBitWidth() / 8);
      issueTileBoxes(loc, op.getSrc(), op.getSrcOffsets(), op.getSrcSizes(), tileType,
                     memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile), address);
    }
    pendingTmaLoads.push_back({mbarrierAddress(loc, mbarrier, zero), sharedBytesOf(tile)});
  } else {
    // The threads' writes of the tile are seen by the copy engine (the async
    // proxy) after a proxy fence and a barrier; thread 0 issues the boxes and
    // waits until they have read the tile, and the barrier after holds the
    // other threads off it until then.
    fenceProxyAsync(loc);
    barrier(loc);
    auto issue = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard inside(b);
      b.setInsertionPoint(issue.thenBlock()->getTerminator());
      issueTileBoxes(loc, op.getDst(), op.getDstOffsets(), op.getDstSizes(), tileType,
                     memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile), Value());
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0), b.getUnitAttr());
    }
    barrier(loc);
  }
  b.eraseOp(op);
  return success();
}

LogicalResult KernelLowering::lowerTmaReduce(AtomicAddTileOp op) {
  auto &b = rewriter;
  Location loc = op.getLoc();
  Value tile = op.getSrc();
  // As a store's: the threads' writes of the tile reach the copy engine
  // after a proxy fence and a barrier; the barrier that ends the copy
  // writing the tile serves, where it stands just before (but for index
  // math).
  Operation *before = op->getPrevNode();
  while (before && before->getNumRegions() == 0 && isPure(before))
    before = before->getPrevNode();
  if (auto previous = dyn_cast_or_null<gpu::BarrierOp>(before)) {
    OpBuilder::InsertionGuard before(b);
    b.setInsertionPoint(previous);
    fenceProxyAsync(loc);
  } else {
    fenceProxyAsync(loc);
    barrier(loc);
  }
  auto issue = scf::IfOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, 0)),
      /*withElse=*/false);
  OpBuilder::InsertionGuard inside(b);
  b.setInsertionPoint(issue.thenBlock()->getTerminator());
  issueTileBoxes(loc, op.getDst(), op.getDstOffsets(), op.getDstSizes(),
                 cast<MemRefType>(tile.getType()),
                 memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile), Value(),
                 /*reduceAdd=*/true);
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  if (op->getParentOfType<InTurnOp>()) {
    // The turn passes on once the sums are in memory: the boxes complete,
    // and their (async proxy) writes are ordered before the release.
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0), /*read=*/nullptr);
    NVVM::FenceProxyOp::create(b, loc,
                               NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async),
                               NVVM::SharedSpaceAttr());
  }
  b.eraseOp(op);
  return success();
}

void KernelLowering::waitReduceReads(Location loc, Value tile) {
  if (!reduceSources.contains(tile))
    return;
  auto &b = rewriter;
  auto issuer = scf::IfOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, 0)),
      /*withElse=*/false);
  OpBuilder::InsertionGuard inside(b);
  b.setInsertionPoint(issuer.thenBlock()->getTerminator());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0), b.getUnitAttr());
}

std::optional<std::array<int64_t, 2>> KernelLowering::sharedBytesOf(Value tile) {
  auto view = tile.getDefiningOp<memref::ViewOp>();
  if (!view)
    return std::nullopt;
  auto range = tlDialect(view).getSharedRangeAttrHelper().getAttr(view);
  if (!range || range.size() != 2)
    return std::nullopt;
  return std::array<int64_t, 2>{range[0], range[1]};
}

void KernelLowering::waitTmaLoadsBefore(Operation *op) {
  if (pendingTmaLoads.empty())
    return;
  // Another load may be in flight beside them if its bytes are known and
  // none of theirs (two loads into one tile would land in either order).
  auto apart = [&](CopyOp copy) {
    std::optional<std::array<int64_t, 2>> bytes = sharedBytesOf(copy.getDst());
    return bytes && llvm::all_of(pendingTmaLoads, [&](const PendingTmaLoad &load) {
             return load.bytes &&
                    ((*load.bytes)[1] <= (*bytes)[0] || (*bytes)[1] <= (*load.bytes)[0]);
           });
  };
  auto copy = dyn_cast<CopyOp>(op);
  auto fill = dyn_cast<FillOp>(op);
  if (isa<AllocSharedOp, AllocFragmentOp, AllocLocalOp>(op) ||
      (copy && tlDialect(op).getTmaCopyAttrHelper().isAttrPresent(op) && isShared(copy.getDst()) &&
       apart(copy)) ||
      (fill && fragments.count(fill.getBuffer())) ||
      (op->getNumRegions() == 0 && !isa<TLDialect>(op->getDialect()) && isPure(op) &&
       !op->hasTrait<OpTrait::IsTerminator>()))
    return;
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  for (const PendingTmaLoad &load : pendingTmaLoads)
    NVVM::MBarrierTryWaitParityOp::create(
        rewriter, loc, load.mbarrier, arith::ConstantIntOp::create(rewriter, loc, 0, 32),
        arith::ConstantIntOp::create(rewriter, loc, kTryWaitTicks, 32));
  pendingTmaLoads.clear();
}

void KernelLowering::waitTmaIteration(Location loc, Value k, Value start, int64_t copies,
                                      Value barriers) {
  auto &b = rewriter;
  Value used = arith::SubIOp::create(b, loc, k, start);
  Value slot = arith::RemUIOp::create(b, loc, used, index(b, loc, copies));
  Value parity = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::AndIOp::create(b, loc, arith::DivUIOp::create(b, loc, used, index(b, loc, copies)),
                            index(b, loc, 1)));
  NVVM::MBarrierTryWaitParityOp::create(b, loc, mbarrierAddress(loc, barriers, slot), parity,
                                        arith::ConstantIntOp::create(b, loc, kTryWaitTicks, 32));
}

} // namespace tl::gpu_lowering
