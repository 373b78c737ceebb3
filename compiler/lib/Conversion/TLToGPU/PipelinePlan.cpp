//===- PipelinePlan.cpp - which copies of a pipelined loop go asynchronous -===//
//
// See PipelinePlan.h for the conditions. The analysis runs on the tl ops of a
// kernel before the GPU lowering rewrites any of them.
//
//===----------------------------------------------------------------------===//
#include "PipelinePlan.h"

#include "tl/Compiler/GPUCompiler.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>

using namespace mlir;

namespace tl::gpu_lowering {
namespace {

constexpr int64_t kMaxDivisor = int64_t(1) << 20;

bool isGlobalArgument(Value v, Operation *func) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->getParentOp() == func;
}

/// The value is the induction variable, comes from outside the body, or is
/// computed in the body by pure ops from such values.
bool recomputable(Value value, Block &body, int depth = 0) {
  if (depth > 32)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &body ||
           !body.getParentOp()->isAncestor(arg.getOwner()->getParentOp());
  Operation *def = value.getDefiningOp();
  if (!body.getParentOp()->isAncestor(def))
    return true;
  if (def->getBlock() != &body || def->getNumRegions() != 0 || !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value operand) { return recomputable(operand, body, depth + 1); });
}

/// Bytes per piece (16, 8 or 4) in which the copy's last dimension can move
/// with every piece aligned on both sides; 0 when none fits.
int64_t pieceBytes(CopyOp copy) {
  auto src = cast<MemRefType>(copy.getSrc().getType());
  auto dst = cast<MemRefType>(copy.getDst().getType());
  int64_t element = src.getElementTypeBitWidth() / 8;
  int64_t srcLast = src.getRank() - 1, dstLast = dst.getRank() - 1;
  int64_t extent = copy.getSrcSizes()[srcLast];
  if (element == 0 || extent <= 1 || extent != copy.getDstSizes()[dstLast])
    return 0;
  for (int64_t bytes : {16, 8, 4}) {
    if (bytes % element)
      continue;
    int64_t width = bytes / element;
    // Pieces start at multiples of `width` in a last dimension that is a
    // multiple of `width`: each lies wholly inside the tensor or wholly past it.
    Value offset = copy.getSrcOffsets()[srcLast];
    if (extent % width == 0 && src.getDimSize(srcLast) % width == 0 &&
        dst.getDimSize(dstLast) % width == 0 && knownDivisor(offset) % width == 0)
      return bytes;
  }
  return 0;
}

/// What `op` does to `buffer`, by the effects it declares (TLOps.td for the
/// tile ops, upstream for memref.load / memref.store).
struct Access {
  bool read = false, write = false, unknown = false;
};
Access accessOf(Operation *op, Value buffer) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return {.unknown = true};
  SmallVector<MemoryEffects::EffectInstance> onBuffer;
  effects.getEffectsOnValue(buffer, onBuffer);
  Access access;
  for (const MemoryEffects::EffectInstance &effect : onBuffer) {
    access.read |= isa<MemoryEffects::Read>(effect.getEffect());
    access.write |= isa<MemoryEffects::Write>(effect.getEffect());
  }
  return access;
}

/// Every use of `tile` outside the copy reads it, inside `body` after `copy`
/// (annotations may sit anywhere).
bool readOnlyAfter(Value tile, CopyOp copy, Block &body) {
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (user == copy.getOperation() || isa<AnnotateLayoutOp>(user))
      continue;
    Operation *ancestor = body.findAncestorOpInBlock(*user);
    if (!ancestor || ancestor == copy.getOperation() || ancestor->isBeforeInBlock(copy))
      return false;
    Access access = accessOf(user, tile);
    if (!access.read || access.write || access.unknown)
      return false;
  }
  return true;
}

