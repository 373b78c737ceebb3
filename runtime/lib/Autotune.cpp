// tl::autotune: compiles the candidates in parallel, times them one by one on
// the backend, and remembers the winner in the disk cache (Autotune.h).
#include "tl/runtime/Autotune.h"

#include "tl/runtime/CPUKernel.h"
#include "tl/runtime/DeviceTensor.h"
#include "tl/runtime/GPUKernel.h"
#include "tl/runtime/QueuedTiming.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tl {
namespace {

/// Where the candidates compile and run.
struct Backend {
  bool gpu = false;
  std::string arch;             // GPU: the arch compiled for
  std::int64_t sharedLimit = 0; // GPU: this device's limit, or 0 (the arch's table)
  std::string target;           // what the cache key says of it
};

Backend chooseBackend(const AutotuneOptions &options) {
  Backend backend;
  backend.gpu = runsOnGPU(options.target);
  if (!backend.gpu) {
    backend.target = "cpu";
    return backend;
  }
  runtime::DeviceTarget device = runtime::deviceTarget(options.arch);
  backend.arch = device.arch;
  backend.sharedLimit = device.sharedMemoryLimit;
  backend.target =
      runtime::gpuCacheTarget(backend.arch, runtime::gpuCompileOptions(backend.sharedLimit));
  return backend;
}

void checkSameSignature(const std::vector<ModuleHandle> &candidates) {
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    const std::vector<Param> &first = candidates[0].params(), &other = candidates[i].params();
    bool same = first.size() == other.size();
    for (std::size_t p = 0; same && p < first.size(); ++p)
      same = first[p].shape == other[p].shape && first[p].dtype == other[p].dtype &&
             first[p].output == other[p].output;
    if (!same)
      throw std::invalid_argument(
          "autotune: candidate " + std::to_string(i) + " ('" + candidates[i].name() +
          "') takes other tensors than candidate 0 ('" + candidates[0].name() +
          "'): every configuration must keep the program's signature");
  }
}

/// The winner as the disk keeps it: its index, its time, and its program's key
/// (a stored choice is used only if that candidate is still the same program).
struct StoredChoice {
  std::size_t best = 0;
  double ms = 0;
  std::string programKey;
};

constexpr const char *kChoiceMagic = "tlc-autotune 1";

std::string choicePath(const std::string &directory, const std::string &key) {
  return directory + "/autotune-" + key + ".txt";
}

std::optional<StoredChoice> loadChoice(const std::string &path) {
  std::ifstream in(path);
  std::string magic;
  if (!in || !std::getline(in, magic) || magic != kChoiceMagic)
    return std::nullopt;
  StoredChoice choice;
  std::string field;
  for (int i = 0; i < 3; ++i) {
    if (!(in >> field))
      return std::nullopt;
    if (field == "best")
      in >> choice.best;
    else if (field == "ms")
      in >> choice.ms;
    else if (field == "program")
      in >> choice.programKey;
    else
      return std::nullopt;
  }
  if (!in)
    return std::nullopt;
  return choice;
}

/// Best effort, as the kernel cache's entries.
void storeChoice(const std::string &path, const StoredChoice &choice) {
  std::ostringstream text;
  text << std::setprecision(17) << kChoiceMagic << "\nbest " << choice.best << "\nms " << choice.ms
       << "\nprogram " << choice.programKey << "\n";
  runtime::writeFileAtomically(path, text.str());
}

/// A compiled candidate, not yet loaded (GPU) or ready to run (CPU).
struct Compiled {
  std::optional<GPUBinary> binary;
  std::unique_ptr<runtime::Kernel> cpuKernel;
  std::string error;
};

Compiled compileOne(const ModuleHandle &program, const Backend &backend, bool useCache) {
  Compiled compiled;
  try {
    if (backend.gpu)
      compiled.binary = runtime::compileForGPUCached(program, backend.arch, useCache, nullptr,
                                                     backend.sharedLimit);
    else
      compiled.cpuKernel = std::make_unique<runtime::CPUKernel>(program);
  } catch (const std::exception &e) {
    compiled.error = e.what();
  }
  return compiled;
}

