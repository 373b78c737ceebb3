// Device-side scalar expressions. A C++ number is a literal that takes the
// type of whatever it meets and folds with other literals on the host; an
// expression built from device values (block indices, loop indices, buffer
// elements) becomes IR in the program being built.
// Light header: no MLIR.
#pragma once

#include "tl/dsl/Types.h"

#include <type_traits>

namespace tl::dsl {

class Expr {
public:
  Expr() = default;
  template <typename T>
  requires std::is_arithmetic_v<T> Expr(T value) { // NOLINT: implicit on purpose, `x * 2` must work
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::IntLiteral;
      type_ = DType::i1;
      int_ = value ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::IntLiteral;
      type_ = DType::index;
      int_ = static_cast<std::int64_t>(value);
    } else {
      kind_ = Kind::FloatLiteral;
      type_ = DType::f32;
      float_ = static_cast<double>(value);
    }
  }

  /// A literal of a fixed type (e.g. infinity(f32)).
  static Expr literal(double value, DType type);

  bool valid() const { return kind_ != Kind::Invalid; }
  bool isLiteral() const { return kind_ == Kind::IntLiteral || kind_ == Kind::FloatLiteral; }
  bool isIntLiteral() const { return kind_ == Kind::IntLiteral; }
  /// The literal's value (only when isLiteral()).
  double literalValue() const {
    return kind_ == Kind::IntLiteral ? static_cast<double>(int_) : float_;
  }
  std::int64_t intValue() const { return int_; }
  /// For values: their type. For literals: index, f32, i1 or the fixed type.
  DType dtype() const { return type_; }
  /// True when a literal was given a fixed type (Expr::literal).
  bool hasFixedType() const { return fixedType_; }

  /// The opaque IR value (mlir::Value) behind a device expression.
  const void *handle() const { return value_; }
  static Expr fromHandle(const void *value, DType type);

private:
  enum class Kind : std::uint8_t { Invalid, Value, IntLiteral, FloatLiteral };
  Kind kind_ = Kind::Invalid;
  DType type_ = DType::index;
  bool fixedType_ = false;
  const void *value_ = nullptr;
  std::int64_t int_ = 0;
  double float_ = 0;
};

// Arithmetic and comparison, element-wise on device values. Operands of
// different types promote: any float wins over integers, the wider float wins.
Expr operator+(const Expr &a, const Expr &b);
Expr operator-(const Expr &a, const Expr &b);
Expr operator*(const Expr &a, const Expr &b);
Expr operator/(const Expr &a, const Expr &b); // integers: floor division
Expr operator%(const Expr &a, const Expr &b);
Expr operator-(const Expr &a);
Expr operator<(const Expr &a, const Expr &b);
Expr operator<=(const Expr &a, const Expr &b);
Expr operator>(const Expr &a, const Expr &b);
Expr operator>=(const Expr &a, const Expr &b);
Expr operator==(const Expr &a, const Expr &b);
Expr operator!=(const Expr &a, const Expr &b);
Expr operator&&(const Expr &a, const Expr &b);
Expr operator||(const Expr &a, const Expr &b);
Expr operator!(const Expr &a);

// Element math (TileLang's T.exp2, T.log2, T.if_then_else, ...).
Expr exp2(const Expr &x, SourceLoc loc = SourceLoc::current());
Expr log2(const Expr &x, SourceLoc loc = SourceLoc::current());
Expr exp(const Expr &x, SourceLoc loc = SourceLoc::current());
Expr log(const Expr &x, SourceLoc loc = SourceLoc::current());
Expr sqrt(const Expr &x, SourceLoc loc = SourceLoc::current());
Expr rsqrt(const Expr &x, SourceLoc loc = SourceLoc::current());
Expr abs(const Expr &x, SourceLoc loc = SourceLoc::current());
Expr max(const Expr &a, const Expr &b, SourceLoc loc = SourceLoc::current());
Expr min(const Expr &a, const Expr &b, SourceLoc loc = SourceLoc::current());
/// `cond ? a : b` on the device (T.if_then_else).
Expr select(const Expr &cond, const Expr &a, const Expr &b, SourceLoc loc = SourceLoc::current());
inline Expr if_then_else(const Expr &cond, const Expr &a, const Expr &b,
                         SourceLoc loc = SourceLoc::current()) {
  return select(cond, a, b, loc);
}
/// Converts to `type` (float <-> float, int <-> float, int <-> index).
Expr cast(const Expr &x, DType type, SourceLoc loc = SourceLoc::current());
/// +infinity of a float type; negate it for -infinity.
Expr infinity(DType type, SourceLoc loc = SourceLoc::current());

/// Rounding-up and rounding-down division. On host integers these are plain
/// C++ (so a grid extent stays a number); on device values they build IR.
constexpr std::int64_t ceildiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
constexpr std::int64_t floordiv(std::int64_t a, std::int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
Expr ceildiv(const Expr &a, const Expr &b);
Expr floordiv(const Expr &a, const Expr &b);

} // namespace tl::dsl
