//===- SyncTraces.cpp - each thread's synchronisation, by interpretation --===//
//
// Runs a lowered kernel once per thread index, following only what
// synchronises: scf.if and scf.for holding barriers or mbarrier ops, and the
// integer arithmetic (thread index, loop index, shared-memory offsets) their
// conditions and operands are made of. Everything else is skipped, so a
// thread's run costs its synchronisation, not its kernel. A value the run
// cannot know (a kernel argument, a block index) is fine until a condition or
// an mbarrier operand needs it; then the kernel is reported untraceable
// rather than guessed at.
//
//===----------------------------------------------------------------------===//
#include "SyncTraces.h"

#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <map>

using namespace mlir;

namespace tl::gpu_lowering {

std::optional<int64_t> tmaBoxBytes(gpu::GPUFuncOp func, Value map) {
  ArrayAttr maps = tlDialect(func).getTensorMapsAttrHelper().getAttr(func);
  auto arg = dyn_cast<BlockArgument>(map);
  if (!maps || !arg || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  int64_t first = func.getNumArguments() - maps.size();
  if (arg.getArgNumber() < first)
    return std::nullopt;
  auto attr = cast<TensorMapAttr>(maps[arg.getArgNumber() - first]);
  auto tensor = dyn_cast<MemRefType>(func.getArgument(attr.getParam()).getType());
  if (!tensor)
    return std::nullopt;
  int64_t bytes = tensor.getElementTypeBitWidth() / 8;
  for (int64_t extent : attr.getBox())
    bytes *= extent;
  return bytes;
}

namespace {

/// An op that synchronises threads, mbarriers or the async proxy's
/// completion on them (the ones the interpreter models and the ones it
/// refuses to guess about).
bool synchronises(Operation *op) {
  if (isa<gpu::BarrierOp, NVVM::Barrier0Op, NVVM::BarrierOp, NVVM::BarrierArriveOp,
          NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op))
    return true;
  return op->getDialect() && isa<NVVM::NVVMDialect>(op->getDialect()) &&
         op->getName().getStringRef().contains("mbarrier");
}

/// The ops to follow in each block: those that synchronise or hold one that
/// does.
using FollowedOps = DenseMap<Block *, SmallVector<Operation *>>;

FollowedOps followedOps(gpu::GPUFuncOp func) {
  DenseSet<Operation *> followed;
  func.walk([&](Operation *op) {
    if (!synchronises(op))
      return;
    for (Operation *at = op; at && at != func; at = at->getParentOp())
      if (!followed.insert(at).second)
        break;
  });
  FollowedOps blocks;
  func.walk([&](Operation *op) {
    if (followed.contains(op))
      blocks[op->getBlock()].push_back(op);
  });
  return blocks;
}

/// Longest constant trip count followed as is; longer loops take the
/// scenario's (the phases repeat long before).
constexpr int64_t kLongestFollowedLoop = 32;

class ThreadRun {
public:
  ThreadRun(gpu::GPUFuncOp func, const FollowedOps &followed, const LoopScenario &scenario,
            DenseMap<Value, int64_t> &boundBindings, int64_t tid)
      : func(func), followed(followed), scenario(scenario), boundBindings(boundBindings), tid(tid) {
  }

  /// Runs the kernel's body; false (with `untraced`) where it cannot.
  bool run() { return runBlock(func.getBody().front()); }

  /// Binds the unknown bounds of every loop with synchronisation that needs
  /// no loop index to evaluate, before any thread runs.
  void bindLoopBounds() {
    func.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      auto ops = followed.find(loop->getBlock());
      if (ops != followed.end() && llvm::is_contained(ops->second, loop.getOperation()))
        bindUnknownBounds(loop);
    });
  }

  /// The integer `value` holds in this thread, if the run can know it.
  std::optional<int64_t> evaluate(Value value, int depth = 0) {
    if (auto bound = boundBindings.find(value); bound != boundBindings.end())
      return bound->second;
    if (auto index = loopIndices.find(value); index != loopIndices.end())
      return index->second;
    if (auto known = memo.find(value); known != memo.end())
      return known->second;
    std::optional<int64_t> result = depth > 64 ? std::nullopt : compute(value, depth + 1);
    memo[value] = result;
    return result;
  }

  std::vector<SyncEvent> events;
  std::optional<UntracedSync> untraced;
  bool abstractLoops = false;

private:
  bool refuse(Operation *op, const Twine &reason) {
    untraced = UntracedSync{op, reason.str()};
    return false;
  }

