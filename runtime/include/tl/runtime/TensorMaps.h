// The TMA tensor maps a kernel takes after its parameters (GPUBinary::
// tensorMaps), encoded for the tensors of one launch. Light header.
#pragma once

#include "tl/Compiler/GPUCompiler.h"
#include "tl/runtime/CudaDriver.h"

#include <vector>

namespace tl::runtime {

/// What cuTensorMapEncodeTiled takes for one tensor map (CudaDriver::
/// encodeTiledTensorMap's arguments).
struct TiledTensorMap {
  int dataType = 0; // CUtensorMapDataType
  CUdeviceptr address = 0;
  std::vector<std::uint64_t> dims, strides; // innermost first; strides of dims 1..
  std::vector<std::uint32_t> box;           // innermost first
  int swizzle = 0;                          // CUtensorMapSwizzle
  std::string what;                         // "the tensor map of parameter 'A' of kernel gemm"
};

/// The arguments of binary.tensorMaps[index] for parameter addresses
/// `pointers`, every TMA constraint checked (see encodeTensorMaps); no GPU
/// needed.
TiledTensorMap tiledTensorMap(const GPUBinary &binary, std::size_t index,
                              const std::vector<CUdeviceptr> &pointers);

/// One encoded map per binary.tensorMaps entry, over the device addresses of
/// the kernel's parameters (`pointers`, in binary.params order). Every
/// constraint TMA puts on a tensor is checked first, and a violation is a
/// CudaError naming the kernel, the parameter and the figure: a 16-byte
/// aligned address, strides that are multiples of 16 bytes (under 2^40),
/// 1 to 5 dimensions of at most 2^32 elements, boxes of 1 to 256 elements
/// whose innermost extent spans a multiple of 16 bytes and at most the
/// swizzle, and an element type TMA knows.
std::vector<CudaDriver::TensorMap> encodeTensorMaps(CudaDriver &driver, const GPUBinary &binary,
                                                    const std::vector<CUdeviceptr> &pointers);

} // namespace tl::runtime
