// Buffers (global tensors, shared tiles, fragments, locals), subscripts,
// element access and regions. Light header: no MLIR.
#pragma once

#include "tl/dsl/Expr.h"

#include <vector>

namespace tl::dsl {

/// `start : start + extent` in one dimension; the extent is a host number.
struct Slice {
  Expr start;
  std::int64_t extent;
};
inline Slice slice(const Expr &start, std::int64_t extent) { return {start, extent}; }
/// The whole dimension (Python's `:`).
struct All {};
inline constexpr All all{};

/// One subscript of a buffer: a point, a slice, or the whole dimension.
class Index {
public:
  Index(const Expr &point) : start_(point) {}
  template <typename T>
  requires std::is_arithmetic_v<T> Index(T point) : start_(point) {}
  Index(const Slice &s) : start_(s.start), extent_(s.extent), isSlice_(true) {}
  Index(All) : isAll_(true), isSlice_(true) {}

  bool isPoint() const { return !isSlice_; }
  bool isAll() const { return isAll_; }
  const Expr &start() const { return start_; }
  std::int64_t extent() const { return extent_; }

private:
  Expr start_ = Expr(0);
  std::int64_t extent_ = 1;
  bool isAll_ = false, isSlice_ = false;
};

class Access;

class Buffer {
public:
  Buffer() = default;
  Buffer(const void *handle, std::string name, std::vector<std::int64_t> shape, DType dtype,
         Scope scope)
      : handle_(handle), name_(std::move(name)), shape_(std::move(shape)), dtype_(dtype),
        scope_(scope) {}

  const std::string &name() const { return name_; }
  const std::vector<std::int64_t> &shape() const { return shape_; }
  std::int64_t rank() const { return static_cast<std::int64_t>(shape_.size()); }
  DType dtype() const { return dtype_; }
  Scope scope() const { return scope_; }
  /// The opaque IR value (mlir::Value) of this buffer.
  const void *handle() const { return handle_; }

  /// `buf(i, j)` is an element; with a slice or `all` it is a region.
  Access operator()(Index i0, SourceLoc loc = SourceLoc::current()) const;
  Access operator()(Index i0, Index i1, SourceLoc loc = SourceLoc::current()) const;
  Access operator()(Index i0, Index i1, Index i2, SourceLoc loc = SourceLoc::current()) const;
  Access operator()(Index i0, Index i1, Index i2, Index i3,
                    SourceLoc loc = SourceLoc::current()) const;
  Access operator()(Index i0, Index i1, Index i2, Index i3, Index i4,
                    SourceLoc loc = SourceLoc::current()) const;
  Access operator()(Index i0, Index i1, Index i2, Index i3, Index i4, Index i5,
                    SourceLoc loc = SourceLoc::current()) const;

private:
  const void *handle_ = nullptr;
  std::string name_;
  std::vector<std::int64_t> shape_;
  DType dtype_ = DType::f32;
  Scope scope_ = Scope::global;
};

/// A subscripted buffer. Used as a value it loads an element; assigned to it
/// stores one (converting the value to the buffer's type); given to copy()
/// it names a region.
class Access {
public:
  Access(Buffer buffer, std::vector<Index> indices, SourceLoc loc)
      : buffer_(std::move(buffer)), indices_(std::move(indices)), loc_(loc) {}
  Access(const Access &) = default;

  operator Expr() const; // NOLINT: loads the element
  Access &operator=(const Expr &value);
  Access &operator=(const Access &other) { return *this = Expr(other); }
  Access &operator+=(const Expr &value);
  Access &operator-=(const Expr &value);
  Access &operator*=(const Expr &value);
  Access &operator/=(const Expr &value);

  const Buffer &buffer() const { return buffer_; }
  const std::vector<Index> &indices() const { return indices_; }
  SourceLoc loc() const { return loc_; }

private:
  Buffer buffer_;
  std::vector<Index> indices_;
  SourceLoc loc_;
};

/// A region of a buffer (the whole buffer, or a subscripted one with slices).
class Region {
public:
  Region(const Buffer &buffer) : buffer_(buffer) {}
  Region(const Access &access)
      : buffer_(access.buffer()), indices_(access.indices()), subscripted_(true) {}
  const Buffer &buffer() const { return buffer_; }
  const std::vector<Index> &indices() const { return indices_; }
  bool subscripted() const { return subscripted_; }

private:
  Buffer buffer_;
  std::vector<Index> indices_;
  bool subscripted_ = false;
};

} // namespace tl::dsl
