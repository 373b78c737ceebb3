//===- LowerBlockCounters.cpp - tl.in_turn, tl.last_to_arrive -------------===//
//
// Two ops order blocks through an i32 counter in global memory.
//
// tl.in_turn makes blocks that share a global counter run a body one after
// another, in the order of their turns (FlashAttention-3 orders its dQ
// accumulation so, for a deterministic backward). On the GPU, as CUTLASS's
// semaphore does it: thread 0 spins on an acquire load (GPU scope) of the
// counter until it holds the block's turn, and a barrier lets the block in;
// after the body, a barrier gathers the block's writes and thread 0 stores
// the next turn with release semantics. The barrier orders the other threads'
// writes before thread 0's release, and the next block's acquire after it, so
// each body sees everything the previous turn wrote.
//
// Where the body is a reduce-add the producer warpgroup issues
// (tl.producer_reduce), the producer's issuing thread takes the turn instead
// (LowerWarpSpecialized.cpp's issueProducerReduces, FlashAttention-3's dQ
// semaphore): it waits for it, issues the boxes, waits for them to complete
// and passes the turn on, and the consumers only hand the tile over.
//
// A wait that lasts past about ten seconds (%globaltimer) traps: a turn that
// never comes (turns out of launch order, a counter not reset between
// launches) is then a launch error the runtime reports, not a hang.
// An index outside the counter tensor waits for nothing and passes nothing
// on, as guarded global accesses elsewhere drop out-of-range elements.
//
// tl.last_to_arrive runs its body in the block that arrives last: a barrier
// gathers the block's writes, thread 0 adds one to the counter (acquire and
// release, GPU scope: it publishes the block's writes and, in the last block,
// sees every earlier arriver's), and a barrier that ORs a predicate over the
// block (bar.red.or) tells every thread whether thread 0 read the last count.
// Thread 0 issues the block's TMA writes: where the kernel has any, it waits
// for them to complete before it arrives. The last block's thread 0 sets the
// counter back to 0 first: every other block has arrived. No block waits for
// another, so nothing can hang. An index outside the counter counts nothing
// and runs nothing.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace tl::gpu_lowering {
namespace {

/// How long a block waits for its turn before it traps, in nanoseconds.
constexpr int64_t kTurnTimeoutNs = 10'000'000'000;

} // namespace

std::pair<Value, Value> KernelLowering::counterPointer(Location loc, Value counter,
                                                       ValueRange indices) {
  auto [offset, inside] = counterElement(rewriter, loc, counter, indices);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, counter);
  return {globalPointer(rewriter, loc, base, offset), inside};
}

void KernelLowering::waitForTurn(Location loc, Value pointer, Value turn) {
  auto &b = rewriter;
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value start = NVVM::GlobalTimerOp::create(b, loc, i64);
  auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&spin.getBefore());
  Value seen = LLVM::LoadOp::create(b, loc, i32, pointer, /*alignment=*/4, false, false, false,
                                    false, LLVM::AtomicOrdering::acquire, "device");
  Value waiting = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, seen, turn);
  Value waited = arith::SubIOp::create(b, loc, NVVM::GlobalTimerOp::create(b, loc, i64), start);
  Value overdue = arith::AndIOp::create(
      b, loc, waiting,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, waited,
                            arith::ConstantIntOp::create(b, loc, i64, kTurnTimeoutNs)));
  scf::IfOp::create(b, loc, overdue, [&](OpBuilder &b, Location loc) {
    LLVM::Trap::create(b, loc);
    scf::YieldOp::create(b, loc);
  });
  scf::ConditionOp::create(b, loc, waiting, ValueRange{});
  b.createBlock(&spin.getAfter());
  scf::YieldOp::create(b, loc);
}

void KernelLowering::passTurn(Location loc, Value pointer, Value next) {
  auto &b = rewriter;
  Value turn = arith::IndexCastOp::create(b, loc, b.getI32Type(), next);
  LLVM::StoreOp::create(b, loc, turn, pointer, /*alignment=*/4, false, false, false,
                        LLVM::AtomicOrdering::release, "device");
}

bool KernelLowering::turnTakenByProducer(InTurnOp op) const {
  Block &body = op.getBody().front();
  auto add = llvm::hasSingleElement(body) ? dyn_cast<AtomicAddTileOp>(body.front()) : nullptr;
  return add && producerReduce && add.getSrc() == producerReduce->tile; // as lowerAtomicAddTile
}

