// The on-disk kernel cache and tl::jit. These need no GPU: PTX is compiled here.
#include "Numerics.h"
#include "TempDir.h"

#include "gemm/gemm.h"
#include "tl/dsl.h"
#include "tl/runtime/Jit.h"
#include "tl/runtime/KernelCache.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace tl::dsl;
using tl::runtime::HostTensor;
using tl::runtime::KernelCache;
namespace fs = std::filesystem;

namespace {

Program scaleRows(int rows, double factor) {
  Program p("scale_rows");
  Buffer X = p.tensor("X", {rows, 64}, f16);
  Buffer Y = p.output("Y", {rows, 64}, f16);
  p.kernel({ceildiv(rows, 64)}, 128, [&](Expr bx) {
    Buffer x = alloc_fragment({64, 64}, f32);
    copy(X(slice(bx * 64, 64), all), x);
    parallel({64, 64}, [&](Expr i, Expr j) { x(i, j) = x(i, j) * factor; });
    copy(x, Y(slice(bx * 64, 64), all));
  });
  return p;
}

/// A fresh cache directory, removed afterwards.
using TempDir = tl::testing::TempDir;

void requireSame(const tl::GPUBinary &a, const tl::GPUBinary &b) {
  CHECK(a.name == b.name);
  CHECK(a.arch == b.arch);
  CHECK(a.ptx == b.ptx);
  CHECK(a.grid == b.grid);
  CHECK(a.threads == b.threads);
  CHECK(a.sharedBytes == b.sharedBytes);
  CHECK(a.fragmentLayout == b.fragmentLayout);
  CHECK(a.tensorMaps == b.tensorMaps);
  CHECK(a.warnings == b.warnings);
  REQUIRE(a.params.size() == b.params.size());
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    CHECK(a.params[i].name == b.params[i].name);
    CHECK(a.params[i].shape == b.params[i].shape);
    CHECK(a.params[i].dtype == b.params[i].dtype);
    CHECK(a.params[i].output == b.params[i].output);
  }
}

} // namespace

TEST_CASE("a stored kernel loads back whole", "[cache]") {
  TempDir dir;
  KernelCache cache(dir.path.string());
  Program p = scaleRows(256, 0.5);
  tl::GPUBinary binary = tl::compileForGPU(p, "sm_80");
  std::string key = KernelCache::key(p, "sm_80");
  CHECK_FALSE(cache.load(key));
  cache.store(key, binary);
  std::optional<tl::GPUBinary> loaded = cache.load(key);
  REQUIRE(loaded);
  requireSame(*loaded, binary);
  cache.clear();
  CHECK_FALSE(cache.load(key));
}

TEST_CASE("a stored TMA kernel keeps its tensor maps", "[cache]") {
  TempDir dir;
  KernelCache cache(dir.path.string());
  Program p = tl::kernels::gemm::gemm(256, 256, 256, tl::DType::f16, tl::DType::f16, false, false);
  tl::GPUBinary binary = tl::compileForGPU(p, "sm_90a");
  REQUIRE(binary.tensorMaps.size() == 2); // A's boxes and B's
  binary.warnings = {"ptxas: 8 bytes spill stores, 8 bytes spill loads (a note kept)"};
  std::string key = KernelCache::key(p, "sm_90a");
  cache.store(key, binary);
  std::optional<tl::GPUBinary> loaded = cache.load(key);
  REQUIRE(loaded);
  requireSame(*loaded, binary);
}

TEST_CASE("keys change with the program and the target", "[cache]") {
  Program a = scaleRows(256, 0.5), b = scaleRows(256, 0.25), c = scaleRows(512, 0.5);
  std::string key = KernelCache::key(a, "sm_80");
  CHECK(key.size() == 32);
  CHECK(key == KernelCache::key(scaleRows(256, 0.5), "sm_80"));
  CHECK(key != KernelCache::key(a, "sm_90a"));
  CHECK(key != KernelCache::key(b, "sm_80"));
  CHECK(key != KernelCache::key(c, "sm_80"));
}

TEST_CASE("the cache target names the path and LLVM's options", "[cache]") {
  tl::GPUCompileOptions options;
  CHECK(tl::runtime::gpuCacheTarget("sm_90a", options) == "sm_90a");
  options.wgmma = false;
  CHECK(tl::runtime::gpuCacheTarget("sm_90a", options) == "sm_90a mma.sync");
  options.wgmma = true;
  // An entry compiled with other LLVM options is another kernel.
  ::setenv("TLC_LLVM_OPTIONS", "-disable-lsr", 1);
  CHECK(tl::runtime::gpuCacheTarget("sm_90a", options) == "sm_90a llvm:-disable-lsr");
  ::unsetenv("TLC_LLVM_OPTIONS");
}

