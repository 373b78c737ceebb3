//===- LoweringHelpers.cpp - pieces shared by the CPU and GPU lowerings ---===//
#include "LoweringHelpers.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;

namespace tl::lowering {

ElementRef resolveElement(OpBuilder &b, Location loc, const LayoutMap &layouts,
                          Value buffer, ValueRange indices) {
  auto it = layouts.find(buffer);
  if (it == layouts.end())
    return {buffer, SmallVector<Value>(indices)};
  IndexMapLayoutAttr layout = it->second;
  std::optional<SmallVector<Value, 8>> physical =
      affine::expandAffineMap(b, loc, layout.getMap(), indices);
  auto type = cast<MemRefType>(buffer.getType());
  auto viewType = MemRefType::get(layout.getPhysicalShape(), type.getElementType());
  SmallVector<int64_t> strides(layout.getPhysicalShape().size(), 1);
  for (int d = static_cast<int>(strides.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * layout.getPhysicalShape()[d + 1];
  Value view = memref::ReinterpretCastOp::create(
      b, loc, viewType, buffer, /*offset=*/0, layout.getPhysicalShape(), strides);
  return {view, SmallVector<Value>(physical->begin(), physical->end())};
}

void buildLoops(OpBuilder &b, Location loc, ArrayRef<int64_t> extents,
                function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t extent : extents) {
    lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ubs.push_back(arith::ConstantIndexOp::create(b, loc, extent));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  if (extents.empty()) {
    body(b, loc, {});
    return;
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps, body);
}

Value convertFloat(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
}

SmallVector<Value> regionIndices(OpBuilder &b, Location loc, ValueRange offsets,
                                 ArrayRef<int64_t> sizes, ValueRange squeezed) {
  SmallVector<Value> indices;
  unsigned next = 0;
  for (auto [offset, size] : llvm::zip(offsets, sizes))
    indices.push_back(size == 1 ? offset
                                : arith::AddIOp::create(b, loc, offset, squeezed[next++])
                                      .getResult());
  return indices;
}

Value insideBuffer(OpBuilder &b, Location loc, Value buffer, ValueRange indices) {
  auto type = cast<MemRefType>(buffer.getType());
  Value inside;
  for (auto [d, index] : llvm::enumerate(indices)) {
    Value extent = arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, extent);
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok).getResult() : ok;
  }
  return inside;
}

Value reductionIdentity(OpBuilder &b, Location loc, ReduceKind kind, Type type) {
  if (kind == ReduceKind::sum || kind == ReduceKind::abssum)
    return zeroOf(b, loc, type);
  bool isMax = kind == ReduceKind::max;
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(floatType, isMax ? -std::numeric_limits<double>::infinity()
                                        : std::numeric_limits<double>::infinity()));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt value = isMax ? APInt::getSignedMinValue(width)
                      : APInt::getSignedMaxValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value combineReduction(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value x) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case ReduceKind::max:
    return isFloat ? arith::MaximumFOp::create(b, loc, acc, x).getResult()
                   : arith::MaxSIOp::create(b, loc, acc, x).getResult();
  case ReduceKind::min:
    return isFloat ? arith::MinimumFOp::create(b, loc, acc, x).getResult()
                   : arith::MinSIOp::create(b, loc, acc, x).getResult();
  case ReduceKind::abssum:
    x = isFloat ? math::AbsFOp::create(b, loc, x).getResult()
                : math::AbsIOp::create(b, loc, x).getResult();
    [[fallthrough]];
  case ReduceKind::sum:
    return isFloat ? arith::AddFOp::create(b, loc, acc, x).getResult()
                   : arith::AddIOp::create(b, loc, acc, x).getResult();
  }
  return acc;
}

} // namespace tl::lowering
