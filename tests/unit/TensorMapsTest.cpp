// The TMA tensor maps the runtime encodes at launch: what the GEMM kernel
// asks for on sm_90a, and every constraint TMA puts on a tensor checked with
// the kernel's and the parameter's names before the driver sees it. No GPU:
// the checks run before cuTensorMapEncodeTiled.
#include "tl/runtime/TensorMaps.h"
#include "gemm/gemm.h"

#include <catch2/catch.hpp>

using tl::runtime::CudaError;
using tl::runtime::tiledTensorMap;

namespace {

/// A binary whose one tensor map reads parameter 0 (`shape`, `dtype`).
tl::GPUBinary oneMap(std::vector<std::int64_t> shape, tl::DType dtype,
                     std::vector<std::int64_t> box, std::int64_t swizzle) {
  tl::GPUBinary binary;
  binary.name = "k";
  binary.params = {{"A", std::move(shape), dtype, false}};
  binary.tensorMaps = {{0, std::move(box), swizzle}};
  return binary;
}

std::string refusal(const tl::GPUBinary &binary, tl::runtime::CUdeviceptr address = 1 << 20) {
  try {
    tiledTensorMap(binary, 0, {address});
  } catch (const CudaError &error) {
    return error.what();
  }
  return "";
}

} // namespace

TEST_CASE("the sm_90a GEMM loads A and B by TMA, in swizzle-atom boxes", "[tma]") {
  using tl::kernels::gemm::GemmConfig;
  // A [M, K] in [128, 32] tiles: 64-byte rows, one box; B [K, N] in [32, 128]
  // tiles: 256-byte rows, 128-byte boxes of 64 columns.
  tl::GPUBinary gemm =
      tl::compileForGPU(tl::kernels::gemm::gemm(512, 384, 256, tl::DType::f16, tl::DType::f16,
                                                false, false, GemmConfig{128, 128, 32, 128, 3}),
                        "sm_90a");
  REQUIRE(gemm.tensorMaps.size() == 2);
  CHECK(gemm.tensorMaps[0] == tl::TensorMapParam{0, {128, 32}, 64});
  CHECK(gemm.tensorMaps[1] == tl::TensorMapParam{1, {32, 64}, 128});
  CHECK(gemm.ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
  CHECK(gemm.ptx.find(".param .align 64 .b8 gemm_param_3[128]") != std::string::npos);
  // The arguments the driver gets: innermost first, strides of the outer dims.
  tl::runtime::TiledTensorMap a = tiledTensorMap(gemm, 0, {1 << 20, 2 << 20, 3 << 20});
  CHECK(a.dataType == 6); // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  CHECK(a.address == 1 << 20);
  CHECK(a.dims == std::vector<std::uint64_t>{256, 512});
  CHECK(a.strides == std::vector<std::uint64_t>{512});
  CHECK(a.box == std::vector<std::uint32_t>{32, 128});
  CHECK(a.swizzle == 2); // CU_TENSOR_MAP_SWIZZLE_64B
  CHECK(tiledTensorMap(gemm, 1, {1 << 20, 2 << 20, 3 << 20}).swizzle == 3);

  // sm_80 has no TMA; a K TMA cannot stride (rows of 2 * 260 bytes) keeps
  // cp.async on sm_90a.
  CHECK(tl::compileForGPU(
            tl::kernels::gemm::gemm(512, 384, 256, tl::DType::f16, tl::DType::f16, false, false),
            "sm_80")
            .tensorMaps.empty());
  CHECK(tl::compileForGPU(
            tl::kernels::gemm::gemm(512, 384, 260, tl::DType::f16, tl::DType::f16, false, false),
            "sm_90a")
            .tensorMaps.empty());
}

TEST_CASE("a tensor TMA cannot read is refused with its name and the figure", "[tma]") {
  CHECK(refusal(oneMap({64, 64}, tl::DType::f16, {64, 64}, 128)) == "");
  CHECK(refusal(oneMap({64, 64}, tl::DType::f16, {64, 64}, 128), (1 << 20) + 8) ==
        "the tensor map of parameter 'A' of kernel k: TMA needs a 16-byte aligned address, the "
        "tensor is at 1048584");
  CHECK(refusal(oneMap({64, 60}, tl::DType::f16, {64, 8}, 0)) ==
        "the tensor map of parameter 'A' of kernel k: dimension 0 has a stride of 120 bytes; TMA "
        "needs a multiple of 16 under 2^40");
  CHECK(refusal(oneMap({1024, 64}, tl::DType::f16, {512, 64}, 128)) ==
        "the tensor map of parameter 'A' of kernel k: box dimension 0 is 512 elements; TMA takes "
        "1 to 256");
  CHECK(refusal(oneMap({64, 128}, tl::DType::f16, {64, 128}, 128)) ==
        "the tensor map of parameter 'A' of kernel k: a box row spans 256 bytes; TMA needs a "
        "multiple of 16 of at most the 128-byte swizzle");
  CHECK(refusal(oneMap({64, 64}, tl::DType::i8, {64, 64}, 0)) ==
        "the tensor map of parameter 'A' of kernel k: TMA does not move i8 elements");
  CHECK(refusal(oneMap({64, 64}, tl::DType::f16, {64}, 0)) ==
        "the tensor map of parameter 'A' of kernel k: the box has 1 dimensions, the tensor 2");
  CHECK(refusal(oneMap({1, 1, 1, 1, 1, 64}, tl::DType::f16, {1, 1, 1, 1, 1, 64}, 0)) ==
        "the tensor map of parameter 'A' of kernel k: TMA takes tensors of 1 to 5 dimensions, "
        "this one has 6");
  tl::GPUBinary stray = oneMap({64, 64}, tl::DType::f16, {64, 64}, 128);
  stray.tensorMaps[0].param = 3;
  CHECK(refusal(stray) == "k: a tensor map names parameter 3, which the kernel does not have");
}
