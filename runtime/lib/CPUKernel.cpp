// The CPU backend's runtime: argument checks, memref descriptors, and the
// thread pool that runs the grid's blocks.
#include "tl/runtime/CPUKernel.h"

#include "tl/Compiler/CrashHandler.h"
#include "tl/Compiler/HostJIT.h"
#include "tl/runtime/KernelCache.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <pthread.h>
#include <stdexcept>
#include <thread>

namespace tl::runtime {
namespace {

/// The fields of one ranked memref descriptor, as the packed entry takes them.
struct Descriptor {
  void *allocated = nullptr;
  void *aligned = nullptr;
  std::int64_t offset = 0;
  std::vector<std::int64_t> sizes, strides;
};

Descriptor describe(HostTensor &tensor) {
  Descriptor d;
  d.allocated = d.aligned = tensor.data();
  d.sizes = tensor.shape();
  d.strides.assign(d.sizes.size(), 1);
  for (int i = static_cast<int>(d.sizes.size()) - 2; i >= 0; --i)
    d.strides[i] = d.strides[i + 1] * d.sizes[i + 1];
  return d;
}

} // namespace

CPUKernel::CPUKernel(const ModuleHandle &program) : Kernel(program) {
  installCrashHandlerUnlessDisabled();
  executable_ = HostExecutable::compile(program, compileTimingRequested());
}
CPUKernel::~CPUKernel() = default;

void CPUKernel::run(const std::vector<HostTensor *> &args) const {
  checkArguments(args);
  std::vector<Descriptor> descriptors;
  for (HostTensor *tensor : args)
    descriptors.push_back(describe(*tensor));
  const std::vector<std::int64_t> &grid = executable_->grid();
  std::int64_t blocks = 1;
  for (std::int64_t extent : grid)
    blocks *= extent;

  std::atomic<std::int64_t> next{0};
  auto worker = [&] {
    std::vector<std::int64_t> blockIndex(grid.size());
    std::vector<void *> packed;
    for (Descriptor &d : descriptors) {
      packed.push_back(&d.allocated);
      packed.push_back(&d.aligned);
      packed.push_back(&d.offset);
      for (std::int64_t &size : d.sizes)
        packed.push_back(&size);
      for (std::int64_t &stride : d.strides)
        packed.push_back(&stride);
    }
    for (std::int64_t &index : blockIndex)
      packed.push_back(&index);
    for (std::int64_t block; (block = next.fetch_add(1)) < blocks;) {
      for (std::size_t d = 0; d < grid.size(); ++d) { // x varies fastest
        blockIndex[d] = block % grid[d];
        block /= grid[d];
      }
      executable_->entry()(packed.data());
    }
  };
  unsigned workers = workers_ ? workers_ : std::max(1u, std::thread::hardware_concurrency());
  workers = static_cast<unsigned>(std::min<std::int64_t>(workers, blocks));
  // A block keeps its on-chip buffers (whole tiles) on its thread's stack:
  // every worker gets a stack that holds them, whatever the caller's is.
  std::size_t stack = std::max<std::size_t>(8u << 20, executable_->onChipBytes() + (4u << 20));
  executable_->clearTurnFailure();
  runOnThreads(workers, stack, std::function<void()>(worker));
  if (executable_->turnFailed())
    throw std::runtime_error(
        name() + ": a block waited ten seconds for its in_turn turn, which never came (the " +
        "blocks that share a turn counter must take their turns in launch order, x fastest, " +
        "starting from the counter's value before the launch); the outputs are incomplete");
}

void CPUKernel::runOnThreads(unsigned count, std::size_t stackBytes,
                             const std::function<void()> &work) const {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, stackBytes);
  auto trampoline = [](void *work) -> void * {
    (*static_cast<const std::function<void()> *>(work))();
    return nullptr;
  };
  std::vector<pthread_t> threads;
  for (unsigned t = 0; t < count; ++t) {
    pthread_t thread;
    if (pthread_create(&thread, &attributes, trampoline,
                       const_cast<std::function<void()> *>(&work)) != 0)
      break; // the threads started so far do the work
    threads.push_back(thread);
  }
  pthread_attr_destroy(&attributes);
  if (threads.empty())
    throw std::runtime_error(name() + ": cannot start a thread with a " +
                             std::to_string(stackBytes >> 20) + " MiB stack for its blocks");
  for (pthread_t thread : threads)
    pthread_join(thread, nullptr);
}

} // namespace tl::runtime
