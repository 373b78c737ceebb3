//===- TLToCPU.cpp - lower tl programs to host loops ----------------------===//
//
// The CPU backend runs a tl program with no thread partitioning: one host
// thread executes a whole thread block, so every tile op becomes a plain loop
// nest over its tile. This file holds the pass, the kernel outlining, and the
// patterns for buffers and loops; TileOpsToLoops.cpp lowers copy, gemm,
// reduce and atomic_add.
//
//===----------------------------------------------------------------------===//
#include "../LoweringHelpers.h"

#include "tl/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_CONVERTTLTOCPU
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::cpu {
using namespace tl::lowering;

namespace {

//===----------------------------------------------------------------------===//
// Buffers and loops
//===----------------------------------------------------------------------===//

/// On-chip buffers become stack allocations of the block's function, in the
/// default memory space.
template <typename AllocOp> struct AllocToAlloca : OpRewritePattern<AllocOp> {
  using OpRewritePattern<AllocOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(AllocOp op, PatternRewriter &rewriter) const override {
    MemRefType type = op.getType();
    auto hostType = MemRefType::get(type.getShape(), type.getElementType());
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(op, hostType);
    return success();
  }
};

struct FillToLoops : OpRewritePattern<FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FillOp op, PatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(op.getBuffer().getType());
    buildLoops(rewriter, op.getLoc(), type.getShape(),
               [&](OpBuilder &b, Location loc, ValueRange ivs) {
                 memref::StoreOp::create(b, loc, op.getValue(), op.getBuffer(), ivs);
               });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Moves a loop body (a block without terminator) to the innermost loop.
void inlineBody(PatternRewriter &rewriter, Block &body, scf::ForOp innermost, ValueRange ivs) {
  rewriter.inlineBlockBefore(&body, innermost.getBody()->getTerminator(), ivs);
}

struct ParallelToLoops : OpRewritePattern<ParallelOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ParallelOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> ivs;
    scf::ForOp innermost;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    OpBuilder::InsertionGuard guard(rewriter);
    for (int64_t extent : op.getExtents()) {
      Value upper = arith::ConstantIndexOp::create(rewriter, loc, extent);
      innermost = scf::ForOp::create(rewriter, loc, zero, upper, one);
      ivs.push_back(innermost.getInductionVar());
      rewriter.setInsertionPoint(innermost.getBody()->getTerminator());
    }
    inlineBody(rewriter, op.getBody().front(), innermost, ivs);
    rewriter.eraseOp(op);
    return success();
  }
};

struct PipelinedToLoop : OpRewritePattern<PipelinedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PipelinedOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(rewriter, loc, op.getStart(), op.getEnd(), one);
    inlineBody(rewriter, op.getBody().front(), loop, loop.getInductionVar());
    rewriter.eraseOp(op);
    return success();
  }
};

/// The block waits in tl_cpu_wait_turn (HostJIT.cpp) until its counter
/// element holds its turn (another worker thread runs the block before it:
/// the pool hands out blocks in launch order), runs the body, and passes the
/// turn on. A turn that does not come within ten seconds never will: the
/// wait gives up, marks the launch failed (the module's tl_turn_status, which
/// the runtime reads after the launch) and the body is skipped, so the launch
/// ends with an error instead of hanging. An index outside the counter waits
/// for nothing and passes nothing on.
struct InTurnToCall : OpRewritePattern<InTurnOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(InTurnOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type(), i1 = rewriter.getI1Type();
    auto pointer = LLVM::LLVMPointerType::get(context);
    auto module = op->getParentOfType<ModuleOp>();
    declareTurnRuntime(rewriter, module, pointer, i32, i1);

    Value counter = op.getCounter();
    ValueRange indices = op.getIndices();
    auto [offset, inside] = counterElement(rewriter, loc, counter, indices);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, counter);
    Value address = LLVM::IntToPtrOp::create(
        rewriter, loc, pointer,
        arith::IndexCastOp::create(rewriter, loc, i64,
                                   arith::AddIOp::create(rewriter, loc, base, offset))
            .getResult());
    Value status = LLVM::AddressOfOp::create(rewriter, loc, pointer, kTurnStatus);
    Value turn = arith::IndexCastOp::create(rewriter, loc, i32, op.getTurn());
    auto wait = scf::IfOp::create(
        rewriter, loc, inside,
        [&](OpBuilder &b, Location loc) {
          Value ok = func::CallOp::create(b, loc, kWaitTurn, TypeRange{i1},
                                          ValueRange{address, turn, status})
                         .getResult(0);
          scf::YieldOp::create(b, loc, ok);
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, arith::ConstantIntOp::create(b, loc, i1, 1).getResult());
        });
    auto inTurn = scf::IfOp::create(rewriter, loc, wait.getResult(0), /*withElse=*/false);
    rewriter.inlineBlockBefore(&op.getBody().front(), inTurn.thenBlock()->getTerminator());
    rewriter.setInsertionPoint(inTurn.thenBlock()->getTerminator());
    scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location loc) {
      Value next = arith::IndexCastOp::create(b, loc, i32, op.getNext());
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign, next, counter, indices);
      scf::YieldOp::create(b, loc);
    });
    rewriter.eraseOp(op);
    return success();
  }

  static constexpr const char *kWaitTurn = "tl_cpu_wait_turn";
  static constexpr const char *kTurnStatus = "tl_turn_status";

  /// `bool tl_cpu_wait_turn(i32 *counter, i32 turn, i32 *status)` and the
  /// module's `i32 tl_turn_status` (0: every turn came), once per module.
  static void declareTurnRuntime(PatternRewriter &rewriter, ModuleOp module, Type pointer, Type i32,
                                 Type i1) {
    if (module.lookupSymbol(kWaitTurn))
      return;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    auto wait = func::FuncOp::create(rewriter, module.getLoc(), kWaitTurn,
                                     rewriter.getFunctionType({pointer, i32, pointer}, {i1}));
    wait.setPrivate();
    LLVM::GlobalOp::create(rewriter, module.getLoc(), i32, /*isConstant=*/false,
                           LLVM::Linkage::External, kTurnStatus, rewriter.getI32IntegerAttr(0));
  }
};

