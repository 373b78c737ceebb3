//===- LowerWarpSpecialized.cpp - KernelLowering: producer warpgroup ------===//
//
// A pipelined loop planned `tl.warp_specialized` (PipelinePlan.h) splits the
// kernel's threads in two roles. The kernel's own T threads are the
// consumers; one more warpgroup is the producer, whose first thread issues every
// iteration's TMA boxes. Per rotating copy of the tiles there are two
// mbarriers:
//   full[c]   arrival count 1: the producer arms it with the iteration's
//             bytes (expect_tx) and the boxes complete it;
//   empty[c]  arrival count T: each consumer arrives once it is done with
//             the copy: with wgmma batches in flight, once the batch that
//             read it has completed (the gemm's wait_group 1 in the next
//             iteration), so at the end of the next iteration; otherwise at
//             the end of its own iteration.
// Iteration k uses copy (k - start) % C; its n-th use ((k - start) / C)
// completes phase n of full, which the consumers wait for with parity n & 1;
// the producer reuses a copy after its previous use was released (a phase
// of empty, counted in lowerWarpSpecialized). No block-wide barrier remains
// in the loop: producer and consumers only meet on the mbarriers.
// (tl-check-sync proves these phases on the lowered kernel.)
//
// The producer is a whole warpgroup (setmaxnreg works on warpgroups): it
// gives its registers up (setmaxnreg.dec to kProducerRegisters) and the
// consumers take them (setmaxnreg.inc), so that a kernel of T + 128 threads
// keeps the registers T threads had. The layout of the lowered kernel:
//   mbarrier init (thread 0); barrier of all T + 128 threads
//   if (warpgroup < T/128)  { setmaxnreg.inc; the kernel's own work, its
//                             barriers named barriers of T threads }
//   if (warpgroup == T/128) { setmaxnreg.dec;
//                             if (tid == T) for k: wait empty; arm full;
//                                                  issue boxes }
// A TMA reduce-add the plan hands to the producer (tl.producer_reduce, the
// loop's only one: the staged backward's dQ) adds a second pair, one each:
//   full   arrival count T: each consumer, after its writes of the tile and a
//          proxy fence (it waited on empty before writing);
//   empty  arrival count 1: the producer's thread T + 32, which waits on full
//          (parity n & 1 in iteration n), issues the boxes and waits for
//          them to have read the tile (issueProducerReduces). Where the add
//          stands in a tl.in_turn (a deterministic sum), that thread also
//          waits for the turn before it issues, and waits for the boxes to
//          complete (their writes fenced from the async proxy) before it
//          passes the turn on and arrives.
// separateConsumers builds the first branch after the whole kernel is
// lowered: the work past the barrier moves in, but for the pure ops both
// branches use (the producer's bounds and offsets are such: the plan checks)
// and the register allocas, which LLVM promotes only from the entry block.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {
namespace {

/// Asks LLVM to leave a producer loop rolled. Its thread waits on an
/// mbarrier every iteration, which unrolling does not hide; unrolled, more
/// boxes' coordinates are live at once in the producer's kProducerRegisters.
/// The backward's dQ reduce-adds, unrolled whole at S = 1024 (16
/// iterations), spilled 20 bytes (116 loaded); rolled, 4 bytes at every
/// length, as when LLVM unrolled them 4 times at longer lengths (a count of
/// 4 forced at every length spilled 76).
void keepRolled(scf::ForOp loop) {
  MLIRContext *context = loop.getContext();
  auto unroll = LLVM::LoopUnrollAttr::get(context, /*disable=*/BoolAttr::get(context, true),
                                          IntegerAttr(), nullptr, nullptr, {}, {}, {});
  auto annotation = LLVM::LoopAnnotationAttr::get(context, nullptr, {}, {}, unroll, {}, {}, {}, {},
                                                  {}, {}, nullptr, nullptr, {}, {}, {});
  // scf-to-cf moves it to the loop's latch branch (llvm.br's loop_annotation).
  loop->setDiscardableAttr("loop_annotation", annotation);
}

} // namespace

