// The CUDA driver API through dlopen. Only the calls tl needs, with their
// documented C signatures (no cuda.h needed to build).
#include "tl/runtime/CudaDriver.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

namespace tl::runtime {

struct CudaDriver::Api {
  using Result = int;
  Result (*cuInit)(unsigned);
  Result (*cuDeviceGetCount)(int *);
  Result (*cuDeviceGet)(int *, int);
  Result (*cuDeviceGetAttribute)(int *, int, int);
  Result (*cuDevicePrimaryCtxRetain)(CUcontext *, int);
  Result (*cuCtxSetCurrent)(CUcontext);
  Result (*cuCtxSynchronize)();
  Result (*cuMemAlloc)(CUdeviceptr *, std::size_t);
  Result (*cuMemFree)(CUdeviceptr);
  Result (*cuMemcpyHtoD)(CUdeviceptr, const void *, std::size_t);
  Result (*cuMemcpyDtoH)(void *, CUdeviceptr, std::size_t);
  Result (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, std::size_t, CUstream);
  Result (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, std::size_t, CUstream);
  Result (*cuMemsetD8Async)(CUdeviceptr, unsigned char, std::size_t, CUstream);
  Result (*cuStreamCreate)(CUstream *, unsigned);
  Result (*cuStreamDestroy)(CUstream);
  Result (*cuStreamSynchronize)(CUstream);
  Result (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  Result (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  Result (*cuFuncSetAttribute)(CUfunction, int, int);
  Result (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void **, void **);
  Result (*cuEventCreate)(CUevent *, unsigned);
  Result (*cuEventDestroy)(CUevent);
  Result (*cuEventRecord)(CUevent, CUstream);
  Result (*cuEventSynchronize)(CUevent);
  Result (*cuEventElapsedTime)(float *, CUevent, CUevent);
  Result (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *, const std::uint64_t *,
                                   const std::uint64_t *, const unsigned *, const unsigned *, int,
                                   int, int, int) = nullptr; // CUDA 12 on; optional
  Result (*cuGetErrorName)(Result, const char **);
  Result (*cuGetErrorString)(Result, const char **);
};

namespace {
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;
constexpr int kMaxSharedPerBlockOptIn = 97; // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
constexpr int kMaxDynamicSharedBytes = 8;   // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kJitInfoLogBuffer = 3, kJitInfoLogBufferSize = 4; // CUjit_option
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6, kJitLogVerbose = 12;
} // namespace

bool CudaDriver::open(std::string &why) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why = "no CUDA driver (libcuda.so.1 not found)";
    return false;
  }
  api_ = new Api();
  bool missing = false;
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library, name));
    if (!fn) {
      why = std::string("the CUDA driver lacks ") + name;
      missing = true;
    }
  };
  bind(api_->cuInit, "cuInit");
  bind(api_->cuDeviceGetCount, "cuDeviceGetCount");
  bind(api_->cuDeviceGet, "cuDeviceGet");
  bind(api_->cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(api_->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(api_->cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(api_->cuCtxSynchronize, "cuCtxSynchronize");
  bind(api_->cuMemAlloc, "cuMemAlloc_v2");
  bind(api_->cuMemFree, "cuMemFree_v2");
  bind(api_->cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(api_->cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(api_->cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(api_->cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(api_->cuMemsetD8Async, "cuMemsetD8Async");
  bind(api_->cuStreamCreate, "cuStreamCreate");
  bind(api_->cuStreamDestroy, "cuStreamDestroy_v2");
  bind(api_->cuStreamSynchronize, "cuStreamSynchronize");
  bind(api_->cuModuleLoadDataEx, "cuModuleLoadDataEx");
  bind(api_->cuModuleGetFunction, "cuModuleGetFunction");
  bind(api_->cuFuncSetAttribute, "cuFuncSetAttribute");
  bind(api_->cuLaunchKernel, "cuLaunchKernel");
  bind(api_->cuEventCreate, "cuEventCreate");
  bind(api_->cuEventDestroy, "cuEventDestroy_v2");
  bind(api_->cuEventRecord, "cuEventRecord");
  bind(api_->cuEventSynchronize, "cuEventSynchronize");
  bind(api_->cuEventElapsedTime, "cuEventElapsedTime");
  api_->cuTensorMapEncodeTiled = reinterpret_cast<decltype(api_->cuTensorMapEncodeTiled)>(
      dlsym(library, "cuTensorMapEncodeTiled"));
  bind(api_->cuGetErrorName, "cuGetErrorName");
  bind(api_->cuGetErrorString, "cuGetErrorString");
  if (missing)
    return false;
  int count = 0;
  if (api_->cuInit(0) != 0 || api_->cuDeviceGetCount(&count) != 0 || count == 0) {
    why = "the CUDA driver reports no GPU";
    return false;
  }
  int device = 0;
  check(api_->cuDeviceGet(&device, 0), "cuDeviceGet", "device 0");
  check(api_->cuDeviceGetAttribute(&major_, kComputeCapabilityMajor, device),
        "cuDeviceGetAttribute", "compute capability");
  check(api_->cuDeviceGetAttribute(&minor_, kComputeCapabilityMinor, device),
        "cuDeviceGetAttribute", "compute capability");
  int sharedOptIn = 0;
  check(api_->cuDeviceGetAttribute(&sharedOptIn, kMaxSharedPerBlockOptIn, device),
        "cuDeviceGetAttribute", "the shared memory a block may opt in to");
  maxSharedPerBlock_ = sharedOptIn;
  check(api_->cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain", "device 0");
  check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent", "device 0");
  return true;
}

CudaDriver *CudaDriver::get(std::string *why) {
  static std::once_flag once;
  static CudaDriver *driver = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    auto *candidate = new CudaDriver();
    try {
      if (candidate->open(reason))
        driver = candidate;
    } catch (const CudaError &error) {
      reason = error.what();
    }
  });
  if (driver)
    driver->check(driver->api_->cuCtxSetCurrent(driver->context_), "cuCtxSetCurrent",
                  "this thread");
  if (!driver && why)
    *why = reason;
  return driver;
}

CudaDriver &CudaDriver::require() {
  std::string why;
  CudaDriver *driver = get(&why);
  if (!driver)
    throw CudaError("no GPU: " + why);
  return *driver;
}

void CudaDriver::check(int result, const char *call, const std::string &what) const {
  if (result == 0)
    return;
  const char *name = "?", *text = "?";
  if (api_ && api_->cuGetErrorName)
    api_->cuGetErrorName(result, &name);
  if (api_ && api_->cuGetErrorString)
    api_->cuGetErrorString(result, &text);
  throw CudaError(std::string(call) + " failed for " + what + ": " + name + " (" + text + ")");
}

std::string CudaDriver::arch() const {
  std::string arch = "sm_" + std::to_string(major_) + std::to_string(minor_);
  return major_ == 9 && minor_ == 0 ? arch + "a" : arch;
}

CUdeviceptr CudaDriver::allocate(std::size_t bytes, const std::string &what) {
  CUdeviceptr pointer = 0;
  check(api_->cuMemAlloc(&pointer, bytes ? bytes : 1), "cuMemAlloc", what);
  return pointer;
}

void CudaDriver::free(CUdeviceptr pointer) {
  if (pointer)
    api_->cuMemFree(pointer);
}

void CudaDriver::zero(CUdeviceptr pointer, std::size_t bytes, CUstream stream) {
  check(api_->cuMemsetD8Async(pointer, 0, bytes, stream), "cuMemsetD8Async", "zeroing a tensor");
  if (!stream)
    synchronize(stream, "zeroing a tensor");
}

void CudaDriver::copyToDevice(CUdeviceptr to, const void *from, std::size_t bytes,
                              CUstream stream) {
  if (stream)
    check(api_->cuMemcpyHtoDAsync(to, from, bytes, stream), "cuMemcpyHtoDAsync", "a tensor");
  else
    check(api_->cuMemcpyHtoD(to, from, bytes), "cuMemcpyHtoD", "a tensor");
}

void CudaDriver::copyToHost(void *to, CUdeviceptr from, std::size_t bytes, CUstream stream) {
  if (stream)
    check(api_->cuMemcpyDtoHAsync(to, from, bytes, stream), "cuMemcpyDtoHAsync", "a tensor");
  else
    check(api_->cuMemcpyDtoH(to, from, bytes), "cuMemcpyDtoH", "a tensor");
}

CUmodule CudaDriver::loadModule(const std::string &image, const std::string &kernel,
                                std::string *infoLog) {
  std::vector<char> log(16384, 0), info(16384, 0);
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize, kJitInfoLogBuffer,
                   kJitInfoLogBufferSize, kJitLogVerbose};
  void *values[] = {log.data(), reinterpret_cast<void *>(log.size()), info.data(),
                    reinterpret_cast<void *>(info.size()), reinterpret_cast<void *>(1)};
  CUmodule module = nullptr;
  int result = api_->cuModuleLoadDataEx(&module, image.c_str(), 5, options, values);
  if (infoLog)
    *infoLog = info.data();
  if (result != 0) {
    try {
      check(result, "cuModuleLoadDataEx", kernel);
    } catch (const CudaError &error) {
      throw CudaError(std::string(error.what()) + "\n" + log.data());
    }
  }
  return module;
}

CudaDriver::TensorMap CudaDriver::encodeTiledTensorMap(int dataType, CUdeviceptr address,
                                                       const std::vector<std::uint64_t> &dims,
                                                       const std::vector<std::uint64_t> &strides,
                                                       const std::vector<std::uint32_t> &box,
                                                       int swizzle, const std::string &what) {
  if (!api_->cuTensorMapEncodeTiled)
    throw CudaError("the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12 or later), which " +
                    what + " needs");
  constexpr int kNoInterleave = 0, kL2Promotion128B = 2, kZerosPastTheEnd = 0;
  std::vector<unsigned> elementStrides(dims.size(), 1);
  TensorMap map{};
  check(api_->cuTensorMapEncodeTiled(&map, dataType, static_cast<unsigned>(dims.size()),
                                     reinterpret_cast<void *>(address), dims.data(), strides.data(),
                                     box.data(), elementStrides.data(), kNoInterleave, swizzle,
                                     kL2Promotion128B, kZerosPastTheEnd),
        "cuTensorMapEncodeTiled", what);
  return map;
}

CUfunction CudaDriver::function(CUmodule module, const std::string &kernel) {
  CUfunction function = nullptr;
  check(api_->cuModuleGetFunction(&function, module, kernel.c_str()), "cuModuleGetFunction",
        kernel);
  return function;
}

void CudaDriver::setDynamicShared(CUfunction function, int bytes, const std::string &kernel) {
  check(api_->cuFuncSetAttribute(function, kMaxDynamicSharedBytes, bytes),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", kernel);
}

void CudaDriver::launch(CUfunction function, const unsigned grid[3], unsigned threads,
                        unsigned sharedBytes, void **params, const std::string &kernel,
                        CUstream stream) {
  check(api_->cuLaunchKernel(function, grid[0], grid[1], grid[2], threads, 1, 1, sharedBytes,
                             stream, params, nullptr),
        "cuLaunchKernel", kernel);
}

void CudaDriver::synchronize(const std::string &what) {
  check(api_->cuCtxSynchronize(), "cuCtxSynchronize", what);
}

void CudaDriver::synchronize(CUstream stream, const std::string &what) {
  check(api_->cuStreamSynchronize(stream), "cuStreamSynchronize", what);
}

CUstream CudaDriver::createStream() {
  CUstream stream = nullptr;
  check(api_->cuStreamCreate(&stream, 0), "cuStreamCreate", "a stream");
  return stream;
}

void CudaDriver::destroyStream(CUstream stream) {
  if (stream)
    api_->cuStreamDestroy(stream);
}

CUevent CudaDriver::createEvent() {
  CUevent event = nullptr;
  check(api_->cuEventCreate(&event, 0), "cuEventCreate", "timing");
  return event;
}

void CudaDriver::destroyEvent(CUevent event) {
  if (event)
    api_->cuEventDestroy(event);
}

void CudaDriver::record(CUevent event, CUstream stream) {
  check(api_->cuEventRecord(event, stream), "cuEventRecord", "timing");
}

float CudaDriver::elapsed(CUevent start, CUevent stop) {
  check(api_->cuEventSynchronize(stop), "cuEventSynchronize", "timing");
  float ms = 0;
  check(api_->cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime", "timing");
  return ms;
}

} // namespace tl::runtime