  bool runBlock(Block &block) {
    auto ops = followed.find(&block);
    if (ops == followed.end())
      return true;
    for (Operation *op : ops->second)
      if (!runOp(op))
        return false;
    return true;
  }

  bool runOp(Operation *op) {
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      std::optional<int64_t> condition = evaluate(branch.getCondition());
      if (!condition)
        return refuse(op, "synchronisation under a condition that depends on more than the "
                          "thread and loop indices");
      if (*condition)
        return runBlock(*branch.thenBlock());
      return !branch.elseBlock() || runBlock(*branch.elseBlock());
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return runLoop(loop);
    if (op->getNumRegions())
      return refuse(op, "synchronisation inside an op the check does not follow");
    return record(op);
  }

  bool runLoop(scf::ForOp loop) {
    bindUnknownBounds(loop);
    std::optional<int64_t> lower = evaluate(loop.getLowerBound());
    std::optional<int64_t> upper = evaluate(loop.getUpperBound());
    std::optional<int64_t> step = evaluate(loop.getStep());
    if (!step || *step <= 0)
      return refuse(loop, "a loop with synchronisation whose step is not a positive constant");
    if (!lower || !upper)
      return refuse(loop, "a loop with synchronisation whose bounds cannot be followed");
    bool abstract = boundBindings.contains(loop.getLowerBound()) ||
                    boundBindings.contains(loop.getUpperBound());
    if (!abstract && (*upper - *lower) / *step > kLongestFollowedLoop) {
      // A long loop, followed as if it ended early: what its first
      // iterations do is all the kernel's (their phases repeat).
      abstract = true;
      upper = *lower + scenario.trips * *step;
    }
    abstractLoops |= abstract;
    for (int64_t index = *lower; index < *upper; index += *step) {
      forget(loop);
      loopIndices[loop.getInductionVar()] = index;
      if (!runBlock(*loop.getBody()))
        return false;
    }
    loopIndices.erase(loop.getInductionVar());
    forget(loop);
    return true;
  }

  /// Bounds from kernel arguments are the scenario's, for every use of the
  /// same value (a prologue's guard `k < end` reads it before the loop).
  /// (Not a bound that varies with an outer loop's index: one number would
  /// not stand for it.)
  void bindUnknownBounds(scf::ForOp loop) {
    std::optional<int64_t> step = evaluate(loop.getStep());
    if (!step || *step <= 0)
      return;
    std::optional<int64_t> lower = evaluate(loop.getLowerBound());
    if (!lower && !dependsOnLoopIndex(loop.getLowerBound()))
      lower = bind(loop.getLowerBound(), scenario.start);
    if (lower && !evaluate(loop.getUpperBound()) && !dependsOnLoopIndex(loop.getUpperBound()))
      bind(loop.getUpperBound(), *lower + scenario.trips * *step);
  }

  bool dependsOnLoopIndex(Value value, int depth = 0) {
    if (auto argument = dyn_cast<BlockArgument>(value))
      return argument.getOwner() != &func.getBody().front();
    Operation *def = value.getDefiningOp();
    return depth > 64 || llvm::any_of(def->getOperands(), [&](Value operand) {
             return dependsOnLoopIndex(operand, depth + 1);
           });
  }

  /// A loop bound the scenario decides.
  int64_t bind(Value bound, int64_t value) {
    auto [it, inserted] = boundBindings.try_emplace(bound, value);
    if (inserted)
      memo.erase(bound);
    return it->second;
  }

  /// Drops what was computed from the loop's previous index.
  void forget(scf::ForOp loop) {
    SmallVector<Value> stale;
    for (auto &[value, known] : memo) {
      Region *region = value.getParentRegion();
      if (region && loop->isAncestor(region->getParentOp()))
        stale.push_back(value);
    }
    for (Value value : stale)
      memo.erase(value);
  }

  std::optional<int64_t> operand(Operation *op, Value value, const char *what) {
    std::optional<int64_t> known = evaluate(value);
    if (!known)
      refuse(op, Twine("its ") + what + " depends on more than the thread and loop indices");
    return known;
  }