LogicalResult KernelLowering::lowerWarpSpecialized(PipelinedOp op, const PipelinePlan &plan) {
  Location loc = op.getLoc();
  auto &b = rewriter;
  Block &body = op.getBody().front();
  Block &entry = func.getBody().front();
  int64_t copies = plan.rotatingCopies();
  Value start = op.getStart(), end = op.getEnd();
  bool publishes = publishWgmmaOperands(op, plan);

  // The mbarriers at the kernel's start (after the shared views, which go
  // right after the dynamic shared base), before every thread's first
  // barrier.
  Value full, empty;
  Operation *allThreads;
  AtomicAddTileOp handoff; // a reduce-add the producer issues (tl.producer_reduce)
  body.walk([&](AtomicAddTileOp add) { // in the body, or in a tl.in_turn there
    if (tlDialect(add).getProducerReduceAttrHelper().isAttrPresent(add))
      handoff = add;
  });
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(sharedBase.getDefiningOp());
    SmallVector<Value> arrays = initMbarriers(loc, copies, {1, threads});
    full = arrays[0], empty = arrays[1];
    if (handoff) {
      SmallVector<Value> reduce = initMbarriers(loc, 1, {threads, 1});
      producerReduce = ProducerReduce{handoff.getSrc(), reduce[0], reduce[1], Value(), start};
    }
    allThreads = NVVM::BarrierOp::create(b, loc); // bar.sync 0: the producer warpgroup too
  }

  // The producer, at the kernel's end: warpgroup T / 128 gives its
  // registers to the consumers, and its first thread issues.
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(entry.getTerminator());
    // The role from the warpgroup index broadcast from lane 0: ptxas then
    // knows each branch is uniform in a warpgroup, and wgmma in the
    // consumers' needs no arrive of its own (C7520 otherwise: every wgmma
    // serialised); setmaxnreg needs whole warpgroups too.
    Value group = arith::IndexCastOp::create(
        b, loc, b.getI32Type(), arith::DivUIOp::create(b, loc, tid, index(b, loc, 128)));
    Value role =
        gpu::ShuffleOp::create(b, loc, group, 0, 32, gpu::ShuffleMode::IDX).getShuffleResult();
    Value isProducer =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, role,
                              arith::ConstantIntOp::create(b, loc, threads / 128, 32));
    auto branch = scf::IfOp::create(b, loc, isProducer, /*withElse=*/false);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    if (movesRegisters())
      NVVM::SetMaxRegisterOp::create(b, loc, kProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
    Value issuer =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, threads));
    auto issue = scf::IfOp::create(b, loc, issuer, /*withElse=*/false);
    b.setInsertionPoint(issue.thenBlock()->getTerminator());
    auto loads = scf::ForOp::create(b, loc, start, end, index(b, loc, 1));
    keepRolled(loads);
    b.setInsertionPoint(loads.getBody()->getTerminator());
    Value j = loads.getInductionVar();
    Value used = arith::SubIOp::create(b, loc, j, start);
    Value slot = arith::RemUIOp::create(b, loc, used, index(b, loc, copies));
    Value round = arith::DivUIOp::create(b, loc, used, index(b, loc, copies));
    // The phase of empty[slot] that released iteration j - C: round - 1, but
    // with wgmma in flight round for the last copy, whose phase 0 the first
    // iteration completes (see the release below). Phase -1 (parity 1) of a
    // fresh mbarrier counts as complete: the first round waits for nothing.
    Value phase = round;
    if (plan.wgmmaInFlight) {
      Value last =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot, index(b, loc, copies - 1));
      phase = arith::AddIOp::create(
          b, loc, round, arith::SelectOp::create(b, loc, last, index(b, loc, 1), index(b, loc, 0)));
    }
    Value parity = arith::IndexCastOp::create(
        b, loc, b.getI32Type(),
        arith::AndIOp::create(b, loc, arith::AddIOp::create(b, loc, phase, index(b, loc, 1)),
                              index(b, loc, 1)));
    NVVM::MBarrierTryWaitParityOp::create(b, loc, mbarrierAddress(loc, empty, slot), parity,
                                          arith::ConstantIntOp::create(b, loc, kTryWaitTicks, 32));
    issueTmaBoxes(loc, plan, body, j, start, full);
    if (handoff)
      issueProducerReduces(handoff, body, start, end, branch);
    producer = ProducerWarpgroup{branch, allThreads, role};
  }

  // The consumers' loop, in place, after what they wrote before it is
  // visible to the async proxy where its gemms read it without a fence of
  // their own (publishWgmmaOperands).
  if (publishes) {
    fenceProxyAsync(loc);
    barrier(loc);
  }
  auto loop = scf::ForOp::create(b, loc, start, end, index(b, loc, 1));
  Operation *headerEnd = rotateTiles(op, loop, plan);
  Block &loopBody = *loop.getBody();
  Value k = loop.getInductionVar();
  if (producerReduce)
    producerReduce->k = k;
  rewriter.setInsertionPoint(plan.copies.front());
  waitTmaIteration(loc, k, start, copies, full);
  for (CopyOp copy : plan.copies)
    rewriter.eraseOp(copy);
  if (plan.wgmmaInFlight)
    loopBody.walk([&](GemmOp gemm) { wgmmaInFlight.insert(gemm); });
  // With wgmma in flight, the previous iteration's copy is free once this
  // iteration's gemm has waited for all but its own batch: the release
  // closes the body. The first iteration releases the copy of iteration
  // start - 1, i.e. the last one's phase 0 (the producer counts it): with no
  // condition on k, which LLVM would peel the first iteration for,
  // materialising the accumulators' initial values between wgmma.fence and
  // the first wgmma (ptxas then serialises: C7519). Otherwise every gemm has
  // waited for its batch by the body's end: it releases its own copy.
  rewriter.setInsertionPoint(loopBody.getTerminator());
  Value slot = arith::RemUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, k, start),
                            index(b, loc, plan.wgmmaInFlight ? copies - 1 : 0)),
      index(b, loc, copies));
  NVVM::MBarrierArriveOp::create(b, loc, /*res=*/Type(), mbarrierAddress(loc, empty, slot),
                                 /*count=*/Value());
  rewriter.setInsertionPointAfter(loop);
  // Before anything reads the accumulators or reuses the tiles.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));
  return lowerBlockFrom(loopBody, headerEnd->getNextNode());
}

