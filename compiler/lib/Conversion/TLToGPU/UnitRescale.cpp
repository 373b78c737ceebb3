//===- UnitRescale.cpp - tl-mark-unit-rescales ----------------------------===//
//
// Online softmax rescales its accumulator by exp2(m_old - m_new) each
// iteration, and once a row's maximum has settled (most iterations of a long
// sequence) the factor is exactly 1 for every row a warp holds. This pass
// marks each tl.parallel that is such a rescale (`tl.unit_rescale`); the GPU
// lowering then wraps its unrolled body in a branch taken only when some
// lane of the warp has a factor other than 1 (vote.any), skipping a multiply
// per accumulator element otherwise. The result is exact either way (x * 1 ==
// x), so the rewrite needs no fast-math switch.
//
//===----------------------------------------------------------------------===//
#include "UnitRescale.h"

#include "tl/Conversion/Passes.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_MARKUNITRESCALES
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

/// The layout tl-infer-layouts gave the fragment `buffer` is (a
/// tl.alloc_fragment's result), if any.
Attribute fragmentLayout(Value buffer) {
  auto alloc = buffer.getDefiningOp<AllocFragmentOp>();
  return alloc ? tlDialect(alloc).getLayoutAttrHelper().getAttr(alloc) : Attribute();
}

} // namespace

Value unitRescaleFactor(ParallelOp op) {
  Block &body = op.getBody().front();
  if (body.getNumArguments() != 2)
    return Value();
  SmallVector<Operation *> ops;
  for (Operation &inner : body)
    if (!inner.hasTrait<OpTrait::IsTerminator>())
      ops.push_back(&inner);
  if (ops.size() != 4)
    return Value();
  Value i = body.getArgument(0), j = body.getArgument(1);
  auto store = dyn_cast<memref::StoreOp>(ops[3]);
  auto mul = dyn_cast<arith::MulFOp>(ops[2]);
  if (!store || !mul || store.getValue() != mul.getResult() || !mul.getType().isF32() ||
      store.getIndices() != ValueRange{i, j} || !fragmentLayout(store.getMemRef()))
    return Value();
  Value target = store.getMemRef(), scale;
  for (Value operand : {mul.getLhs(), mul.getRhs()}) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (!load || !llvm::is_contained(ops, load.getOperation()) || !fragmentLayout(load.getMemRef()))
      return Value();
    if (load.getMemRef() == target && load.getIndices() == ValueRange{i, j})
      continue;
    if (load.getIndices() != ValueRange{i})
      return Value();
    scale = load.getMemRef();
  }
  if (!scale || !isa<MmaLayoutAttr, WgmmaLayoutAttr>(fragmentLayout(target)) ||
      !isa<MmaRowLayoutAttr, WgmmaRowLayoutAttr>(fragmentLayout(scale)))
    return Value();
  return scale;
}

namespace {

struct MarkUnitRescalesPass : public tl::impl::MarkUnitRescalesBase<MarkUnitRescalesPass> {
  void runOnOperation() override {
    getOperation().walk([&](ParallelOp op) {
      if (unitRescaleFactor(op))
        tlDialect(op).getUnitRescaleAttrHelper().setAttr(op, UnitAttr::get(op.getContext()));
    });
  }
};

} // namespace
} // namespace tl::gpu_lowering