  bool record(Operation *op) {
    auto event = [&](SyncEvent::Kind kind, std::optional<int64_t> address,
                     std::optional<int64_t> value) {
      if (!address || !value)
        return false;
      events.push_back(SyncEvent{kind, *address, *value, op});
      return true;
    };
    if (auto init = dyn_cast<NVVM::MBarrierInitOp>(op)) {
      if (init.getPredicate())
        return refuse(op, "a predicated mbarrier initialisation");
      return event(SyncEvent::initMbarrier, operand(op, init.getAddr(), "mbarrier address"),
                   operand(op, init.getCount(), "arrival count"));
    }
    if (auto inval = dyn_cast<NVVM::MBarrierInvalOp>(op))
      return event(SyncEvent::invalMbarrier, operand(op, inval.getAddr(), "mbarrier address"), 0);
    if (auto arrive = dyn_cast<NVVM::MBarrierArriveOp>(op))
      return event(SyncEvent::arrive, operand(op, arrive.getAddr(), "mbarrier address"),
                   arrive.getCount() ? operand(op, arrive.getCount(), "arrival count")
                                     : std::optional<int64_t>(1));
    if (auto arm = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
      if (arm.getPredicate())
        return refuse(op, "a predicated mbarrier arrival");
      return event(SyncEvent::arm, operand(op, arm.getAddr(), "mbarrier address"),
                   operand(op, arm.getTxcount(), "transaction byte count"));
    }
    if (auto wait = dyn_cast<NVVM::MBarrierTryWaitParityOp>(op))
      return event(SyncEvent::wait, operand(op, wait.getAddr(), "mbarrier address"),
                   operand(op, wait.getPhase(), "parity"));
    if (auto box = dyn_cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
      if (box.getPredicate() || box.getMulticastMask())
        return refuse(op, "a predicated or multicast TMA box");
      std::optional<int64_t> bytes = tmaBoxBytes(func, box.getTmaDescriptor());
      if (!bytes)
        return refuse(op, "a TMA box through a tensor map the kernel does not list");
      return event(SyncEvent::box, operand(op, box.getMbar(), "mbarrier address"), bytes);
    }
    if (isa<gpu::BarrierOp, NVVM::Barrier0Op>(op))
      return event(SyncEvent::barrier, 0, 0);
    if (auto barrier = dyn_cast<NVVM::BarrierOp>(op)) {
      if (barrier.getReductionOp())
        return refuse(op, "a barrier with a reduction");
      std::optional<int64_t> id = 0, count = 0;
      if (barrier.getBarrierId())
        id = operand(op, barrier.getBarrierId(), "barrier id");
      if (barrier.getNumberOfThreads())
        count = operand(op, barrier.getNumberOfThreads(), "thread count");
      return event(SyncEvent::barrier, id, count);
    }
    if (auto arrive = dyn_cast<NVVM::BarrierArriveOp>(op)) {
      std::optional<int64_t> id = 0;
      if (arrive.getBarrierId())
        id = operand(op, arrive.getBarrierId(), "barrier id");
      return event(SyncEvent::barrierArrive, id,
                   operand(op, arrive.getNumberOfThreads(), "thread count"));
    }
    return refuse(op, "a synchronisation op the check does not model");
  }

  std::optional<int64_t> compute(Value value, int depth);

  gpu::GPUFuncOp func;
  const FollowedOps &followed;
  const LoopScenario &scenario;
  DenseMap<Value, int64_t> &boundBindings;
  int64_t tid;
  DenseMap<Value, int64_t> loopIndices;
  DenseMap<Value, std::optional<int64_t>> memo;
};

