// TMA tensor maps for a launch: the constraints checked with the author's
// names, then cuTensorMapEncodeTiled (see TensorMaps.h).
#include "tl/runtime/TensorMaps.h"

#include <optional>

namespace tl::runtime {
namespace {

/// The driver's CUtensorMapDataType for `type`, if TMA moves it.
std::optional<int> tensorMapDataType(DType type) {
  switch (type) {
  case DType::f16:
    return 6;
  case DType::f32:
    return 7;
  case DType::f64:
    return 8;
  case DType::bf16:
    return 9;
  case DType::i32:
    return 3;
  case DType::i64:
    return 5;
  default:
    return std::nullopt;
  }
}

/// The driver's CUtensorMapSwizzle for a swizzle of `bytes`.
int swizzleMode(std::int64_t bytes) { return bytes == 128 ? 3 : bytes == 64 ? 2 : bytes == 32; }

} // namespace

TiledTensorMap tiledTensorMap(const GPUBinary &binary, std::size_t index,
                              const std::vector<CUdeviceptr> &pointers) {
  const TensorMapParam &spec = binary.tensorMaps.at(index);
  if (spec.param < 0 || spec.param >= static_cast<std::int64_t>(binary.params.size()) ||
      spec.param >= static_cast<std::int64_t>(pointers.size()))
    throw CudaError(binary.name + ": a tensor map names parameter " + std::to_string(spec.param) +
                    ", which the kernel does not have");
  const Param &param = binary.params[spec.param];
  TiledTensorMap map;
  map.what = "the tensor map of parameter '" + param.name + "' of kernel " + binary.name;
  auto fail = [&](const std::string &why) { throw CudaError(map.what + ": " + why); };
  std::size_t rank = param.shape.size();
  if (rank < 1 || rank > 5)
    fail("TMA takes tensors of 1 to 5 dimensions, this one has " + std::to_string(rank));
  if (spec.box.size() != rank)
    fail("the box has " + std::to_string(spec.box.size()) + " dimensions, the tensor " +
         std::to_string(rank));
  std::optional<int> dataType = tensorMapDataType(param.dtype);
  if (!dataType)
    fail(std::string("TMA does not move ") + toString(param.dtype) + " elements");
  map.dataType = *dataType;
  map.address = pointers[spec.param];
  if (map.address % 16)
    fail("TMA needs a 16-byte aligned address, the tensor is at " + std::to_string(map.address));
  std::int64_t width = byteWidth(param.dtype);
  std::uint64_t stride = static_cast<std::uint64_t>(width);
  for (std::size_t i = rank; i-- > 0;) { // innermost first
    std::int64_t extent = param.shape[i];
    if (extent < 1 || extent > (std::int64_t(1) << 32))
      fail("dimension " + std::to_string(i) + " has " + std::to_string(extent) +
           " elements; TMA takes 1 to 2^32");
    if (spec.box[i] < 1 || spec.box[i] > 256)
      fail("box dimension " + std::to_string(i) + " is " + std::to_string(spec.box[i]) +
           " elements; TMA takes 1 to 256");
    map.dims.push_back(static_cast<std::uint64_t>(extent));
    map.box.push_back(static_cast<std::uint32_t>(spec.box[i]));
    if (i + 1 < rank) {
      if (stride % 16 || stride >= (std::uint64_t(1) << 40))
        fail("dimension " + std::to_string(i) + " has a stride of " + std::to_string(stride) +
             " bytes; TMA needs a multiple of 16 under 2^40");
      map.strides.push_back(stride);
    }
    stride *= static_cast<std::uint64_t>(extent);
  }
  std::int64_t innerBytes = spec.box.back() * width;
  if (innerBytes % 16 || (spec.swizzle && innerBytes > spec.swizzle))
    fail("a box row spans " + std::to_string(innerBytes) + " bytes; TMA needs a multiple of 16" +
         (spec.swizzle ? " of at most the " + std::to_string(spec.swizzle) + "-byte swizzle"
                       : std::string()));
  if (spec.swizzle != 0 && spec.swizzle != 32 && spec.swizzle != 64 && spec.swizzle != 128)
    fail("a swizzle is 0, 32, 64 or 128 bytes, not " + std::to_string(spec.swizzle));
  map.swizzle = swizzleMode(spec.swizzle);
  return map;
}

std::vector<CudaDriver::TensorMap> encodeTensorMaps(CudaDriver &driver, const GPUBinary &binary,
                                                    const std::vector<CUdeviceptr> &pointers) {
  std::vector<CudaDriver::TensorMap> maps;
  maps.reserve(binary.tensorMaps.size());
  for (std::size_t i = 0; i < binary.tensorMaps.size(); ++i) {
    TiledTensorMap map = tiledTensorMap(binary, i, pointers);
    maps.push_back(driver.encodeTiledTensorMap(map.dataType, map.address, map.dims, map.strides,
                                               map.box, map.swizzle, map.what));
  }
  return maps;
}

} // namespace tl::runtime
