//===- Types.cpp - the light parts of the eDSL (no MLIR) -------------------===//
#include "tl/dsl/Buffer.h"
#include "tl/dsl/Layout.h"
#include "tl/dsl/Types.h"

namespace tl::dsl {

const char *toString(DType type) {
  switch (type) {
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::f32: return "f32";
  case DType::f64: return "f64";
  case DType::i1: return "i1";
  case DType::i8: return "i8";
  case DType::i16: return "i16";
  case DType::i32: return "i32";
  case DType::i64: return "i64";
  case DType::index: return "index";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType type : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i1, DType::i8,
                     DType::i16, DType::i32, DType::i64, DType::index})
    if (name == toString(type))
      return type;
  return std::nullopt;
}

bool isFloat(DType type) {
  return type == DType::f16 || type == DType::bf16 || type == DType::f32 ||
         type == DType::f64;
}

int byteWidth(DType type) {
  switch (type) {
  case DType::f16: case DType::bf16: case DType::i16: return 2;
  case DType::f32: case DType::i32: return 4;
  case DType::i1: case DType::i8: return 1;
  default: return 8;
  }
}

const char *toString(Scope scope) {
  switch (scope) {
  case Scope::global: return "global";
  case Scope::shared: return "shared";
  case Scope::fragment: return "fragment";
  case Scope::local: return "local";
  }
  return "?";
}

Error::Error(const std::string &message, std::string file, unsigned line,
             unsigned column)
    : std::runtime_error(file + ":" + std::to_string(line) + ":" +
                         std::to_string(column) + ": error: " + message),
      message_(message), file_(std::move(file)), line_(line), column_(column) {}

Access Buffer::operator()(Index i0, SourceLoc loc) const {
  return Access(*this, {i0}, loc);
}
Access Buffer::operator()(Index i0, Index i1, SourceLoc loc) const {
  return Access(*this, {i0, i1}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, SourceLoc loc) const {
  return Access(*this, {i0, i1, i2}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, Index i3,
                          SourceLoc loc) const {
  return Access(*this, {i0, i1, i2, i3}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, Index i3, Index i4,
                          SourceLoc loc) const {
  return Access(*this, {i0, i1, i2, i3, i4}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, Index i3, Index i4,
                          Index i5, SourceLoc loc) const {
  return Access(*this, {i0, i1, i2, i3, i4, i5}, loc);
}

IndexExpr::IndexExpr(std::int64_t constant)
    : node_(std::make_shared<Node>(Node{Kind::Constant, constant, {}, {}})) {}

IndexExpr IndexExpr::dim(unsigned position) {
  IndexExpr e;
  e.node_ = std::make_shared<Node>(Node{Kind::Dim, position, {}, {}});
  return e;
}

IndexExpr::IndexExpr(Kind kind, const IndexExpr &a, const IndexExpr &b)
    : node_(std::make_shared<Node>(Node{kind, 0,
                                        std::make_shared<IndexExpr>(a),
                                        std::make_shared<IndexExpr>(b)})) {}

IndexExpr operator+(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr(IndexExpr::Kind::Add, a, b);
}
IndexExpr operator*(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr(IndexExpr::Kind::Mul, a, b);
}
IndexExpr operator/(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr(IndexExpr::Kind::FloorDiv, a, b);
}
IndexExpr operator%(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr(IndexExpr::Kind::Mod, a, b);
}

} // namespace tl::dsl
