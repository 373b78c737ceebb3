// tl-unit-tests runs the numeric tests on the CPU backend.
#include "Backend.h"

#include "tl/runtime/CPUKernel.h"

namespace tl::testing {
std::unique_ptr<runtime::Kernel> compile(const dsl::Program &program) {
  return std::make_unique<runtime::CPUKernel>(program);
}
kernels::mha::Backend backend() { return kernels::mha::Backend::cpu; }
std::string tunedArch() { return "sm_90a"; }
void precompile(const std::vector<std::function<dsl::Program()>> &) {} // no cache to fill
} // namespace tl::testing