void KernelLowering::issueProducerReduces(AtomicAddTileOp add, Block &body, Value start, Value end,
                                          scf::IfOp branch) {
  // The producer warpgroup's second warp (thread T + 32) issues iteration j's
  // reduce-add once the consumers' writes are in (phase j - start of full),
  // waits for its boxes to have read the tile and hands it back (empty);
  // after the last, for the boxes to complete, before the block ends. In
  // turns (deterministic) it waits for its turn before the boxes and passes it
  // on once their sums are in memory, handing the tile back after that, or
  // with limits.earlyTileHandBack as soon as the boxes have read it.
  auto &b = rewriter;
  Location loc = add.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  Value reducer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, threads + 32));
  auto reduce = scf::IfOp::create(b, loc, reducer, /*withElse=*/false);
  b.setInsertionPoint(reduce.thenBlock()->getTerminator());
  auto adds = scf::ForOp::create(b, loc, start, end, index(b, loc, 1));
  keepRolled(adds);
  b.setInsertionPointAfter(adds);
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0), /*read=*/nullptr);
  b.setInsertionPoint(adds.getBody()->getTerminator());
  Value j = adds.getInductionVar();
  waitTmaIteration(loc, j, start, /*copies=*/1, producerReduce->full); // phase j - start
  IRMapping mapping;
  mapping.map(body.getArgument(0), j);
  SmallVector<Value> offsets;
  for (Value offset : add.getDstOffsets())
    offsets.push_back(atIteration(offset, body, mapping));
  Value tile = add.getSrc();
  // In turns: the counter element of iteration j, waited for before the
  // boxes and passed on once their sums are in memory (as lowerInTurn and
  // lowerTmaReduce do it in one block's threads).
  auto turn = dyn_cast<InTurnOp>(add->getParentOp());
  Value counter, inside;
  if (turn) {
    SmallVector<Value> indices;
    for (Value i : turn.getIndices())
      indices.push_back(atIteration(i, body, mapping));
    std::tie(counter, inside) = counterPointer(loc, turn.getCounter(), indices);
    Value expected = arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                                atIteration(turn.getTurn(), body, mapping));
    auto wait = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    OpBuilder::InsertionGuard inTurn(b);
    b.setInsertionPoint(wait.thenBlock()->getTerminator());
    waitForTurn(loc, counter, expected);
    // The previous turn's sums (async-proxy writes another block fenced
    // before its release) before this block's boxes add to them.
    NVVM::FenceProxyOp::create(b, loc,
                               NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async),
                               NVVM::SharedSpaceAttr());
  }
  issueTileBoxes(loc, add.getDst(), offsets, add.getDstSizes(), cast<MemRefType>(tile.getType()),
                 memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile), Value(),
                 /*reduceAdd=*/true);
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  auto handBack = [&] { // the consumers may write the tile again
    NVVM::MBarrierArriveOp::create(b, loc, /*res=*/Type(),
                                   mbarrierAddress(loc, producerReduce->empty, index(b, loc, 0)),
                                   /*count=*/Value());
  };
  auto waitRead = [&] { // the boxes have read the tile
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0), b.getUnitAttr());
  };
  if (!turn) {
    waitRead();
    handBack();
    return;
  }
  // In turns the tile goes back after the turn has passed, or (early tile
  // hand-back) as soon as read, the turn passing once the sums are in.
  if (limits.earlyTileHandBack) {
    waitRead();
    handBack();
  }
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0), /*read=*/nullptr);
  NVVM::FenceProxyOp::create(b, loc,
                             NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async),
                             NVVM::SharedSpaceAttr());
  Value next = atIteration(turn.getNext(), body, mapping);
  {
    auto pass = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    OpBuilder::InsertionGuard inTurn(b);
    b.setInsertionPoint(pass.thenBlock()->getTerminator());
    passTurn(loc, counter, next);
  }
  if (!limits.earlyTileHandBack)
    handBack();
}

