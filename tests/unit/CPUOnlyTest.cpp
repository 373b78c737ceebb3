// Tests of the CPU backend that do not carry over to the GPU: host-thread
// semantics of local buffers, the signature checks, f16 conversion, and the
// runtime's host-side checks (the launch-sequence timer's arguments and
// repeat count, device copies' lookup).
#include "Numerics.h"

#include "tl/dsl.h"
#include "tl/runtime/CPUKernel.h"

#include "tl/runtime/DeviceTensor.h"
#include "tl/runtime/QueuedTiming.h"

#include <bit>
#include <limits>

using namespace tl::dsl;
using tl::runtime::CPUKernel;
using tl::runtime::HostTensor;
using tl::testing::checkClose;
using tl::testing::randomTensor;

TEST_CASE("pipelined and serial loops with device-side bounds", "[ops]") {
  // Row sums of X [3, 100] in tiles of 16 over a pipelined loop, and a serial
  // count of the tiles.
  const int R = 3, C = 100, T = 16;
  Program p("loops");
  Buffer X = p.tensor("X", {R, C}, f32);
  Buffer S = p.output("S", {R}, f32);
  Buffer N = p.output("N", {R}, f32);
  p.kernel({R}, 32, [&](Expr bx) {
    Buffer tile = alloc_fragment({T}, f32);
    Buffer sum = alloc_local({1}, f32), count = alloc_local({1}, f32);
    fill(sum, 0);
    fill(count, 0);
    pipelined(0, ceildiv(C, T), /*num_stages=*/2, [&](Expr k) {
      copy(X(bx, slice(k * T, T)), tile); // the last tile is partly past the end
      parallel({T}, [&](Expr i) { if_(k * T + i < C, [&] { sum(0) = sum(0) + tile(i); }); });
    });
    serial(ceildiv(C, T), [&](Expr) { count(0) += 1; });
    copy(sum, S(slice(bx, 1)));
    copy(count, N(slice(bx, 1)));
  });
  HostTensor x = randomTensor({R, C}, f32, 50);
  std::vector<HostTensor> out = CPUKernel(p)({&x});
  std::vector<float> sums;
  for (int r = 0; r < R; ++r) {
    double s = 0;
    for (int c = 0; c < C; ++c)
      s += x.at(r * C + c);
    sums.push_back(static_cast<float>(s));
  }
  checkClose("S", out[0].toFloat(), sums, 1e-5, 1e-4);
  checkClose("N", out[1].toFloat(), std::vector<float>(R, 7.0f), 0, 0);
}

TEST_CASE("arguments are checked against the program's signature", "[ops]") {
  Program p("sig");
  Buffer X = p.tensor("X", {4, 8}, f16);
  Buffer Y = p.output("Y", {4, 8}, f16);
  p.kernel({1}, 32, [&](Expr) { copy(X, Y); });
  CPUKernel kernel(p);
  HostTensor wrongShape({8, 4}, f16), wrongType({4, 8}, f32), good({4, 8}, f16);
  CHECK_THROWS_WITH(kernel({&wrongShape}),
                    Catch::Matchers::Contains("argument 0 'X' has shape [8, 4], expected [4, 8]"));
  CHECK_THROWS_WITH(kernel({&wrongType}),
                    Catch::Matchers::Contains("argument 0 'X' has dtype f32, expected f16"));
  CHECK_THROWS_WITH(kernel({&good, &good}),
                    Catch::Matchers::Contains("takes 1 inputs (the outputs are allocated), got 2"));
  CHECK_THROWS_WITH(kernel.run({&good}), Catch::Matchers::Contains("takes 2 tensors, got 1"));
  CHECK_NOTHROW(kernel({&good}));
  // Device tensors are for GPU kernels: the CPU backend says so.
  CHECK_THROWS_WITH(kernel.launch({}), Catch::Matchers::Contains("compiled for the CPU backend"));
  // Borrowed device pointers need no driver to wrap, and are checked.
  using tl::runtime::DeviceTensor;
  CHECK_THROWS_WITH(DeviceTensor::borrow(0, {4}, f32), Catch::Matchers::Contains("null"));
  CHECK_THROWS_WITH(DeviceTensor::borrow(0x1008, {4}, f32),
                    Catch::Matchers::Contains("16-byte aligned"));
  CHECK_FALSE(DeviceTensor::borrow(0x1000, {4}, f32).owning());
  if (!tl::runtime::CudaDriver::get()) // here, in CI: one clear error, no crash
    CHECK_THROWS_WITH(tl::runtime::DeviceTensor({4}, f32), Catch::Matchers::StartsWith("no GPU: "));
}

