// The backend a test binary runs its numeric tests on: the CPU backend in
// tl-unit-tests, the GPU in tl-gpu-tests (same test sources, see
// tests/CMakeLists.txt).
#pragma once

#include "mha/attention.h"
#include "tl/runtime/Kernel.h"

#include <memory>

namespace tl::testing {

std::unique_ptr<runtime::Kernel> compile(const dsl::Program &program);
kernels::mha::Backend backend();

inline std::vector<runtime::HostTensor> run(const dsl::Program &program,
                                            const std::vector<runtime::HostTensor *> &inputs) {
  return (*compile(program))(inputs);
}

} // namespace tl::testing