/// The integer `value` holds in this thread, if the interpreter can know.
std::optional<int64_t> ThreadRun::compute(Value value, int depth) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt; // a kernel argument, or a loop's carried value
  if (APInt constant; matchPattern(value, m_ConstantInt(&constant))) // arith's or llvm's
    return constant.getSExtValue();
  auto operandAt = [&](unsigned i) { return evaluate(def->getOperand(i), depth); };
  auto binary = [&](auto apply) -> std::optional<int64_t> {
    std::optional<int64_t> lhs = operandAt(0), rhs = operandAt(1);
    if (!lhs || !rhs)
      return std::nullopt;
    return apply(*lhs, *rhs);
  };
  auto unsignedDivision = [&](bool remainder) {
    return binary([&](int64_t a, int64_t b) -> std::optional<int64_t> {
      if (b == 0)
        return std::nullopt;
      auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
      return static_cast<int64_t>(remainder ? ua % ub : ua / ub);
    });
  };
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(def)
      .Case([&](arith::AddIOp) { return binary(std::plus<int64_t>()); })
      .Case([&](arith::SubIOp) { return binary(std::minus<int64_t>()); })
      .Case([&](arith::MulIOp) { return binary(std::multiplies<int64_t>()); })
      .Case([&](arith::AndIOp) { return binary(std::bit_and<int64_t>()); })
      .Case([&](arith::OrIOp) { return binary(std::bit_or<int64_t>()); })
      .Case([&](arith::XOrIOp) { return binary(std::bit_xor<int64_t>()); })
      .Case([&](arith::ShLIOp) { return binary([](int64_t a, int64_t b) { return a << b; }); })
      .Case([&](arith::ShRUIOp) {
        return binary([](int64_t a, int64_t b) {
          return static_cast<int64_t>(static_cast<uint64_t>(a) >> b);
        });
      })
      .Case([&](arith::ShRSIOp) { return binary([](int64_t a, int64_t b) { return a >> b; }); })
      .Case([&](arith::MinSIOp) {
        return binary([](int64_t a, int64_t b) { return std::min(a, b); });
      })
      .Case([&](arith::MaxSIOp) {
        return binary([](int64_t a, int64_t b) { return std::max(a, b); });
      })
      .Case([&](arith::DivUIOp) { return unsignedDivision(false); })
      .Case([&](arith::RemUIOp) { return unsignedDivision(true); })
      .Case([&](arith::DivSIOp) {
        return binary([](int64_t a, int64_t b) -> std::optional<int64_t> {
          return b ? std::optional<int64_t>(a / b) : std::nullopt;
        });
      })
      .Case([&](arith::RemSIOp) {
        return binary([](int64_t a, int64_t b) -> std::optional<int64_t> {
          return b ? std::optional<int64_t>(a % b) : std::nullopt;
        });
      })
      .Case([&](arith::CeilDivSIOp) {
        return binary([](int64_t a, int64_t b) -> std::optional<int64_t> {
          if (!b)
            return std::nullopt;
          return a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
        });
      })
      .Case([&](arith::CmpIOp compare) -> std::optional<int64_t> {
        std::optional<int64_t> lhs = operandAt(0), rhs = operandAt(1);
        if (!lhs || !rhs)
          return std::nullopt;
        auto ul = static_cast<uint64_t>(*lhs), ur = static_cast<uint64_t>(*rhs);
        switch (compare.getPredicate()) {
        case arith::CmpIPredicate::eq:
          return *lhs == *rhs;
        case arith::CmpIPredicate::ne:
          return *lhs != *rhs;
        case arith::CmpIPredicate::slt:
          return *lhs < *rhs;
        case arith::CmpIPredicate::sle:
          return *lhs <= *rhs;
        case arith::CmpIPredicate::sgt:
          return *lhs > *rhs;
        case arith::CmpIPredicate::sge:
          return *lhs >= *rhs;
        case arith::CmpIPredicate::ult:
          return ul < ur;
        case arith::CmpIPredicate::ule:
          return ul <= ur;
        case arith::CmpIPredicate::ugt:
          return ul > ur;
        case arith::CmpIPredicate::uge:
          return ul >= ur;
        }
        return std::nullopt;
      })
      .Case([&](arith::SelectOp select) -> std::optional<int64_t> {
        std::optional<int64_t> condition = operandAt(0);
        if (!condition)
          return std::nullopt;
        return evaluate(*condition ? select.getTrueValue() : select.getFalseValue(), depth);
      })
      .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp,
            LLVM::IntToPtrOp, LLVM::PtrToIntOp, LLVM::AddrSpaceCastOp>(
          [&](Operation *) { return operandAt(0); })
      .Case([&](arith::TruncIOp truncate) -> std::optional<int64_t> {
        std::optional<int64_t> wide = operandAt(0);
        unsigned width = truncate.getType().getIntOrFloatBitWidth();
        if (!wide || width >= 64)
          return wide;
        return *wide & ((int64_t(1) << width) - 1);
      })
      .Case([&](gpu::ThreadIdOp id) -> std::optional<int64_t> {
        return id.getDimension() == gpu::Dimension::x ? tid : 0;
      })
      .Case([&](NVVM::ThreadIdXOp) -> std::optional<int64_t> { return tid; })
      .Case([&](gpu::LaneIdOp) -> std::optional<int64_t> { return tid % 32; })
      .Case([&](gpu::ShuffleOp shuffle) -> std::optional<int64_t> {
        // An index shuffle broadcasts the value of one lane of the warp.
        std::optional<int64_t> lane = operandAt(1), width = operandAt(2);
        if (shuffle.getMode() != gpu::ShuffleMode::IDX || value != shuffle.getShuffleResult() ||
            !lane || width != 32)
          return std::nullopt;
        ThreadRun source(func, followed, scenario, boundBindings, tid - tid % 32 + *lane);
        source.loopIndices = loopIndices;
        return source.evaluate(shuffle.getValue(), depth);
      })
      .Case([&](memref::ViewOp view) -> std::optional<int64_t> {
        // Shared memory's byte offsets stand for its addresses.
        if (!view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
          return std::nullopt;
        return evaluate(view.getByteShift(), depth);
      })
      .Case([&](memref::ExtractAlignedPointerAsIndexOp pointer) { return operandAt(0); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

bool waitsOnMbarriers(gpu::GPUFuncOp func) {
  return func.walk([](NVVM::MBarrierTryWaitParityOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

bool arrivesAtNamedBarriers(gpu::GPUFuncOp func) {
  return func.walk([](NVVM::BarrierArriveOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

/// The values a thread's trace can depend on its index through: the
/// largest thread-dependent parts of the followed ops' conditions, bounds and
/// operands that need nothing but the thread index (`tid == 0`, a warpgroup
/// index). Threads that agree on all of them have the same trace, so one of
/// each kind is run (most kernels have a few kinds).
SmallVector<Value> threadSignature(gpu::GPUFuncOp func, const FollowedOps &followed) {
  DenseMap<Value, bool> dependent;
  std::function<bool(Value)> threadDependent = [&](Value value) {
    if (auto known = dependent.find(value); known != dependent.end())
      return known->second;
    dependent[value] = false; // (no cycles in SSA outside block arguments)
    Operation *def = value.getDefiningOp();
    bool result = def && (isa<gpu::ThreadIdOp, gpu::LaneIdOp, NVVM::ThreadIdXOp>(def) ||
                          llvm::any_of(def->getOperands(), threadDependent));
    return dependent[value] = result;
  };
  LoopScenario none;
  DenseMap<Value, int64_t> noBindings;
  ThreadRun alone(func, followed, none, noBindings, /*tid=*/0);
  SmallVector<Value> signature;
  DenseSet<Value> visited;
  std::function<void(Value)> collect = [&](Value value) {
    if (!visited.insert(value).second || !threadDependent(value))
      return;
    if (alone.evaluate(value)) {
      signature.push_back(value);
      return;
    }
    if (Operation *def = value.getDefiningOp())
      llvm::for_each(def->getOperands(), collect);
  };
  for (const auto &[block, ops] : followed)
    for (Operation *op : ops) {
      if (auto branch = dyn_cast<scf::IfOp>(op))
        collect(branch.getCondition());
      else if (auto loop = dyn_cast<scf::ForOp>(op))
        llvm::for_each(ValueRange{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()},
                       collect);
      else
        llvm::for_each(op->getOperands(), collect);
    }
  return signature;
}

std::variant<SyncTraces, UntracedSync> traceThreads(gpu::GPUFuncOp func, int64_t blockSize,
                                                    const LoopScenario &scenario) {
  FollowedOps followed = followedOps(func);
  DenseMap<Value, int64_t> boundBindings;
  SyncTraces traces;
  ThreadRun(func, followed, scenario, boundBindings, /*tid=*/0).bindLoopBounds();
  // Threads with the same signature have the same trace: one of each is run.
  SmallVector<Value> signature = threadSignature(func, followed);
  std::map<std::vector<std::optional<int64_t>>, size_t> classOf;
  std::vector<int64_t> classThread(blockSize);
  LoopScenario none;
  DenseMap<Value, int64_t> noBindings;
  for (int64_t tid = 0; tid < blockSize; ++tid) {
    ThreadRun alone(func, followed, none, noBindings, tid);
    std::vector<std::optional<int64_t>> key;
    for (Value value : signature)
      key.push_back(alone.evaluate(value));
    auto [it, inserted] = classOf.try_emplace(std::move(key), traces.classes.size());
    if (inserted) {
      ThreadRun run(func, followed, scenario, boundBindings, tid);
      if (!run.run())
        return *run.untraced;
      traces.abstractLoops |= run.abstractLoops;
      traces.classes.push_back(ThreadClass{tid, tid, 0, std::move(run.events)});
    }
    ThreadClass &threads = traces.classes[it->second];
    threads.last = tid;
    ++threads.threads;
  }
  return traces;
}

} // namespace tl::gpu_lowering
