//===- BarrierElision.cpp - drop the barriers that order nothing ----------===//
//
// See BarrierElision.h for the rule. The walk runs on the thread-level code
// the GPU lowering made (memref, vector, scf, nvvm and llvm ops), where every
// shared access reaches its tile either through a memref view or through an
// address computed, by pure ops, from the tile's aligned pointer. The pass
// tl-elide-barriers runs it on every gpu.func after the lowering.
//
//===----------------------------------------------------------------------===//
#include "BarrierElision.h"
#include "OpaqueMove.h"

#include "tl/Conversion/Passes.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>
#include <optional>

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_ELIDEBARRIERS
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

constexpr int64_t kAll = std::numeric_limits<int64_t>::max();

/// Bytes an access may touch: of shared memory, of a kernel argument in
/// global memory (range [n, n+1) for argument n: arguments are assumed not to
/// alias), or of anything.
struct Access {
  enum class Space { Shared, Global, Anything } space;
  int64_t first = 0, end = kAll;
  bool write = false;
};

bool conflict(const Access &a, const Access &b) {
  if (!a.write && !b.write)
    return false;
  if (a.space == Access::Space::Anything || b.space == Access::Space::Anything)
    return true;
  return a.space == b.space && a.first < b.end && b.first < a.end;
}

bool conflict(ArrayRef<Access> before, ArrayRef<Access> after) {
  for (const Access &a : before)
    for (const Access &b : after)
      if (conflict(a, b))
        return true;
  return false;
}

const Access kAnything{Access::Space::Anything, 0, kAll, true};
const Access kAllShared{Access::Space::Shared, 0, kAll, true};
const Access kAllSharedRead{Access::Space::Shared, 0, kAll, false};

/// A proxy fence that publishes the thread's generic shared writes to the
/// async proxy (`fence.proxy.async`, `.async.shared::cta`): the lowering's.
/// Other kinds (global, tensor maps) stay unknown.
bool isSharedProxyFence(Operation *op) {
  auto fence = dyn_cast<NVVM::FenceProxyOp>(op);
  if (!fence)
    return false;
  std::optional<NVVM::SharedSpace> space = fence.getSpace();
  return fence.getKind() == NVVM::ProxyKind::async ||
         (fence.getKind() == NVVM::ProxyKind::async_shared &&
          (!space || *space == NVVM::SharedSpace::shared_cta));
}

/// The consumers' barrier of a warp-specialised kernel (`bar.sync 1, T`,
/// LowerWarpSpecialized.cpp): it orders the consumer threads as gpu.barrier
/// orders the block. The producer warpgroup never meets it (it synchronises
/// with the consumers through mbarriers), and the pingpong turns' barriers
/// (ids 2 and up) order only pairs of warpgroups: those are not it.
bool isConsumersBarrier(Operation *op) {
  auto barrier = dyn_cast<NVVM::BarrierOp>(op);
  APInt id;
  return barrier && !barrier.getReductionOp() && barrier.getBarrierId() &&
         matchPattern(barrier.getBarrierId(), m_ConstantInt(&id)) && id == 1;
}

/// The accesses of `op` other than barriers (ops with regions: of every op
/// they hold). A cp.async issue counts only where `issues` says so: as a
/// write of its tile and a read of its source, which a barrier before the
/// issue orders against earlier accesses (the copy cannot start sooner),
/// while no barrier after the issue orders the copy (only its wait does).
///
/// With `asyncProxy` it also sees through the wgmma path's synchronisation
/// (BarrierElision.h): a proxy fence before a barrier counts as a write of all
/// shared memory (Elider::run narrows it to the writes since the thread's last
/// fence) and after one as nothing; a wgmma as a read of the tiles its
/// descriptors name; a wgmma wait as a read of all shared memory; the wgmma
/// fence and commit as nothing; the consumers' barrier as a barrier.
class AccessFinder {
public:
  AccessFinder(gpu::GPUFuncOp func, bool asyncProxy) : func(func), asyncProxy(asyncProxy) {}