/// Every candidate compiled, `threads` at a time.
std::vector<Compiled> compileAll(const std::vector<ModuleHandle> &candidates,
                                 const Backend &backend, bool useCache, unsigned threads) {
  std::vector<Compiled> compiled(candidates.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < candidates.size(); i = next++)
      compiled[i] = compileOne(candidates[i], backend, useCache);
  };
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, candidates.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &thread : pool)
    thread.join();
  return compiled;
}

std::unique_ptr<runtime::Kernel> load(Compiled &compiled) {
  if (compiled.cpuKernel)
    return std::move(compiled.cpuKernel);
  return std::make_unique<runtime::GPUKernel>(std::move(*compiled.binary));
}

} // namespace

AutotuneResult autotunePrograms(const std::vector<ModuleHandle> &candidates,
                                const std::vector<runtime::HostTensor *> &inputs,
                                const AutotuneOptions &options) {
  if (candidates.empty())
    throw std::invalid_argument("autotune: the search space is empty");
  checkSameSignature(candidates);
  std::vector<runtime::HostTensor> outputs;
  std::vector<runtime::HostTensor *> args =
      runtime::withOutputs("autotune", candidates[0].params(), inputs, outputs);
  Backend backend = chooseBackend(options);
  bool useCache = options.cache && runtime::KernelCache::enabledByEnvironment();

  // The search's key: every candidate's program key, in order.
  std::vector<std::string> programKeys;
  bool coldL2 = backend.gpu && options.coldL2;
  std::string keys = "autotune\n" + backend.target + (coldL2 ? " cold-l2" : "") + "\n";
  for (const ModuleHandle &candidate : candidates) {
    programKeys.push_back(runtime::KernelCache::key(candidate, backend.target));
    keys += programKeys.back() + "\n";
  }
  AutotuneResult result;
  result.key = runtime::contentHash(keys);
  std::string path = choicePath(runtime::KernelCache::defaultDirectory(), result.key);

  if (useCache)
    if (std::optional<StoredChoice> stored = loadChoice(path);
        stored && stored->best < candidates.size() &&
        stored->programKey == programKeys[stored->best]) {
      Compiled winner = compileOne(candidates[stored->best], backend, useCache);
      if (winner.error.empty()) {
        result.kernel = load(winner);
        result.best = stored->best;
        result.ms = stored->ms;
        result.cacheHit = true;
        return result;
      }
    }

  std::vector<Compiled> compiled =
      compileAll(candidates, backend, useCache, options.compileThreads);
  // With coldL2, the arguments go to the device once, for every candidate,
  // and stay there (the warm timing copies them back to `inputs`).
  std::optional<runtime::DeviceCopies> onDevice;
  if (coldL2)
    onDevice.emplace(args);
  runtime::QueuedTimingOptions queued{
      .warmup = options.warmup, .budgetMs = 50, .minRepeats = options.repeats};
  result.timings.resize(candidates.size());
  std::unique_ptr<runtime::Kernel> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    AutotuneTiming &timing = result.timings[i];
    if (!compiled[i].error.empty()) {
      timing.error = compiled[i].error;
      continue;
    }
    try {
      std::unique_ptr<runtime::Kernel> kernel = load(compiled[i]);
      if (coldL2)
        timing.ms = runtime::timeQueuedColdL2({{kernel.get(), onDevice->pointers()}}, queued);
      else
        timing.ms = kernel->benchmark(args, options.warmup, options.repeats);
      if (!best || timing.ms < result.ms) {
        best = std::move(kernel);
        result.best = i;
        result.ms = timing.ms;
      }
    } catch (const std::exception &e) {
      timing.error = e.what();
    }
  }
  if (!best) {
    std::string why = "autotune: no candidate ran";
    for (std::size_t i = 0; i < candidates.size(); ++i)
      why += "\n  candidate " + std::to_string(i) + ": " + result.timings[i].error;
    throw std::runtime_error(why);
  }
  result.kernel = std::move(best);
  if (useCache)
    storeChoice(path, {result.best, result.ms, programKeys[result.best]});
  return result;
}

} // namespace tl
