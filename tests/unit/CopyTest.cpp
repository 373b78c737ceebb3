// kernels/copy (the tile copy) on the backend of the test binary, outputs
// poisoned with NaN: every element arrives, bit for bit, for ragged shapes
// (boxes clipped at the edges) and for rows TMA cannot stride (N * 2 bytes
// not a multiple of 16: plain copies), and a seeded random sweep of shapes. On sm_90a the PTX shows
// the TMA load and store where they are legal.
#include "Backend.h"
#include "Numerics.h"

#include "copy/copy.h"
#include "tl/runtime/GPUKernel.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <limits>
#include <random>

using namespace tl::dsl;
using tl::kernels::copy::CopyConfig;
using tl::runtime::HostTensor;

namespace {

void checkCopy(int M, int N, DType dtype, const CopyConfig &c, std::uint32_t seed) {
  INFO("copy M=" << M << " N=" << N << " bf16=" << (dtype == bf16) << " block " << c.block_M << "x"
                 << c.block_N << "/" << c.threads);
  HostTensor a = tl::testing::randomTensor({M, N}, dtype, seed);
  std::unique_ptr<tl::runtime::Kernel> kernel =
      tl::testing::compile(tl::kernels::copy::tileCopy(M, N, dtype, c));
  if (auto *gpu = dynamic_cast<tl::runtime::GPUKernel *>(kernel.get());
      gpu && gpu->binary().arch == "sm_90a") {
    bool tma = N * 2 % 16 == 0;
    const std::string &ptx = gpu->binary().ptx;
    CHECK((ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global") != std::string::npos) == tma);
    CHECK((ptx.find("cp.async.bulk.tensor.2d.global.shared::cta") != std::string::npos) == tma);
  }
  std::vector<HostTensor> b = (*kernel)({&a}, std::numeric_limits<float>::quiet_NaN());
  REQUIRE(b.size() == 1);
  std::vector<float> expected = a.toFloat(), actual = b[0].toFloat();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    wrong += actual[i] == expected[i] ? 0 : 1; // NaN (never written) is wrong too
  CHECK(wrong == 0);
}

} // namespace

TEST_CASE("tile copy: every element, ragged edges, every swizzle atom", "[copy]") {
  bool gpu = tl::testing::backend() == tl::kernels::mha::Backend::gpu;
  // Rows of 256, 128, 64 and 32 bytes (atoms of 128, 128, 64, 32 bytes).
  const CopyConfig configs[] = {{128, 128, 128}, {64, 64, 128}, {64, 32, 128}, {32, 16, 64}};
  std::uint32_t seed = 500;
  for (const CopyConfig &c : configs) {
    checkCopy(gpu ? 1000 : 100, gpu ? 520 : 72, f16, c, seed++); // ragged in M and N
    checkCopy(gpu ? 256 : 64, 256, bf16, c, seed++);             // whole tiles
    checkCopy(37, 130, f16, c, seed++);                          // 260-byte rows: no TMA
    checkCopy(1, 8, bf16, c, seed++);                            // one 16-byte row
  }
}

TEST_CASE("tile copy: seeded random shapes", "[copy]") {
  // Shapes nobody tuned on: half with N a multiple of 8 (TMA on sm_90a), half
  // any N (plain copies where the rows cannot be strided). TLC_COPY_SEED
  // draws others.
  bool gpu = tl::testing::backend() == tl::kernels::mha::Backend::gpu;
  const char *chosen = std::getenv("TLC_COPY_SEED");
  std::uint32_t seed = chosen ? static_cast<std::uint32_t>(std::stoul(chosen)) : 20261201;
  std::mt19937 rng(seed);
  const CopyConfig configs[] = {{128, 128, 128}, {64, 64, 128}, {64, 32, 128}, {32, 16, 64}};
  int count = gpu ? 16 : 4, most = gpu ? 3000 : 150;
  std::uniform_int_distribution<int> extent(1, most), pick(0, 3), coin(0, 1);
  for (int i = 0; i < count; ++i) {
    int M = extent(rng), N = extent(rng);
    if (coin(rng))
      N = (N + 7) / 8 * 8;
    checkCopy(M, N, coin(rng) ? bf16 : f16, configs[pick(rng)], seed + 100 + i);
  }
}
