//===- MbarrierPhases.cpp - every mbarrier wait pinned to its phase -------===//
//
// An mbarrier wait names its phase only by parity: it passes as soon as the
// phase of the other parity is the barrier's current one. That is right only
// while the barrier is at most one phase ahead of the waiter and never
// behind it: a producer that can run two phases ahead, a consumer that
// releases one slot too early, a parity off by one, a missing arrival, all
// compile, and then hang or read a tile before (or after) its bytes land.
//
// This proof runs the kernel's threads against each other. SyncTraces.cpp
// gives every thread's sequence of barrier and mbarrier events; threads with
// the same sequence move as one class. A named barrier completes when its
// thread count has reached it, waiting (bar.sync) or not (bar.arrive: those
// threads go on, their arrival held in the state until the completion).
// Every interleaving of the classes' events is explored (TMA boxes complete
// their bytes when issued: a box's lateness only delays a phase, which the
// interleavings cover through the waiter's side). The kernel is refused
// when, in some interleaving,
//   - no class can move and one has not finished (a hang: a wait whose phase
//     never completes, a barrier short of threads),
//   - more threads reach a barrier than it counts, threads meet at one with
//     different counts, or the kernel ends with threads arrived at a barrier
//     that never completed,
//   - a wait passes having seen a different number of completed phases than
//     in another interleaving (it is not pinned to one phase: a race),
//   - an mbarrier is used before its initialisation (or after its
//     invalidation), initialised again without mbarrier.inval, invalidated
//     mid-phase, takes more arrivals or bytes than its phase expects, or ends
//     the kernel with a phase half done.
// Loops whose trip count is not a constant (or too long to follow) are run
// with several trip counts, up to twice the number of mbarriers and one (the
// slots' and parities' common period), from index 0 and from index 1.
//
//===----------------------------------------------------------------------===//
#include "MbarrierPhases.h"

#include "SyncTraces.h"

#include "tl/Dialect/TL/TLDialect.h"

#include "llvm/ADT/Hashing.h"

#include <map>
#include <set>
#include <unordered_set>

using namespace mlir;

namespace tl::gpu_lowering {
namespace {

/// More states than this and the proof gives up (with an error: the kernel
/// is not proven).
constexpr size_t kMostStates = 200000;

struct Mbarrier {
  int64_t count = 0, pending = 0, bytes = 0, completed = 0;
  bool initialised = false;
};

struct State {
  SmallVector<int64_t> next; // per class, its next event
  SmallVector<Mbarrier> mbarriers;
  // Per named barrier id, the threads that arrived (bar.arrive) since its
  // last completion and the count they arrived with; ids with none are left
  // out.
  struct Arrivals {
    int64_t count = 0, threads = 0;
  };
  std::map<int64_t, Arrivals> arrived;

  std::vector<int64_t> key() const {
    std::vector<int64_t> key(next.begin(), next.end());
    for (const Mbarrier &m : mbarriers)
      key.insert(key.end(), {m.count, m.pending, m.bytes, m.completed, m.initialised});
    for (auto [id, arrivals] : arrived)
      key.insert(key.end(), {id, arrivals.count, arrivals.threads});
    return key;
  }
};

struct KeyHash {
  size_t operator()(const std::vector<int64_t> &key) const {
    return llvm::hash_combine_range(key.begin(), key.end());
  }
};

std::string describe(const ThreadClass &threads) {
  if (threads.threads == 1)
    return "thread " + std::to_string(threads.first);
  if (threads.threads == threads.last - threads.first + 1)
    return "threads " + std::to_string(threads.first) + ".." + std::to_string(threads.last);
  return std::to_string(threads.threads) + " threads from " + std::to_string(threads.first) +
         " to " + std::to_string(threads.last);
}

std::string phases(int64_t count) {
  return std::to_string(count) + (count == 1 ? " phase" : " phases");
}

class PhaseProof {
public:
  PhaseProof(gpu::GPUFuncOp func, const SyncTraces &traces, const LoopScenario &scenario)
      : func(func), classes(traces.classes), scenario(scenario), abstract(traces.abstractLoops) {
    for (const ThreadClass &threads : classes)
      for (const SyncEvent &event : threads.events)
        if (!isNamedBarrier(event))
          mbarrierIndex.try_emplace(event.address, mbarrierIndex.size());
  }