LogicalResult KernelLowering::lowerInTurn(InTurnOp op) {
  auto &b = rewriter;
  Location loc = op.getLoc();
  Block &body = op.getBody().front();
  if (turnTakenByProducer(op)) {
    if (failed(lowerBlock(body)))
      return failure();
    rewriter.inlineBlockBefore(&body, op);
    rewriter.eraseOp(op);
    return success();
  }
  Value counter = op.getCounter();
  Type i32 = b.getI32Type();

  auto [pointer, inside] = counterPointer(loc, counter, op.getIndices());
  Value turn = arith::IndexCastOp::create(b, loc, i32, op.getTurn());
  Value first = arith::AndIOp::create(
      b, loc, inside,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, 0)));

  // Thread 0 waits for the turn; the barrier lets the block in after it.
  scf::IfOp::create(b, loc, first, [&](OpBuilder &b, Location loc) {
    waitForTurn(loc, pointer, turn);
    scf::YieldOp::create(b, loc);
  });
  barrier(loc);

  if (failed(lowerBlock(body)))
    return failure();
  rewriter.inlineBlockBefore(&body, op);

  // Every thread's part of the body is done; thread 0 passes the turn on.
  rewriter.setInsertionPoint(op);
  barrier(loc);
  scf::IfOp::create(b, loc, first, [&](OpBuilder &b, Location loc) {
    passTurn(loc, pointer, op.getNext());
    scf::YieldOp::create(b, loc);
  });
  rewriter.eraseOp(op);
  return success();
}

LogicalResult KernelLowering::lowerLastToArrive(LastToArriveOp op) {
  auto &b = rewriter;
  Location loc = op.getLoc();
  Type i32 = b.getI32Type();
  auto [pointer, inside] = counterPointer(loc, op.getCounter(), op.getIndices());
  Value first = arith::AndIOp::create(
      b, loc, inside,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, 0)));
  Value lastCount = arith::IndexCastOp::create(
      b, loc, i32, arith::SubIOp::create(b, loc, op.getArrivals(), index(b, loc, 1)));

  // The block's writes are done; thread 0 arrives for it.
  barrier(loc);
  auto arrive = scf::IfOp::create(
      b, loc, first,
      [&](OpBuilder &b, Location loc) {
        if (bulkWrites) { // the block's TMA writes complete before it arrives
          NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0), /*read=*/nullptr);
          NVVM::FenceProxyOp::create(
              b, loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async),
              NVVM::SharedSpaceAttr());
        }
        // Inline PTX: LLVM 22's NVPTX drops an atomicrmw's ordering (a
        // relaxed atom.add; llvm-project #176015 adds it later).
        Value address = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), pointer);
        Value before =
            LLVM::InlineAsmOp::create(
                b, loc, i32, ValueRange{address}, "atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;",
                "=r,l,~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
                LLVM::TailCallKind::None,
                LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
                /*operand_attrs=*/ArrayAttr())
                .getResult(0);
        Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, before, lastCount);
        scf::IfOp::create(b, loc, last, [&](OpBuilder &b, Location loc) {
          LLVM::StoreOp::create(b, loc, arith::ConstantIntOp::create(b, loc, i32, 0), pointer,
                                /*alignment=*/4);
          scf::YieldOp::create(b, loc);
        });
        scf::YieldOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, last).getResult());
      },
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(b, loc, arith::ConstantIntOp::create(b, loc, i32, 0).getResult());
      });
  // Every thread learns whether thread 0 read the last count.
  Value anyLast = NVVM::BarrierOp::create(
                      b, loc, TypeRange{i32}, Value(), Value(),
                      NVVM::BarrierReductionAttr::get(b.getContext(), NVVM::BarrierReduction::OR),
                      arrive.getResult(0))
                      .getResult(0);
  auto isLast =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, anyLast,
                                              arith::ConstantIntOp::create(b, loc, i32, 0)),
                        /*withElse=*/false);

  Block &body = op.getBody().front();
  if (failed(lowerBlock(body)))
    return failure();
  rewriter.inlineBlockBefore(&body, isLast.thenBlock()->getTerminator());
  rewriter.eraseOp(op);
  return success();
}

} // namespace tl::gpu_lowering
