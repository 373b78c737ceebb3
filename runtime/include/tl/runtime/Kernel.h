// A compiled tl program, on whichever backend compiled it. The calling
// convention is TileLang's: inputs in, out_idx outputs allocated and returned.
// Light header.
#pragma once

#include "tl/Compiler/ModuleHandle.h"
#include "tl/runtime/DeviceTensor.h"
#include "tl/runtime/HostTensor.h"

#include <optional>
#include <string>
#include <vector>

namespace tl::runtime {

/// out_idx: `outputs` becomes a fresh tensor for each output parameter of
/// `params` (zeroed), and the result is every parameter in declaration
/// order, the inputs taken from `inputs`. Throws std::invalid_argument
/// (naming `kernel`) when `inputs` has another count than the non-outputs.
std::vector<HostTensor *> withOutputs(const std::string &kernel, const std::vector<Param> &params,
                                      const std::vector<HostTensor *> &inputs,
                                      std::vector<HostTensor> &outputs);

class Kernel {
public:
  explicit Kernel(const ModuleHandle &program) : name_(program.name()), params_(program.params()) {}
  Kernel(std::string name, std::vector<Param> params)
      : name_(std::move(name)), params_(std::move(params)) {}
  virtual ~Kernel() = default;

  /// Runs with every parameter given, in declaration order. Throws
  /// std::invalid_argument when a tensor's count, dtype or shape is wrong.
  virtual void run(const std::vector<HostTensor *> &args) const = 0;
  /// The non-output parameters in order; the outputs are allocated (zeroed,
  /// or every element `outputFill`: NaN shows an element no kernel writes),
  /// filled and returned in order.
  std::vector<HostTensor> operator()(const std::vector<HostTensor *> &inputs,
                                     std::optional<float> outputFill = std::nullopt) const;

  /// The same on tensors already in GPU memory, queued on `stream` (the
  /// default stream without one) and not waited for: the application's own
  /// buffers stay where they are. GPU kernels only; the CPU backend throws
  /// std::invalid_argument.
  virtual void launch(const std::vector<DeviceTensor *> &args, CUstream stream = nullptr) const;
  /// out_idx on the device: the non-output parameters in order; the outputs
  /// are allocated on the device (zeroed), launched into and returned.
  std::vector<DeviceTensor> callOnDevice(const std::vector<DeviceTensor *> &inputs,
                                         CUstream stream = nullptr) const;

  /// Times the kernel on `args` (every parameter, in order): `warmup` runs,
  /// then the median of `repeats`, in ms. Here on the host clock (the CPU
  /// backend); GPUKernel times on the device with CUDA events.
  virtual double benchmark(const std::vector<HostTensor *> &args, int warmup = 5,
                           int repeats = 20) const;

  const std::string &name() const { return name_; }
  const std::vector<Param> &params() const { return params_; }

protected:
  /// Checks `args` against the signature; throws std::invalid_argument.
  void checkArguments(const std::vector<HostTensor *> &args) const;
  void checkArguments(const std::vector<DeviceTensor *> &args) const;

private:
  std::string name_;
  std::vector<Param> params_;
};

} // namespace tl::runtime
