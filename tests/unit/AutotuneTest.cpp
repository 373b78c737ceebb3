// tl::autotune on the backend of the test binary (the CPU backend in
// tl-unit-tests, the GPU in tl-gpu-tests): the tuned GEMM computes the right
// product, every candidate is timed, the winner is the fastest, a second
// call is a disk-cache hit that times nothing, and a cold-L2 search (GPU) is
// timed and cached apart.
#include "Backend.h"
#include "Numerics.h"
#include "TempDir.h"

#include "gemm/gemm.h"
#include "tl/runtime/Autotune.h"
#include "tl/runtime/KernelCache.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace tl::dsl;
using tl::kernels::gemm::GemmConfig;
using tl::runtime::HostTensor;

namespace {

tl::AutotuneOptions backendOptions() {
  tl::AutotuneOptions options;
  options.target =
      tl::testing::backend() == tl::kernels::mha::Backend::gpu ? tl::Target::gpu : tl::Target::cpu;
  options.warmup = 1;
  options.repeats = 3;
  return options;
}

/// A fresh disk cache for the test's duration.
struct ScratchCache {
  tl::testing::TempDir dir{"tl-autotune-test"};
  ScratchCache() {
    ::setenv("TLC_CACHE_DIR", dir.path.c_str(), 1);
    ::unsetenv("TLC_CACHE");
  }
  ~ScratchCache() { ::unsetenv("TLC_CACHE_DIR"); }
  std::size_t choices() const {
    std::size_t n = 0;
    for (const auto &entry : std::filesystem::directory_iterator(dir.path))
      n += entry.path().filename().string().starts_with("autotune-") ? 1 : 0;
    return n;
  }
};

} // namespace

TEST_CASE("autotune: the fastest GEMM configuration, then a cache hit", "[autotune]") {
  ScratchCache cache;
  // A ragged shape none of the configurations was tuned on.
  const int M = 200, N = 136, K = 88;
  const std::vector<GemmConfig> space = {
      {64, 64, 32, 128, 2}, {128, 128, 32, 128, 3}, {64, 128, 16, 128, 2}};
  auto generator = [&](const GemmConfig &c) {
    return tl::kernels::gemm::gemm(M, N, K, f16, f32, false, false, c);
  };
  HostTensor a = tl::testing::randomTensor({M, K}, f16, 11);
  HostTensor b = tl::testing::randomTensor({K, N}, f16, 12);
  std::vector<float> expected = tl::testing::referenceGemm(a, b, M, N, K, false, false);

  tl::AutotuneResult first = tl::autotune(generator, space, {&a, &b}, backendOptions());
  CHECK_FALSE(first.cacheHit);
  REQUIRE(first.timings.size() == space.size());
  for (std::size_t i = 0; i < space.size(); ++i) {
    INFO("candidate " << i << ": " << first.timings[i].error);
    CHECK(first.timings[i].error.empty());
    CHECK(first.timings[i].ms > 0);
    CHECK(first.timings[i].ms >= first.ms); // the winner is the fastest
  }
  CHECK(first.timings[first.best].ms == first.ms);
  CHECK(cache.choices() == 1);
  std::vector<HostTensor> c = (*first.kernel)({&a, &b}, std::numeric_limits<float>::quiet_NaN());
  CHECK(tl::testing::checkClose("C", c[0].toFloat(), expected, 1e-4, 1e-4 * 10));

  tl::AutotuneResult second = tl::autotune(generator, space, {&a, &b}, backendOptions());
  CHECK(second.cacheHit);
  CHECK(second.timings.empty()); // nothing timed
  CHECK(second.best == first.best);
  CHECK(second.ms == first.ms);
  CHECK(second.key == first.key);
  c = (*second.kernel)({&a, &b}, std::numeric_limits<float>::quiet_NaN());
  CHECK(tl::testing::checkClose("C", c[0].toFloat(), expected, 1e-4, 1e-4 * 10));

  // Another shape is another search; without the cache nothing is kept.
  auto other = [&](const GemmConfig &config) {
    return tl::kernels::gemm::gemm(M, N, 64, f16, f32, false, false, config);
  };
  HostTensor a64 = tl::testing::randomTensor({M, 64}, f16, 13);
  HostTensor b64 = tl::testing::randomTensor({64, N}, f16, 14);
  tl::AutotuneOptions uncached = backendOptions();
  uncached.cache = false;
  tl::AutotuneResult third = tl::autotune(other, space, {&a64, &b64}, uncached);
  CHECK_FALSE(third.cacheHit);
  CHECK(third.key != first.key);
  CHECK(cache.choices() == 1);

  // Clearing the cache forgets the choices too.
  tl::runtime::KernelCache(cache.dir.path.string()).clear();
  CHECK(cache.choices() == 0);
}

