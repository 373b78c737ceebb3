//===- LowerPipelined.cpp - KernelLowering: pipelined loops ---------------===//
//
// Pipelined loops (PipelinePlan.h decides which copies go asynchronous): the
// prologue, the waits where the planned copies stood, and the issue of each
// later iteration's copies as cp.async groups into rotating tile copies. A
// loop planned with its wgmma batches in flight also makes the waited tiles
// visible to the async proxy (wgmma reads them) and ends with wait_group 0.
// A loop loading by TMA fences what the threads wrote before it (its loads
// may land on those bytes, and its gemms may read those tiles): gemms that
// read only such tiles and its loads' need no fence and block-wide barrier
// of their own in every iteration (publishWgmmaOperands).
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {

LogicalResult KernelLowering::lowerPipelined(PipelinedOp op) {
  Location loc = op.getLoc();
  Block &body = op.getBody().front();
  auto planned = pipelines.loops.find(op.getOperation());
  if (planned != pipelines.loops.end() && planned->second.warpSpecialized)
    return lowerWarpSpecialized(op, planned->second);
  auto loop =
      scf::ForOp::create(rewriter, loc, op.getStart(), op.getEnd(), index(rewriter, loc, 1));
  if (planned == pipelines.loops.end()) {
    rewriter.inlineBlockBefore(&body, loop.getBody()->getTerminator(), loop.getInductionVar());
    rewriter.eraseOp(op);
    return lowerBlock(*loop.getBody());
  }
  PipelinePlan plan = planned->second;
  bool publishes = publishWgmmaOperands(op, plan);
  int64_t lookahead = plan.lookahead();
  // cp.async groups an iteration commits (TMA loads commit none).
  int64_t groups = plan.tmaLoads ? 0 : static_cast<int64_t>(plan.copies.size());
  int64_t copies = plan.rotatingCopies();
  rewriter.setInsertionPoint(loop);
  Value barriers = plan.tmaLoads ? initMbarriers(loc, copies, {1}).front() : Value();
  // What was written before the loop, to the async proxy: for the gemms
  // publishWgmmaOperands found, and for TMA loads into bytes an earlier tile
  // (written by the threads) used.
  if (publishes || plan.tmaLoads)
    fenceProxyAsync(loc);
  barrier(loc); // the rotating tiles may reuse bytes that earlier ops read
  auto issue = [&](Block &from, Value k, Value end, Value start) {
    if (plan.tmaLoads)
      issueTmaIteration(loc, plan, from, k, end, start, barriers);
    else
      issueIteration(loc, plan, from, k, end, start);
  };
  for (int64_t i = 0; i < lookahead; ++i)
    issue(body, add(loc, op.getStart(), i), op.getEnd(), op.getStart());
  if (plan.afterEntryCopies) { // all but the prologue's groups: the entry copies
    NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, static_cast<int32_t>(groups * lookahead));
    if (publishes)
      fenceProxyAsync(loc);
    barrier(loc);
  }
  if (plan.wgmmaInFlight)
    body.walk([&](GemmOp gemm) { wgmmaInFlight.insert(gemm); });

  Operation *headerEnd = rotateTiles(op, loop, plan);
  Block &loopBody = *loop.getBody();
  Value k = loop.getInductionVar(), start = loop.getLowerBound();
  // The planned copies are replaced below by waits, and the first wait is
  // followed by the issue of iteration k + lookahead.
  bool issued = false;
  for (auto [j, copyRef] : llvm::enumerate(plan.copies)) {
    CopyOp copy = copyRef;
    // Groups committed after this copy's group of iteration k: the later
    // copies of iteration k and every group of the iterations after it
    // issued so far (k+1 .. k+stages-1 before the first wait, up to
    // k+stages after it). A copy followed by the next planned one, with
    // only pure ops (index math) between them, needs no wait of its own:
    // groups complete in order, so the next one's wait covers it (and its
    // barrier publishes both tiles).
    if (plan.tmaLoads) { // one mbarrier phase covers all of an iteration's tiles
      if (!issued) {
        rewriter.setInsertionPoint(copy);
        waitTmaIteration(copy.getLoc(), k, start, copies, barriers);
        barrier(copy.getLoc());
        issue(loopBody, add(loc, k, lookahead), loop.getUpperBound(), start);
        issued = true;
      }
    } else if (!(j + 1 < plan.copies.size() && onlyPureOpsBetween(copy, plan.copies[j + 1]))) {
      rewriter.setInsertionPoint(copy);
      int64_t ahead = issued ? lookahead : lookahead - 1;
      NVVM::CpAsyncWaitGroupOp::create(rewriter, copy.getLoc(),
                                       static_cast<int32_t>(groups - 1 - j + groups * ahead));
      if (plan.wgmmaInFlight) // the gemms then need no fence and barrier of their own
        fenceProxyAsync(copy.getLoc());
      barrier(copy.getLoc());
      if (!issued) {
        issue(loopBody, add(loc, k, lookahead), loop.getUpperBound(), start);
        issued = true;
      }
    }
  }
  for (CopyOp copy : plan.copies) // after the issue, which reads them
    rewriter.eraseOp(copy);
  rewriter.setInsertionPointAfter(loop);
  if (plan.wgmmaInFlight) // before anything reads the accumulators or reuses the tiles
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, rewriter.getI64IntegerAttr(0));
  NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);
  if (barriers && loop->getParentOfType<scf::ForOp>()) {
    // Inside another loop the mbarriers are initialised again next time:
    // once every thread is past its last wait, they are invalidated first
    // (initialising a valid mbarrier is undefined).
    barrier(loc);
    auto first = scf::IfOp::create(rewriter, loc,
                                   arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                                         tid, index(rewriter, loc, 0)),
                                   /*withElse=*/false);
    OpBuilder::InsertionGuard inside(rewriter);
    rewriter.setInsertionPoint(first.thenBlock()->getTerminator());
    for (int64_t c = 0; c < copies; ++c)
      NVVM::MBarrierInvalOp::create(rewriter, loc,
                                    mbarrierAddress(loc, barriers, index(rewriter, loc, c)));
  }
  // The header is already thread-level.
  return lowerBlockFrom(loopBody, headerEnd->getNextNode());
}

