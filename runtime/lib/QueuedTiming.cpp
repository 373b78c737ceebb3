// A sequence of launches timed the way triton.testing.do_bench times the
// peers (QueuedTiming.h): the ratios against sdpa_peer.py's numbers then
// compare one method with itself. GPUKernel::benchmark, which times one
// kernel per event pair and waits after each, counts the host's launch
// latency and runs on a warm L2; it stays for the autotuner's choices.
#include "tl/runtime/QueuedTiming.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tl::runtime {
namespace {

/// Frees the flush buffer and the events on every way out.
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
};

} // namespace

double timeQueuedColdL2(const std::vector<QueuedLaunch> &launches,
                        const QueuedTimingOptions &options) {
  if (launches.empty())
    throw std::invalid_argument("timeQueuedColdL2: no launches to time");
  for (const QueuedLaunch &launch : launches)
    if (!launch.kernel)
      throw std::invalid_argument("timeQueuedColdL2: a launch without a kernel");
  CudaDriver &driver = CudaDriver::require();
  TimingResources resources(driver);
  resources.flush = driver.allocate(options.flushBytes, "the L2 flush buffer");
  auto queueSequence = [&] {
    for (const QueuedLaunch &launch : launches)
      launch.kernel->launch(launch.args);
  };
  auto queueRepeat = [&](CUevent start, CUevent stop) {
    driver.zero(resources.flush, options.flushBytes);
    driver.record(start);
    queueSequence();
    driver.record(stop);
  };

  for (int i = 0; i < options.warmup; ++i)
    queueSequence();
  // Five repeats, the flush included, estimate how many fill the budget (as
  // do_bench's estimate does).
  const int estimateRuns = 5;
  CUevent first = driver.createEvent(), last = driver.createEvent();
  resources.events = {first, last};
  driver.record(first);
  for (int i = 0; i < estimateRuns; ++i) {
    driver.zero(resources.flush, options.flushBytes);
    queueSequence();
  }
  driver.record(last);
  const double estimate = std::max<double>(driver.elapsed(first, last) / estimateRuns, 1e-3);
  const int repeats =
      std::clamp(static_cast<int>(std::ceil(options.budgetMs / estimate)),
                 std::max(options.minRepeats, 1), std::max(options.maxRepeats, options.minRepeats));

  std::vector<std::pair<CUevent, CUevent>> pairs;
  for (int i = 0; i < repeats; ++i) {
    pairs.emplace_back(driver.createEvent(), driver.createEvent());
    resources.events.push_back(pairs.back().first);
    resources.events.push_back(pairs.back().second);
  }
  for (auto [start, stop] : pairs)
    queueRepeat(start, stop);
  std::vector<double> times;
  for (auto [start, stop] : pairs)
    times.push_back(driver.elapsed(start, stop));
  driver.synchronize("timing a launch sequence");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace tl::runtime
