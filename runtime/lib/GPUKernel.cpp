// GPU kernels: PTX from the compiler, loaded and launched through the driver.
#include "tl/runtime/GPUKernel.h"

#include <algorithm>

namespace tl::runtime {
namespace {

CudaDriver *requireDriver() {
  std::string why;
  CudaDriver *driver = CudaDriver::get(&why);
  if (!driver)
    throw CudaError("no GPU: " + why);
  return driver;
}

/// Device copies of a run's arguments (uploaded on construction, copied back
/// by download()), freed when the run ends.
struct DeviceArguments {
  CudaDriver &driver;
  const std::vector<HostTensor *> &args;
  std::vector<CUdeviceptr> pointers;
  DeviceArguments(CudaDriver &driver, const std::vector<HostTensor *> &args,
                  const std::string &kernel)
      : driver(driver), args(args) {
    for (HostTensor *arg : args) {
      pointers.push_back(driver.allocate(arg->bytes(), kernel + " argument"));
      driver.copyToDevice(pointers.back(), arg->data(), arg->bytes());
    }
  }
  void download() {
    for (std::size_t i = 0; i < args.size(); ++i)
      driver.copyToHost(args[i]->data(), pointers[i], args[i]->bytes());
  }
  ~DeviceArguments() {
    for (CUdeviceptr p : pointers)
      driver.free(p);
  }
};

} // namespace

GPUKernel::GPUKernel(const dsl::Program &program, const std::string &arch, bool useCache)
    : Kernel(program), driver_(requireDriver()) {
  binary_ = compileForGPUCached(program, arch.empty() ? driver_->arch() : arch, useCache,
                                &cacheHit_);
  load();
}

GPUKernel::GPUKernel(GPUBinary binary)
    : Kernel(binary.name, binary.params), binary_(std::move(binary)),
      driver_(requireDriver()) {
  load();
}

void GPUKernel::load() {
  CUmodule module = driver_->loadPTX(binary_.ptx, binary_.name);
  function_ = driver_->function(module, binary_.name);
  // Opt in to the dynamic shared memory the kernel needs: above 48 KB (with
  // the module's own static bytes) a launch without it fails.
  if (binary_.sharedBytes > 0)
    driver_->setDynamicShared(function_, static_cast<int>(binary_.sharedBytes),
                              binary_.name);
}

void GPUKernel::run(const std::vector<HostTensor *> &args) const {
  checkArguments(args);
  DeviceArguments device(*driver_, args, name());
  launch(device.pointers);
  driver_->synchronize(name());
  device.download();
}

void GPUKernel::launch(std::vector<CUdeviceptr> &pointers) const {
  std::vector<void *> params;
  for (CUdeviceptr &pointer : pointers)
    params.push_back(&pointer);
  unsigned grid[3] = {1, 1, 1};
  for (std::size_t d = 0; d < binary_.grid.size(); ++d)
    grid[d] = static_cast<unsigned>(binary_.grid[d]);
  driver_->launch(function_, grid, static_cast<unsigned>(binary_.threads),
                  static_cast<unsigned>(binary_.sharedBytes), params.data(), name());
}

double GPUKernel::benchmark(const std::vector<HostTensor *> &args, int warmup,
                            int repeats) const {
  checkArguments(args);
  DeviceArguments device(*driver_, args, name());
  for (int i = 0; i < warmup; ++i)
    launch(device.pointers);
  CUevent start = driver_->createEvent(), stop = driver_->createEvent();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    driver_->record(start);
    launch(device.pointers);
    driver_->record(stop);
    times.push_back(driver_->elapsed(start, stop));
  }
  driver_->destroyEvent(start);
  driver_->destroyEvent(stop);
  driver_->synchronize(name());
  device.download();
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace tl::runtime