bool KernelLowering::publishWgmmaOperands(PipelinedOp op, const PipelinePlan &plan) {
  if (!plan.tmaLoads || plan.copies.empty())
    return false;
  Block &body = op.getBody().front();
  llvm::SmallPtrSet<Operation *, 4> planned;
  for (CopyOp copy : plan.copies)
    planned.insert(copy.getOperation());
  // The shared bytes the body writes, but by its TMA loads.
  SmallVector<std::array<int64_t, 2>> written;
  bool unknown = false;
  body.walk([&](Operation *inner) {
    // (tl.wait_wgmma writes the in-flight gemms' accumulators, registers.)
    if (planned.contains(inner) || inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isa<WaitWgmmaOp>(inner))
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects) {
      unknown = true;
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      Value buffer = effect.getValue();
      if (buffer && (isFragment(buffer) || isLocal(buffer) || isGlobal(buffer)))
        continue;
      std::optional<std::array<int64_t, 2>> bytes = buffer ? sharedBytesOf(buffer) : std::nullopt;
      if (!bytes) {
        unknown = true;
        continue;
      }
      written.push_back(*bytes);
    }
  });
  if (unknown)
    return false;
  auto published = [&](Value operand) {
    if (isFragment(operand))
      return true; // registers (RS wgmma)
    std::optional<std::array<int64_t, 2>> bytes = sharedBytesOf(operand);
    return bytes && llvm::none_of(written, [&](const std::array<int64_t, 2> &w) {
             return w[0] < (*bytes)[1] && (*bytes)[0] < w[1];
           });
  };
  Operation *firstWait = CopyOp(plan.copies.front()).getOperation();
  bool any = false;
  op.walk([&](GemmOp gemm) {
    Operation *top = body.findAncestorOpInBlock(*gemm);
    if (top && firstWait->isBeforeInBlock(top) && published(gemm.getA()) &&
        published(gemm.getB())) {
      wgmmaOperandsPublished.insert(gemm);
      any = true;
    }
  });
  return any;
}

Operation *KernelLowering::rotateTiles(PipelinedOp op, scf::ForOp loop, const PipelinePlan &plan) {
  Block &body = op.getBody().front();
  Location loc = op.getLoc(); // (op is erased next)
  rewriter.inlineBlockBefore(&body, loop.getBody()->getTerminator(), loop.getInductionVar());
  rewriter.eraseOp(op);
  Block &loopBody = *loop.getBody();
  Value k = loop.getInductionVar(), start = loop.getLowerBound();
  rewriter.setInsertionPointToStart(&loopBody);
  SmallVector<Value> views;
  for (CopyOp copy : plan.copies)
    views.push_back(stageView(loc, copy.getDst(), k, start));
  for (auto [j, view] : llvm::enumerate(views)) {
    CopyOp copy = plan.copies[j];
    Operation *copyOp = copy.getOperation();
    copy.getDst().replaceUsesWithIf(view, [&](OpOperand &use) {
      return loop->isAncestor(use.getOwner()) && use.getOwner() != copyOp;
    });
  }
  return views.back().getDefiningOp();
}