TEST_CASE("autotune: timing from a cold L2 is a search of its own on the GPU", "[autotune]") {
  ScratchCache cache;
  const int M = 136, N = 72, K = 40;
  const std::vector<GemmConfig> space = {{64, 64, 32, 128, 2}, {64, 128, 16, 128, 2}};
  auto generator = [&](const GemmConfig &c) {
    return tl::kernels::gemm::gemm(M, N, K, f16, f32, false, false, c);
  };
  HostTensor a = tl::testing::randomTensor({M, K}, f16, 15);
  HostTensor b = tl::testing::randomTensor({K, N}, f16, 16);
  std::vector<float> expected = tl::testing::referenceGemm(a, b, M, N, K, false, false);
  tl::AutotuneResult warm = tl::autotune(generator, space, {&a, &b}, backendOptions());
  tl::AutotuneOptions coldOptions = backendOptions();
  coldOptions.coldL2 = true;
  tl::AutotuneResult cold = tl::autotune(generator, space, {&a, &b}, coldOptions);
  if (tl::testing::backend() == tl::kernels::mha::Backend::gpu) {
    // Timed again, the queued way, and kept beside the warm search's choice.
    CHECK_FALSE(cold.cacheHit);
    CHECK(cold.key != warm.key);
    REQUIRE(cold.timings.size() == space.size());
    for (const tl::AutotuneTiming &timing : cold.timings) {
      INFO(timing.error);
      CHECK(timing.error.empty());
      CHECK(timing.ms > 0);
      CHECK(timing.ms >= cold.ms);
    }
    CHECK(cache.choices() == 2);
  } else { // the CPU has no L2 to flush: the same search, found in the cache
    CHECK(cold.cacheHit);
    CHECK(cold.key == warm.key);
  }
  std::vector<HostTensor> c = (*cold.kernel)({&a, &b}, std::numeric_limits<float>::quiet_NaN());
  CHECK(tl::testing::checkClose("C", c[0].toFloat(), expected, 1e-4, 1e-4 * 10));
}

TEST_CASE("autotune: a stored choice for another program is not used", "[autotune]") {
  ScratchCache cache;
  const std::vector<GemmConfig> space = {{64, 64, 32, 128, 2}, {64, 128, 16, 128, 2}};
  HostTensor a = tl::testing::randomTensor({64, 32}, f16, 21);
  HostTensor b = tl::testing::randomTensor({32, 64}, f16, 22);
  auto generator = [&](const GemmConfig &c) {
    return tl::kernels::gemm::gemm(64, 64, 32, f16, f32, false, false, c);
  };
  tl::AutotuneResult first = tl::autotune(generator, space, {&a, &b}, backendOptions());
  // A corrupt entry (a crash mid-write elsewhere, an edited file) reads as a miss.
  for (const auto &entry : std::filesystem::directory_iterator(cache.dir.path))
    if (entry.path().filename().string().starts_with("autotune-"))
      std::ofstream(entry.path()) << "tlc-autotune 1\nbest 7\nms 0.1\nprogram nonsense\n";
  tl::AutotuneResult second = tl::autotune(generator, space, {&a, &b}, backendOptions());
  CHECK_FALSE(second.cacheHit);
  CHECK(second.timings.size() == space.size());
  CHECK(second.key == first.key);
}

TEST_CASE("autotune: misuse is an error that says what is wrong", "[autotune]") {
  ScratchCache cache;
  HostTensor a = tl::testing::randomTensor({64, 32}, f16, 31);
  HostTensor b = tl::testing::randomTensor({32, 64}, f16, 32);
  auto generator = [&](const GemmConfig &c) {
    return tl::kernels::gemm::gemm(64, 64, 32, f16, f32, false, false, c);
  };
  CHECK_THROWS_WITH(tl::autotune(generator, std::vector<GemmConfig>{}, {&a, &b}, backendOptions()),
                    Catch::Contains("search space is empty"));
  CHECK_THROWS_WITH(tl::autotune(generator, std::vector<GemmConfig>{{64, 64, 32, 128, 2}}, {&a},
                                 backendOptions()),
                    Catch::Contains("takes 2 inputs"));
  // A configuration that changes the program's tensors is not a configuration.
  auto shapeChanging = [&](const GemmConfig &c) {
    return tl::kernels::gemm::gemm(c.block_M, 64, 32, f16, f32, false, false, c);
  };
  CHECK_THROWS_WITH(
      tl::autotune(shapeChanging,
                   std::vector<GemmConfig>{{64, 64, 32, 128, 2}, {128, 64, 32, 128, 2}}, {&a, &b},
                   backendOptions()),
      Catch::Contains("candidate 1") && Catch::Contains("signature"));
}