/// Some op for which `within` holds writes `tensor` (or may: an op that
/// declares no effects counts as a write; a layout annotation as none).
bool writtenBy(Value tensor, function_ref<bool(Operation *)> within) {
  return llvm::any_of(tensor.getUsers(), [&](Operation *user) {
    if (!within(user) || isa<AnnotateLayoutOp>(user))
      return false;
    Access access = accessOf(user, tensor);
    return access.write || access.unknown;
  });
}

/// Some op of the loop body writes `tensor` (a prefetched copy would then miss
/// the write).
bool writtenIn(Value tensor, Block &body) {
  return writtenBy(tensor, [&](Operation *user) { return body.findAncestorOpInBlock(*user); });
}

/// The copy moves a global tensor into the whole of a shared tile, same
/// element type, no index-map layout on either side, in aligned pieces: what
/// cp.async can do for it (a partial fill would leave another iteration's
/// data in the rest of a rotating copy).
bool asyncCapable(CopyOp copy, Operation *func, const lowering::LayoutMap &layouts) {
  Value src = copy.getSrc(), dst = copy.getDst();
  auto srcType = cast<MemRefType>(src.getType()), dstType = cast<MemRefType>(dst.getType());
  if (!isGlobalArgument(src, func) || !dst.getDefiningOp<AllocSharedOp>() ||
      srcType.getElementType() != dstType.getElementType() || layouts.count(src) ||
      layouts.count(dst) || !srcType.getLayout().isIdentity())
    return false;
  for (auto [offset, size, extent] :
       llvm::zip(copy.getDstOffsets(), copy.getDstSizes(), dstType.getShape()))
    if (getConstantIntValue(offset) != 0 || size != extent)
      return false;
  return pieceBytes(copy) != 0;
}

bool qualifies(CopyOp copy, Block &body, Operation *func, const lowering::LayoutMap &layouts) {
  return asyncCapable(copy, func, layouts) && readOnlyAfter(copy.getDst(), copy, body) &&
         !writtenIn(copy.getSrc(), body) &&
         llvm::all_of(copy.getSrcOffsets(), [&](Value v) { return recomputable(v, body); });
}

/// The copies before `loop` in its block that can go asynchronous ahead of
/// it (see PipelinePlan.h), with their piece bytes. The tile must be read in
/// the loop: its bytes are then reserved up to the loop (tl-plan-shared-memory), so no
/// tile of the ops between shares them while the copy is in flight.
SmallVector<std::pair<CopyOp, int64_t>> entryCopies(PipelinedOp loop, Operation *func,
                                                    const lowering::LayoutMap &layouts) {
  SmallVector<std::pair<CopyOp, int64_t>> found;
  SmallVector<Operation *> between; // the ops after the candidate, up to the loop
  auto inBetween = [&](Operation *user) {
    return llvm::any_of(between, [&](Operation *op) { return op->isAncestor(user); });
  };
  for (Operation *op = loop->getPrevNode(); op && !isa<PipelinedOp>(op); op = op->getPrevNode()) {
    auto copy = dyn_cast<CopyOp>(op);
    if (copy && asyncCapable(copy, func, layouts) &&
        llvm::none_of(copy.getDst().getUsers(), inBetween) &&
        !writtenBy(copy.getSrc(), inBetween) &&
        llvm::any_of(copy.getDst().getUsers(),
                     [&](Operation *user) { return loop->isAncestor(user); }))
      found.push_back({copy, pieceBytes(copy)});
    between.push_back(op);
  }
  return found;
}

/// Where TMA can load a planned copy (PipelinePlan.h): into a wgmma operand
/// tile (whose layout is TMA's swizzle) that boxes can fill, or, in a kernel
/// that asks for a producer warpgroup, into a vector tile that one box fills
/// (tmaVectorBoxable; a backward's lse and Delta).
bool tmaCapable(CopyOp copy, const llvm::SmallPtrSetImpl<Value> &wgmmaOperands,
                bool producerRequested) {
  auto tensor = cast<MemRefType>(copy.getSrc().getType());
  auto tile = cast<MemRefType>(copy.getDst().getType());
  if (tile.getRank() == 1)
    return producerRequested &&
           llvm::none_of(copy.getDst().getUsers(),
                         [](Operation *user) { return isa<AnnotateLayoutOp>(user); }) &&
           tmaVectorBoxable(tensor, copy.getSrcSizes(), tile);
  return wgmmaOperands.contains(copy.getDst()) && tmaBoxable(tensor, copy.getSrcSizes(), tile);
}