  LogicalResult run() {
    State initial;
    initial.next.assign(classes.size(), 0);
    initial.mbarriers.resize(mbarrierIndex.size());
    std::vector<State> stack{initial};
    std::unordered_set<std::vector<int64_t>, KeyHash> seen{initial.key()};
    while (!stack.empty()) {
      State state = std::move(stack.back());
      stack.pop_back();
      std::vector<State> successors;
      if (failed(step(state, successors)))
        return failure();
      for (State &successor : successors)
        if (seen.insert(successor.key()).second)
          stack.push_back(std::move(successor));
      if (seen.size() > kMostStates)
        return func.emitError() << "tl-check-sync cannot prove this kernel's mbarrier phases: "
                                   "its threads interleave in more than "
                                << kMostStates << " ways" << scenarioText();
    }
    return success();
  }

private:
  std::string scenarioText() const {
    if (!abstract)
      return "";
    return " (when its loop runs " + std::to_string(scenario.trips) + " iteration" +
           (scenario.trips == 1 ? "" : "s") + " from index " + std::to_string(scenario.start) + ")";
  }

  std::string mbarrierText(int64_t address) const {
    return "the mbarrier at shared byte " + std::to_string(address);
  }

  static bool isNamedBarrier(const SyncEvent &event) {
    return event.kind == SyncEvent::barrier || event.kind == SyncEvent::barrierArrive;
  }

  /// Threads waiting at barrier `id` in `state`.
  int64_t waitingAt(const State &state, int64_t id) const {
    int64_t waiting = 0;
    for (size_t c = 0; c < classes.size(); ++c) {
      if (finished(state, c))
        continue;
      const SyncEvent &event = classes[c].events[state.next[c]];
      if (event.kind == SyncEvent::barrier && event.address == id)
        waiting += classes[c].threads;
    }
    return waiting;
  }

  /// Class c's barrier event counts as many threads as every other one at
  /// its barrier now (waiting, or arrived since the last completion): PTX
  /// leaves a barrier whose participants disagree undefined.
  LogicalResult sameCount(const State &state, size_t c) {
    const SyncEvent &event = classes[c].events[state.next[c]];
    auto mismatch = [&](int64_t other) {
      return refuse(classes[c], event,
                    "barrier " + std::to_string(event.address) + " is counted as " +
                        std::to_string(event.value) + " threads here and as " +
                        std::to_string(other) + " by threads that meet it at the same time");
    };
    auto early = state.arrived.find(event.address);
    if (early != state.arrived.end() && early->second.count != event.value)
      return mismatch(early->second.count);
    for (size_t other = 0; other < classes.size(); ++other) {
      if (other == c || finished(state, other))
        continue;
      const SyncEvent &there = classes[other].events[state.next[other]];
      if (there.kind == SyncEvent::barrier && there.address == event.address &&
          there.value != event.value)
        return mismatch(there.value);
    }
    return success();
  }

  /// Class c's bar.arrive: its threads count towards the barrier's next
  /// completion and go on. With nobody waiting there, the arrivals alone may
  /// complete it.
  LogicalResult arriveAtBarrier(State &state, size_t c) {
    const ThreadClass &threads = classes[c];
    const SyncEvent &event = threads.events[state.next[c]];
    if (failed(sameCount(state, c)))
      return failure();
    State::Arrivals &arrivals = state.arrived[event.address];
    arrivals.count = event.value;
    int64_t arrivedThere = (arrivals.threads += threads.threads);
    int64_t waiting = waitingAt(state, event.address);
    if (arrivedThere + waiting > event.value)
      return refuse(threads, event,
                    std::to_string(arrivedThere + waiting) + " threads reach barrier " +
                        std::to_string(event.address) + ", which counts " +
                        std::to_string(event.value));
    if (arrivedThere == event.value) // nobody waits: completed by arrivals
      state.arrived.erase(event.address);
    return success();
  }

  Mbarrier &mbarrierOf(State &state, const SyncEvent &event) {
    return state.mbarriers[mbarrierIndex.lookup(event.address)];
  }

