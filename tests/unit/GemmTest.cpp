// kernels/gemm against a double-precision reference on random inputs, outputs
// poisoned with NaN before each run, on the backend of the test binary: on
// sm_90a the wgmma path (every configuration here is wgmma-eligible), on
// sm_80 mma.sync, in CI the CPU backend. A seeded random sweep covers shapes
// nobody tuned on (TLC_GEMM_SEED to draw others).
#include "Backend.h"
#include "Numerics.h"
#include "TwoGemms.h"

#include "gemm/gemm.h"
#include "tl/runtime/GPUKernel.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

using namespace tl::dsl;
using tl::kernels::gemm::GemmConfig;
using tl::runtime::HostTensor;
using tl::testing::checkClose;
using tl::testing::randomTensor;

namespace {

bool onGPU() { return tl::testing::backend() == tl::kernels::mha::Backend::gpu; }

void checkGemm(int M, int N, int K, DType in, DType out, bool ta, bool tb, const GemmConfig &c,
               std::uint32_t seed) {
  INFO("gemm M=" << M << " N=" << N << " K=" << K << " in=" << (in == bf16 ? "bf16" : "f16")
                 << " out=" << int(out) << " ta=" << ta << " tb=" << tb << " config " << c.block_M
                 << "x" << c.block_N << "x" << c.block_K << "/" << c.threads << "/s" << c.num_stages
                 << " seed " << seed);
  Program p = tl::kernels::gemm::gemm(M, N, K, in, out, ta, tb, c);
  HostTensor a = randomTensor(
      ta ? std::vector<std::int64_t>{K, M} : std::vector<std::int64_t>{M, K}, in, seed);
  HostTensor b = randomTensor(
      tb ? std::vector<std::int64_t>{N, K} : std::vector<std::int64_t>{K, N}, in, seed + 1);
  std::unique_ptr<tl::runtime::Kernel> kernel = tl::testing::compile(p);
  // On the GPU: no slow path reported by ptxas or the driver's JIT (spills,
  // serialised wgmma, setmaxnreg ignored).
  if (auto *gpu = dynamic_cast<tl::runtime::GPUKernel *>(kernel.get()))
    for (const std::string &warning : gpu->warnings())
      CHECK_FALSE(warning.starts_with("ptxas:"));
  std::vector<HostTensor> result = (*kernel)({&a, &b}, std::numeric_limits<float>::quiet_NaN());
  REQUIRE(result.size() == 1);
  std::vector<float> expected = tl::testing::referenceGemm(a, b, M, N, K, ta, tb);
  // f32 accumulation over K terms of unit variance: error ~ sqrt(K) ulps of
  // f32; the output type's rounding on top.
  double tolerance = out == f32 ? 1e-4 : out == f16 ? 2e-3 : 1e-2;
  CHECK(checkClose("C", result[0].toFloat(), expected, tolerance, tolerance * std::sqrt(K)));
}

} // namespace

TEST_CASE("gemm kernel: transposes, dtypes, ragged edges", "[gemm]") {
  // Each wgmma operand layout: 128-, 64- and 32-byte atoms, K- and MN-major.
  const GemmConfig configs[] = {{64, 64, 32, 128, 2}, {64, 128, 16, 128, 2}, {128, 64, 64, 128, 3}};
  const int M = onGPU() ? 300 : 70, N = onGPU() ? 200 : 72, K = onGPU() ? 190 : 40;
  std::uint32_t seed = 1;
  for (const GemmConfig &c : configs)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        checkGemm(M, N, K, f16, f32, ta, tb, c, seed++);
  for (DType in : {f16, bf16})
    checkGemm(M, N, K, in, in, false, false, configs[0], seed++);
}

TEST_CASE("gemm kernel: TMA loads and stores, a producer warpgroup, ragged M and N", "[gemm]") {
  // K % 8 == 0: rows TMA can stride, so on sm_90a every configuration loads
  // by TMA (boxes past M or N read zeros); those whose tiles take more than
  // half the shared memory with a producer warpgroup (one consumer
  // warpgroup, and two that take the producer's registers), the last one
  // without.
  // The last two write C through a shared tile: a TMA store on sm_90a, its
  // boxes clipped at M and N.
  const GemmConfig configs[] = {{128, 128, 64, 128, 3},       {128, 256, 64, 256, 3},
                                {64, 128, 64, 128, 4},        {128, 128, 32, 128, 2},
                                {128, 256, 64, 256, 3, true}, {128, 128, 64, 128, 4, true}};
  const int M = onGPU() ? 300 : 70, N = onGPU() ? 264 : 40, K = onGPU() ? 200 : 48;
  std::uint32_t seed = 300;
  for (const GemmConfig &c : configs)
    for (bool transposed : {false, true})
      checkGemm(M, N, K, seed % 2 ? bf16 : f16, f16, transposed, transposed, c, seed++);
}

