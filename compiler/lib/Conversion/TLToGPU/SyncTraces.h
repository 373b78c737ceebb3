//===- SyncTraces.h - each thread's synchronisation, by interpretation ----===//
//
// What every thread of a lowered kernel does to barriers and mbarriers, in
// order: its trace of synchronisation events. tl-check-sync's phase proof
// (MbarrierPhases.cpp) runs these traces against each other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tl::gpu_lowering {

struct SyncEvent {
  enum Kind {
    initMbarrier,  // value: the arrival count
    invalMbarrier, // mbarrier.inval (before the location is initialised again)
    arrive,        // value: the arrivals (1 unless the op says)
    arm,           // arrive.expect_tx; value: the transaction bytes
    box,           // a TMA box completing on an mbarrier; value: its bytes
    wait,          // try_wait.parity; value: the parity
    barrier,       // bar.sync; address: the barrier id; value: its thread
                   // count, 0 for every thread that has not exited
    barrierArrive, // bar.arrive: the thread counts towards the barrier's
                   // next completion without waiting for it; address: the
                   // barrier id; value: its thread count
  };
  Kind kind;
  int64_t address; // the mbarrier's shared byte offset, or the barrier id
  int64_t value;
  mlir::Operation *op;
  bool operator==(const SyncEvent &) const = default;
};

/// The threads whose traces are the same: `threads` of them, from `first` to
/// `last`.
struct ThreadClass {
  int64_t first = 0, last = 0, threads = 0;
  std::vector<SyncEvent> events;
};

/// The trip count given to every loop with synchronisation whose bounds are
/// not constants (or whose constant trip count is too long to follow): it
/// runs from `start` (where its lower bound is not a constant) to its lower
/// bound + `trips`.
struct LoopScenario {
  int64_t start = 0, trips = 1;
};

struct SyncTraces {
  std::vector<ThreadClass> classes;
  bool abstractLoops = false; // some loop took the scenario's trip count
};

/// Why a kernel's synchronisation could not be followed: an op whose
/// operands or condition the interpreter cannot evaluate, or an op it does
/// not model.
struct UntracedSync {
  mlir::Operation *op;
  std::string reason;
};

/// Bytes one box through tensor-map argument `map` brings, if `map` is one
/// of the kernel's tensor-map parameters.
std::optional<int64_t> tmaBoxBytes(mlir::gpu::GPUFuncOp func, mlir::Value map);

/// Whether `func` has any mbarrier wait (what the phase proof is about).
bool waitsOnMbarriers(mlir::gpu::GPUFuncOp func);
/// Whether the kernel arrives at a named barrier without waiting (bar.arrive:
/// tl.pingpong's turns), which can hang it as an mbarrier wait can.
bool arrivesAtNamedBarriers(mlir::gpu::GPUFuncOp func);

/// Every thread's trace, grouped, for a block of `blockSize` threads.
/// Interprets only the ops that synchronise or hold ops that do, and the
/// integer and address arithmetic their operands and conditions need; thread
/// and loop indices are known, kernel arguments and block indices are not.
std::variant<SyncTraces, UntracedSync> traceThreads(mlir::gpu::GPUFuncOp func, int64_t blockSize,
                                                    const LoopScenario &scenario);

} // namespace tl::gpu_lowering