TEST_CASE("f16 conversion rounds to nearest even", "[ops]") {
  HostTensor t({6}, f16);
  const float in[] = {1.0f, 65504.0f, 65520.0f, 1e-8f, 6.0e-8f, -2.5e-5f};
  for (int i = 0; i < 6; ++i)
    t.set(i, in[i]);
  CHECK(t.at(0) == 1.0f);
  CHECK(t.at(1) == 65504.0f);
  CHECK(std::isinf(t.at(2)));
  CHECK(t.at(3) == 0.0f);
  CHECK(t.at(4) == std::ldexp(1.0f, -24));
  CHECK(std::fabs(t.at(5) + 2.5e-5f) < 1e-7f);
}

TEST_CASE("bf16 conversion rounds to nearest even; NaN stays NaN", "[ops]") {
  // The same rounding serves HostTensor and the CPU JIT's __truncsfbf2 (hosts
  // without AVX512-BF16; CopyTest's and GemmTest's bf16 cases run it there).
  HostTensor t({5}, bf16);
  const float tie = std::bit_cast<float>(0x3f808000u); // halfway: 1 + 2^-8
  const float above = std::bit_cast<float>(0x3f808001u);
  const float nan = std::bit_cast<float>(0x7fffffffu); // rounding would carry into the sign
  const float in[] = {1.0f, tie, above, nan, -std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 5; ++i)
    t.set(i, in[i]);
  CHECK(t.at(0) == 1.0f);
  CHECK(t.at(1) == 1.0f); // to even
  CHECK(t.at(2) == std::bit_cast<float>(0x3f810000u));
  CHECK(std::isnan(t.at(3)));
  CHECK(t.at(4) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("a program parsed from tl dialect text runs like a built one", "[ops]") {
  const char *text = R"(
func.func @scale(%X: memref<128x64xf16> {tl.name = "X"},
                 %Y: memref<128x64xf32> {tl.name = "Y", tl.output}) {
  tl.kernel grid [2] threads 128 {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %two = arith.constant 2.0 : f32
    %row = arith.muli %bx, %c64 : index
    %f = tl.alloc_fragment : memref<64x64xf32, #tl.scope<fragment>>
    tl.copy %X[%row, %c0] [64, 64] to %f[%c0, %c0] [64, 64] : memref<128x64xf16> to memref<64x64xf32, #tl.scope<fragment>>
    tl.parallel [64, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %f[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %f[%i, %j] : memref<64x64xf32, #tl.scope<fragment>>
    }
    tl.copy %f[%c0, %c0] [64, 64] to %Y[%row, %c0] [64, 64] : memref<64x64xf32, #tl.scope<fragment>> to memref<128x64xf32>
  }
  return
})";
  Program p = Program::parse(text, "scale.mlir");
  CHECK(p.name() == "scale");
  REQUIRE(p.params().size() == 2);
  CHECK(p.params()[0].name == "X");
  CHECK(p.params()[1].output);
  CPUKernel kernel(p);
  HostTensor x = randomTensor({128, 64}, f16, 60);
  std::vector<HostTensor> out = kernel({&x});
  std::vector<float> expected = x.toFloat();
  for (float &v : expected)
    v *= 2;
  checkClose("Y", out[0].toFloat(), expected, 0, 0);
  // Errors point into the text.
  CHECK_THROWS_WITH(Program::parse("func.func @f() {\n  tl.nope\n}", "bad.mlir"),
                    Catch::Matchers::StartsWith("bad.mlir:2:"));
}

TEST_CASE("on-chip buffers larger than a thread's default stack", "[ops]") {
  // A 4096 x 1024 f32 fragment is 16 MiB on the CPU backend (whole tiles on
  // the block's stack), twice a default thread stack; the verifier allows it
  // (16 KiB a thread at 1024 threads). Each worker gets a stack that holds it.
  const int R = 4096, C = 1024;
  Program p("big_fragment");
  Buffer Y = p.output("Y", {2, C}, f32);
  p.kernel({2}, 1024, [&](Expr bx) {
    Buffer acc = alloc_fragment({R, C}, f32);
    Buffer sums = alloc_fragment({C}, f32);
    parallel({R, C}, [&](Expr i, Expr j) { acc(i, j) = cast(i + j + bx, f32); });
    reduce_sum(acc, sums, /*dim=*/0);
    copy(sums, Y(bx, all));
  });
  std::vector<HostTensor> out = CPUKernel(p)({});
  for (int b = 0; b < 2; ++b)
    for (int j : {0, 1, 1023}) // sum over i of (i + j + b)
      CHECK(out[0].at(b * C + j) == float(double(R) * (R - 1) / 2 + double(R) * (j + b)));
}

TEST_CASE("out_idx outputs: zeros, or a fill that shows what no kernel writes", "[ops]") {
  Program p("half");
  Buffer Y = p.output("Y", {64}, f32);
  p.kernel({1}, 32, [&](Expr) {
    Buffer x = alloc_fragment({32}, f32);
    fill(x, 1);
    copy(x, Y(slice(0, 32))); // the second half is never written
  });
  CPUKernel kernel(p);
  std::vector<HostTensor> zeroed = kernel({});
  std::vector<HostTensor> poisoned = kernel({}, std::numeric_limits<float>::quiet_NaN());
  CHECK(zeroed[0].at(0) == 1.0f);
  CHECK(zeroed[0].at(63) == 0.0f);
  CHECK(poisoned[0].at(0) == 1.0f);
  CHECK(std::isnan(poisoned[0].at(63)));
}

TEST_CASE("in_turn: turns out of launch order end the launch with an error, not a hang", "[ops]") {
  // Block bx takes turn blocks - 1 - bx: the first blocks launched wait for
  // turns that only later blocks could pass on, and no worker is free to run
  // those. After ten seconds the wait gives up and the launch throws. (On the
  // GPU the wait traps, which ends the CUDA context: no GPU test of it.)
  const int blocks = 8;
  Program p("reversed_turns");
  Buffer Sum = p.tensor("Sum", {1}, f32);
  Buffer Turn = p.tensor("Turn", {1}, i32);
  p.kernel({blocks}, 32, [&](Expr bx) {
    in_turn(Turn(0), blocks - 1 - bx,
            [&] { parallel({1}, [&](Expr j) { atomic_add(Sum(j), 1.0); }); });
  });
  CPUKernel kernel(p);
  kernel.setThreads(2);
  HostTensor sum({1}, f32), turn({1}, i32);
  CHECK_THROWS_WITH(kernel.run({&sum, &turn}),
                    Catch::Contains("never came") && Catch::Contains("launch order"));
}

TEST_CASE("a launch sequence is repeated to fill the timing budget, within bounds", "[runtime]") {
  tl::runtime::QueuedTimingOptions options; // 100 ms, 10 to 1000 repeats
  CHECK(tl::runtime::queuedRepeats(5.0, options) == 20);
  CHECK(tl::runtime::queuedRepeats(3.0, options) == 34); // rounded up
  CHECK(tl::runtime::queuedRepeats(50.0, options) == 10);
  CHECK(tl::runtime::queuedRepeats(0.07, options) == 1000);
  CHECK(tl::runtime::queuedRepeats(0.0, options) == 1000); // no division by zero
  options.minRepeats = -3, options.maxRepeats = -5;        // at least one, never a bad clamp
  CHECK(tl::runtime::queuedRepeats(500.0, options) == 1);
  options.budgetMs = 1e12, options.maxRepeats = 2'000'000'000; // no int overflow
  CHECK(tl::runtime::queuedRepeats(1e-3, options) == 2'000'000'000);
}

TEST_CASE("a launch sequence to time must hold launches of kernels", "[runtime]") {
  // Checked before the driver is opened: the same error with a GPU and without.
  CHECK_THROWS_AS(tl::runtime::timeQueuedColdL2({}), std::invalid_argument);
  CHECK_THROWS_WITH(tl::runtime::timeQueuedColdL2({{nullptr, {}}}),
                    Catch::Contains("a launch without a kernel"));
}

TEST_CASE("device copies are found by their host tensor, or the lookup says it has none",
          "[runtime]") {
  // No copies, so no driver: the lookup's error is the same with a GPU and without.
  tl::runtime::DeviceCopies none({});
  CHECK(none.pointers().empty());
  HostTensor x({4}, f32);
  CHECK_THROWS_WITH(none.of({&x}), Catch::Contains("a host tensor that was not copied"));
}