  /// Emits an error at the event's op; always failure.
  LogicalResult refuse(const ThreadClass &threads, const SyncEvent &event, const Twine &message) {
    event.op->emitError() << message << " (" << describe(threads) << ")" << scenarioText();
    return failure();
  }

  /// One thread's arrival (and expected bytes).
  LogicalResult arrive(Mbarrier &m, const ThreadClass &threads, const SyncEvent &event,
                       int64_t arrivals, int64_t bytes) {
    m.bytes += bytes;
    m.pending -= arrivals;
    if (m.pending < 0)
      return refuse(threads, event,
                    "arrives on " + mbarrierText(event.address) +
                        " more times in one phase than its arrival count, " +
                        std::to_string(m.count));
    return complete(m, threads, event);
  }

  LogicalResult complete(Mbarrier &m, const ThreadClass &threads, const SyncEvent &event) {
    if (m.pending == 0 && m.bytes < 0)
      return refuse(threads, event,
                    "brings " + mbarrierText(event.address) + " " + std::to_string(-m.bytes) +
                        " more bytes than its phase was armed for");
    if (m.pending == 0 && m.bytes == 0) {
      ++m.completed;
      m.pending = m.count;
    }
    return success();
  }

  /// What an event does to an mbarrier, for messages.
  static const char *verb(SyncEvent::Kind kind) {
    switch (kind) {
    case SyncEvent::wait:
      return "waits on ";
    case SyncEvent::box:
      return "a TMA box completes on ";
    case SyncEvent::invalMbarrier:
      return "invalidates ";
    default:
      return "uses ";
    }
  }

  /// What class `c` does next, applied to `state`; false when it must wait.
  FailureOr<bool> advance(State &state, size_t c) {
    const ThreadClass &threads = classes[c];
    const SyncEvent &event = threads.events[state.next[c]];
    if (event.kind == SyncEvent::barrier)
      return false; // barriers move their threads together (step)
    if (event.kind == SyncEvent::barrierArrive) {
      if (failed(arriveAtBarrier(state, c)))
        return failure();
      ++state.next[c];
      return true;
    }
    Mbarrier &m = mbarrierOf(state, event);
    bool lifecycle =
        event.kind == SyncEvent::initMbarrier || event.kind == SyncEvent::invalMbarrier;
    if (lifecycle && threads.threads != 1)
      return refuse(threads, event,
                    std::to_string(threads.threads) + " threads each " +
                        (event.kind == SyncEvent::initMbarrier ? "initialise " : "invalidate ") +
                        mbarrierText(event.address));
    if (event.kind == SyncEvent::initMbarrier) {
      if (m.initialised)
        return refuse(threads, event,
                      mbarrierText(event.address) +
                          " is initialised again while valid (mbarrier.inval first)");
    } else if (!m.initialised) {
      return refuse(threads, event,
                    verb(event.kind) + mbarrierText(event.address) +
                        " before its initialisation is visible to these threads, or after its "
                        "invalidation");
    }
    switch (event.kind) {
    case SyncEvent::initMbarrier:
      m = Mbarrier{event.value, event.value, 0, 0, true};
      break;
    case SyncEvent::invalMbarrier:
      if (m.pending != m.count || m.bytes != 0)
        return refuse(threads, event,
                      "invalidates " + mbarrierText(event.address) + " in the middle of a phase (" +
                          std::to_string(m.count - m.pending) + " of its " +
                          std::to_string(m.count) + " arrivals made, " + std::to_string(m.bytes) +
                          " transaction bytes outstanding)");
      m.initialised = false;
      break;
    case SyncEvent::arrive:
    case SyncEvent::arm:
      for (int64_t t = 0; t < threads.threads; ++t)
        if (failed(arrive(m, threads, event, event.kind == SyncEvent::arrive ? event.value : 1,
                          event.kind == SyncEvent::arm ? event.value : 0)))
          return failure();
      break;
    case SyncEvent::box:
      for (int64_t t = 0; t < threads.threads; ++t) {
        m.bytes -= event.value;
        if (failed(complete(m, threads, event)))
          return failure();
      }
      break;
    case SyncEvent::wait: {
      if ((m.completed & 1) == event.value)
        return false;
      auto [seen, first] = passedAfter.try_emplace({c, state.next[c]}, m.completed);
      if (!first && seen->second != m.completed)
        return refuse(threads, event,
                      "waits on " + mbarrierText(event.address) + " with parity " +
                          std::to_string(event.value) + ", which passes after " +
                          phases(std::min(seen->second, m.completed)) +
                          " in one order of the threads and after " +
                          phases(std::max(seen->second, m.completed)) +
                          " in another: the wait is not pinned to one phase (a race)");
      break;
    }
    case SyncEvent::barrier:
    case SyncEvent::barrierArrive:
      break; // returned above
    }
    ++state.next[c];
    return true;
  }

