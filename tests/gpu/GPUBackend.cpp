// tl-gpu-tests runs the numeric tests on the GPU.
#include "Backend.h"

#include "tl/runtime/GPUKernel.h"

#include <atomic>
#include <thread>

namespace tl::testing {
std::unique_ptr<runtime::Kernel> compile(const dsl::Program &program) {
  return std::make_unique<runtime::GPUKernel>(program);
}
kernels::mha::Backend backend() { return kernels::mha::Backend::gpu; }
std::string tunedArch() { return runtime::CudaDriver::require().arch(); }

void precompile(const std::vector<std::function<dsl::Program()>> &makers) {
  // Into the kernel cache under the key GPUKernel will look up (this
  // device's arch and shared-memory limit).
  runtime::CudaDriver &driver = runtime::CudaDriver::require();
  std::string arch = driver.arch();
  std::int64_t limit = driver.maxSharedPerBlock();
  std::atomic<std::size_t> next = 0;
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < std::max(1u, std::thread::hardware_concurrency()); ++w)
    workers.emplace_back([&] {
      for (std::size_t i; (i = next++) < makers.size();)
        try {
          runtime::compileForGPUCached(makers[i](), arch, true, nullptr, limit);
        } catch (const std::exception &) { // the test's own compile reports it
        }
    });
  for (std::thread &worker : workers)
    worker.join();
}
} // namespace tl::testing
