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

namespace {

/// `value` as the sum of `terms` and a constant, looking through a chain of
/// additions (the constant part of an element's index: its step within a
/// tile). No op is built; `sumOf` builds the terms' sum where it is needed.
int64_t splitConstant(Value value, SmallVectorImpl<Value> &terms) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return *c;
  if (auto add = value.getDefiningOp<arith::AddIOp>()) {
    size_t mark = terms.size();
    int64_t constant = splitConstant(add.getLhs(), terms) + splitConstant(add.getRhs(), terms);
    if (constant != 0)
      return constant;
    terms.resize(mark); // no constant inside: the sum stays one term, as built
  }
  terms.push_back(value);
  return 0;
}

Value sumOf(OpBuilder &b, Location loc, ArrayRef<Value> terms, int64_t constant) {
  Value sum;
  for (Value term : terms)
    sum = sum ? arith::AddIOp::create(b, loc, sum, term).getResult() : term;
  if (constant || !sum) {
    Value c = arith::ConstantIndexOp::create(b, loc, constant);
    sum = sum ? arith::AddIOp::create(b, loc, sum, c).getResult() : c;
  }
  return sum;
}

/// How much `expr` grows when each dimension d grows by shifts[d], when that
/// is the same whatever the dimensions (every floordiv and mod divisor divides
/// the growth of its operand); nullopt otherwise.
std::optional<int64_t> constantGrowth(AffineExpr expr, ArrayRef<int64_t> shifts) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return shifts[dim.getPosition()];
  if (isa<AffineConstantExpr, AffineSymbolExpr>(expr))
    return isa<AffineConstantExpr>(expr) ? std::optional<int64_t>(0) : std::nullopt;
  auto binary = cast<AffineBinaryOpExpr>(expr);
  std::optional<int64_t> lhs = constantGrowth(binary.getLHS(), shifts);
  std::optional<int64_t> rhs = constantGrowth(binary.getRHS(), shifts);
  if (!lhs || !rhs)
    return std::nullopt;
  auto constant = dyn_cast<AffineConstantExpr>(binary.getRHS());
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return *lhs + *rhs;
  case AffineExprKind::Mul:
    if (auto l = dyn_cast<AffineConstantExpr>(binary.getLHS()))
      return l.getValue() * *rhs;
    return constant ? std::optional<int64_t>(*lhs * constant.getValue()) : std::nullopt;
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
    return constant && constant.getValue() > 0 && *lhs % constant.getValue() == 0
               ? std::optional<int64_t>(*lhs / constant.getValue())
               : std::nullopt;
  case AffineExprKind::Mod:
    return constant && constant.getValue() > 0 && *lhs % constant.getValue() == 0
               ? std::optional<int64_t>(0)
               : std::nullopt;
  default:
    return std::nullopt;
  }
}

} // namespace