  void collect(Operation *op, SmallVectorImpl<Access> &out, bool issues) {
    auto add = [&](Operation *inner) {
      if (inner->getNumRegions() != 0) {
        // Only ops whose effects are those of the ops they hold (scf.if,
        // scf.for) are seen through; others touch what they may.
        if (!inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
          out.push_back(kAnything);
        return;
      }
      if (asyncProxy && isSharedProxyFence(inner)) {
        if (!issues)
          out.push_back(kAllShared);
        return;
      }
      if (auto copy = dyn_cast<NVVM::CpAsyncOp>(inner)) {
        if (issues) {
          out.append(pointedTo(copy.getDst(), true));
          out.append(pointedTo(copy.getSrc(), false));
        }
        return;
      }
      const SmallVector<Access> &own = of(inner);
      out.append(own.begin(), own.end());
    };
    if (op->getNumRegions() == 0)
      add(op);
    else
      op->walk(add);
  }

private:
  const SmallVector<Access> &of(Operation *op) {
    auto [entry, inserted] = cache.try_emplace(op);
    if (inserted)
      entry->second = compute(op);
    return entry->second;
  }

  SmallVector<Access> compute(Operation *op) {
    if (isa<gpu::BarrierOp, NVVM::CpAsyncCommitGroupOp, memref::AllocaOp, NVVM::VoteSyncOp,
            gpu::ShuffleOp>(op))
      return {};
    if (isa<NVVM::CpAsyncWaitGroupOp>(op))
      return {kAllShared};
    if (asyncProxy) {
      if (isConsumersBarrier(op) ||
          isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp>(op))
        return {};
      if (isOpaqueMove(op))
        return {};
      // What a wait completes may read any tile until then.
      if (isa<NVVM::WgmmaWaitGroupSyncOp>(op))
        return {kAllSharedRead};
      if (auto mma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
        SmallVector<Access> reads = pointedTo(mma.getDescriptorA(), false);
        reads.append(pointedTo(mma.getDescriptorB(), false));
        return reads;
      }
    }
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return through(load.getMemRef(), false);
    if (auto load = dyn_cast<vector::LoadOp>(op))
      return through(load.getBase(), false);
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return through(store.getMemRef(), true);
    if (auto store = dyn_cast<vector::StoreOp>(op))
      return through(store.getBase(), true);
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op))
      return through(atomic.getMemref(), true);
    // An acquire or release orders what other blocks wrote or will read
    // anywhere (tl.in_turn's turn counter): a barrier next to it publishes
    // that order to the block, so it conflicts with everything.
    if (auto load = dyn_cast<LLVM::LoadOp>(op))
      return load.getOrdering() == LLVM::AtomicOrdering::not_atomic
                 ? pointedTo(load.getAddr(), false)
                 : SmallVector<Access>{kAnything};
    if (auto store = dyn_cast<LLVM::StoreOp>(op))
      return store.getOrdering() == LLVM::AtomicOrdering::not_atomic
                 ? pointedTo(store.getAddr(), true)
                 : SmallVector<Access>{kAnything};
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      StringRef name = call.getIntrin();
      for (StringRef math : {"llvm.nvvm.ex2.", "llvm.nvvm.lg2.", "llvm.nvvm.rsqrt."})
        if (name.starts_with(math))
          return {};
      return {kAnything};
    }
    if (auto matrices = dyn_cast<NVVM::LdMatrixOp>(op))
      return pointedTo(matrices.getPtr(), false);
    if (auto matrices = dyn_cast<NVVM::StMatrixOp>(op))
      return pointedTo(matrices.getPtr(), true);
    // mma.sync works on registers only (the op declares no effects, so it is
    // named here).
    if (isa<NVVM::MmaOp>(op))
      return {};
    // Inline assembly without side effects (the lowering's opaque xor)
    // touches no memory.
    if (auto assembly = dyn_cast<LLVM::InlineAsmOp>(op))
      return assembly.getHasSideEffects() ? SmallVector<Access>{kAnything} : SmallVector<Access>{};
    if (isMemoryEffectFree(op))
      return {};
    return {kAnything};
  }

  /// An access through `memref`: none for a thread's own registers
  /// (memref.alloca), its tile's bytes for a shared view, global memory for a
  /// kernel argument.
  SmallVector<Access> through(Value memref, bool write) {
    std::optional<Access> region = regionOf(memref);
    if (!region)
      return {};
    region->write = write || region->space == Access::Space::Anything;
    return {*region};
  }

  /// nullopt: private to the thread.
  std::optional<Access> regionOf(Value memref) {
    for (int depth = 0; depth < 16; ++depth) {
      if (auto arg = dyn_cast<BlockArgument>(memref)) {
        if (arg.getOwner()->getParentOp() == func.getOperation()) // apart, as in PipelinePlan.h
          return Access{Access::Space::Global, arg.getArgNumber(), arg.getArgNumber() + 1, false};
        return kAnything;
      }
      Operation *def = memref.getDefiningOp();
      if (isa<memref::AllocaOp>(def))
        return std::nullopt;
      if (isa<gpu::DynamicSharedMemoryOp>(def))
        return kAllShared;
      if (auto view = dyn_cast<memref::ViewOp>(def)) {
        auto range = tlDialect(view).getSharedRangeAttrHelper().getAttr(view);
        if (!range || range.size() != 2)
          return view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>() ? kAllShared
                                                                              : kAnything;
        return Access{Access::Space::Shared, range[0], range[1], false};
      }
      auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
      if (!viewLike)
        return kAnything;
      memref = viewLike.getViewSource();
    }
    return kAnything;
  }

  /// An access through an address: the tiles whose aligned pointers the
  /// address is computed from by pure ops (anything when it is not).
  SmallVector<Access> pointedTo(Value address, bool write) {
    SmallVector<Access> regions;
    DenseSet<Value> seen;
    bool unknown = false;
    addressSources(address, regions, seen, unknown);
    if (unknown || regions.empty())
      return {kAnything};
    for (Access &region : regions)
      region.write = write || region.space == Access::Space::Anything;
    return regions;
  }

  void addressSources(Value value, SmallVectorImpl<Access> &regions, DenseSet<Value> &seen,
                      bool &unknown) {
    if (unknown || !seen.insert(value).second)
      return;
    if (seen.size() > 256) {
      unknown = true;
      return;
    }
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      // A loop's induction variable is an offset; other block arguments
      // (loop-carried values) could carry any address.
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg != loop.getInductionVar())
        unknown = true;
      return;
    }
    Operation *def = value.getDefiningOp();
    if (asyncProxy && isOpaqueMove(def)) { // a wgmma descriptor held in place
      addressSources(def->getOperand(0), regions, seen, unknown);
      return;
    }
    if (auto extract = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def)) {
      std::optional<Access> region = regionOf(extract.getSource());
      if (!region) {
        unknown = true;
        return;
      }
      regions.push_back(*region);
      return;
    }
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def)) {
      unknown = true;
      return;
    }
    for (Value operand : def->getOperands())
      addressSources(operand, regions, seen, unknown);
  }

  gpu::GPUFuncOp func;
  DenseMap<Operation *, SmallVector<Access>> cache;

