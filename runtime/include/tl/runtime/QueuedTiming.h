// Timing a sequence of GPU launches as the peers are timed: the method of
// triton.testing.do_bench, which shared/bench/sdpa_peer.py uses for PyTorch's
// SDPA. Light header.
#pragma once

#include "tl/runtime/Kernel.h"

#include <cstddef>
#include <vector>

namespace tl::runtime {

/// One launch of a timed sequence: a kernel (a GPUKernel) and its device arguments.
struct QueuedLaunch {
  const Kernel *kernel = nullptr;
  std::vector<DeviceTensor *> args;
};

struct QueuedTimingOptions {
  /// Untimed runs of the whole sequence first.
  int warmup = 5;
  /// The repeats fill about this much GPU time (do_bench's `rep`, in ms),
  /// within [minRepeats, maxRepeats].
  double budgetMs = 100;
  int minRepeats = 10, maxRepeats = 1000;
  /// The buffer zeroed before each repeat, so that L2 holds none of the
  /// inputs (do_bench's 256 MB; the H200's L2 is 50 MB).
  std::size_t flushBytes = 256'000'000;
};

/// The median, in ms, of the sequence's time over the repeats. Each repeat
/// zeroes the flush buffer, records an event, queues every launch back to back
/// and records a second event, all on a stream of its own; nothing waits until
/// all repeats are queued. So a repeat's time is the GPU's, from a cold L2,
/// with no host launch latency between the events (the kernels are queued
/// while the flush runs), as a framework's queued launches run. The
/// arguments' contents are left as the last launch made them. Throws
/// std::invalid_argument for an empty sequence, a null kernel or a CPU kernel
/// (Kernel::launch takes no device tensors there), CudaError from the driver.
double timeQueuedColdL2(const std::vector<QueuedLaunch> &launches,
                        const QueuedTimingOptions &options = {});

/// How many repeats timeQueuedColdL2 makes when one repeat (the flush
/// included) takes `estimateMs`: enough to fill options.budgetMs, within
/// [max(minRepeats, 1), max(maxRepeats, that)].
int queuedRepeats(double estimateMs, const QueuedTimingOptions &options);

} // namespace tl::runtime