  bool finished(const State &state, size_t c) const {
    return state.next[c] == static_cast<int64_t>(classes[c].events.size());
  }

  /// Every state one move after `state`; an error when there is none and
  /// the kernel has not finished.
  LogicalResult step(const State &state, std::vector<State> &successors) {
    // Threads at each barrier id, and the threads still running.
    std::map<int64_t, int64_t> atBarrier;
    int64_t running = 0;
    for (size_t c = 0; c < classes.size(); ++c) {
      if (finished(state, c))
        continue;
      running += classes[c].threads;
      const SyncEvent &event = classes[c].events[state.next[c]];
      if (event.kind == SyncEvent::barrier)
        atBarrier[event.address] += classes[c].threads;
    }
    for (size_t c = 0; c < classes.size(); ++c) {
      if (finished(state, c))
        continue;
      const SyncEvent &event = classes[c].events[state.next[c]];
      if (event.kind == SyncEvent::barrier) {
        if (failed(sameCount(state, c)))
          return failure();
        int64_t needed = event.value ? event.value : running;
        auto early = state.arrived.find(event.address);
        int64_t arrived =
            atBarrier[event.address] + (early == state.arrived.end() ? 0 : early->second.threads);
        if (arrived > needed)
          return refuse(classes[c], event,
                        std::to_string(arrived) + " threads reach barrier " +
                            std::to_string(event.address) + ", which counts " +
                            std::to_string(needed));
        if (arrived == needed)
          release(state, c, successors);
        continue;
      }
      State successor = state;
      FailureOr<bool> moved = advance(successor, c);
      if (failed(moved))
        return failure();
      if (*moved)
        successors.push_back(std::move(successor));
    }
    bool done = llvm::all_of(llvm::seq<size_t>(0, classes.size()),
                             [&](size_t c) { return finished(state, c); });
    if (!successors.empty())
      return success();
    if (done)
      return finishedCleanly(state);
    return hang(state);
  }

  /// Moves every class at class c's barrier past it, once per barrier: the
  /// first class there does.
  void release(const State &state, size_t c, std::vector<State> &successors) {
    int64_t id = classes[c].events[state.next[c]].address;
    State successor = state;
    successor.arrived.erase(id); // the arrivals completed it too
    for (size_t other = 0; other < classes.size(); ++other) {
      if (finished(state, other))
        continue;
      const SyncEvent &event = classes[other].events[state.next[other]];
      if (event.kind != SyncEvent::barrier || event.address != id)
        continue;
      if (other < c)
        return;
      ++successor.next[other];
    }
    successors.push_back(std::move(successor));
  }

  LogicalResult finishedCleanly(const State &state) {
    for (auto [id, arrivals] : state.arrived) {
      Operation *arrive = nullptr;
      for (const ThreadClass &ts : classes)
        for (const SyncEvent &event : ts.events)
          if (event.kind == SyncEvent::barrierArrive && event.address == id && !arrive)
            arrive = event.op;
      arrive->emitError() << "the kernel can end with " << arrivals.threads
                          << " threads arrived at barrier " << id
                          << " and the barrier not completed" << scenarioText();
      return failure();
    }
    for (auto [address, index] : mbarrierIndex) {
      const Mbarrier &m = state.mbarriers[index];
      if (!m.initialised || (m.pending == m.count && m.bytes == 0))
        continue;
      Operation *init = nullptr;
      for (const ThreadClass &threads : classes)
        for (const SyncEvent &event : threads.events)
          if (event.kind == SyncEvent::initMbarrier && event.address == address)
            init = event.op;
      (init ? init : func.getOperation())->emitError()
          << "the kernel can end with " << mbarrierText(address)
          << " in the middle of a phase: " << m.count - m.pending << " of its " << m.count
          << " arrivals made, " << m.bytes << " transaction bytes outstanding" << scenarioText();
      return failure();
    }
    return success();
  }

