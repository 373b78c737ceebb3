// Host tensors: storage, float views, f16 conversion.
#include "tl/runtime/HostTensor.h"

#include "tl/Support/Half.h"

#include <cstring>
#include <stdexcept>

namespace tl::runtime {

HostTensor::HostTensor(std::vector<std::int64_t> shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  for (std::int64_t extent : shape_)
    if (extent < 0)
      throw std::invalid_argument("HostTensor: negative extent in " + formatShape(shape_));
  storage_ = std::shared_ptr<std::byte[]>(new std::byte[bytes()]());
}

std::int64_t elementCount(const std::vector<std::int64_t> &shape) {
  std::int64_t n = 1;
  for (std::int64_t extent : shape)
    n *= extent;
  return n;
}

std::int64_t HostTensor::numel() const { return elementCount(shape_); }

std::size_t HostTensor::bytes() const {
  return static_cast<std::size_t>(numel()) * byteWidth(dtype_);
}

float HostTensor::at(std::int64_t i) const {
  const std::byte *p = storage_.get();
  switch (dtype_) {
  case DType::f16: {
    std::uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return halfToFloat(h);
  }
  case DType::bf16: {
    std::uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
  }
  case DType::f32:
    return reinterpret_cast<const float *>(p)[i];
  case DType::f64:
    return static_cast<float>(reinterpret_cast<const double *>(p)[i]);
  case DType::i32:
    return static_cast<float>(reinterpret_cast<const std::int32_t *>(p)[i]);
  case DType::i64:
  case DType::index:
    return static_cast<float>(reinterpret_cast<const std::int64_t *>(p)[i]);
  case DType::i16:
    return reinterpret_cast<const std::int16_t *>(p)[i];
  case DType::i8:
  case DType::i1:
    return static_cast<float>(reinterpret_cast<const std::int8_t *>(p)[i]);
  }
  return 0;
}

void HostTensor::set(std::int64_t i, float value) {
  std::byte *p = storage_.get();
  switch (dtype_) {
  case DType::f16: {
    std::uint16_t h = floatToHalf(value);
    std::memcpy(p + 2 * i, &h, 2);
    return;
  }
  case DType::bf16: {
    std::uint16_t h = floatToBfloat16(value);
    std::memcpy(p + 2 * i, &h, 2);
    return;
  }
  case DType::f32:
    reinterpret_cast<float *>(p)[i] = value;
    return;
  case DType::f64:
    reinterpret_cast<double *>(p)[i] = value;
    return;
  case DType::i32:
    reinterpret_cast<std::int32_t *>(p)[i] = static_cast<std::int32_t>(value);
    return;
  case DType::i64:
  case DType::index:
    reinterpret_cast<std::int64_t *>(p)[i] = static_cast<std::int64_t>(value);
    return;
  case DType::i16:
    reinterpret_cast<std::int16_t *>(p)[i] = static_cast<std::int16_t>(value);
    return;
  case DType::i8:
  case DType::i1:
    reinterpret_cast<std::int8_t *>(p)[i] = static_cast<std::int8_t>(value);
    return;
  }
}

std::vector<float> HostTensor::toFloat() const {
  std::vector<float> values(static_cast<std::size_t>(numel()));
  for (std::int64_t i = 0; i < numel(); ++i)
    values[i] = at(i);
  return values;
}

HostTensor HostTensor::fromFloat(std::vector<std::int64_t> shape, DType dtype,
                                 const std::vector<float> &values) {
  HostTensor tensor(std::move(shape), dtype);
  if (static_cast<std::int64_t>(values.size()) != tensor.numel())
    throw std::invalid_argument("HostTensor::fromFloat: " + std::to_string(values.size()) +
                                " values for shape " + formatShape(tensor.shape()));
  for (std::int64_t i = 0; i < tensor.numel(); ++i)
    tensor.set(i, values[i]);
  return tensor;
}

void HostTensor::fill(float value) {
  for (std::int64_t i = 0; i < numel(); ++i)
    set(i, value);
}

std::string formatShape(const std::vector<std::int64_t> &shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace tl::runtime
