// The backend a test binary runs its numeric tests on: the CPU backend in
// tl-unit-tests, the GPU in tl-gpu-tests (same test sources, see
// tests/CMakeLists.txt).
#pragma once

#include "mha/attention.h"
#include "tl/dsl/Program.h"
#include "tl/runtime/Kernel.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tl::testing {

std::unique_ptr<runtime::Kernel> compile(const dsl::Program &program);
kernels::mha::Backend backend();
/// The architecture tuned configurations are chosen for: the GPU's own, or
/// sm_90a on the CPU backend (which runs any configuration).
std::string tunedArch();
/// Compiles the programs `makers` build ahead of their use, in parallel where
/// the backend caches what it compiles (the GPU's kernel cache); errors are
/// left for the use to report.
void precompile(const std::vector<std::function<dsl::Program()>> &makers);

inline std::vector<runtime::HostTensor> run(const dsl::Program &program,
                                            const std::vector<runtime::HostTensor *> &inputs) {
  return (*compile(program))(inputs);
}

} // namespace tl::testing
