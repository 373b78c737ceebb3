//===- NarrowLoopIndices.cpp - tl-narrow-loop-indices: i32 loop counters --===//
//
// scf.for loops over `index` whose bounds fit 32 bits count in i32. Integer
// range analysis already narrows index arithmetic (arith-int-range-narrowing),
// but not a loop's induction variable: the counter stays 64-bit, and LLVM's
// induction variable widening then carries every value derived from it
// (k * block_N + j, a causal mask's column index) in 64 bits, two registers
// each, hoisted out of the loop where loop-invariant parts allow. In the
// causal backward at D = 64 (128x128 blocks) the hoisted pairs spilled: 252
// bytes with 64-bit thread indices; 44 once the thread and block indices
// carry bounds (KernelLowering, outlineKernel); 40 with this pass, which
// leaves no 64-bit add in the mask.
// The body reads the old index as arith.index_castui of the i32 counter, so
// the narrowing after this pass sees its range.
//
// Only loops inside no other loop: the tile loops (pipelined, a kernel's
// outer loops), where the hoisted values live. The loops inside them walk a
// thread's elements of a Row fragment; counted in i32 LLVM unrolled them
// further, and the reference's forward went from 96 registers to 168 (three
// blocks an SM instead of five).
//
//===----------------------------------------------------------------------===//
#include "tl/Conversion/Passes.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_NARROWLOOPINDICES
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl {
namespace {

/// The signed range the analysis proves for `value`, if it has one.
std::optional<ConstantIntRanges> rangeOf(DataFlowSolver &solver, Value value) {
  auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  return lattice->getValue().getValue();
}

/// Whether every value the loop's counter takes, and the counter one step
/// past its last value that the loop's exit test computes (at most
/// upper - 1 + step), fit in i32, all of them non-negative (so that signed and
/// unsigned compares agree and index_castui loses nothing).
bool fitsInt32(DataFlowSolver &solver, scf::ForOp loop) {
  auto lower = rangeOf(solver, loop.getLowerBound());
  auto upper = rangeOf(solver, loop.getUpperBound());
  auto step = rangeOf(solver, loop.getStep());
  if (!lower || !upper || !step)
    return false;
  const int64_t int32Max = std::numeric_limits<int32_t>::max();
  return lower->smin().isNonNegative() && upper->smin().isNonNegative() &&
         step->smin().isStrictlyPositive() && lower->smax().sle(int32Max) &&
         upper->smax().sle(int32Max) && step->smax().sle(int32Max) &&
         upper->smax().getSExtValue() - 1 + step->smax().getSExtValue() <= int32Max;
}

/// Rebuilds `loop` with an i32 counter; the body sees its old index as the
/// counter's unsigned cast.
void narrow(RewriterBase &rewriter, scf::ForOp loop) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Type i32 = rewriter.getI32Type();
  auto cast = [&](Value index) -> Value {
    return arith::IndexCastUIOp::create(rewriter, loc, i32, index);
  };
  // One statement each: the casts come out in this order on every compiler.
  Value lower = cast(loop.getLowerBound());
  Value upper = cast(loop.getUpperBound());
  Value step = cast(loop.getStep());
  auto narrowed = scf::ForOp::create(rewriter, loc, lower, upper, step, loop.getInitArgs(),
                                     /*bodyBuilder=*/nullptr, loop.getUnsignedCmp());
  for (NamedAttribute attribute : loop->getDiscardableAttrs())
    narrowed->setDiscardableAttr(attribute.getName(), attribute.getValue());
  Block *body = narrowed.getBody();
  if (!body->empty()) // the builder's terminator: the old body brings its own
    rewriter.eraseOp(body->getTerminator());
  rewriter.setInsertionPointToStart(body);
  SmallVector<Value> arguments = {arith::IndexCastUIOp::create(
      rewriter, loc, rewriter.getIndexType(), narrowed.getInductionVar())};
  llvm::append_range(arguments, narrowed.getRegionIterArgs());
  rewriter.mergeBlocks(loop.getBody(), body, arguments);
  rewriter.replaceOp(loop, narrowed.getResults());
}

struct NarrowLoopIndicesPass : impl::NarrowLoopIndicesBase<NarrowLoopIndicesPass> {
  void runOnOperation() override {
    DataFlowSolver solver;
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (failed(solver.initializeAndRun(getOperation())))
      return signalPassFailure();
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) {
      if (loop->getParentOfType<scf::ForOp>() || !loop.getInductionVar().getType().isIndex())
        return; // a loop inside another: see the file comment
      if (fitsInt32(solver, loop))
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      narrow(rewriter, loop);
  }
};

} // namespace
} // namespace tl
