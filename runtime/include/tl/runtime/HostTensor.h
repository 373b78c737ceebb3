// An owning, zero-initialised, row-major tensor in host memory. Light header.
#pragma once

#include "tl/Support/DType.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tl::runtime {

class HostTensor {
public:
  HostTensor() = default;
  HostTensor(std::vector<std::int64_t> shape, DType dtype);

  const std::vector<std::int64_t> &shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  std::int64_t numel() const;
  std::size_t bytes() const;
  void *data() { return storage_.get(); }
  const void *data() const { return storage_.get(); }

  /// Element `i` (row-major) read as / written from a float.
  float at(std::int64_t i) const;
  void set(std::int64_t i, float value);
  std::vector<float> toFloat() const;
  static HostTensor fromFloat(std::vector<std::int64_t> shape, DType dtype,
                              const std::vector<float> &values);
  /// Sets every element (poisoning outputs before a run, say).
  void fill(float value);

private:
  std::vector<std::int64_t> shape_;
  DType dtype_ = DType::f32;
  std::shared_ptr<std::byte[]> storage_;
};

/// "[8, 256, 32, 64]"
std::string formatShape(const std::vector<std::int64_t> &shape);
/// The number of elements of a row-major tensor of `shape`.
std::int64_t elementCount(const std::vector<std::int64_t> &shape);

} // namespace tl::runtime
