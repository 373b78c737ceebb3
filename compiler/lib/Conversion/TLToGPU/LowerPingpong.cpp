//===- LowerPingpong.cpp - KernelLowering: tl.pingpong --------------------===//
//
// tl.pingpong orders the issue of its gemms between the kernel's N
// warpgroups (FlashAttention-3's pingpong between consumer warpgroups), so
// that one warpgroup's gemms take the tensor cores while the others run
// their softmax, rather than all issuing at once and then all leaving the
// tensor cores idle. One named barrier of 256 threads per warpgroup
// (kPingpongBarriers + w):
//   bar.sync   own      warpgroup w waits for its turn (its 128 threads and
//                       the 128 that arrived for it),
//   the body's gemms,
//   bar.arrive next     and hands over to warpgroup (w + 1) % N without
//                       waiting: it goes on to its own work.
// One chain per kernel: it starts before the kernel-level op that holds the
// first pingpong (the outermost loop), where warpgroup N - 1 arrives on
// warpgroup 0's barrier, so 0 goes first. It ends after the one that holds
// the last: warpgroup 0 takes the last hand-over (a kernel that ends with a
// barrier half arrived is refused by tl-check-sync). Every warpgroup takes
// every turn, as tl ops do not branch on the thread (a pingpong cannot stand
// in a tl.last_to_arrive, which only one block runs); tl-check-sync proves
// the chain on the lowered kernel.
// The turns order only the issue of wgmma (asynchronous); where a body's
// gemm takes mma.sync, or the kernel has fewer than two whole warpgroups,
// the body runs where it stands.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace tl::gpu_lowering {

namespace {
/// Threads that meet at a turn's barrier: the warpgroup that waits and the
/// one that hands over.
constexpr int32_t kTurnThreads = 256;
} // namespace

Value KernelLowering::warpgroupIndex(Location loc) {
  return arith::DivUIOp::create(rewriter, loc, tid, index(rewriter, loc, 128));
}

Value KernelLowering::pingpongBarrier(Location loc, int64_t offset) {
  auto &b = rewriter;
  int64_t groups = threads / 128;
  Value group = warpgroupIndex(loc);
  Value turn = arith::RemUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, group, index(b, loc, offset)), index(b, loc, groups));
  return arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::AddIOp::create(b, loc, turn, index(b, loc, kPingpongBarriers)));
}

void KernelLowering::chainPingpongTurns(Operation *op) {
  if (pingpongChained)
    return;
  pingpongChained = true;
  // From the kernel-level op that holds this (the first) pingpong to the one
  // that holds the last: one chain, so that no start of a later chain can
  // arrive on barrier 2 before warpgroup 0 has taken an earlier chain's last
  // hand-over (256 arrivals would complete it with no one waiting).
  Block &entry = func.getBody().front();
  Operation *first = entry.findAncestorOpInBlock(*op), *last = first;
  func.walk([&](PingpongOp later) {
    Operation *top = entry.findAncestorOpInBlock(*later);
    if (top && last->isBeforeInBlock(top))
      last = top;
  });
  auto &b = rewriter;
  Location loc = op->getLoc();
  OpBuilder::InsertionGuard guard(b);
  auto inGroup = [&](int64_t group) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpgroupIndex(loc),
                                 index(b, loc, group));
  };
  b.setInsertionPoint(first);
  Value firstBarrier = arith::ConstantIntOp::create(b, loc, kPingpongBarriers, 32);
  Value count = arith::ConstantIntOp::create(b, loc, kTurnThreads, 32);
  scf::IfOp::create(b, loc, inGroup(threads / 128 - 1), [&](OpBuilder &b, Location loc) {
    NVVM::BarrierArriveOp::create(b, loc, firstBarrier, count);
    scf::YieldOp::create(b, loc);
  });
  b.setInsertionPointAfter(last); // (the constants above dominate it: one block)
  scf::IfOp::create(b, loc, inGroup(0), [&](OpBuilder &b, Location loc) {
    NVVM::BarrierOp::create(b, loc, /*res=*/Type(), firstBarrier, count, /*reductionOp=*/nullptr,
                            /*reductionPredicate=*/Value());
    scf::YieldOp::create(b, loc);
  });
}

LogicalResult KernelLowering::lowerPingpong(PingpongOp op) {
  auto &b = rewriter;
  Location loc = op.getLoc();
  Block &body = op.getBody().front();
  SmallVector<GemmOp> gemms(body.getOps<GemmOp>());
  bool asynchronous = llvm::all_of(gemms, [&](GemmOp gemm) {
    auto c = fragments.find(gemm.getC());
    return c != fragments.end() && c->second.layout.kind == FragmentLayout::Kind::Mma &&
           c->second.layout.warpgroup;
  });
  bool turns = asynchronous && threads % 128 == 0 && threads / 128 >= 2;
  Operation *sync = nullptr;
  if (turns) {
    // First, so that the chain's start comes before this turn's ops where
    // the pingpong is itself the kernel-level op.
    if (!func.getBody().front().findAncestorOpInBlock(*op))
      return op.emitOpError("internal: not inside the kernel's body");
    chainPingpongTurns(op);
    b.setInsertionPoint(op);
    // lowerGemmWgmma publishes unpublished operands with a block-wide
    // barrier, which inside a turn would wait for warpgroups that wait for
    // this one's turn: published here, before it.
    bool publish = llvm::any_of(gemms, [&](GemmOp gemm) {
      return !wgmmaInFlight.contains(gemm) && !wgmmaOperandsPublished.contains(gemm);
    });
    if (publish) {
      fenceProxyAsync(loc);
      barrier(loc);
      for (GemmOp gemm : gemms)
        wgmmaOperandsPublished.insert(gemm);
    }
    Value count = arith::ConstantIntOp::create(b, loc, kTurnThreads, 32);
    sync = NVVM::BarrierOp::create(b, loc, /*res=*/Type(), pingpongBarrier(loc, 0), count,
                                   /*reductionOp=*/nullptr, /*reductionPredicate=*/Value());
  }
  b.inlineBlockBefore(&body, op);
  for (GemmOp gemm : gemms)
    if (failed(lowerOp(gemm)))
      return failure();
  if (turns) {
    for (Operation *inner = sync->getNextNode(); inner != op; inner = inner->getNextNode())
      if (inner
              ->walk([](Operation *o) {
                return isa<gpu::BarrierOp, NVVM::BarrierOp, NVVM::Barrier0Op>(o)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted())
        return inner->emitError("the lowering of a tl.pingpong's body met the block at a "
                                "barrier, which would wait for the warpgroups waiting for "
                                "this turn");
    b.setInsertionPoint(op);
    NVVM::BarrierArriveOp::create(b, loc, pingpongBarrier(loc, 1),
                                  arith::ConstantIntOp::create(b, loc, kTurnThreads, 32));
  }
  b.eraseOp(op);
  return success();
}

} // namespace tl::gpu_lowering