  LogicalResult hang(const State &state) {
    std::optional<InFlightDiagnostic> error;
    for (size_t c = 0; c < classes.size(); ++c) {
      if (finished(state, c))
        continue;
      const SyncEvent &event = classes[c].events[state.next[c]];
      if (!error)
        error.emplace(event.op->emitError()
                      << "the kernel can hang here: no thread can move" << scenarioText());
      Diagnostic &note = error->attachNote(event.op->getLoc())
                         << describe(classes[c]) << (classes[c].threads == 1 ? " waits" : " wait");
      if (event.kind == SyncEvent::barrier) {
        auto early = state.arrived.find(event.address);
        note << " at barrier " << event.address;
        if (early != state.arrived.end())
          note << " (" << early->second.threads << " threads arrived there without waiting)";
        continue;
      }
      const Mbarrier &m = state.mbarriers[mbarrierIndex.lookup(event.address)];
      note << " for the phase of parity " << event.value << " of " << mbarrierText(event.address)
           << ", which has completed " << phases(m.completed) << "; " << m.pending << " of its "
           << m.count << " arrivals and " << m.bytes << " transaction bytes are outstanding";
    }
    return failure();
  }

  gpu::GPUFuncOp func;
  const std::vector<ThreadClass> &classes;
  LoopScenario scenario;
  bool abstract;
  DenseMap<int64_t, size_t> mbarrierIndex;
  // How many phases had completed when a class passed a wait (class, event).
  std::map<std::pair<size_t, int64_t>, int64_t> passedAfter;
};

int64_t blockSize(gpu::GPUFuncOp func) {
  if (std::optional<ArrayRef<int32_t>> known = func.getKnownBlockSize()) {
    int64_t size = 1;
    for (int32_t extent : *known)
      size *= extent;
    return size;
  }
  if (IntegerAttr threads = tlDialect(func).getThreadsAttrHelper().getAttr(func))
    return threads.getInt();
  return 0;
}

} // namespace

LogicalResult proveMbarrierPhases(gpu::GPUFuncOp func) {
  // (Named-barrier arrivals without mbarriers, tl.pingpong's turns in a
  // kernel without TMA loads, are proven too: arrivals can hang as well.)
  if (!waitsOnMbarriers(func) && !arrivesAtNamedBarriers(func))
    return success();
  int64_t threads = blockSize(func);
  if (threads <= 0)
    return func.emitError("tl-check-sync cannot prove this kernel's mbarrier phases: its block "
                          "size is not known (tl.threads or known_block_size)");
  auto prove = [&](const LoopScenario &scenario) -> FailureOr<SyncTraces> {
    std::variant<SyncTraces, UntracedSync> traced = traceThreads(func, threads, scenario);
    if (auto *untraced = std::get_if<UntracedSync>(&traced)) {
      untraced->op->emitError() << "tl-check-sync cannot prove this kernel's mbarrier phases: "
                                << untraced->reason;
      return failure();
    }
    auto &traces = std::get<SyncTraces>(traced);
    if (failed(PhaseProof(func, traces, scenario).run()))
      return failure();
    return std::move(traces);
  };
  FailureOr<SyncTraces> first = prove(LoopScenario{0, 1});
  if (failed(first))
    return failure();
  if (!first->abstractLoops)
    return success();
  std::set<int64_t> mbarriers;
  for (const ThreadClass &threads : first->classes)
    for (const SyncEvent &event : threads.events)
      if (event.kind == SyncEvent::initMbarrier)
        mbarriers.insert(event.address);
  int64_t period = 2 * static_cast<int64_t>(mbarriers.size()) + 1;
  for (LoopScenario scenario : {LoopScenario{0, 0}, LoopScenario{0, 2}, LoopScenario{0, 3},
                                LoopScenario{0, period}, LoopScenario{1, period}})
    if (failed(prove(scenario)))
      return failure();
  return success();
}

} // namespace tl::gpu_lowering
