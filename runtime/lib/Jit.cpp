// tl::jit: picks the backend and compiles.
#include "tl/runtime/Jit.h"

#include "tl/runtime/CPUKernel.h"
#include "tl/runtime/GPUKernel.h"

namespace tl {

bool runsOnGPU(Target target) {
  return target == Target::gpu ||
         (target == Target::automatic && runtime::CudaDriver::get() != nullptr);
}

std::unique_ptr<runtime::Kernel> jit(const ModuleHandle &program, const JitOptions &options) {
  if (runsOnGPU(options.target))
    return std::make_unique<runtime::GPUKernel>(program, options.arch, options.cache);
  return std::make_unique<runtime::CPUKernel>(program);
}

} // namespace tl
