//===- IndexMapRange.cpp - interval arithmetic over affine expressions ----===//
//
// Bounds an index-map expression over a box of dimension values (see
// IndexMapRange.h). Every step is exact for one operand constant and
// conservative otherwise: a sum's range is the sum of ranges, a product's the
// hull of the four corner products, a floordiv or ceildiv by a positive
// constant is monotonic, and `x mod c` is [x.min mod c, x.max mod c] when x's
// range does not cross a multiple of c, else [0, c - 1]. Overflow of 64-bit
// arithmetic is reported rather than wrapped: the lowering's index math would
// wrap too, and address memory nobody meant.
//
//===----------------------------------------------------------------------===//
#include "IndexMapRange.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace mlir;

namespace tl {
namespace {

std::string print(AffineExpr expr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << expr;
  return text;
}

StringRef divisionName(AffineExprKind kind) {
  switch (kind) {
  case AffineExprKind::FloorDiv:
    return "floordiv";
  case AffineExprKind::CeilDiv:
    return "ceildiv";
  default:
    return "mod";
  }
}

FailureOr<IndexRange> overflow(AffineExpr expr, std::string &problem) {
  problem = "'" + print(expr) + "' overflows 64-bit integers over the buffer's indices";
  return failure();
}

FailureOr<IndexRange> boundProduct(AffineExpr expr, IndexRange lhs, IndexRange rhs,
                                   std::string &problem) {
  int64_t corners[4];
  int i = 0;
  for (int64_t a : {lhs.min, lhs.max})
    for (int64_t b : {rhs.min, rhs.max}) {
      std::optional<int64_t> product = llvm::checkedMul(a, b);
      if (!product)
        return overflow(expr, problem);
      corners[i++] = *product;
    }
  return IndexRange{*std::min_element(corners, corners + 4),
                    *std::max_element(corners, corners + 4)};
}

/// `lhs` floordiv, ceildiv or mod a positive constant `divisor`.
IndexRange boundDivision(AffineExprKind kind, IndexRange lhs, int64_t divisor) {
  if (kind == AffineExprKind::FloorDiv)
    return {llvm::divideFloorSigned(lhs.min, divisor), llvm::divideFloorSigned(lhs.max, divisor)};
  if (kind == AffineExprKind::CeilDiv)
    return {llvm::divideCeilSigned(lhs.min, divisor), llvm::divideCeilSigned(lhs.max, divisor)};
  if (llvm::divideFloorSigned(lhs.min, divisor) != llvm::divideFloorSigned(lhs.max, divisor))
    return {0, divisor - 1};
  // Both ends lie in one period: their remainders are in order.
  auto remainder = [divisor](int64_t value) {
    int64_t r = value % divisor;
    return r < 0 ? r + divisor : r;
  };
  return {remainder(lhs.min), remainder(lhs.max)};
}

} // namespace

FailureOr<IndexRange> boundIndexExpr(AffineExpr expr, ArrayRef<IndexRange> dims,
                                     std::string &problem) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return IndexRange{constant.getValue(), constant.getValue()};
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    if (dim.getPosition() >= dims.size()) {
      problem = "'" + print(expr) + "' is not one of the buffer's " + std::to_string(dims.size()) +
                " indices";
      return failure();
    }
    return dims[dim.getPosition()];
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary) {
    problem = "'" + print(expr) + "' is a symbol; a layout is a function of the indices only";
    return failure();
  }
  AffineExprKind kind = expr.getKind();
  bool division = kind == AffineExprKind::FloorDiv || kind == AffineExprKind::CeilDiv ||
                  kind == AffineExprKind::Mod;
  // The divisor first: dividing by zero is the worse news.
  if (division) {
    auto divisor = dyn_cast<AffineConstantExpr>(binary.getRHS());
    if (!divisor || divisor.getValue() <= 0) {
      problem = "'" + print(expr) + "' divides by " + print(binary.getRHS()) + ": " +
                divisionName(kind).str() + " needs a positive constant divisor";
      return failure();
    }
  }
  FailureOr<IndexRange> lhs = boundIndexExpr(binary.getLHS(), dims, problem);
  if (failed(lhs))
    return failure();
  FailureOr<IndexRange> rhs = boundIndexExpr(binary.getRHS(), dims, problem);
  if (failed(rhs))
    return failure();
  switch (kind) {
  case AffineExprKind::Add: {
    std::optional<int64_t> min = llvm::checkedAdd(lhs->min, rhs->min);
    std::optional<int64_t> max = llvm::checkedAdd(lhs->max, rhs->max);
    if (!min || !max)
      return overflow(expr, problem);
    return IndexRange{*min, *max};
  }
  case AffineExprKind::Mul:
    return boundProduct(expr, *lhs, *rhs, problem);
  default:
    return boundDivision(kind, *lhs, rhs->min);
  }
}

} // namespace tl
