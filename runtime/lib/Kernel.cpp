// The calling convention every backend shares: signature checks and out_idx.
#include "tl/runtime/Kernel.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace tl::runtime {
namespace {

template <typename Tensor>
void checkSignature(const std::string &kernel, const std::vector<Param> &params,
                    const std::vector<Tensor *> &args) {
  if (args.size() != params.size())
    throw std::invalid_argument(kernel + ": takes " + std::to_string(params.size()) +
                                " tensors, got " + std::to_string(args.size()));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Param &param = params[i];
    std::string which = kernel + ": argument " + std::to_string(i) + " '" + param.name + "'";
    if (!args[i])
      throw std::invalid_argument(which + " is null");
    if (args[i]->dtype() != param.dtype)
      throw std::invalid_argument(which + " has dtype " + toString(args[i]->dtype()) +
                                  ", expected " + toString(param.dtype));
    if (args[i]->shape() != param.shape)
      throw std::invalid_argument(which + " has shape " + formatShape(args[i]->shape()) +
                                  ", expected " + formatShape(param.shape));
  }
}

/// See withOutputs (Kernel.h), for host or device tensors.
template <typename Tensor>
std::vector<Tensor *> interleaveOutputs(const std::string &kernel, const std::vector<Param> &params,
                                        const std::vector<Tensor *> &inputs,
                                        std::vector<Tensor> &outputs) {
  std::size_t inputCount = 0;
  for (const Param &param : params)
    inputCount += param.output ? 0 : 1;
  if (inputs.size() != inputCount)
    throw std::invalid_argument(kernel + ": takes " + std::to_string(inputCount) +
                                " inputs (the outputs are allocated), got " +
                                std::to_string(inputs.size()));
  outputs.clear();
  for (const Param &param : params)
    if (param.output)
      outputs.emplace_back(param.shape, param.dtype);
  std::vector<Tensor *> args;
  std::size_t nextInput = 0, nextOutput = 0;
  for (const Param &param : params)
    args.push_back(param.output ? &outputs[nextOutput++] : inputs[nextInput++]);
  return args;
}

/// out_idx: allocates the outputs, interleaves them with `inputs` in
/// declaration order, runs, and returns the outputs.
template <typename Tensor, typename Run>
std::vector<Tensor> callWithOutputs(const std::string &kernel, const std::vector<Param> &params,
                                    const std::vector<Tensor *> &inputs, Run run) {
  std::vector<Tensor> outputs;
  run(interleaveOutputs(kernel, params, inputs, outputs));
  return outputs;
}

} // namespace

std::vector<HostTensor *> withOutputs(const std::string &kernel, const std::vector<Param> &params,
                                      const std::vector<HostTensor *> &inputs,
                                      std::vector<HostTensor> &outputs) {
  return interleaveOutputs(kernel, params, inputs, outputs);
}

void Kernel::checkArguments(const std::vector<HostTensor *> &args) const {
  checkSignature(name_, params_, args);
}

void Kernel::checkArguments(const std::vector<DeviceTensor *> &args) const {
  checkSignature(name_, params_, args);
}

std::vector<HostTensor> Kernel::operator()(const std::vector<HostTensor *> &inputs,
                                           std::optional<float> outputFill) const {
  return callWithOutputs(name_, params_, inputs, [&](const std::vector<HostTensor *> &args) {
    if (outputFill)
      for (std::size_t i = 0; i < args.size(); ++i)
        if (params_[i].output)
          args[i]->fill(*outputFill);
    run(args);
  });
}

double Kernel::benchmark(const std::vector<HostTensor *> &args, int warmup, int repeats) const {
  checkArguments(args);
  for (int i = 0; i < warmup; ++i)
    run(args);
  std::vector<double> times;
  for (int i = 0; i < std::max(repeats, 1); ++i) {
    auto start = std::chrono::steady_clock::now();
    run(args);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void Kernel::launch(const std::vector<DeviceTensor *> &, CUstream) const {
  throw std::invalid_argument(name_ + ": compiled for the CPU backend, which takes host "
                                      "tensors; device tensors need a GPU kernel");
}

std::vector<DeviceTensor> Kernel::callOnDevice(const std::vector<DeviceTensor *> &inputs,
                                               CUstream stream) const {
  return callWithOutputs(name_, params_, inputs,
                         [&](const std::vector<DeviceTensor *> &args) { launch(args, stream); });
}

} // namespace tl::runtime
