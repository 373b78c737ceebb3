//===- PlanTmaCopies.cpp - tl-plan-tma-copies: whole-tile copies by TMA ---===//
//
// On sm_90a a whole shared tile moves to or from global memory fastest as
// TMA boxes: one thread issues them, the copy engine moves the bytes, and the
// threads are free meanwhile (a load completes on an mbarrier; a store is a
// bulk group the issuing thread waits to have read its tile). The pipelined
// loops' loads are tl-plan-pipelines' (tl.tma_loads); this pass marks the
// other copies that qualify with `tl.tma_copy`:
//   - the copy stands directly in the kernel body (it runs once: a load's
//     mbarrier completes one phase), between a kernel tensor and a shared
//     tile allocated in the kernel, neither with an index-map layout;
//   - boxes can move the whole tile (tmaBoxable, PipelinePlan.h);
//   - the tile is not a pipelined loop's rotating tile, an async entry copy's
//     destination, annotated with an index-map layout, or read by a gemm that
//     does not take the wgmma layouts (the tile takes the swizzle-atom layout
//     of the wgmma operands, WgmmaOperands.h, which is the boxes' swizzle;
//     for a load a make_swizzled_layout annotation is no obstacle, as it asks
//     for a swizzle and this is one: a forward's Q tile. Stores from such
//     tiles, the backward's dK and dV, stay with the threads: not measured).
// It marks the tl.atomic_add_tile ops that can go as TMA reduce-add boxes
// too (tmaReduceCapable), wherever they stand: the tile's writes wait for the
// boxes before (LowerTma.cpp). Such an add in a loop with a producer
// warpgroup that can issue it (producerCanReduce) is marked
// `tl.producer_reduce` as well: the consumers hand the tile to the producer
// (LowerWarpSpecialized.cpp), FlashAttention-3's dQ.
// The lowering (LowerTma.cpp) emits them; tl-plan-shared-memory aligns such
// tiles at 1024 bytes.
//
//===----------------------------------------------------------------------===//
#include "PipelinePlan.h"

#include "tl/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_PLANTMACOPIES
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

/// Whether `tile` can take the swizzle-atom layout for a load (`load`) or a
/// store: nothing places it otherwise.
bool atomLayoutAllowed(AllocSharedOp tile, bool load) {
  TLDialect &tl = tlDialect(tile);
  if (tl.getRotatingCopiesAttrHelper().getAttr(tile))
    return false;
  for (Operation *user : tile->getUsers()) {
    if (auto annotate = dyn_cast<AnnotateLayoutOp>(user);
        annotate && !(load && isa<SwizzleLayoutAttr>(annotate.getLayout())))
      return false;
    if (auto copy = dyn_cast<CopyOp>(user); copy && tl.getAsyncEntryCopyAttrHelper().getAttr(copy))
      return false;
    if (auto gemm = dyn_cast<GemmOp>(user)) {
      auto accumulator = gemm.getC().getDefiningOp<AllocFragmentOp>();
      if (!accumulator ||
          !isa_and_nonnull<WgmmaLayoutAttr>(tl.getLayoutAttrHelper().getAttr(accumulator)))
        return false;
    }
  }
  return true;
}

bool tmaCopyCapable(CopyOp copy, KernelOp kernel, const lowering::LayoutMap &layouts) {
  if (copy->getParentOp() != kernel.getOperation() || layouts.count(copy.getSrc()) ||
      layouts.count(copy.getDst()))
    return false;
  auto tensorArgument = [](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp());
  };
  bool load = tensorArgument(copy.getSrc());
  Value global = load ? copy.getSrc() : copy.getDst();
  Value shared = load ? copy.getDst() : copy.getSrc();
  auto tile = shared.getDefiningOp<AllocSharedOp>();
  if (!tensorArgument(global) || !tile || !atomLayoutAllowed(tile, load))
    return false;
  return tmaBoxable(cast<MemRefType>(global.getType()),
                    load ? copy.getSrcSizes() : copy.getDstSizes(), tile.getType());
}

/// Whether a tl.atomic_add_tile can go as TMA reduce-add boxes: the whole of
/// a shared tile allocated in the kernel, which only tl.copy writes (its
/// lowering waits there for earlier boxes to have read the tile), into a
/// kernel tensor, neither with an index-map layout, boxable (32-bit elements
/// too) and free to take the swizzle-atom layout. The kernel must only add
/// into the tensor (nothing waits for the boxes to complete before the
/// kernel's end but a tl.in_turn's release or a tl.last_to_arrive's
/// arrival, so a read or a write of it would race with them: the backward's
/// convert_dq, which reads dQ in its last block, takes element adds).
bool tmaReduceCapable(AtomicAddTileOp add, const lowering::LayoutMap &layouts) {
  auto tile = add.getSrc().getDefiningOp<AllocSharedOp>();
  auto tensor = dyn_cast<BlockArgument>(add.getDst());
  if (!tile || !tensor || !isa<func::FuncOp>(tensor.getOwner()->getParentOp()) ||
      layouts.count(add.getSrc()) || layouts.count(add.getDst()) ||
      !atomLayoutAllowed(tile, /*load=*/false))
    return false;
  for (auto [offset, size, extent] :
       llvm::zip(add.getSrcOffsets(), add.getSrcSizes(), tile.getType().getShape())) {
    std::optional<int64_t> start = getConstantIntValue(offset);
    if (!start || *start != 0 || size != extent)
      return false;
  }
  for (Operation *user : add.getDst().getUsers())
    if (!isa<AtomicAddTileOp, AtomicAddOp>(user))
      return false;
  for (Operation *user : tile->getUsers()) {
    if (user == add.getOperation())
      continue;
    auto copy = dyn_cast<CopyOp>(user);
    bool reads = copy && copy.getSrc() == tile.getResult();
    if (!reads && !(copy && copy.getDst() == tile.getResult()) && !isa<GemmOp>(user))
      return false;
  }
  return tmaBoxable(cast<MemRefType>(add.getDst().getType()), add.getDstSizes(), tile.getType(),
                    /*wideElements=*/true);
}