/// The A and B tiles of the gemms of a kernel that took the wgmma layouts.
llvm::SmallPtrSet<Value, 8> wgmmaOperands(KernelOp kernel) {
  llvm::SmallPtrSet<Value, 8> operands;
  StringAttr layouts = tlDialect(kernel).getFragmentLayoutAttrHelper().getAttr(kernel);
  if (layouts && layouts.getValue() == "wgmma")
    kernel.walk([&](GemmOp gemm) {
      operands.insert(gemm.getA());
      operands.insert(gemm.getB());
    });
  return operands;
}

/// See PipelinePlan.h: the loop's gemms read only its rotating tiles and own
/// their accumulators within it, on a kernel that took the wgmma layouts.
bool keepsWgmmaInFlight(KernelOp kernel, PipelinedOp loop, const PipelinePlan &plan) {
  StringAttr layouts = tlDialect(kernel).getFragmentLayoutAttrHelper().getAttr(kernel);
  if (plan.stages < 2 || !layouts || layouts.getValue() != "wgmma")
    return false;
  llvm::SmallPtrSet<Value, 4> rotatingTiles;
  for (CopyOp copy : plan.copies)
    rotatingTiles.insert(copy.getDst());
  bool any = false, ok = true;
  loop.walk([&](GemmOp gemm) {
    any = true;
    ok &= gemm->getParentOp() == loop.getOperation() && rotatingTiles.contains(gemm.getA()) &&
          rotatingTiles.contains(gemm.getB());
    for (Operation *user : gemm.getC().getUsers()) {
      auto other = dyn_cast<GemmOp>(user);
      ok &= !loop->isAncestor(user) || (other && other.getC() == gemm.getC() &&
                                        other.getA() != gemm.getC() && other.getB() != gemm.getC());
    }
  });
  return any && ok;
}

/// `value` can be computed at the kernel's start: a constant or block index,
/// or a pure op directly in the kernel body on such values.
bool atKernelStart(Value value, KernelOp kernel, int depth = 0) {
  if (depth > 32)
    return false;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &kernel.getBody().front() ||
           !kernel->isAncestor(arg.getOwner()->getParentOp());
  Operation *def = value.getDefiningOp();
  if (!kernel->isAncestor(def))
    return true;
  if (def->getBlock() != &kernel.getBody().front() || def->getNumRegions() || !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value operand) { return atKernelStart(operand, kernel, depth + 1); });
}

/// The values outside `body` that `value` (computed in it by pure ops) uses.
void leavesOutside(Value value, Block &body, SmallVectorImpl<Value> &leaves, int depth = 0) {
  Operation *def = value.getDefiningOp();
  if (depth > 32 || !def || def->getBlock() != &body) {
    if (!(isa<BlockArgument>(value) && cast<BlockArgument>(value).getOwner() == &body))
      leaves.push_back(value);
    return;
  }
  for (Value operand : def->getOperands())
    leavesOutside(operand, body, leaves, depth + 1);
}

