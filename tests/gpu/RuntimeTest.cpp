// The runtime on the GPU: device tensors (owning and borrowed), streams,
// out_idx on the device, signature checks, and modules from ptxas's cubin
// and the driver's PTX JIT, and launch sequences timed as the peers are.
#include "Numerics.h"

#include "tl/Compiler/Ptxas.h"
#include "tl/dsl.h"
#include "tl/runtime/DeviceTensor.h"
#include "tl/runtime/GPUKernel.h"
#include "tl/runtime/QueuedTiming.h"

#include <cstdlib>

using namespace tl::dsl;
using tl::runtime::CudaDriver;
using tl::runtime::DeviceTensor;
using tl::runtime::GPUKernel;
using tl::runtime::HostTensor;
using tl::testing::checkClose;
using tl::testing::randomTensor;

namespace {

/// Y = 2 X + Z (out_idx = [2]).
Program axpy() {
  Program p("axpy");
  Buffer X = p.tensor("X", {256, 64}, f32);
  Buffer Z = p.tensor("Z", {256, 64}, f32);
  Buffer Y = p.output("Y", {256, 64}, f32);
  p.kernel({4}, 128, [&](Expr bx) {
    Buffer x = alloc_fragment({64, 64}, f32), z = alloc_fragment({64, 64}, f32);
    copy(X(slice(bx * 64, 64), all), x);
    copy(Z(slice(bx * 64, 64), all), z);
    parallel({64, 64}, [&](Expr i, Expr j) { x(i, j) = x(i, j) * 2.0 + z(i, j); });
    copy(x, Y(slice(bx * 64, 64), all));
  });
  return p;
}

std::vector<float> expectedAxpy(const HostTensor &x, const HostTensor &z) {
  std::vector<float> y(x.numel());
  for (std::int64_t i = 0; i < x.numel(); ++i)
    y[i] = 2 * x.at(i) + z.at(i);
  return y;
}

} // namespace

TEST_CASE("device tensors: owning copies, zeroed allocation, host round trip", "[runtime]") {
  HostTensor x = randomTensor({3, 5, 7}, f16, 1);
  DeviceTensor d = DeviceTensor::fromHost(x);
  CHECK(d.owning());
  CHECK(d.bytes() == x.bytes());
  checkClose("round trip", d.toHost().toFloat(), x.toFloat(), 0, 0);
  DeviceTensor zeros({4, 4}, f32);
  checkClose("zeroed", zeros.toHost().toFloat(), std::vector<float>(16, 0.0f), 0, 0);
  HostTensor wrong({4, 5}, f32);
  CHECK_THROWS_WITH(zeros.copyTo(wrong), Catch::Contains("f32[4, 5]"));
}

TEST_CASE("a kernel launches on device tensors on a stream, owning and borrowed", "[runtime]") {
  GPUKernel kernel(axpy());
  HostTensor x = randomTensor({256, 64}, f32, 2), z = randomTensor({256, 64}, f32, 3);
  tl::runtime::Stream stream;

  // out_idx on the device: the output is allocated and returned.
  DeviceTensor dx = DeviceTensor::fromHost(x), dz = DeviceTensor::fromHost(z);
  std::vector<DeviceTensor> out = kernel.callOnDevice({&dx, &dz}, stream);
  stream.synchronize();
  REQUIRE(out.size() == 1);
  checkClose("Y", out[0].toHost().toFloat(), expectedAxpy(x, z), 0, 1e-6);

  // The application's own allocation, borrowed: written in place, not freed.
  CudaDriver &driver = *CudaDriver::get();
  tl::runtime::CUdeviceptr own = driver.allocate(x.bytes(), "the application's Y");
  {
    DeviceTensor borrowed = DeviceTensor::borrow(own, {256, 64}, f32);
    CHECK_FALSE(borrowed.owning());
    kernel.launch({&dx, &dz, &borrowed}, stream);
  }
  stream.synchronize();
  HostTensor y({256, 64}, f32);
  driver.copyToHost(y.data(), own, y.bytes()); // still allocated: the tensor did not free it
  checkClose("Y (borrowed)", y.toFloat(), expectedAxpy(x, z), 0, 1e-6);
  driver.free(own);
}

TEST_CASE("device arguments are checked against the signature", "[runtime]") {
  GPUKernel kernel(axpy());
  DeviceTensor a({256, 64}, f32), b({256, 64}, f16), c({256, 64}, f32), small({8}, f32);
  CHECK_THROWS_WITH(kernel.launch({&a, &c}), Catch::Contains("takes 3 tensors, got 2"));
  CHECK_THROWS_WITH(kernel.launch({&a, &b, &c}),
                    Catch::Contains("argument 1 'Z' has dtype f16, expected f32"));
  CHECK_THROWS_WITH(kernel.callOnDevice({&a, &small}),
                    Catch::Contains("argument 1 'Z' has shape [8], expected [256, 64]"));
}

TEST_CASE("modules load from ptxas's cubin and from PTX through the driver JIT", "[runtime]") {
  HostTensor x = randomTensor({256, 64}, f32, 4), z = randomTensor({256, 64}, f32, 5);
  GPUKernel fromCache(axpy());
  if (tl::findPtxas().empty())
    WARN("no ptxas here: the cubin path is not exercised");
  else
    CHECK(fromCache.loadedCubin());
  ::setenv("TLC_PTXAS", "off", 1);
  GPUKernel jitted(axpy(), "", /*useCache=*/false);
  ::unsetenv("TLC_PTXAS");
  CHECK_FALSE(jitted.loadedCubin());
  for (GPUKernel *kernel : {&fromCache, &jitted})
    checkClose("Y", (*kernel)({&x, &z})[0].toFloat(), expectedAxpy(x, z), 0, 1e-6);
}

TEST_CASE("a launch sequence is timed as the peers are: cold L2, queued back to back",
          "[runtime]") {
  // Y = 2 X + Z, then W = 2 Y + Z: the second launch reads what the first
  // wrote (Y starts as zeros), so both ran by the time the timing returns.
  GPUKernel kernel(axpy());
  HostTensor x = randomTensor({256, 64}, f32, 6), z = randomTensor({256, 64}, f32, 7);
  DeviceTensor dx = DeviceTensor::fromHost(x), dz = DeviceTensor::fromHost(z);
  DeviceTensor dy({256, 64}, f32), dw({256, 64}, f32);
  tl::runtime::QueuedTimingOptions options{.warmup = 1, .minRepeats = 3, .maxRepeats = 10};
  double ms = tl::runtime::timeQueuedColdL2(
      {{&kernel, {&dx, &dz, &dy}}, {&kernel, {&dy, &dz, &dw}}}, options);
  CHECK(ms > 0);
  CHECK(ms < 100); // two launches of a 64 KB kernel
  std::vector<float> y = expectedAxpy(x, z), w(y.size());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = 2 * y[i] + z.at(static_cast<std::int64_t>(i));
  checkClose("W", dw.toHost().toFloat(), w, 0, 1e-5);
  // A bad argument is the launch's error, not a timing.
  DeviceTensor small({8}, f32);
  CHECK_THROWS_WITH(tl::runtime::timeQueuedColdL2({{&kernel, {&dx, &small, &dy}}}, options),
                    Catch::Contains("argument 1 'Z' has shape [8], expected [256, 64]"));
}