TEST_CASE("the code-generation variables: each turns its option from its default, and keys it "
          "apart",
          "[cache]") {
  struct Variable {
    const char *name;
    bool tl::GPUCompileOptions::*option;
    bool byDefault;
    const char *target; // the cache's target with the option away from its default
  };
  for (const char *set :
       {"TLC_WGMMA", "TLC_TMA", "TLC_WARP_SPECIALIZE", "TLC_ELIDE_ASYNC_BARRIERS", "TLC_STMATRIX",
        "TLC_LOW_WORD_DESCRIPTORS", "TLC_EARLY_TILE_HAND_BACK", "TLC_LLVM_OPTIONS"})
    ::unsetenv(set); // the environment's own choices would change the defaults checked
  for (Variable v :
       {Variable{"TLC_ELIDE_ASYNC_BARRIERS", &tl::GPUCompileOptions::elideAsyncBarriers, false,
                 "sm_90a elide-async-barriers"},
        Variable{"TLC_STMATRIX", &tl::GPUCompileOptions::stmatrix, true, "sm_90a no-stmatrix"},
        Variable{"TLC_LOW_WORD_DESCRIPTORS", &tl::GPUCompileOptions::lowWordDescriptors, true,
                 "sm_90a no-low-word-descriptors"},
        Variable{"TLC_EARLY_TILE_HAND_BACK", &tl::GPUCompileOptions::earlyTileHandBack, false,
                 "sm_90a early-tile-hand-back"}}) {
    INFO(v.name);
    ::unsetenv(v.name);
    CHECK(tl::runtime::gpuCompileOptions().*v.option == v.byDefault);
    CHECK(tl::runtime::gpuCacheTarget("sm_90a", tl::runtime::gpuCompileOptions()) == "sm_90a");
    ::setenv(v.name, v.byDefault ? "0" : "1", 1);
    tl::GPUCompileOptions options = tl::runtime::gpuCompileOptions();
    CHECK(options.*v.option == !v.byDefault);
    CHECK(tl::runtime::gpuCacheTarget("sm_90a", options) == v.target);
    // The other value (or any other) leaves the default.
    ::setenv(v.name, v.byDefault ? "1" : "0", 1);
    CHECK(tl::runtime::gpuCompileOptions().*v.option == v.byDefault);
    ::unsetenv(v.name);
  }
}

TEST_CASE("a corrupt or truncated entry is a miss, and is rebuilt", "[cache]") {
  TempDir dir;
  KernelCache cache(dir.path.string());
  Program p = scaleRows(128, 2.0);
  tl::GPUBinary binary = tl::compileForGPU(p, "sm_90a");
  std::string key = KernelCache::key(p, "sm_90a");
  fs::path file = dir.path / (key + ".tlk");
  cache.store(key, binary);
  REQUIRE(fs::exists(file));
  auto size = fs::file_size(file);

  fs::resize_file(file, size / 2); // truncated
  CHECK_FALSE(cache.load(key));

  cache.store(key, binary);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('#'); // one flipped byte in the PTX
  }
  CHECK_FALSE(cache.load(key));

  std::ofstream(file, std::ios::trunc) << "not a cache entry";
  CHECK_FALSE(cache.load(key));

  cache.store(key, binary); // rebuilt over it
  REQUIRE(cache.load(key));
  requireSame(*cache.load(key), binary);
}

TEST_CASE("concurrent writers and readers never see a partial entry", "[cache]") {
  TempDir dir;
  KernelCache cache(dir.path.string());
  Program p = scaleRows(256, 3.0);
  tl::GPUBinary binary = tl::compileForGPU(p, "sm_80");
  std::string key = KernelCache::key(p, "sm_80");
  std::atomic<int> partial{0}, hits{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 6; ++w)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i)
        cache.store(key, binary);
    });
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i)
        if (std::optional<tl::GPUBinary> loaded = cache.load(key)) {
          ++hits;
          if (loaded->ptx != binary.ptx)
            ++partial;
        }
    });
  for (std::thread &t : threads)
    t.join();
  CHECK(partial == 0);
  REQUIRE(cache.load(key));
  requireSame(*cache.load(key), binary);
  // No temporary files are left behind.
  int files = 0;
  for (const auto &entry : fs::directory_iterator(dir.path))
    files += entry.is_regular_file();
  CHECK(files == 1);
  INFO("reads that found the entry: " << hits);
}

TEST_CASE("the cached compile path: a miss, then a hit that skips compilation", "[cache]") {
  // (The second call is served from memory; the disk entry is checked too.)
  TempDir dir;
  ::setenv("TLC_CACHE_DIR", dir.path.c_str(), 1);
  ::unsetenv("TLC_CACHE");
  Program p = scaleRows(1024, 0.125);
  bool hit = true;
  auto t0 = std::chrono::steady_clock::now();
  tl::GPUBinary cold = tl::runtime::compileForGPUCached(p, "sm_90a", true, &hit);
  auto t1 = std::chrono::steady_clock::now();
  CHECK_FALSE(hit);
  tl::GPUBinary warm = tl::runtime::compileForGPUCached(p, "sm_90a", true, &hit);
  auto t2 = std::chrono::steady_clock::now();
  CHECK(hit);
  requireSame(cold, warm);
  std::optional<tl::GPUBinary> onDisk =
      KernelCache(dir.path.string()).load(KernelCache::key(p, "sm_90a"));
  REQUIRE(onDisk);
  requireSame(cold, *onDisk);
  std::printf("compile to PTX: cold %.1f ms, cached %.2f ms\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count());

  ::setenv("TLC_CACHE", "0", 1); // the bypass switch
  tl::runtime::compileForGPUCached(p, "sm_90a", true, &hit);
  CHECK_FALSE(hit);
  tl::runtime::compileForGPUCached(p, "sm_90a", /*useCache=*/false, &hit);
  CHECK_FALSE(hit);
  ::unsetenv("TLC_CACHE");
  ::unsetenv("TLC_CACHE_DIR");
}

TEST_CASE("tl::jit runs a program where it can (the CPU without a GPU)", "[cache]") {
  Program p = scaleRows(128, 0.5);
  std::unique_ptr<tl::runtime::Kernel> kernel = tl::jit(p);
  HostTensor x = tl::testing::randomTensor({128, 64}, f16, 7);
  std::vector<HostTensor> y = (*kernel)({&x});
  std::vector<float> expected = x.toFloat();
  for (float &v : expected)
    v *= 0.5f;
  tl::testing::checkClose("Y", y[0].toFloat(), expected, 1e-3, 1e-3);
  CHECK_THROWS_WITH((*kernel)({}), Catch::Matchers::Contains("takes 1 inputs"));
}
