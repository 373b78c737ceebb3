// Layout annotations: a swizzled shared tile, or an index map such as the
// reference's make_dq_layout. Light header: no MLIR.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>
#include <vector>

namespace tl::dsl {

/// An affine index expression over the logical indices of a buffer: integer
/// constants, +, *, floor division and modulo by constants.
class IndexExpr {
public:
  enum class Kind : std::uint8_t { Dim, Constant, Add, Mul, FloorDiv, Mod };
  IndexExpr(std::int64_t constant); // NOLINT: `l / 8` needs it implicit
  IndexExpr(int constant) : IndexExpr(static_cast<std::int64_t>(constant)) {}
  static IndexExpr dim(unsigned position);

  Kind kind() const { return node_->kind; }
  std::int64_t value() const { return node_->value; } // Dim: position
  const IndexExpr &lhs() const { return *node_->lhs; }
  const IndexExpr &rhs() const { return *node_->rhs; }

  friend IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator*(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator/(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator%(const IndexExpr &a, const IndexExpr &b);

private:
  struct Node {
    Kind kind;
    std::int64_t value = 0;
    std::shared_ptr<const IndexExpr> lhs, rhs;
  };
  IndexExpr(Kind kind, const IndexExpr &a, const IndexExpr &b);
  IndexExpr() = default;
  std::shared_ptr<const Node> node_;
};

class Layout {
public:
  enum class Kind : std::uint8_t { Swizzled, IndexMap };
  Kind kind() const { return kind_; }
  unsigned numDims() const { return numDims_; }
  /// The physical index, one expression per physical dimension.
  const std::vector<IndexExpr> &results() const { return results_; }

  static Layout swizzled() { return Layout(Kind::Swizzled, 0, {}); }
  /// `map` takes one IndexExpr per logical dimension and returns the physical
  /// index, like TileLang's T.Layout(shape, lambda ...). Up to 6 dimensions.
  template <typename Map> static Layout indexMap(Map &&map) {
    std::vector<IndexExpr> d;
    for (unsigned i = 0; i < 6; ++i)
      d.push_back(IndexExpr::dim(i));
    using I = IndexExpr;
    if constexpr (std::is_invocable_v<Map &, I>)
      return Layout(Kind::IndexMap, 1, map(d[0]));
    else if constexpr (std::is_invocable_v<Map &, I, I>)
      return Layout(Kind::IndexMap, 2, map(d[0], d[1]));
    else if constexpr (std::is_invocable_v<Map &, I, I, I>)
      return Layout(Kind::IndexMap, 3, map(d[0], d[1], d[2]));
    else if constexpr (std::is_invocable_v<Map &, I, I, I, I>)
      return Layout(Kind::IndexMap, 4, map(d[0], d[1], d[2], d[3]));
    else if constexpr (std::is_invocable_v<Map &, I, I, I, I, I>)
      return Layout(Kind::IndexMap, 5, map(d[0], d[1], d[2], d[3], d[4]));
    else
      return Layout(Kind::IndexMap, 6, map(d[0], d[1], d[2], d[3], d[4], d[5]));
  }

  /// An index map over `numDims` logical indices (IndexExpr::dim(0) ..) with
  /// these physical indices: for a rank known only at run time.
  static Layout indexMap(unsigned numDims, std::vector<IndexExpr> results) {
    return Layout(Kind::IndexMap, numDims, std::move(results));
  }

private:
  Layout(Kind kind, unsigned numDims, std::vector<IndexExpr> results)
      : kind_(kind), numDims_(numDims), results_(std::move(results)) {}
  Kind kind_;
  unsigned numDims_;
  std::vector<IndexExpr> results_;
};

/// A swizzled layout for a shared tile (tilelang.layout.make_swizzled_layout).
inline Layout make_swizzled_layout() { return Layout::swizzled(); }

/// Not TileLang's: the layout of a global f32 tensor that gemm accumulators
/// are added into (`atomic_add(region, fragment)`, the backward's dQ),
/// dimension `row_dim` along the fragment's rows and `col_dim` along its
/// columns. Each 16 x 8 tile is stored as the accumulator holds it, thread
/// by thread, four elements each: [.., l, .., d, ..] -> [.., l / 16, ..,
/// d / 8, .., 16 * (l % 8) + 4 * ((d % 8) / 2) + 2 * ((l % 16) / 8) + d % 2].
/// On sm_90 and sm_90a such an add is one 16-byte vector reduction per tile
/// and thread, a quarter of the element adds' instructions, where the
/// tensor's extents along row_dim and col_dim are multiples of 16 and 8 and
/// the region starts on a tile; elsewhere (other targets, the CPU, element
/// accesses) it is an index map like any other. An invalid rank (1-6) or
/// dimension pair is an error at the caller's line.
Layout make_mma_tile_layout(unsigned rank, unsigned row_dim, unsigned col_dim,
                            std::source_location loc = std::source_location::current());

} // namespace tl::dsl
