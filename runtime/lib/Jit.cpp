// tl::jit: picks the backend and compiles.
#include "tl/runtime/Jit.h"

#include "tl/runtime/CPUKernel.h"
#include "tl/runtime/GPUKernel.h"

namespace tl {

std::unique_ptr<runtime::Kernel> jit(const ModuleHandle &program, const JitOptions &options) {
  bool gpu = options.target == Target::gpu ||
             (options.target == Target::automatic && runtime::CudaDriver::get() != nullptr);
  if (gpu)
    return std::make_unique<runtime::GPUKernel>(program, options.arch, options.cache);
  return std::make_unique<runtime::CPUKernel>(program);
}

} // namespace tl