/// A block is one host thread: it adds one to its counter element (an
/// atomic read-modify-write, acquire and release: the blocks' earlier writes
/// are visible to the one that reads the last count), and the block that
/// read arrivals - 1 runs the body and sets the element back to 0. An index
/// outside the counter counts nothing and runs nothing.
struct LastToArriveToAtomic : OpRewritePattern<LastToArriveOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LastToArriveOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value counter = op.getCounter();
    ValueRange indices = op.getIndices();
    Value inside = insideBuffer(rewriter, loc, counter, indices);
    Value lastCount = arith::IndexCastOp::create(
        rewriter, loc, i32,
        arith::SubIOp::create(rewriter, loc, op.getArrivals(),
                              arith::ConstantIndexOp::create(rewriter, loc, 1)));
    auto arrive = scf::IfOp::create(
        rewriter, loc, inside,
        [&](OpBuilder &b, Location loc) {
          Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
          Value before = memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi, one,
                                                     counter, indices);
          scf::YieldOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, before, lastCount)
                  .getResult());
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(
              b, loc, arith::ConstantIntOp::create(b, loc, rewriter.getI1Type(), 0).getResult());
        });
    auto last = scf::IfOp::create(rewriter, loc, arrive.getResult(0), /*withElse=*/false);
    rewriter.inlineBlockBefore(&op.getBody().front(), last.thenBlock()->getTerminator());
    rewriter.setInsertionPoint(last.thenBlock()->getTerminator());
    memref::AtomicRMWOp::create(rewriter, loc, arith::AtomicRMWKind::assign,
                                arith::ConstantIntOp::create(rewriter, loc, i32, 0), counter,
                                indices);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Layouts were collected before the rewrite; swizzles mean nothing here.
struct EraseAnnotateLayout : OpRewritePattern<AnnotateLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AnnotateLayoutOp op, PatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

/// Gemms complete where they stand on the CPU: nothing to wait for.
struct EraseWaitWgmma : OpRewritePattern<WaitWgmmaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WaitWgmmaOp op, PatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

/// One thread runs a CPU block: the pingpong's turns are in order already.
struct InlinePingpong : OpRewritePattern<PingpongOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PingpongOp op, PatternRewriter &rewriter) const override {
    rewriter.inlineBlockBefore(&op.getBody().front(), op);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The kernel's body becomes the function's body; block indices become
/// trailing index arguments.
LogicalResult outlineKernel(KernelOp kernel) {
  auto func = kernel->getParentOfType<func::FuncOp>();
  if (!func)
    return kernel.emitOpError("must be inside a func.func to run on the CPU");
  Location loc = kernel.getLoc();
  Block &body = kernel.getBody().front();
  for (BlockArgument index : body.getArguments()) {
    unsigned position = func.getNumArguments();
    if (failed(func.insertArgument(position, IndexType::get(func.getContext()), {}, loc)))
      return failure();
    index.replaceAllUsesWith(func.getArgument(position));
  }
  Block &entry = func.front();
  entry.getOperations().splice(Block::iterator(kernel), body.getOperations());
  tlDialect(func).getGridAttrHelper().setAttr(func, kernel.getGridAttr());
  tlDialect(func).getThreadsAttrHelper().setAttr(func, kernel.getThreadsAttr());
  kernel.erase();
  return success();
}

struct ConvertTLToCPUPass : public tl::impl::ConvertTLToCPUBase<ConvertTLToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LayoutMap layouts = indexMapLayouts(module);
    // Elements the author reads or writes directly (in a parallel loop, say)
    // of a tensor with an index-map layout: through the layout, once, before
    // the patterns run (their own accesses are resolved as they are built; a
    // resolved view may fold back to the tensor, so no pattern may resolve
    // again).
    IRRewriter rewriter(&getContext());
    resolveElementAccesses(rewriter, module, layouts);
    SmallVector<KernelOp> kernels;
    module.walk([&](KernelOp kernel) { kernels.push_back(kernel); });
    for (KernelOp kernel : kernels)
      if (failed(outlineKernel(kernel)))
        return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    patterns.add<AllocToAlloca<AllocSharedOp>, AllocToAlloca<AllocFragmentOp>,
                 AllocToAlloca<AllocLocalOp>, FillToLoops, ParallelToLoops, PipelinedToLoop,
                 InTurnToCall, LastToArriveToAtomic, EraseAnnotateLayout, EraseWaitWgmma,
                 InlinePingpong>(&getContext());
    populateTileOpsToLoopsPatterns(patterns, layouts);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();

    WalkResult left = module.walk([](Operation *op) {
      if (isa<TLDialect>(op->getDialect())) {
        op->emitOpError("has no CPU lowering");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace tl::cpu
