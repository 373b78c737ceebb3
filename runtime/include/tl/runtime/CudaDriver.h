// The CUDA driver API, opened at run time (dlopen of libcuda.so.1): the
// library builds and its CPU paths run where there is no driver. Every failed
// call raises CudaError naming the call, the error and what it was for.
// Light header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tl::runtime {

class CudaError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

using CUdeviceptr = std::uint64_t;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

class CudaDriver {
public:
  /// The driver with a current context on device 0, or nullptr (and `why`)
  /// when there is no driver or no device.
  static CudaDriver *get(std::string *why = nullptr);
  /// The same, or CudaError("no GPU: <why>").
  static CudaDriver &require();

  /// "sm_90a" for compute capability 9.0, "sm_80" for 8.0, ...
  std::string arch() const;
  /// The dynamic shared memory one block may opt in to on this device, in
  /// bytes (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).
  std::int64_t maxSharedPerBlock() const { return maxSharedPerBlock_; }

  CUdeviceptr allocate(std::size_t bytes, const std::string &what);
  void free(CUdeviceptr pointer);
  void zero(CUdeviceptr pointer, std::size_t bytes, CUstream stream = nullptr);
  /// Synchronous without a stream; ordered on `stream` with one.
  void copyToDevice(CUdeviceptr to, const void *from, std::size_t bytes, CUstream stream = nullptr);
  void copyToHost(void *to, CUdeviceptr from, std::size_t bytes, CUstream stream = nullptr);
  /// Loads a module from a cubin or from PTX (which the driver JITs); a JIT
  /// failure carries the driver's log. `infoLog`, when given, receives the
  /// JIT's verbose report (registers, spills, performance notes).
  CUmodule loadModule(const std::string &image, const std::string &kernel,
                      std::string *infoLog = nullptr);
  CUfunction function(CUmodule module, const std::string &kernel);
  void setDynamicShared(CUfunction function, int bytes, const std::string &kernel);
  void launch(CUfunction function, const unsigned grid[3], unsigned threads, unsigned sharedBytes,
              void **params, const std::string &kernel, CUstream stream = nullptr);
  /// The whole context.
  void synchronize(const std::string &what);
  /// One stream.
  void synchronize(CUstream stream, const std::string &what);
  CUstream createStream();
  void destroyStream(CUstream stream);
  CUevent createEvent();
  void destroyEvent(CUevent event);
  void record(CUevent event, CUstream stream = nullptr);
  /// Milliseconds between two recorded events (waits for the second).
  float elapsed(CUevent start, CUevent stop);

  /// A TMA descriptor (CUtensorMap): 128 bytes, 64-byte aligned, passed to a
  /// kernel by value.
  struct alignas(64) TensorMap {
    std::uint64_t words[16];
  };
  /// cuTensorMapEncodeTiled with no interleave, 128-byte L2 promotion and
  /// zeros past the ends. `dims`, `box`: innermost first; `strides`: bytes,
  /// of dims 1.. ; `dataType`, `swizzle`: the driver's enumerators. Throws
  /// CudaError naming `what` when the driver lacks the call (before CUDA 12)
  /// or refuses the arguments (TensorMaps.h checks them first).
  TensorMap encodeTiledTensorMap(int dataType, CUdeviceptr address,
                                 const std::vector<std::uint64_t> &dims,
                                 const std::vector<std::uint64_t> &strides,
                                 const std::vector<std::uint32_t> &box, int swizzle,
                                 const std::string &what);

private:
  CudaDriver() = default;
  bool open(std::string &why);
  void check(int result, const char *call, const std::string &what) const;

  struct Api;
  Api *api_ = nullptr;
  CUcontext context_ = nullptr;
  int major_ = 0, minor_ = 0;
  std::int64_t maxSharedPerBlock_ = 0;
};

} // namespace tl::runtime
