// A tl program compiled for the host CPU: the CPU backend. Blocks of the grid
// run in parallel on a pool of host threads; each block runs its tile ops as
// plain loops. The calling convention is the GPU runtime's: inputs in, out_idx
// outputs allocated and returned. Light header.
#pragma once

#include "tl/dsl/Program.h"
#include "tl/runtime/HostTensor.h"

#include <memory>
#include <vector>

namespace tl {
class HostExecutable;
}

namespace tl::runtime {

class CPUKernel {
public:
  /// Compiles `program` (throws tl::dsl::Error on a compile error).
  explicit CPUKernel(const dsl::Program &program);
  ~CPUKernel();
  CPUKernel(CPUKernel &&) noexcept;
  CPUKernel &operator=(CPUKernel &&) noexcept;

  /// Runs with every parameter given, in declaration order. Throws
  /// std::invalid_argument when a tensor's count, dtype or shape is wrong.
  void run(const std::vector<HostTensor *> &args) const;
  /// TileLang's calling convention: the non-output parameters in order; the
  /// outputs (out_idx) are allocated, zeroed, filled and returned in order.
  std::vector<HostTensor> operator()(const std::vector<HostTensor *> &inputs) const;

  const std::string &name() const { return name_; }
  const std::vector<dsl::Param> &params() const { return params_; }
  /// Host threads used for the grid (default: all hardware threads).
  void setThreads(unsigned threads) { workers_ = threads; }

private:
  void checkArguments(const std::vector<HostTensor *> &args) const;
  std::string name_;
  std::vector<dsl::Param> params_;
  std::unique_ptr<HostExecutable> executable_;
  unsigned workers_ = 0;
};

} // namespace tl::runtime