public:
  const bool asyncProxy;
};

class Elider {
public:
  Elider(gpu::GPUFuncOp func, bool asyncProxy) : finder(func, asyncProxy) {}

  /// `block` runs after a barrier P (of `scopeP`, barrierScope) with
  /// `sinceBarrier` the accesses since; no P (a loop body) when `afterBarrier`
  /// is false.
  void run(Block &block, bool afterBarrier, SmallVector<Access> sinceBarrier, int scopeP = 2) {
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    // (asyncProxy) The shared writes since the thread's last proxy fence in
    // this block; unknown (nullopt) at the start of any block but the
    // kernel's, where nothing is written yet.
    std::optional<SmallVector<Access>> unfenced;
    if (asyncProxy() && block.isEntryBlock() && isa<gpu::GPUFuncOp>(block.getParentOp()))
      unfenced.emplace();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation *op = ops[i];
      if (asyncProxy() && isSharedProxyFence(op)) {
        // It publishes this thread's writes since its last fence to the
        // async proxy: a barrier after it orders them for the others' wgmma.
        sinceBarrier.append(unfenced ? *unfenced : SmallVector<Access>{kAllShared});
        unfenced.emplace();
        continue;
      }
      if (int scope = barrierScope(op)) {
        // P, and the next barrier, must order at least the threads B does.
        if (afterBarrier && scopeP >= scope &&
            (sinceBarrier.empty() || ordersNothing(ops, i, sinceBarrier, scope))) {
          op->erase();
          ++removed;
          continue;
        }
        afterBarrier = true;
        scopeP = scope;
        sinceBarrier.clear();
        continue;
      }
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        // A branch runs once, right here: the enclosing P is its P too.
        for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
          for (Block &inner : *region)
            run(inner, afterBarrier, sinceBarrier, scopeP);
      } else {
        for (Region &region : op->getRegions())
          for (Block &inner : region)
            run(inner, false, {});
      }
      // Over-approximate: a barrier inside a branch only adds order.
      size_t before = sinceBarrier.size();
      finder.collect(op, sinceBarrier, /*issues=*/false);
      if (unfenced) // a fence inside `op` only narrows them
        for (size_t a = before; a < sinceBarrier.size(); ++a)
          if (sinceBarrier[a].write)
            unfenced->push_back(sinceBarrier[a]);
    }
  }

  int64_t removed = 0;

private:
  /// The barrier ops[at] is followed in its block by another, and nothing
  /// between the two conflicts with `before`.
  bool ordersNothing(ArrayRef<Operation *> ops, size_t at, ArrayRef<Access> before, int scope) {
    SmallVector<Access> after;
    for (size_t j = at + 1; j < ops.size(); ++j) {
      if (int next = barrierScope(ops[j]))
        return next >= scope && !conflict(before, after);
      finder.collect(ops[j], after, /*issues=*/true);
    }
    return false;
  }

  /// 2: a barrier of the block; 1 (asyncProxy): the consumers'; 0: none.
  int barrierScope(Operation *op) const {
    if (isa<gpu::BarrierOp>(op))
      return 2;
    return asyncProxy() && isConsumersBarrier(op) ? 1 : 0;
  }

  bool asyncProxy() const { return finder.asyncProxy; }

  AccessFinder finder;
};

} // namespace

int64_t elideRedundantBarriers(gpu::GPUFuncOp func, bool asyncProxy) {
  Elider elider(func, asyncProxy);
  // The kernel's start orders like a barrier: nothing came before.
  for (Block &block : func.getBody())
    elider.run(block, block.isEntryBlock(), {});
  return elider.removed;
}

namespace {

struct ElideBarriersPass : public tl::impl::ElideBarriersBase<ElideBarriersPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) { elideRedundantBarriers(func, asyncProxy); });
  }
};

} // namespace
} // namespace tl::gpu_lowering
