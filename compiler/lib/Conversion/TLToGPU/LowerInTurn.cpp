//===- LowerInTurn.cpp - tl.in_turn as an acquire spin and a release ------===//
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
// A wait that lasts past about ten seconds (%globaltimer) traps: a turn that
// never comes (turns out of launch order, a counter not reset between
// launches) is then a launch error the runtime reports, not a hang.
// An index outside the counter tensor waits for nothing and passes nothing
// on, as guarded global accesses elsewhere drop out-of-range elements.
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

LogicalResult KernelLowering::lowerInTurn(InTurnOp op) {
  auto &b = rewriter;
  Location loc = op.getLoc();
  Value counter = op.getCounter();
  auto type = cast<MemRefType>(counter.getType());
  Type i32 = b.getI32Type(), i64 = b.getI64Type();

  Value inside = insideBuffer(b, loc, counter, op.getIndices());
  Value offset = arith::MulIOp::create(
      b, loc, linearIndex(b, loc, type.getShape(), op.getIndices()), index(b, loc, 4));
  offset = arith::SelectOp::create(b, loc, inside, offset, index(b, loc, 0));
  Value pointer = globalPointer(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, counter), offset);
  Value turn = arith::IndexCastOp::create(b, loc, i32, op.getTurn());
  Value first = arith::AndIOp::create(
      b, loc, inside,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(b, loc, 0)));

  // Thread 0 waits for the turn; the barrier lets the block in after it.
  scf::IfOp::create(b, loc, first, [&](OpBuilder &b, Location loc) {
    Value start = NVVM::GlobalTimerOp::create(b, loc, i64);
    auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
    {
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
    scf::YieldOp::create(b, loc);
  });
  barrier(loc);

  Block &body = op.getBody().front();
  if (failed(lowerBlock(body)))
    return failure();
  rewriter.inlineBlockBefore(&body, op);

  // Every thread's part of the body is done; thread 0 passes the turn on.
  rewriter.setInsertionPoint(op);
  barrier(loc);
  scf::IfOp::create(b, loc, first, [&](OpBuilder &b, Location loc) {
    Value next = arith::IndexCastOp::create(b, loc, i32, op.getNext());
    LLVM::StoreOp::create(b, loc, next, pointer, /*alignment=*/4, false, false, false,
                          LLVM::AtomicOrdering::release, "device");
    scf::YieldOp::create(b, loc);
  });
  rewriter.eraseOp(op);
  return success();
}

} // namespace tl::gpu_lowering