/// The warp-specialised pipelined loop `op` stands directly in, or null.
PipelinedOp warpSpecializedLoopAround(Operation *op, KernelOp kernel) {
  auto loop = dyn_cast<PipelinedOp>(op->getParentOp());
  return loop && loop->getParentOp() == kernel.getOperation() &&
                 tlDialect(kernel).getWarpSpecializedAttrHelper().isAttrPresent(loop)
             ? loop
             : PipelinedOp();
}

/// A tile add in a tl.in_turn in a warp-specialised loop: the turn's pure
/// ops besides the add (its offsets' math, as the eDSL writes it) move out
/// before the turn, where a producer warpgroup can compute them. Moving pure
/// ops out of a body that always runs changes nothing else.
void moveTurnMathOut(AtomicAddTileOp add, KernelOp kernel) {
  auto turn = dyn_cast<InTurnOp>(add->getParentOp());
  if (!turn || !warpSpecializedLoopAround(turn, kernel))
    return;
  SmallVector<Operation *> math;
  for (Operation &op : turn.getBody().front())
    if (&op != add.getOperation())
      math.push_back(&op);
  if (!llvm::all_of(math, [](Operation *op) { return isPure(op) && !op->getNumRegions(); }))
    return;
  for (Operation *op : math)
    op->moveBefore(turn);
}

/// Whether the producer warpgroup of a warp-specialised loop can issue
/// `add` (a reduce-add by TMA) for the consumers: it stands directly in that
/// loop's body, or alone in a tl.in_turn that does (a deterministic
/// backward: the producer then waits for the turn and passes it on, so the
/// consumers never wait on other blocks; moveTurnMathOut leaves it alone),
/// the loop's only tile add (the producer takes one), its offsets and the
/// turn's operands computable by the producer; and its tile is written only
/// by copies directly in the body before it and read by nothing else (the
/// consumers write it, then hand it over on an mbarrier; the producer hands
/// it back once its boxes have read it).
bool producerCanReduce(AtomicAddTileOp add, KernelOp kernel) {
  Operation *anchor = add; // what stands in the loop's body
  SmallVector<Value> operands(add.getDstOffsets());
  if (auto turn = dyn_cast<InTurnOp>(add->getParentOp())) {
    if (!llvm::hasSingleElement(turn.getBody().front()))
      return false;
    anchor = turn;
    llvm::append_range(operands, turn.getIndices());
    operands.push_back(turn.getTurn());
    operands.push_back(turn.getNext());
  }
  PipelinedOp loop = warpSpecializedLoopAround(anchor, kernel);
  auto tile = add.getSrc().getDefiningOp<AllocSharedOp>();
  if (!loop || !tile || !offsetsAtKernelStart(kernel, loop, operands))
    return false;
  int adds = 0;
  loop.walk([&](AtomicAddTileOp) { ++adds; });
  if (adds != 1)
    return false;
  return llvm::all_of(tile->getUsers(), [&](Operation *user) {
    auto copy = dyn_cast<CopyOp>(user);
    return user == add.getOperation() ||
           (copy && copy.getDst() == tile.getResult() && user->getBlock() == anchor->getBlock() &&
            user->isBeforeInBlock(anchor));
  });
}

struct PlanTmaCopiesPass : public tl::impl::PlanTmaCopiesBase<PlanTmaCopiesPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      lowering::LayoutMap layouts = lowering::indexMapLayouts(kernel);
      Builder b(kernel.getContext());
      for (auto copy : kernel.getBody().front().getOps<CopyOp>())
        if (tmaCopyCapable(copy, kernel, layouts))
          tlDialect(kernel).getTmaCopyAttrHelper().setAttr(copy, b.getUnitAttr());
      // Gathered first: moveTurnMathOut moves ops out of a tl.in_turn, which
      // a walk in progress must not see.
      SmallVector<AtomicAddTileOp> adds;
      kernel.walk([&](AtomicAddTileOp add) { adds.push_back(add); });
      for (AtomicAddTileOp add : adds) {
        if (!tmaReduceCapable(add, layouts))
          continue;
        tlDialect(kernel).getTmaCopyAttrHelper().setAttr(add, b.getUnitAttr());
        moveTurnMathOut(add, kernel);
        if (producerCanReduce(add, kernel))
          tlDialect(kernel).getProducerReduceAttrHelper().setAttr(add, b.getUnitAttr());
      }
    });
  }
};

} // namespace
} // namespace tl::gpu_lowering
