// A tensor in GPU memory: owning (allocated, zeroed, freed with its last
// copy) or borrowed (an application's or framework's own CUdeviceptr, never
// freed here). Row-major, like HostTensor. Light header.
//
//   DeviceTensor q = DeviceTensor::fromHost(hostQ);            // owning copy
//   DeviceTensor k = DeviceTensor::borrow(ptr, shape, f16);    // theirs
//   std::vector<DeviceTensor> o_lse = kernel->callOnDevice({&q, &k, &v}, stream);
#pragma once

#include "tl/Support/DType.h"
#include "tl/runtime/CudaDriver.h"
#include "tl/runtime/HostTensor.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tl::runtime {

class DeviceTensor {
public:
  DeviceTensor() = default;
  /// Allocates zeroed GPU memory. Throws CudaError where there is no GPU.
  DeviceTensor(std::vector<std::int64_t> shape, DType dtype);
  /// Wraps `pointer` (16-byte aligned, holding the whole tensor) without
  /// owning it.
  static DeviceTensor borrow(CUdeviceptr pointer, std::vector<std::int64_t> shape, DType dtype);
  /// An owning copy of `host` (synchronous).
  static DeviceTensor fromHost(const HostTensor &host);

  /// Copies from / to host memory of the same shape and dtype (synchronous
  /// without a stream; with one, ordered on it; host memory must then stay
  /// alive until the stream reaches the copy).
  void copyFrom(const HostTensor &host, CUstream stream = nullptr);
  void copyTo(HostTensor &host, CUstream stream = nullptr) const;
  HostTensor toHost() const;

  CUdeviceptr pointer() const { return pointer_; }
  bool owning() const { return static_cast<bool>(owner_); }
  const std::vector<std::int64_t> &shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  std::int64_t numel() const;
  std::size_t bytes() const;

private:
  std::vector<std::int64_t> shape_;
  DType dtype_ = DType::f32;
  CUdeviceptr pointer_ = 0;
  struct Allocation;
  std::shared_ptr<Allocation> owner_; // frees the allocation (owning tensors only)
};

/// Owning device copies of host tensors, made in order (synchronous), for
/// launches on the device: GPUKernel::run's, the autotuner's and the
/// benchmarks' arguments.
class DeviceCopies {
public:
  explicit DeviceCopies(const std::vector<HostTensor *> &hosts);
  DeviceCopies(const DeviceCopies &) = delete; // pointers() point into this object
  DeviceCopies &operator=(const DeviceCopies &) = delete;
  /// The copies, in the order of the host tensors.
  const std::vector<DeviceTensor *> &pointers() const { return pointers_; }
  /// The copies of some of the host tensors, in the order given; throws
  /// std::invalid_argument for a host tensor that was not copied.
  std::vector<DeviceTensor *> of(const std::vector<HostTensor *> &hosts) const;
  /// Copies every tensor back to its host tensor.
  void download() const;

private:
  std::vector<HostTensor *> hosts_;
  std::vector<DeviceTensor> tensors_;
  std::vector<DeviceTensor *> pointers_;
};

/// A CUDA stream, destroyed with this object.
class Stream {
public:
  Stream();
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  CUstream get() const { return stream_; }
  operator CUstream() const { return stream_; }
  /// Waits for everything queued on the stream.
  void synchronize() const;

private:
  CudaDriver *driver_;
  CUstream stream_ = nullptr;
};

} // namespace tl::runtime
