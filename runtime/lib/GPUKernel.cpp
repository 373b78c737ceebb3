// GPU kernels: PTX from the compiler, loaded and launched through the driver.
#include "tl/runtime/GPUKernel.h"

#include "tl/Compiler/CrashHandler.h"
#include "tl/runtime/TensorMaps.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace tl::runtime {
namespace {

/// The author hears of a slow path once per kernel and process, on stderr,
/// unless TLC_WARNINGS=0.
void reportWarnings(const GPUBinary &binary) {
  const char *setting = std::getenv("TLC_WARNINGS");
  if (binary.warnings.empty() || (setting && std::string(setting) == "0"))
    return;
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string &warning : binary.warnings)
    if (reported.insert(binary.name + ": " + warning).second)
      std::fprintf(stderr, "tlc: warning: %s: %s\n", binary.name.c_str(), warning.c_str());
}

} // namespace

DeviceTarget deviceTarget(const std::string &arch) {
  // For this device, its own shared-memory limit; for another arch, the
  // table's (GPUCompiler.h).
  CudaDriver &driver = CudaDriver::require();
  if (arch.empty() || arch == driver.arch())
    return {driver.arch(), driver.maxSharedPerBlock()};
  return {arch, 0};
}

GPUKernel::GPUKernel(const ModuleHandle &program, const std::string &arch, bool useCache)
    : Kernel(program), driver_(&CudaDriver::require()) {
  installCrashHandlerUnlessDisabled();
  DeviceTarget target = deviceTarget(arch);
  binary_ =
      compileForGPUCached(program, target.arch, useCache, &cacheHit_, target.sharedMemoryLimit);
  load();
}

GPUKernel::GPUKernel(GPUBinary binary)
    : Kernel(binary.name, binary.params), binary_(std::move(binary)),
      driver_(&CudaDriver::require()) {
  load();
}

void GPUKernel::load() {
  CUmodule module = nullptr;
  if (!binary_.cubin.empty()) {
    try {
      module = driver_->loadModule(binary_.cubin, binary_.name);
    } catch (const CudaError &) {
      // A cubin for another architecture (a header built for sm_80 run on a
      // newer GPU, say): the PTX still loads through the driver's JIT.
      binary_.cubin.clear();
    }
  }
  if (!module) {
    std::string report;
    module = driver_->loadModule(binary_.ptx, binary_.name, &report);
    for (std::string &note : slowPathNotes(report))
      if (std::find(binary_.warnings.begin(), binary_.warnings.end(), note) ==
          binary_.warnings.end())
        binary_.warnings.push_back(std::move(note));
  }
  function_ = driver_->function(module, binary_.name);
  reportWarnings(binary_);
  // Opt in to the dynamic shared memory the kernel needs: above 48 KB (with
  // the module's own static bytes) a launch without it fails.
  if (binary_.sharedBytes > 0)
    driver_->setDynamicShared(function_, static_cast<int>(binary_.sharedBytes), binary_.name);
}

void GPUKernel::run(const std::vector<HostTensor *> &args) const {
  checkArguments(args);
  DeviceCopies device(args);
  launch(device.pointers());
  driver_->synchronize(name());
  device.download();
}

void GPUKernel::launch(const std::vector<DeviceTensor *> &args, CUstream stream) const {
  checkArguments(args);
  std::vector<CUdeviceptr> pointers;
  for (DeviceTensor *arg : args)
    pointers.push_back(arg->pointer());
  launchPointers(std::move(pointers), stream);
}

void GPUKernel::launchPointers(std::vector<CUdeviceptr> pointers, CUstream stream) const {
  std::vector<void *> params;
  for (CUdeviceptr &pointer : pointers)
    params.push_back(&pointer);
  // TMA descriptors by value after the tensors, encoded again only when the
  // tensors' addresses change (timed launches repeat the same ones).
  std::vector<CudaDriver::TensorMap> maps;
  if (!binary_.tensorMaps.empty()) {
    std::lock_guard<std::mutex> lock(mapsMutex_);
    if (mapsFor_ != pointers) {
      maps_ = encodeTensorMaps(*driver_, binary_, pointers);
      mapsFor_ = pointers;
    }
    maps = maps_;
  }
  for (CudaDriver::TensorMap &map : maps)
    params.push_back(&map);
  unsigned grid[3] = {1, 1, 1};
  for (std::size_t d = 0; d < binary_.grid.size(); ++d)
    grid[d] = static_cast<unsigned>(binary_.grid[d]);
  driver_->launch(function_, grid, static_cast<unsigned>(binary_.threads),
                  static_cast<unsigned>(binary_.sharedBytes), params.data(), name(), stream);
}

double GPUKernel::benchmark(const std::vector<HostTensor *> &args, int warmup, int repeats) const {
  checkArguments(args);
  DeviceCopies device(args);
  double ms = benchmarkOnDevice(device.pointers(), warmup, repeats);
  device.download();
  return ms;
}

double GPUKernel::benchmarkOnDevice(const std::vector<DeviceTensor *> &args, int warmup,
                                    int repeats) const {
  checkArguments(args); // once: the timed launches skip it
  std::vector<CUdeviceptr> pointers;
  for (DeviceTensor *arg : args)
    pointers.push_back(arg->pointer());
  for (int i = 0; i < warmup; ++i)
    launchPointers(pointers, nullptr);
  CUevent start = driver_->createEvent(), stop = driver_->createEvent();
  std::vector<double> times;
  for (int i = 0; i < std::max(repeats, 1); ++i) {
    driver_->record(start);
    launchPointers(pointers, nullptr);
    driver_->record(stop);
    times.push_back(driver_->elapsed(start, stop));
  }
  driver_->destroyEvent(start);
  driver_->destroyEvent(stop);
  driver_->synchronize(name());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace tl::runtime