TEST_CASE("gemm kernel: the benchmark's configurations", "[gemm]") {
  // One and two warpgroups, N chunks of 256 (a 256-wide tile per warpgroup).
  const GemmConfig configs[] = {{128, 128, 64, 128, 3},
                                {128, 256, 64, 256, 3},
                                {128, 128, 32, 128, 3},
                                {128, 256, 64, 128, 2},
                                {256, 128, 64, 256, 3}};
  std::uint32_t seed = 100;
  const int M = onGPU() ? 1000 : 260, N = onGPU() ? 520 : 264, K = onGPU() ? 333 : 72;
  for (const GemmConfig &c : configs)
    for (DType in : {f16, bf16})
      checkGemm(M, N, K, in, in, false, false, c, seed++);
  checkGemm(onGPU() ? 512 : 256, 512, onGPU() ? 512 : 64, f16, f16, true, true, configs[1], seed++);
}

TEST_CASE("gemm kernel: use_swizzle reorders the blocks, every tile still written", "[gemm]") {
  // Panels of 1, 2, 3 and 5 block rows over 3 x 5 (GPU: 9 x 5) tiles: the
  // last panel is short, and the poisoned output shows any tile missed.
  const int M = onGPU() ? 1100 : 150, N = onGPU() ? 600 : 300, K = onGPU() ? 128 : 32;
  std::uint32_t seed = 700;
  for (int panel : {1, 2, 3, 5})
    checkGemm(M, N, K, f16, f16, false, false,
              onGPU() ? GemmConfig{128, 128, 64, 128, 3, panel % 2 == 1, panel}
                      : GemmConfig{64, 64, 32, 128, 2, false, panel},
              seed++);
}

