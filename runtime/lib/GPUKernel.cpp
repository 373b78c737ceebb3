// GPU kernels: PTX from the compiler, loaded and launched through the driver.
#include "tl/runtime/GPUKernel.h"

namespace tl::runtime {
namespace {

CudaDriver *requireDriver() {
  std::string why;
  CudaDriver *driver = CudaDriver::get(&why);
  if (!driver)
    throw CudaError("no GPU: " + why);
  return driver;
}

/// Device copies of a run's arguments, freed when the run ends.
struct DeviceArguments {
  CudaDriver &driver;
  std::vector<CUdeviceptr> pointers;
  ~DeviceArguments() {
    for (CUdeviceptr p : pointers)
      driver.free(p);
  }
};

} // namespace

GPUKernel::GPUKernel(const dsl::Program &program, const std::string &arch)
    : Kernel(program), driver_(requireDriver()) {
  binary_ = compileForGPU(program, arch.empty() ? driver_->arch() : arch);
  CUmodule module = driver_->loadPTX(binary_.ptx, binary_.name);
  function_ = driver_->function(module, binary_.name);
  if (binary_.sharedBytes > 48 * 1024)
    driver_->setDynamicShared(function_, static_cast<int>(binary_.sharedBytes),
                              binary_.name);
}

void GPUKernel::run(const std::vector<HostTensor *> &args) const {
  checkArguments(args);
  DeviceArguments device{*driver_, {}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    device.pointers.push_back(
        driver_->allocate(args[i]->bytes(), name() + " argument '" + params()[i].name + "'"));
    driver_->copyToDevice(device.pointers.back(), args[i]->data(), args[i]->bytes());
  }
  std::vector<void *> params;
  for (CUdeviceptr &pointer : device.pointers)
    params.push_back(&pointer);
  unsigned grid[3] = {1, 1, 1};
  for (std::size_t d = 0; d < binary_.grid.size(); ++d)
    grid[d] = static_cast<unsigned>(binary_.grid[d]);
  driver_->launch(function_, grid, static_cast<unsigned>(binary_.threads),
                  static_cast<unsigned>(binary_.sharedBytes), params.data(), name());
  driver_->synchronize(name());
  for (std::size_t i = 0; i < args.size(); ++i)
    driver_->copyToHost(args[i]->data(), device.pointers[i], args[i]->bytes());
}

} // namespace tl::runtime