bool KernelLowering::onlyPureOpsBetween(Operation *earlier, Operation *later) {
  if (earlier->getBlock() != later->getBlock())
    return false;
  for (Operation *op = earlier->getNextNode(); op; op = op->getNextNode()) {
    if (op == later)
      return true;
    if (!isPure(op))
      return false;
  }
  return false;
}

LogicalResult KernelLowering::lowerBlockFrom(Block &block, Operation *first) {
  for (Operation &op :
       llvm::make_early_inc_range(llvm::make_range(first->getIterator(), block.end())))
    if (failed(lowerOp(&op)))
      return failure();
  return success();
}

void KernelLowering::issueIteration(Location loc, const PipelinePlan &plan, Block &body, Value k,
                                    Value end, Value start) {
  Value live = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, k, end);
  for (auto [copy, bytes] : llvm::zip(plan.copies, plan.pieceBytes)) {
    auto guard = scf::IfOp::create(rewriter, loc, live, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard inside(rewriter);
      rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
      issueCopy(copy, bytes, body, k, start);
    }
    NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
  }
}

Value KernelLowering::atIteration(Value value, Block &body, IRMapping &map) {
  if (Value known = map.lookupOrNull(value))
    return known;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return value;
  for (Value operand : def->getOperands())
    atIteration(operand, body, map);
  return rewriter.clone(*def, map)->getResult(cast<OpResult>(value).getResultNumber());
}

void KernelLowering::issueCopy(CopyOp copy, int64_t bytes, Block &body, Value k, Value start) {
  Location loc = copy.getLoc();
  IRMapping map;
  map.map(body.getArgument(0), k);
  SmallVector<Value> srcOffsets;
  for (Value offset : copy.getSrcOffsets())
    srcOffsets.push_back(atIteration(offset, body, map));
  issuePieces(copy, srcOffsets, stageView(loc, copy.getDst(), k, start), bytes);
}

void KernelLowering::issuePieces(CopyOp copy, ValueRange srcOffsets, Value tile, int64_t bytes) {
  Location loc = copy.getLoc();
  Value src = copy.getSrc();
  auto srcType = cast<MemRefType>(src.getType());
  SmallVector<Value> dstOffsets;
  for (size_t d = 0; d < copy.getDstOffsets().size(); ++d)
    dstOffsets.push_back(index(rewriter, loc, 0));
  SmallVector<int64_t> pieces;
  for (int64_t size : copy.getSrcSizes())
    if (size != 1)
      pieces.push_back(size);
  int64_t width = bytes / (srcType.getElementTypeBitWidth() / 8);
  pieces.back() /= width;
  auto &ctx = *rewriter.getContext();
  auto sharedPtr = LLVM::LLVMPointerType::get(&ctx, 3);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, src);
  forSpread(loc, pieces, [&](OpBuilder &b, Location loc, ValueRange at) {
    SmallVector<Value> s(at);
    s.back() = arith::MulIOp::create(b, loc, s.back(), index(b, loc, width));
    SmallVector<Value> from = regionIndices(b, loc, srcOffsets, copy.getSrcSizes(), s);
    SmallVector<Value> to = regionIndices(b, loc, dstOffsets, copy.getDstSizes(), s);
    Value linear = linearIndex(b, loc, srcType.getShape(), from);
    Value inside = insideBuffer(b, loc, src, from);
    Value offset =
        arith::MulIOp::create(b, loc, linear, index(b, loc, srcType.getElementTypeBitWidth() / 8));
    offset = arith::SelectOp::create(b, loc, inside, offset, index(b, loc, 0));
    Value from_ = globalPointer(b, loc, base, offset);
    Value to_ = LLVM::IntToPtrOp::create(b, loc, sharedPtr, sharedAddress(loc, tile, to));
    Value size =
        arith::SelectOp::create(b, loc, inside, arith::ConstantIntOp::create(b, loc, bytes, 32),
                                arith::ConstantIntOp::create(b, loc, 0, 32));
    NVVM::CpAsyncOp::create(
        b, loc, to_, from_, static_cast<uint32_t>(bytes),
        bytes == 16 ? NVVM::LoadCacheModifierKind::CG : NVVM::LoadCacheModifierKind::CA, size);
  });
}

Value KernelLowering::globalPointer(OpBuilder &b, Location loc, Value base, Value offset) {
  Value address = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                             arith::AddIOp::create(b, loc, base, offset));
  Value generic =
      LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
  return LLVM::AddrSpaceCastOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
                                       generic);
}

} // namespace tl::gpu_lowering
