// A tl program compiled for the host CPU: the CPU backend. Blocks of the grid
// run in parallel on a pool of host threads; each block runs its tile ops as
// plain loops. The calling convention is the GPU runtime's: inputs in, out_idx
// outputs allocated and returned. Light header.
#pragma once

#include "tl/runtime/Kernel.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace tl {
class HostExecutable;
}

namespace tl::runtime {

class CPUKernel : public Kernel {
public:
  /// Compiles `program` (throws tl::Error on a compile error).
  explicit CPUKernel(const ModuleHandle &program);
  ~CPUKernel() override;

  void run(const std::vector<HostTensor *> &args) const override;
  /// Host threads used for the grid (default: all hardware threads).
  void setThreads(unsigned threads) { workers_ = threads; }

private:
  /// Runs `work` on `count` new threads of `stackBytes` each, and waits.
  void runOnThreads(unsigned count, std::size_t stackBytes,
                    const std::function<void()> &work) const;
  std::unique_ptr<HostExecutable> executable_;
  unsigned workers_ = 0;
};

} // namespace tl::runtime