/// See PipelinePlan.h: a TMA loop with its wgmma batches in flight (any TMA
/// loop where the kernel asks for a producer warpgroup), directly in the
/// kernel body, whose bounds and load offsets a producer warpgroup can
/// compute at the kernel's start, and whose rotating tiles no op before it
/// touches (the producer loads into them while the consumers run what
/// precedes the loop). Other tiles may be used before it where the kernel
/// asks for the producer (use_producer_warpgroup): tl-plan-shared-memory
/// keeps a warp-specialised loop's rotating tiles live from the kernel's
/// start, so none of those shares their bytes (Q, and the overlapped
/// attention forward's first K tile, used only before the loop).
bool warpSpecializable(KernelOp kernel, PipelinedOp loop, const PipelinePlan &plan,
                       const llvm::DenseMap<Value, int64_t> &buffers, bool requested) {
  // The producer warpgroup's registers are allocated at launch: a kernel
  // whose shared memory lets two blocks share an SM would lose one (measured
  // on the H200: 128x128x32 tiles, 3 stages, 64 KiB, went from 550 to 406
  // TFLOP/s). Its tiles, counted without reuse, must take more than half of
  // sm_90a's shared memory.
  int64_t bytes = 0;
  kernel.walk([&](AllocSharedOp alloc) {
    MemRefType type = alloc.getType();
    bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8 *
             std::max<int64_t>(1, buffers.lookup(alloc.getResult()));
  });
  if (!requested && 2 * bytes <= sharedMemoryLimit("sm_90a"))
    return false;
  if (!plan.tmaLoads || !(plan.wgmmaInFlight || requested) || plan.afterEntryCopies ||
      loop->getParentOp() != kernel.getOperation() || kernel.getThreads() + 128 > 1024 ||
      !atKernelStart(loop.getStart(), kernel) || !atKernelStart(loop.getEnd(), kernel))
    return false;
  for (CopyOp copy : plan.copies)
    if (!offsetsAtKernelStart(kernel, loop, copy.getSrcOffsets()))
      return false;
  llvm::SmallPtrSet<Value, 4> rotating;
  for (CopyOp copy : plan.copies)
    rotating.insert(copy.getDst());
  bool untouchedBefore = true;
  kernel.walk([&](AllocSharedOp alloc) {
    bool before = false;
    for (Operation *user : alloc.getResult().getUsers()) {
      if (isa<AnnotateLayoutOp>(user)) // names a layout, touches no bytes
        continue;
      Operation *top = kernel.getBody().front().findAncestorOpInBlock(*user);
      before |= top && top != loop.getOperation() && top->isBeforeInBlock(loop);
    }
    untouchedBefore &= !before || (requested && !rotating.contains(alloc.getResult()));
  });
  return untouchedBefore;
}

} // namespace

namespace {
/// A static row-major tensor of at most 5 dimensions whose strides are
/// multiples of 16 bytes, with the element type of `tile`: what a tensor map
/// can describe.
bool tmaTensor(MemRefType tensor, MemRefType tile) {
  if (tensor.getElementType() != tile.getElementType() || tensor.getRank() > 5 ||
      !tensor.hasStaticShape())
    return false;
  int64_t stride = tensor.getElementTypeBitWidth() / 8;
  for (int64_t d = tensor.getRank() - 1; d > 0; --d)
    if ((stride *= tensor.getDimSize(d)) % 16)
      return false;
  return true;
}
} // namespace

bool offsetsAtKernelStart(KernelOp kernel, PipelinedOp loop, ValueRange offsets) {
  SmallVector<Value> leaves;
  for (Value offset : offsets)
    leavesOutside(offset, loop.getBody().front(), leaves);
  return llvm::all_of(leaves, [&](Value leaf) { return atKernelStart(leaf, kernel); });
}

bool tmaBoxable(MemRefType tensor, ArrayRef<int64_t> sizes, MemRefType tile, bool wideElements) {
  int64_t bits = tile.getElementTypeBitWidth();
  if (tile.getRank() != 2 || !(bits == 16 || (wideElements && bits == 32)) ||
      tile.getDimSize(0) > 256 || !tmaTensor(tensor, tile))
    return false;
  int64_t rowBytes = tile.getDimSize(1) * bits / 8;
  if (rowBytes % 128 != 0 && rowBytes != 64 && rowBytes != 32)
    return false;
  if (rowBytes > 128 && tile.getDimSize(0) % 8 != 0)
    return false;
  return sizes.back() == tile.getDimSize(1) &&
         nonUnitExtents(sizes) == SmallVector<int64_t>{tile.getDimSize(0), tile.getDimSize(1)};
}