TEST_CASE("a pipelined gemm loop inside a serial loop (TMA mbarriers set up each round)",
          "[gemm]") {
  // C = rounds * A B, the K loop run once per round: on sm_90a its TMA
  // mbarriers are initialised, used and invalidated every round.
  const int M = 200, N = 136, K = 320, rounds = 3;
  Program p("rounds");
  Buffer A = p.tensor("A", {M, K}, f16);
  Buffer B = p.tensor("B", {K, N}, f16);
  Buffer C = p.output("C", {M, N}, f32);
  p.kernel({ceildiv(N, 128), ceildiv(M, 128)}, 128, [&](Expr bx, Expr by) {
    Buffer As = alloc_shared({128, 64}, f16);
    Buffer Bs = alloc_shared({64, 128}, f16);
    Buffer acc = alloc_fragment({128, 128}, f32);
    clear(acc);
    serial(rounds, [&](Expr) {
      pipelined(ceildiv(K, 64), 3, [&](Expr k) {
        copy(A(slice(by * 128, 128), slice(k * 64, 64)), As);
        copy(B(slice(k * 64, 64), slice(bx * 128, 128)), Bs);
        gemm(As, Bs, acc);
      });
    });
    copy(acc, C(slice(by * 128, 128), slice(bx * 128, 128)));
  });
  HostTensor a = randomTensor({M, K}, f16, 950), b = randomTensor({K, N}, f16, 951);
  std::unique_ptr<tl::runtime::Kernel> kernel = tl::testing::compile(p);
  if (auto *gpu = dynamic_cast<tl::runtime::GPUKernel *>(kernel.get());
      gpu && gpu->binary().arch == "sm_90a")
    CHECK(gpu->binary().ptx.find("mbarrier.inval") != std::string::npos);
  std::vector<HostTensor> c = (*kernel)({&a, &b}, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> expected = tl::testing::referenceGemm(a, b, M, N, K, false, false);
  for (float &x : expected)
    x *= rounds;
  CHECK(checkClose("C", c[0].toFloat(), expected, 1e-4, 1e-4 * std::sqrt(rounds * K)));
}

TEST_CASE("gemm kernel: 64-row blocks in two warpgroups (wgmma splits N between them)", "[gemm]") {
  // 256 threads on 64-row blocks: on sm_90a the two warpgroups split each
  // block's columns (FragmentLayout.h). A K-major B (trans_B) splits at any
  // 8 columns; an MN-major one at its swizzle atom's 64, so 64x64 blocks of
  // an MN-major B stay on mma.sync. Transposed A, ragged M and N.
  struct Case {
    GemmConfig config;
    bool tb, wgmma;
  };
  const Case cases[] = {{{64, 128, 64, 256, 2}, false, true},
                        {{64, 128, 64, 256, 2}, true, true},
                        {{64, 256, 32, 256, 3}, false, true},
                        {{64, 64, 32, 256, 2}, true, true},
                        {{64, 64, 32, 256, 2}, false, false}};
  const int M = onGPU() ? 200 : 70, N = onGPU() ? 300 : 72, K = onGPU() ? 160 : 64;
  std::uint32_t seed = 700;
  for (const Case &c : cases)
    for (bool ta : {false, true}) {
      if (onGPU()) { // the layout the split gives, before the numbers
        auto kernel =
            tl::testing::compile(tl::kernels::gemm::gemm(M, N, K, f16, f32, ta, c.tb, c.config));
        if (auto *gpu = dynamic_cast<tl::runtime::GPUKernel *>(kernel.get());
            gpu && gpu->binary().arch == "sm_90a") {
          INFO("config " << c.config.block_M << "x" << c.config.block_N << " tb=" << c.tb);
          CHECK(gpu->binary().fragmentLayout == (c.wgmma ? "wgmma" : "mma"));
        }
      }
      checkGemm(M, N, K, f16, f32, ta, c.tb, c.config, seed++);
    }
}

TEST_CASE("gemm with A from registers (attention's P V): RS wgmma on sm_90a", "[gemm]") {
  struct Case {
    int M, N, D, bM, threads;
    DType dtype;
  };
  // One warpgroup with one and two 64-row blocks, two warpgroups; N and D
  // of 64 and 128 (A's k steps, B's N chunk); ragged M.
  const Case cases[] = {{200, 64, 64, 64, 128, f16},
                        {200, 128, 64, 64, 128, bf16},
                        {300, 64, 128, 128, 256, f16},
                        {130, 128, 128, 128, 256, bf16}};
  std::uint32_t seed = 900;
  for (const Case &c : cases) {
    INFO("M=" << c.M << " N=" << c.N << " D=" << c.D << " bM=" << c.bM << " threads=" << c.threads
              << " bf16=" << (c.dtype == bf16));
    HostTensor q = randomTensor({c.M, c.D}, c.dtype, seed++);
    HostTensor k = randomTensor({c.N, c.D}, c.dtype, seed++, 0.125f);
    HostTensor v = randomTensor({c.N, c.D}, c.dtype, seed++);
    std::unique_ptr<tl::runtime::Kernel> kernel =
        tl::testing::compile(tl::testing::twoGemms(c.M, c.N, c.D, c.dtype, c.bM, c.threads));
    if (auto *gpu = dynamic_cast<tl::runtime::GPUKernel *>(kernel.get());
        gpu && gpu->binary().arch == "sm_90a") {
      CHECK(gpu->binary().fragmentLayout == "wgmma");
      CHECK(gpu->binary().ptx.find("}, {%r") != std::string::npos); // A in registers
      for (const std::string &warning : gpu->warnings())
        CHECK_FALSE(warning.starts_with("ptxas:"));
    }
    std::vector<HostTensor> o = (*kernel)({&q, &k, &v}, std::numeric_limits<float>::quiet_NaN());
    // The reference rounds P to the input type, as the kernel does.
    std::vector<float> s = tl::testing::referenceGemm(q, k, c.M, c.N, c.D, false, true);
    HostTensor p({c.M, c.N}, c.dtype);
    for (std::int64_t i = 0; i < p.numel(); ++i)
      p.set(i, s[static_cast<std::size_t>(i)]);
    std::vector<float> expected = tl::testing::referenceGemm(p, v, c.M, c.D, c.N, false, false);
    CHECK(checkClose("O", o[0].toFloat(), expected, 1e-2, 1e-2 * std::sqrt(c.N)));
  }
}

TEST_CASE("gemm kernel: seeded random shapes", "[gemm]") {
  const char *chosen = std::getenv("TLC_GEMM_SEED");
  std::uint32_t seed = chosen ? static_cast<std::uint32_t>(std::stoul(chosen)) : 20261201;
  std::mt19937 rng(seed);
  const GemmConfig configs[] = {{64, 64, 32, 128, 2},
                                {128, 128, 64, 128, 3},
                                {128, 256, 64, 256, 3},
                                {128, 128, 32, 128, 3},
                                {64, 128, 16, 128, 2}};
  int count = onGPU() ? 24 : 4, most = onGPU() ? 1500 : 90;
  std::uniform_int_distribution<int> extent(1, most), pick(0, 4), coin(0, 1);
  for (int i = 0; i < count; ++i) {
    const GemmConfig &c = onGPU() ? configs[pick(rng)] : configs[0];
    DType in = coin(rng) ? bf16 : f16;
    int M = extent(rng), N = extent(rng), K = extent(rng);
    bool ta = coin(rng), tb = coin(rng);
    checkGemm(M, N, K, in, coin(rng) ? in : f32, ta, tb, c, seed + 1000 + i);
  }
}
