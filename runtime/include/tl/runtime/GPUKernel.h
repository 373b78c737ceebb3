// A tl program compiled to PTX and loaded through the CUDA driver API.
// Light header.
#pragma once

#include "tl/Compiler/GPUCompiler.h"
#include "tl/runtime/CudaDriver.h"
#include "tl/runtime/Kernel.h"
#include "tl/runtime/KernelCache.h"

#include <mutex>
#include <vector>

namespace tl::runtime {

/// What a kernel for `arch` compiles for on this device: the device's arch
/// and its shared-memory limit when `arch` is empty or the device's own, else
/// `arch` and 0 (its table's limit, GPUCompiler.h). Throws CudaError without
/// a GPU.
struct DeviceTarget {
  std::string arch;
  std::int64_t sharedMemoryLimit = 0;
};
DeviceTarget deviceTarget(const std::string &arch);

class GPUKernel : public Kernel {
public:
  /// Compiles for the current device's architecture (or `arch`), through the
  /// on-disk cache unless `useCache` is false, and loads the module. Throws
  /// CudaError when there is no GPU.
  explicit GPUKernel(const ModuleHandle &program, const std::string &arch = "",
                     bool useCache = true);
  /// Loads an already compiled kernel (a header from `tlc --emit=header`).
  explicit GPUKernel(GPUBinary binary);

  /// Copies every argument to the device, launches, waits, and copies every
  /// argument back (inputs too: a kernel may accumulate into one, as dQ).
  void run(const std::vector<HostTensor *> &args) const override;
  /// Launches on tensors already on the device, queued on `stream`.
  void launch(const std::vector<DeviceTensor *> &args, CUstream stream = nullptr) const override;

  /// Times the kernel alone (arguments stay on the device): `warmup`
  /// launches, then the median of `repeats` CUDA-event timings, in ms, like
  /// TileLang's do_bench. The arguments' contents are left as the last
  /// launch made them.
  double benchmark(const std::vector<HostTensor *> &args, int warmup = 5,
                   int repeats = 20) const override;
  double benchmarkOnDevice(const std::vector<DeviceTensor *> &args, int warmup = 5,
                           int repeats = 20) const;

  const GPUBinary &binary() const { return binary_; }
  /// Whether the compiled kernel came from a cache (this process's or the disk's).
  bool cacheHit() const { return cacheHit_; }
  /// Whether the module was loaded from ptxas's cubin (else the driver JIT
  /// compiled the PTX).
  bool loadedCubin() const { return !binary_.cubin.empty(); }
  /// What makes this kernel slower than it could be (GPUBinary::warnings,
  /// and the driver JIT's notes when it compiled the PTX at load).
  const std::vector<std::string> &warnings() const { return binary_.warnings; }

private:
  void load();
  void launchPointers(std::vector<CUdeviceptr> pointers, CUstream stream) const;
  GPUBinary binary_;
  CudaDriver *driver_;
  CUfunction function_ = nullptr;
  bool cacheHit_ = false;
  /// The tensor maps of the last launch, and the addresses they describe.
  mutable std::mutex mapsMutex_;
  mutable std::vector<CUdeviceptr> mapsFor_;
  mutable std::vector<CudaDriver::TensorMap> maps_;
};

} // namespace tl::runtime
