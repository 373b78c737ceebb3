// A sequence of launches timed the way triton.testing.do_bench times the
// peers (QueuedTiming.h): the ratios against sdpa_peer.py's numbers then
// compare one method with itself. GPUKernel::benchmark, which times one
// kernel per event pair and waits after each, counts the host's launch
// latency and runs on a warm L2; the autotuner uses it unless asked for a
// cold L2 (AutotuneOptions::coldL2).
//
// Everything goes on one stream of its own: CudaDriver::zero without a
// stream waits for the memset, which would leave the GPU idle while the
// host queues the first launch, and count that latency.
#include "tl/runtime/QueuedTiming.h"

#include "tl/runtime/CudaDriver.h"
#include "tl/runtime/DeviceTensor.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tl::runtime {
namespace {

/// Frees the flush buffer and the events on every way out (the stream
/// destroys itself after them).
struct TimingResources {
  CudaDriver &driver;
  CUdeviceptr flush = 0;
  std::vector<CUevent> events;
  explicit TimingResources(CudaDriver &driver) : driver(driver) {}
  ~TimingResources() {
    for (CUevent event : events)
      driver.destroyEvent(event);
    if (flush)
      driver.free(flush);
  }
  CUevent event() { // kept before the next one is made: none leaks if that throws
    events.push_back(driver.createEvent());
    return events.back();
  }
};

} // namespace

int queuedRepeats(double estimateMs, const QueuedTimingOptions &options) {
  const int lowest = std::max(options.minRepeats, 1);
  const int highest = std::max(options.maxRepeats, lowest);
  const double wanted = std::ceil(options.budgetMs / std::max(estimateMs, 1e-3));
  return static_cast<int>(std::clamp(wanted, double(lowest), double(highest)));
}

double timeQueuedColdL2(const std::vector<QueuedLaunch> &launches,
                        const QueuedTimingOptions &options) {
  if (launches.empty())
    throw std::invalid_argument("timeQueuedColdL2: no launches to time");
  for (const QueuedLaunch &launch : launches)
    if (!launch.kernel)
      throw std::invalid_argument("timeQueuedColdL2: a launch without a kernel");
  CudaDriver &driver = CudaDriver::require();
  Stream stream;
  TimingResources resources(driver);
  resources.flush = driver.allocate(options.flushBytes, "the L2 flush buffer");
  auto queueSequence = [&] {
    for (const QueuedLaunch &launch : launches)
      launch.kernel->launch(launch.args, stream);
  };
  auto flushL2 = [&] { driver.zero(resources.flush, options.flushBytes, stream); };

  for (int i = 0; i < options.warmup; ++i)
    queueSequence();
  // Five repeats, the flush included, estimate how many fill the budget (as
  // do_bench's estimate does).
  const int estimateRuns = 5;
  CUevent first = resources.event(), last = resources.event();
  driver.record(first, stream);
  for (int i = 0; i < estimateRuns; ++i) {
    flushL2();
    queueSequence();
  }
  driver.record(last, stream);
  const int repeats = queuedRepeats(driver.elapsed(first, last) / estimateRuns, options);

  std::vector<std::pair<CUevent, CUevent>> pairs;
  for (int i = 0; i < repeats; ++i) {
    CUevent start = resources.event();
    pairs.emplace_back(start, resources.event());
  }
  for (auto [start, stop] : pairs) {
    flushL2(); // queued: the launches below queue behind it while it runs
    driver.record(start, stream);
    queueSequence();
    driver.record(stop, stream);
  }
  std::vector<double> times;
  for (auto [start, stop] : pairs)
    times.push_back(driver.elapsed(start, stop));
  driver.synchronize(stream, "timing a launch sequence");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace tl::runtime