ElementRef resolveElement(OpBuilder &b, Location loc, const LayoutMap &layouts, Value buffer,
                          ValueRange indices) {
  auto it = layouts.find(buffer);
  if (it == layouts.end())
    return {buffer, SmallVector<Value>(indices)};
  IndexMapLayoutAttr layout = it->second;
  // An element whose indices are a common base plus constants (the elements
  // of one thread's tile) resolves as the base's physical indices plus
  // constants where the map allows: every such element then shares the
  // base's index math, and the constants fold into address offsets.
  // Per index, the largest part of its constant the map lets through (a
  // multiple of a power of two); the rest stays in the base.
  AffineMap map = layout.getMap();
  auto growthOf = [&](ArrayRef<int64_t> shifts) -> std::optional<SmallVector<int64_t>> {
    SmallVector<int64_t> growth;
    for (AffineExpr result : map.getResults()) {
      std::optional<int64_t> g = constantGrowth(result, shifts);
      if (!g)
        return std::nullopt;
      growth.push_back(*g);
    }
    return growth;
  };
  SmallVector<SmallVector<Value>> terms(indices.size());
  SmallVector<int64_t> constants, shifts;
  for (auto [d, index] : llvm::enumerate(indices)) {
    int64_t shift = splitConstant(index, terms[d]);
    int64_t peeled = 0;
    for (int64_t unit = 1; !terms[d].empty() && shift && unit <= (int64_t{1} << 20); unit *= 2) {
      SmallVector<int64_t> only(indices.size(), 0);
      only[d] = shift - shift % unit;
      if (only[d] && growthOf(only)) {
        peeled = only[d];
        break;
      }
    }
    constants.push_back(shift), shifts.push_back(peeled);
  }
  std::optional<SmallVector<int64_t>> growth =
      llvm::any_of(shifts, [](int64_t s) { return s != 0; }) ? growthOf(shifts) : std::nullopt;
  bool peel = growth.has_value();
  SmallVector<Value> bases(indices);
  if (peel) // each index less the constant the map lets through
    for (auto [d, shift] : llvm::enumerate(shifts))
      if (shift)
        bases[d] = sumOf(b, loc, terms[d], constants[d] - shift);
  std::optional<SmallVector<Value, 8>> physical =
      affine::expandAffineMap(b, loc, layout.getMap(), bases);
  if (peel)
    for (auto [value, g] : llvm::zip(*physical, *growth))
      if (g)
        value = arith::AddIOp::create(b, loc, value, arith::ConstantIndexOp::create(b, loc, g));
  auto type = cast<MemRefType>(buffer.getType());
  auto viewType = MemRefType::get(layout.getPhysicalShape(), type.getElementType());
  SmallVector<int64_t> strides(layout.getPhysicalShape().size(), 1);
  for (int d = static_cast<int>(strides.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * layout.getPhysicalShape()[d + 1];
  Value view = memref::ReinterpretCastOp::create(b, loc, viewType, buffer, /*offset=*/0,
                                                 layout.getPhysicalShape(), strides);
  return {view, SmallVector<Value>(physical->begin(), physical->end())};
}

void resolveElementAccesses(RewriterBase &rewriter, Operation *root, const LayoutMap &layouts) {
  SmallVector<Operation *> accesses;
  root->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op); load && layouts.count(load.getMemRef()))
      accesses.push_back(op);
    else if (auto store = dyn_cast<memref::StoreOp>(op); store && layouts.count(store.getMemRef()))
      accesses.push_back(op);
  });
  OpBuilder::InsertionGuard guard(rewriter);
  for (Operation *op : accesses) {
    rewriter.setInsertionPoint(op);
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      ElementRef ref =
          resolveElement(rewriter, load.getLoc(), layouts, load.getMemRef(), load.getIndices());
      rewriter.replaceOpWithNewOp<memref::LoadOp>(load, ref.memref, ref.indices);
      continue;
    }
    auto store = cast<memref::StoreOp>(op);
    ElementRef ref =
        resolveElement(rewriter, store.getLoc(), layouts, store.getMemRef(), store.getIndices());
    rewriter.replaceOpWithNewOp<memref::StoreOp>(store, store.getValue(), ref.memref, ref.indices);
  }
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
  Type from = getElementTypeOrSelf(value.getType());
  if (from == to)
    return value;
  Type result = to;
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    result = vector.clone(to);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, result, value);
  return arith::TruncFOp::create(b, loc, result, value);
}

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
}

SmallVector<Value> regionIndices(OpBuilder &b, Location loc, ValueRange offsets,
                                 ArrayRef<int64_t> sizes, ValueRange squeezed) {
  SmallVector<Value> indices;
  unsigned next = 0;
  for (auto [offset, size] : llvm::zip(offsets, sizes))
    indices.push_back(
        size == 1 ? offset : arith::AddIOp::create(b, loc, offset, squeezed[next++]).getResult());
  return indices;
}

