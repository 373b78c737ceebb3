// tl::autotune: the fastest configuration of a program, compiled, timed and
// remembered, like TileLang's autotuner:
//
//   auto tuned = tl::autotune(
//       [&](const GemmConfig &c) { return gemm(M, N, K, f16, f16, false, false, c); },
//       configs, {&A, &B});
//   std::vector<HostTensor> c = (*tuned.kernel)({&A, &B}); // configs[tuned.best]
//
// The candidates are built on the calling thread, compiled in parallel on the
// host, and timed one after another on the backend (GPU: CUDA events, the
// median of `repeats` after `warmup` launches, on a warm L2 or, with
// `coldL2`, a flushed one; CPU: the host clock). The
// winner's index is kept in the disk cache beside the compiled kernels, keyed
// by every candidate's program (so by the shapes too), the target and the
// compiler; a second call with the same candidates times nothing and compiles
// only the winner (a kernel-cache hit). Light header.
#pragma once

#include "tl/runtime/Jit.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tl {

struct AutotuneOptions {
  Target target = Target::automatic; // automatic: the GPU if the driver has one
  std::string arch;                  // GPU: empty means the device's own
  bool cache = true; // the winner and the kernels in the disk cache (off with $TLC_CACHE=0 too)
  unsigned compileThreads = 0; // 0: the host's hardware threads
  int warmup = 3, repeats = 10;
  /// GPU: time each candidate as the peers are timed (timeQueuedColdL2, QueuedTiming.h: L2
  /// flushed before each of at least `repeats` launches, about 50 ms of them a candidate)
  /// rather than by Kernel::benchmark (launches on a warm L2, each waited for). The two can
  /// pick differently where the inputs fit in L2; the choice is cached apart. The inputs
  /// are not copied back (the warm timing leaves them as its last launch made them).
  bool coldL2 = false;
};

/// One candidate's outcome: its time in ms, or why it could not run (a
/// compile error, a launch the device refused).
struct AutotuneTiming {
  double ms = 0;
  std::string error;
};

struct AutotuneResult {
  std::unique_ptr<runtime::Kernel> kernel; // the winner, compiled and loaded
  std::size_t best = 0;                    // its index in the search space
  double ms = 0;                           // its time (as measured when it was chosen)
  bool cacheHit = false;                   // the choice came from the disk: nothing was timed
  std::vector<AutotuneTiming> timings;     // every candidate's, in order (empty on a hit)
  std::string key;                         // the cache key of this search
};

/// The core: `candidates[i]` is configuration i's program; every candidate
/// must take the same tensors. `inputs` are the non-output parameters, as
/// Kernel::operator() takes them (the outputs are allocated). Throws
/// std::invalid_argument when the space is empty, the candidates differ in
/// signature or the inputs do not fit, and std::runtime_error when no
/// candidate runs (naming each one's error).
AutotuneResult autotunePrograms(const std::vector<ModuleHandle> &candidates,
                                const std::vector<runtime::HostTensor *> &inputs,
                                const AutotuneOptions &options = {});

/// `generator(config)` for every configuration of `space`, then autotunePrograms.
template <typename Generator, typename Config>
AutotuneResult autotune(Generator &&generator, const std::vector<Config> &space,
                        const std::vector<runtime::HostTensor *> &inputs,
                        const AutotuneOptions &options = {}) {
  std::vector<ModuleHandle> candidates;
  candidates.reserve(space.size());
  for (const Config &config : space)
    candidates.push_back(static_cast<const ModuleHandle &>(generator(config)));
  return autotunePrograms(candidates, inputs, options);
}

} // namespace tl