bool tmaVectorBoxable(MemRefType tensor, ArrayRef<int64_t> sizes, MemRefType tile) {
  int64_t bits = tile.getElementTypeBitWidth();
  Type element = tile.getElementType();
  bool mapped = element.isF16() || element.isBF16() || element.isF32() || element.isInteger(32);
  if (tile.getRank() != 1 || !mapped || tile.getDimSize(0) > 256 ||
      tile.getDimSize(0) * bits / 8 % 128 != 0 || !tmaTensor(tensor, tile))
    return false;
  return sizes.back() == tile.getDimSize(0) &&
         nonUnitExtents(sizes) == SmallVector<int64_t>{tile.getDimSize(0)};
}

int64_t knownDivisor(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value)) {
    if (*constant == 0)
      return kMaxDivisor;
    int64_t v = *constant < 0 ? -*constant : *constant;
    return std::min(v & -v, kMaxDivisor);
  }
  Operation *def = value.getDefiningOp();
  if (!def)
    return 1;
  if (auto mul = dyn_cast<arith::MulIOp>(def))
    return std::min(knownDivisor(mul.getLhs()) * knownDivisor(mul.getRhs()), kMaxDivisor);
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::gcd(knownDivisor(def->getOperand(0)), knownDivisor(def->getOperand(1)));
  if (auto shl = dyn_cast<arith::ShLIOp>(def))
    if (std::optional<int64_t> amount = getConstantIntValue(shl.getRhs()); amount && *amount < 20)
      return std::min(knownDivisor(shl.getLhs()) << *amount, kMaxDivisor);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return knownDivisor(def->getOperand(0));
  return 1;
}

PipelinePlans planPipelines(KernelOp kernel, const lowering::LayoutMap &layouts, bool tma,
                            bool warpSpecialize) {
  Operation *func = kernel->getParentOp(); // whose arguments are the global tensors
  PipelinePlans plans;
  llvm::SmallPtrSet<Value, 8> tmaTargets = wgmmaOperands(kernel);
  bool specialized = false; // one producer warpgroup: for one loop
  kernel.walk([&](PipelinedOp loop) {
    int64_t stages = static_cast<int64_t>(loop.getNumStages());
    if (stages < 1)
      return;
    Block &body = loop.getBody().front();
    PipelinePlan plan;
    plan.stages = stages;
    for (Operation &op : body)
      if (auto copy = dyn_cast<CopyOp>(op);
          copy && !plans.buffers.count(copy.getDst()) && qualifies(copy, body, func, layouts)) {
        plan.copies.push_back(copy);
        plan.pieceBytes.push_back(pieceBytes(copy));
        plans.buffers[copy.getDst()] = plan.rotatingCopies();
      }
    if (plan.copies.empty())
      return;
    auto entry = entryCopies(loop, func, layouts);
    plan.wgmmaInFlight = keepsWgmmaInFlight(kernel, loop, plan);
    // Asked for a producer warpgroup, the copies before the loop stay
    // synchronous (or become TMA copies) rather than entry copies the
    // loop's first iteration waits for.
    bool requested = tlDialect(kernel).getProducerWarpgroupAttrHelper().isAttrPresent(kernel);
    plan.tmaLoads = tma && llvm::all_of(plan.copies, [&](CopyOp copy) {
                      return tmaCapable(copy, tmaTargets, requested);
                    });
    plan.afterEntryCopies = !entry.empty() && !requested;
    plan.warpSpecialized = warpSpecialize && !specialized &&
                           warpSpecializable(kernel, loop, plan, plans.buffers, requested);
    if (!plan.warpSpecialized)
      plan.afterEntryCopies = !entry.empty();
    if (plan.afterEntryCopies)
      for (auto [copy, bytes] : entry)
        plans.entryCopies[copy.getOperation()] = bytes;
    specialized |= plan.warpSpecialized;
    plans.loops[loop.getOperation()] = std::move(plan);
  });
  return plans;
}

} // namespace tl::gpu_lowering
