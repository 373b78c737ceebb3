// tl-gpu-tests runs the numeric tests on the GPU.
#include "Backend.h"

#include "tl/runtime/GPUKernel.h"

namespace tl::testing {
std::unique_ptr<runtime::Kernel> compile(const dsl::Program &program) {
  return std::make_unique<runtime::GPUKernel>(program);
}
kernels::mha::Backend backend() { return kernels::mha::Backend::gpu; }
} // namespace tl::testing
