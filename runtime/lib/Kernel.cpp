// The calling convention every backend shares: signature checks and out_idx.
#include "tl/runtime/Kernel.h"

#include <stdexcept>

namespace tl::runtime {

void Kernel::checkArguments(const std::vector<HostTensor *> &args) const {
  if (args.size() != params_.size())
    throw std::invalid_argument(name_ + ": takes " + std::to_string(params_.size()) +
                                " tensors, got " + std::to_string(args.size()));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const dsl::Param &param = params_[i];
    std::string which = name_ + ": argument " + std::to_string(i) + " '" + param.name + "'";
    if (!args[i])
      throw std::invalid_argument(which + " is null");
    if (args[i]->dtype() != param.dtype)
      throw std::invalid_argument(which + " has dtype " + dsl::toString(args[i]->dtype()) +
                                  ", expected " + dsl::toString(param.dtype));
    if (args[i]->shape() != param.shape)
      throw std::invalid_argument(which + " has shape " + formatShape(args[i]->shape()) +
                                  ", expected " + formatShape(param.shape));
  }
}

std::vector<HostTensor> Kernel::operator()(const std::vector<HostTensor *> &inputs) const {
  std::vector<HostTensor> outputs;
  std::size_t inputCount = 0;
  for (const dsl::Param &param : params_) {
    if (param.output)
      outputs.emplace_back(param.shape, param.dtype);
    else
      ++inputCount;
  }
  if (inputs.size() != inputCount)
    throw std::invalid_argument(name_ + ": takes " + std::to_string(inputCount) +
                                " inputs (the outputs are allocated), got " +
                                std::to_string(inputs.size()));
  std::vector<HostTensor *> args;
  std::size_t nextInput = 0, nextOutput = 0;
  for (const dsl::Param &param : params_)
    args.push_back(param.output ? &outputs[nextOutput++] : inputs[nextInput++]);
  run(args);
  return outputs;
}

} // namespace tl::runtime
