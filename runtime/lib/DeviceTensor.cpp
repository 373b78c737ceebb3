// Device tensors and streams over the driver API.
#include "tl/runtime/DeviceTensor.h"

#include <algorithm>
#include <stdexcept>

namespace tl::runtime {
namespace {

void requireSame(const DeviceTensor &device, const HostTensor &host, const char *what) {
  if (device.shape() != host.shape() || device.dtype() != host.dtype())
    throw std::invalid_argument(std::string(what) + ": the device tensor is " +
                                toString(device.dtype()) + formatShape(device.shape()) +
                                ", the host tensor " + toString(host.dtype()) +
                                formatShape(host.shape()));
}

} // namespace

struct DeviceTensor::Allocation {
  CudaDriver *driver;
  CUdeviceptr pointer;
  Allocation(CudaDriver *driver, CUdeviceptr pointer) : driver(driver), pointer(pointer) {}
  ~Allocation() { driver->free(pointer); }
};

DeviceTensor::DeviceTensor(std::vector<std::int64_t> shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  CudaDriver &d = CudaDriver::require();
  pointer_ = d.allocate(bytes(), "a device tensor of " + formatShape(shape_));
  owner_ = std::make_shared<Allocation>(&d, pointer_);
  d.zero(pointer_, bytes());
}

DeviceTensor DeviceTensor::borrow(CUdeviceptr pointer, std::vector<std::int64_t> shape,
                                  DType dtype) {
  if (!pointer)
    throw std::invalid_argument("DeviceTensor::borrow: null device pointer");
  if (pointer % 16) // the kernels move 16-byte pieces (vector loads, cp.async)
    throw std::invalid_argument("DeviceTensor::borrow: the device pointer must be 16-byte "
                                "aligned; pass the storage's base, not an offset view");
  DeviceTensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.pointer_ = pointer;
  return t;
}

DeviceTensor DeviceTensor::fromHost(const HostTensor &host) {
  DeviceTensor t(host.shape(), host.dtype());
  t.copyFrom(host);
  return t;
}

void DeviceTensor::copyFrom(const HostTensor &host, CUstream stream) {
  requireSame(*this, host, "DeviceTensor::copyFrom");
  CudaDriver::require().copyToDevice(pointer_, host.data(), bytes(), stream);
}

void DeviceTensor::copyTo(HostTensor &host, CUstream stream) const {
  requireSame(*this, host, "DeviceTensor::copyTo");
  CudaDriver::require().copyToHost(host.data(), pointer_, bytes(), stream);
}

HostTensor DeviceTensor::toHost() const {
  HostTensor host(shape_, dtype_);
  copyTo(host);
  return host;
}

std::int64_t DeviceTensor::numel() const { return elementCount(shape_); }

std::size_t DeviceTensor::bytes() const {
  return static_cast<std::size_t>(numel()) * byteWidth(dtype_);
}

DeviceCopies::DeviceCopies(const std::vector<HostTensor *> &hosts) : hosts_(hosts) {
  tensors_.reserve(hosts.size()); // no reallocation: pointers_ stay valid
  for (HostTensor *host : hosts) {
    tensors_.push_back(DeviceTensor::fromHost(*host));
    pointers_.push_back(&tensors_.back());
  }
}

std::vector<DeviceTensor *> DeviceCopies::of(const std::vector<HostTensor *> &hosts) const {
  std::vector<DeviceTensor *> found;
  for (HostTensor *host : hosts) {
    auto at = std::find(hosts_.begin(), hosts_.end(), host);
    if (at == hosts_.end())
      throw std::invalid_argument("DeviceCopies::of: a host tensor that was not copied");
    found.push_back(pointers_[at - hosts_.begin()]);
  }
  return found;
}

void DeviceCopies::download() const {
  for (std::size_t i = 0; i < hosts_.size(); ++i)
    tensors_[i].copyTo(*hosts_[i]);
}

Stream::Stream() : driver_(&CudaDriver::require()) { stream_ = driver_->createStream(); }
Stream::~Stream() { driver_->destroyStream(stream_); } // never throws
void Stream::synchronize() const { driver_->synchronize(stream_, "a stream"); }

} // namespace tl::runtime