void KernelLowering::waitProducerReduceRead(Location loc, Value tile) {
  if (!producerReduce || tile != producerReduce->tile || !producerReduce->k)
    return;
  // Iteration n = k - start writes the tile once the producer has handed
  // back iteration n - 1's (phase n - 1 of empty, parity (n + 1) & 1; a
  // fresh mbarrier's phase -1 counts as complete).
  auto &b = rewriter;
  Value parity = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::AndIOp::create(b, loc,
                            arith::AddIOp::create(b, loc,
                                                  arith::SubIOp::create(b, loc, producerReduce->k,
                                                                        producerReduce->start),
                                                  index(b, loc, 1)),
                            index(b, loc, 1)));
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, mbarrierAddress(loc, producerReduce->empty, index(b, loc, 0)), parity,
      arith::ConstantIntOp::create(b, loc, kTryWaitTicks, 32));
}

LogicalResult KernelLowering::separateConsumers() {
  auto &b = rewriter;
  Location loc = func.getLoc();
  Operation *branch = producer->branch;
  SmallVector<Operation *> moved;
  DenseSet<Operation *> movedSet;
  for (Operation *op = producer->allThreadsBarrier->getNextNode(); op && op != branch;
       op = op->getNextNode()) {
    bool dependsOnMoved = llvm::any_of(op->getOperands(), [&](Value operand) {
      return movedSet.contains(operand.getDefiningOp());
    });
    bool shared =
        !dependsOnMoved && ((op->getNumRegions() == 0 && isPure(op)) || isa<memref::AllocaOp>(op));
    if (!shared) {
      moved.push_back(op);
      movedSet.insert(op);
    }
  }
  bool producerUsesMoved = false;
  branch->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      producerUsesMoved |= movedSet.contains(operand.getDefiningOp());
  });
  if (producerUsesMoved)
    return func.emitOpError("the producer warpgroup needs a value only the consumers compute");
  b.setInsertionPoint(branch);
  Value isConsumer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, producer->role,
                                           arith::ConstantIntOp::create(b, loc, threads / 128, 32));
  auto consumers = scf::IfOp::create(b, loc, isConsumer, /*withElse=*/false);
  b.setInsertionPoint(consumers.thenBlock()->getTerminator());
  if (movesRegisters())
    NVVM::SetMaxRegisterOp::create(b, loc, consumerRegisters(),
                                   NVVM::SetMaxRegisterAction::increase);
  for (Operation *op : moved)
    op->moveBefore(consumers.thenBlock()->getTerminator());
  SmallVector<gpu::BarrierOp> barriers;
  consumers.walk([&](gpu::BarrierOp barrier) { barriers.push_back(barrier); });
  for (gpu::BarrierOp barrier : barriers) { // bar.sync 1, T
    b.setInsertionPoint(barrier);
    NVVM::BarrierOp::create(b, barrier.getLoc(), /*res=*/Type(),
                            arith::ConstantIntOp::create(b, barrier.getLoc(), 1, 32),
                            arith::ConstantIntOp::create(b, barrier.getLoc(), threads, 32),
                            /*reductionOp=*/nullptr, /*reductionPredicate=*/Value());
    b.eraseOp(barrier);
  }
  tlDialect(func).getThreadsAttrHelper().setAttr(func, b.getI64IntegerAttr(threads + 128));
  // The block's size for ptxas (.reqntid): its T + 128 threads' registers
  // must fit the register file at launch; setmaxnreg then moves them.
  int32_t size = static_cast<int32_t>(threads + 128);
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({size, 1, 1}));
  return success();
}

bool KernelLowering::movesRegisters() const {
  // With 256 threads or fewer each may hold 255 registers anyway (and ptxas
  // ignores setmaxnreg then: C7508, no register count at entry).
  return threads + 128 > 256;
}

int32_t KernelLowering::consumerRegisters() const {
  // What the register file (64K) leaves the T consumers once the producer
  // warpgroup holds kProducerRegisters each: a multiple of 8, at most 256.
  int64_t left = (65536 - 128 * kProducerRegisters) / threads;
  return static_cast<int32_t>(std::min<int64_t>(256, left / 8 * 8));
}

} // namespace tl::gpu_lowering
