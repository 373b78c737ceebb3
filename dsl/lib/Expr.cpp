//===- Expr.cpp - scalar expressions and element access -------------------===//
//
// Literals fold on the host; everything else becomes arith/math ops, with the
// operands promoted to a common type first (see promote()).
//
//===----------------------------------------------------------------------===//
#include "BuildState.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

using namespace mlir;

namespace tl::dsl {
using namespace detail;

namespace {

enum class BinOp { Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, And, Or, Max, Min };

bool isComparison(BinOp op) {
  return op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge ||
         op == BinOp::Eq || op == BinOp::Ne;
}

int floatRank(DType t) {
  switch (t) {
  case DType::f16:
  case DType::bf16:
    return 1;
  case DType::f32:
    return 2;
  default:
    return 3;
  }
}

int intRank(DType t) {
  switch (t) {
  case DType::i1:
    return 0;
  case DType::i8:
    return 1;
  case DType::i16:
    return 2;
  case DType::i32:
    return 3;
  case DType::i64:
    return 4;
  default:
    return 5; // index
  }
}

/// The common type of two operands: a float wins over integers and the wider
/// float wins (f16 with bf16 gives f32); among integers, index wins, then width.
DType promote(DType a, DType b) {
  if (a == b)
    return a;
  if (isFloat(a) && isFloat(b)) {
    if (floatRank(a) == floatRank(b))
      return DType::f32; // f16 vs bf16
    return floatRank(a) > floatRank(b) ? a : b;
  }
  if (isFloat(a) || isFloat(b))
    return isFloat(a) ? a : b;
  return intRank(a) >= intRank(b) ? a : b;
}

/// The type a literal takes next to an operand of type `other`.
DType literalType(const Expr &literal, DType other) {
  if (literal.hasFixedType())
    return literal.dtype();
  if (literal.isIntLiteral())
    return other;
  return isFloat(other) ? other : DType::f32;
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

Expr foldLiterals(BinOp op, const Expr &a, const Expr &b) {
  bool fixed = a.hasFixedType() || b.hasFixedType();
  DType type = a.hasFixedType() && b.hasFixedType()     ? promote(a.dtype(), b.dtype())
               : a.hasFixedType()                       ? a.dtype()
               : b.hasFixedType()                       ? b.dtype()
               : (a.isIntLiteral() && b.isIntLiteral()) ? DType::index
                                                        : DType::f32;
  bool integer = !isFloat(type) && a.isIntLiteral() && b.isIntLiteral();
  double x = a.literalValue(), y = b.literalValue();
  if (isComparison(op)) {
    bool r = op == BinOp::Lt   ? x < y
             : op == BinOp::Le ? x <= y
             : op == BinOp::Gt ? x > y
             : op == BinOp::Ge ? x >= y
             : op == BinOp::Eq ? x == y
                               : x != y;
    return Expr(r);
  }
  if (integer) {
    std::int64_t i = a.intValue(), j = b.intValue(), r = 0;
    if ((op == BinOp::Div || op == BinOp::Mod) && j == 0)
      fail(lastSourceLoc(), "integer division by zero");
    switch (op) {
    case BinOp::Add:
      r = i + j;
      break;
    case BinOp::Sub:
      r = i - j;
      break;
    case BinOp::Mul:
      r = i * j;
      break;
    case BinOp::Div:
      r = floorDiv(i, j);
      break;
    case BinOp::Mod:
      r = i - floorDiv(i, j) * j;
      break;
    case BinOp::And:
      r = i && j;
      break;
    case BinOp::Or:
      r = i || j;
      break;
    case BinOp::Max:
      r = std::max(i, j);
      break;
    case BinOp::Min:
      r = std::min(i, j);
      break;
    default:
      break;
    }
    if (type == DType::i1)
      return Expr(r != 0);
    return fixed ? Expr::literal(static_cast<double>(r), type) : Expr(r);
  }
  double r = 0;
  switch (op) {
  case BinOp::Add:
    r = x + y;
    break;
  case BinOp::Sub:
    r = x - y;
    break;
  case BinOp::Mul:
    r = x * y;
    break;
  case BinOp::Div:
    r = x / y;
    break;
  case BinOp::Mod:
    r = std::fmod(x, y);
    break;
  case BinOp::And:
    r = x != 0 && y != 0;
    break;
  case BinOp::Or:
    r = x != 0 || y != 0;
    break;
  case BinOp::Max:
    r = std::max(x, y);
    break;
  case BinOp::Min:
    r = std::min(x, y);
    break;
  default:
    break;
  }
  return fixed ? Expr::literal(r, type) : Expr(r);
}

Value buildBinary(ProgramImpl &p, BinOp op, Value x, Value y, Location loc) {
  OpBuilder &b = p.builder;
  Type type = x.getType();
  if (isa<FloatType>(type)) {
    auto cmp = [&](arith::CmpFPredicate pred) {
      return b.createOrFold<arith::CmpFOp>(loc, pred, x, y);
    };
    switch (op) {
    case BinOp::Add:
      return b.createOrFold<arith::AddFOp>(loc, x, y);
    case BinOp::Sub:
      return b.createOrFold<arith::SubFOp>(loc, x, y);
    case BinOp::Mul:
      return b.createOrFold<arith::MulFOp>(loc, x, y);
    case BinOp::Div:
      return b.createOrFold<arith::DivFOp>(loc, x, y);
    case BinOp::Mod:
      return b.createOrFold<arith::RemFOp>(loc, x, y);
    case BinOp::Max:
      return b.createOrFold<arith::MaximumFOp>(loc, x, y);
    case BinOp::Min:
      return b.createOrFold<arith::MinimumFOp>(loc, x, y);
    case BinOp::Lt:
      return cmp(arith::CmpFPredicate::OLT);
    case BinOp::Le:
      return cmp(arith::CmpFPredicate::OLE);
    case BinOp::Gt:
      return cmp(arith::CmpFPredicate::OGT);
    case BinOp::Ge:
      return cmp(arith::CmpFPredicate::OGE);
    case BinOp::Eq:
      return cmp(arith::CmpFPredicate::OEQ);
    case BinOp::Ne:
      return cmp(arith::CmpFPredicate::UNE);
    case BinOp::And:
    case BinOp::Or:
      failAt(loc, "&& and || need boolean operands, got floats");
    }
  }
  auto cmp = [&](arith::CmpIPredicate pred) {
    return b.createOrFold<arith::CmpIOp>(loc, pred, x, y);
  };
  switch (op) {
  case BinOp::Add:
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  case BinOp::Sub:
    return b.createOrFold<arith::SubIOp>(loc, x, y);
  case BinOp::Mul:
    return b.createOrFold<arith::MulIOp>(loc, x, y);
  case BinOp::Div:
    return b.createOrFold<arith::FloorDivSIOp>(loc, x, y);
  case BinOp::Mod: {
    Value q = b.createOrFold<arith::FloorDivSIOp>(loc, x, y);
    return b.createOrFold<arith::SubIOp>(loc, x, b.createOrFold<arith::MulIOp>(loc, q, y));
  }
  case BinOp::Max:
    return b.createOrFold<arith::MaxSIOp>(loc, x, y);
  case BinOp::Min:
    return b.createOrFold<arith::MinSIOp>(loc, x, y);
  case BinOp::Lt:
    return cmp(arith::CmpIPredicate::slt);
  case BinOp::Le:
    return cmp(arith::CmpIPredicate::sle);
  case BinOp::Gt:
    return cmp(arith::CmpIPredicate::sgt);
  case BinOp::Ge:
    return cmp(arith::CmpIPredicate::sge);
  case BinOp::Eq:
    return cmp(arith::CmpIPredicate::eq);
  case BinOp::Ne:
    return cmp(arith::CmpIPredicate::ne);
  case BinOp::And:
  case BinOp::Or:
    if (!type.isInteger(1))
      failAt(loc, "&& and || need boolean operands (comparisons)");
    return op == BinOp::And ? b.createOrFold<arith::AndIOp>(loc, x, y)
                            : b.createOrFold<arith::OrIOp>(loc, x, y);
  }
  return {};
}

Expr binary(BinOp op, const Expr &a, const Expr &b, SourceLoc *loc = nullptr) {
  if (!a.valid() || !b.valid())
    fail(loc ? *loc : lastSourceLoc(), "use of an empty expression (a default-constructed Expr)");
  if (a.isLiteral() && b.isLiteral())
    return foldLiterals(op, a, b);
  ProgramImpl &p = loc ? activeProgram("an expression", *loc) : activeProgram("an expression");
  Location location = lastLocation(p);
  DType type = a.isLiteral()   ? promote(literalType(a, b.dtype()), b.dtype())
               : b.isLiteral() ? promote(a.dtype(), literalType(b, a.dtype()))
                               : promote(a.dtype(), b.dtype());
  Type mlirType = toMLIR(p.context.get(), type);
  Value x = materialize(p, a, mlirType, location);
  Value y = materialize(p, b, mlirType, location);
  return wrap(buildBinary(p, op, x, y, location));
}

/// Applies a float math op; integer operands are converted to f32 first.
template <typename MathOp> Expr unaryMath(const Expr &x, SourceLoc loc, const char *name) {
  ProgramImpl &p = activeProgram(name, loc);
  Location location = toLocation(p, loc);
  DType type = isFloat(x.dtype()) ? x.dtype() : DType::f32;
  Value value = materialize(p, x, toMLIR(p.context.get(), type), location);
  return wrap(p.builder.createOrFold<MathOp>(location, value));
}

Value loadElement(const Access &access);

} // namespace

Expr Expr::literal(double value, DType type) {
  Expr e = isFloat(type) ? Expr(value) : Expr(static_cast<std::int64_t>(value));
  e.type_ = type;
  e.fixedType_ = true;
  return e;
}

Expr Expr::fromHandle(const void *value, DType type) {
  Expr e;
  e.kind_ = Kind::Value;
  e.value_ = value;
  e.type_ = type;
  return e;
}

Expr operator+(const Expr &a, const Expr &b) { return binary(BinOp::Add, a, b); }
Expr operator-(const Expr &a, const Expr &b) { return binary(BinOp::Sub, a, b); }
Expr operator*(const Expr &a, const Expr &b) { return binary(BinOp::Mul, a, b); }
Expr operator/(const Expr &a, const Expr &b) { return binary(BinOp::Div, a, b); }
Expr operator%(const Expr &a, const Expr &b) { return binary(BinOp::Mod, a, b); }
Expr operator<(const Expr &a, const Expr &b) { return binary(BinOp::Lt, a, b); }
Expr operator<=(const Expr &a, const Expr &b) { return binary(BinOp::Le, a, b); }
Expr operator>(const Expr &a, const Expr &b) { return binary(BinOp::Gt, a, b); }
Expr operator>=(const Expr &a, const Expr &b) { return binary(BinOp::Ge, a, b); }
Expr operator==(const Expr &a, const Expr &b) { return binary(BinOp::Eq, a, b); }
Expr operator!=(const Expr &a, const Expr &b) { return binary(BinOp::Ne, a, b); }
Expr operator&&(const Expr &a, const Expr &b) { return binary(BinOp::And, a, b); }
Expr operator||(const Expr &a, const Expr &b) { return binary(BinOp::Or, a, b); }
Expr max(const Expr &a, const Expr &b, SourceLoc loc) { return binary(BinOp::Max, a, b, &loc); }
Expr min(const Expr &a, const Expr &b, SourceLoc loc) { return binary(BinOp::Min, a, b, &loc); }

Expr operator-(const Expr &a) {
  if (a.isLiteral())
    return a.hasFixedType()   ? Expr::literal(-a.literalValue(), a.dtype())
           : a.isIntLiteral() ? Expr(-a.intValue())
                              : Expr(-a.literalValue());
  if (isFloat(a.dtype())) {
    ProgramImpl &p = activeProgram("an expression");
    Location loc = lastLocation(p);
    return wrap(p.builder.createOrFold<arith::NegFOp>(loc, materialize(p, a, loc)));
  }
  return Expr(0) - a;
}

Expr operator!(const Expr &a) {
  if (a.isLiteral())
    return Expr(a.literalValue() == 0);
  return binary(BinOp::Eq, a, Expr(false));
}

Expr exp2(const Expr &x, SourceLoc loc) { return unaryMath<math::Exp2Op>(x, loc, "exp2"); }
Expr log2(const Expr &x, SourceLoc loc) { return unaryMath<math::Log2Op>(x, loc, "log2"); }
Expr exp(const Expr &x, SourceLoc loc) { return unaryMath<math::ExpOp>(x, loc, "exp"); }
Expr log(const Expr &x, SourceLoc loc) { return unaryMath<math::LogOp>(x, loc, "log"); }
Expr sqrt(const Expr &x, SourceLoc loc) { return unaryMath<math::SqrtOp>(x, loc, "sqrt"); }
Expr rsqrt(const Expr &x, SourceLoc loc) { return unaryMath<math::RsqrtOp>(x, loc, "rsqrt"); }
Expr abs(const Expr &x, SourceLoc loc) {
  if (isFloat(x.dtype()) || !x.valid() || x.isLiteral())
    return unaryMath<math::AbsFOp>(x, loc, "abs");
  ProgramImpl &p = activeProgram("abs", loc);
  Location location = toLocation(p, loc);
  return wrap(p.builder.createOrFold<math::AbsIOp>(location, materialize(p, x, location)));
}

Expr select(const Expr &cond, const Expr &a, const Expr &b, SourceLoc loc) {
  if (cond.isLiteral())
    return cond.literalValue() != 0 ? a : b;
  ProgramImpl &p = activeProgram("select", loc);
  Location location = toLocation(p, loc);
  if (cond.dtype() != DType::i1)
    fail(loc, fmt::format("select needs a boolean condition, got {}", toString(cond.dtype())));
  DType type = a.isLiteral() && b.isLiteral()
                   ? (a.hasFixedType()                         ? a.dtype()
                      : b.hasFixedType()                       ? b.dtype()
                      : (a.isIntLiteral() && b.isIntLiteral()) ? DType::index
                                                               : DType::f32)
               : a.isLiteral() ? promote(literalType(a, b.dtype()), b.dtype())
               : b.isLiteral() ? promote(a.dtype(), literalType(b, a.dtype()))
                               : promote(a.dtype(), b.dtype());
  Type mlirType = toMLIR(p.context.get(), type);
  Value c = materialize(p, cond, location);
  Value x = materialize(p, a, mlirType, location);
  Value y = materialize(p, b, mlirType, location);
  return wrap(p.builder.createOrFold<arith::SelectOp>(location, c, x, y));
}

Expr cast(const Expr &x, DType type, SourceLoc loc) {
  if (x.isLiteral())
    return Expr::literal(isFloat(type) ? x.literalValue() : std::trunc(x.literalValue()), type);
  ProgramImpl &p = activeProgram("cast", loc);
  Location location = toLocation(p, loc);
  return wrap(materialize(p, x, toMLIR(p.context.get(), type), location));
}

Expr infinity(DType type, SourceLoc loc) {
  if (!isFloat(type))
    fail(loc, fmt::format("infinity needs a float type, got {}", toString(type)));
  return Expr::literal(std::numeric_limits<double>::infinity(), type);
}

Expr ceildiv(const Expr &a, const Expr &b) {
  if (a.isIntLiteral() && b.isIntLiteral() && !a.hasFixedType() && !b.hasFixedType())
    return Expr(ceildiv(a.intValue(), b.intValue()));
  ProgramImpl &p = activeProgram("ceildiv");
  Location loc = lastLocation(p);
  if (isFloat(a.dtype()) || isFloat(b.dtype()))
    failAt(loc, "ceildiv needs integer operands");
  DType type = a.isLiteral() ? b.dtype() : a.dtype();
  Type mlirType = toMLIR(p.context.get(), type);
  return wrap(p.builder.createOrFold<arith::CeilDivSIOp>(loc, materialize(p, a, mlirType, loc),
                                                         materialize(p, b, mlirType, loc)));
}

Expr floordiv(const Expr &a, const Expr &b) {
  if (isFloat(a.dtype()) || isFloat(b.dtype()))
    fail(lastSourceLoc(), "floordiv needs integer operands");
  return a / b;
}

//===----------------------------------------------------------------------===//
// Element access
//===----------------------------------------------------------------------===//

namespace {

/// The element indices of `access`, checked to be one point per dimension.
SmallVector<Value> pointIndices(ProgramImpl &p, const Access &access, const char *what,
                                Location location) {
  const Buffer &buffer = access.buffer();
  if (static_cast<std::int64_t>(access.indices().size()) != buffer.rank())
    fail(access.loc(), fmt::format("{} of '{}' gives {} subscript(s) but the buffer has "
                                   "rank {}",
                                   what, buffer.name(), access.indices().size(), buffer.rank()));
  SmallVector<Value> indices;
  for (const Index &index : access.indices()) {
    if (!index.isPoint())
      fail(access.loc(), fmt::format("{} of '{}' needs a point per dimension, not a slice "
                                     "(slices name regions for copy)",
                                     what, buffer.name()));
    indices.push_back(materialize(p, index.start(), p.builder.getIndexType(), location));
  }
  return indices;
}

Value loadElement(const Access &access) {
  ProgramImpl &p = activeProgram("reading a buffer element", access.loc());
  Location location = toLocation(p, access.loc());
  SmallVector<Value> indices = pointIndices(p, access, "a read", location);
  return memref::LoadOp::create(p.builder, location, unwrap(access.buffer()), indices);
}

} // namespace

Access::operator Expr() const { return wrap(loadElement(*this)); }

Access &Access::operator=(const Expr &value) {
  ProgramImpl &p = activeProgram("writing a buffer element", loc_);
  Location location = toLocation(p, loc_);
  SmallVector<Value> indices = pointIndices(p, *this, "a write", location);
  Type elementType = toMLIR(p.context.get(), buffer_.dtype());
  Value stored = materialize(p, value, elementType, location);
  memref::StoreOp::create(p.builder, location, stored, unwrap(buffer_), indices);
  return *this;
}

Access &Access::operator+=(const Expr &value) { return *this = Expr(*this) + value; }
Access &Access::operator-=(const Expr &value) { return *this = Expr(*this) - value; }
Access &Access::operator*=(const Expr &value) { return *this = Expr(*this) * value; }
Access &Access::operator/=(const Expr &value) { return *this = Expr(*this) / value; }

} // namespace tl::dsl
