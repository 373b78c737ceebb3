//===- Types.cpp - the light parts of the eDSL (no MLIR) -------------------===//
#include "tl/dsl/Types.h"
#include "tl/dsl/Buffer.h"
#include "tl/dsl/Layout.h"

namespace tl::dsl {

const char *toString(Scope scope) {
  switch (scope) {
  case Scope::global:
    return "global";
  case Scope::shared:
    return "shared";
  case Scope::fragment:
    return "fragment";
  case Scope::local:
    return "local";
  }
  return "?";
}

Access Buffer::operator()(Index i0, SourceLoc loc) const { return Access(*this, {i0}, loc); }
Access Buffer::operator()(Index i0, Index i1, SourceLoc loc) const {
  return Access(*this, {i0, i1}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, SourceLoc loc) const {
  return Access(*this, {i0, i1, i2}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, Index i3, SourceLoc loc) const {
  return Access(*this, {i0, i1, i2, i3}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, Index i3, Index i4, SourceLoc loc) const {
  return Access(*this, {i0, i1, i2, i3, i4}, loc);
}
Access Buffer::operator()(Index i0, Index i1, Index i2, Index i3, Index i4, Index i5,
                          SourceLoc loc) const {
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
    : node_(std::make_shared<Node>(
          Node{kind, 0, std::make_shared<IndexExpr>(a), std::make_shared<IndexExpr>(b)})) {}

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