SmallVector<Value> squeezeIndices(ArrayRef<int64_t> shape, ValueRange full) {
  SmallVector<Value> squeezed;
  for (auto [extent, index] : llvm::zip(shape, full))
    if (extent != 1)
      squeezed.push_back(index);
  return squeezed;
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

namespace {

/// The terms of a sum as written (one term for anything else), each
/// simplified, sorted: two sums of the same terms in another order compare
/// equal.
SmallVector<AffineExpr> sumTerms(AffineExpr expr, unsigned numDims) {
  SmallVector<AffineExpr> terms, pending = {expr};
  while (!pending.empty()) {
    AffineExpr e = pending.pop_back_val();
    if (e.getKind() == AffineExprKind::Add) {
      auto sum = cast<AffineBinaryOpExpr>(e);
      pending.append({sum.getLHS(), sum.getRHS()});
      continue;
    }
    terms.push_back(simplifyAffineExpr(e, numDims, 0));
  }
  llvm::sort(terms, [](AffineExpr a, AffineExpr b) {
    return a.getAsOpaquePointer() < b.getAsOpaquePointer();
  });
  return terms;
}

} // namespace

bool isMmaTileOrder(IndexMapLayoutAttr layout, unsigned rowDim, unsigned colDim) {
  AffineMap map = layout.getMap();
  unsigned rank = map.getNumDims();
  if (rowDim >= rank || colDim >= rank || rowDim == colDim || map.getNumSymbols() != 0 ||
      map.getNumResults() != rank + 1)
    return false;
  MLIRContext *context = map.getContext();
  AffineExpr l = getAffineDimExpr(rowDim, context), d = getAffineDimExpr(colDim, context);
  SmallVector<AffineExpr> tileOrder;
  for (unsigned i = 0; i < rank; ++i)
    tileOrder.push_back(i == rowDim   ? l.floorDiv(16)
                        : i == colDim ? d.floorDiv(8)
                                      : getAffineDimExpr(i, context));
  tileOrder.push_back((l % 8) * 16 + (d % 8).floorDiv(2) * 4 + (l % 16).floorDiv(8) * 2 + d % 2);
  // Result by result, as sums of the same terms in any order (AffineExpr
  // keeps a sum's order as written).
  return llvm::all_of(llvm::seq(0u, rank + 1), [&](unsigned r) {
    return sumTerms(map.getResult(r), rank) == sumTerms(tileOrder[r], rank);
  });
}

Value linearIndex(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange indices) {
  Value linear = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [d, i] : llvm::enumerate(indices)) {
    int64_t stride = 1;
    for (int64_t extent : shape.drop_front(d + 1))
      stride *= extent;
    linear = arith::AddIOp::create(
        b, loc, linear,
        arith::MulIOp::create(b, loc, i, arith::ConstantIndexOp::create(b, loc, stride)));
  }
  return linear;
}

CounterElement counterElement(OpBuilder &b, Location loc, Value counter, ValueRange indices) {
  auto type = cast<MemRefType>(counter.getType());
  Value inside = insideBuffer(b, loc, counter, indices);
  Value offset = arith::MulIOp::create(b, loc, linearIndex(b, loc, type.getShape(), indices),
                                       arith::ConstantIndexOp::create(b, loc, 4));
  offset =
      arith::SelectOp::create(b, loc, inside, offset, arith::ConstantIndexOp::create(b, loc, 0));
  return {offset, inside};
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
  APInt value = isMax ? APInt::getSignedMinValue(width) : APInt::getSignedMaxValue(width);
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

LayoutMap indexMapLayouts(Operation *root) {
  LayoutMap layouts;
  root->walk([&](AnnotateLayoutOp op) {
    if (auto map = dyn_cast<IndexMapLayoutAttr>(op.getLayout()))
      layouts[op.getBuffer()] = map;
  });
  return layouts;
}

} // namespace tl::lowering
