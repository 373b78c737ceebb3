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

/// The block spins until its counter element holds its turn (an atomic read:
/// another worker thread runs the block before it), runs the body, and
/// passes the turn on. The pool hands out blocks in launch order, so the
/// block whose turn comes first is already running.
struct InTurnToSpin : OpRewritePattern<InTurnOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(InTurnOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value counter = op.getCounter();
    ValueRange indices = op.getIndices();
    // An index outside the counter waits for nothing and passes nothing on.
    Value inside = insideBuffer(rewriter, loc, counter, indices);
    Value turn = arith::IndexCastOp::create(rewriter, loc, i32, op.getTurn());
    scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location loc) {
      Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
      auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
      b.createBlock(&spin.getBefore());
      Value seen =
          memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::ori, zero, counter, indices);
      Value waiting = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, seen, turn);
      scf::ConditionOp::create(b, loc, waiting, ValueRange{});
      b.createBlock(&spin.getAfter());
      scf::YieldOp::create(b, loc);
      b.setInsertionPointAfter(spin);
      scf::YieldOp::create(b, loc);
    });
    rewriter.inlineBlockBefore(&op.getBody().front(), op);
    scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location loc) {
      Value next = arith::IndexCastOp::create(b, loc, i32, op.getNext());
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign, next, counter, indices);
      scf::YieldOp::create(b, loc);
    });
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
                 InTurnToSpin, EraseAnnotateLayout>(&getContext());
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
