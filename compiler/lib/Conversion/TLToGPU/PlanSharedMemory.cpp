//===- PlanSharedMemory.cpp - tl-plan-shared-memory: tile offsets ---------===//
//
// Places every shared tile of a kernel in its dynamic shared memory and
// records the byte offset on the tl.alloc_shared (`tl.offset`). A tile is
// live from the first to the last op of the kernel body that uses it (a use
// inside a loop keeps it live for the whole loop); tiles whose lives do not
// overlap share bytes (first fit, 128-byte aligned, largest first; 1024 for
// the operands of wgmma gemms and the tiles of TMA copies, whose swizzle
// follows address bits 7-9). A tile
// with rotating copies (tl-plan-pipelines) takes all of them. Reuse needs no
// barrier of its own: the lowering puts one before every shared write
// (pipelined loads: before their prologue). An operand of a gemm left in
// flight (wg_wait = -1) lives to the wait_wgmma that completes it: the
// tensor cores read it until then. The source tile of TMA reduce-add boxes
// lives to the kernel's end (the boxes read it after its last op). The rotating tiles of a
// warp-specialised loop live from the kernel's start: its producer warpgroup loads into them while
// the consumers still run what precedes the loop. Tiles the lowering makes itself (staged operands,
// reduction scratch) go after the planned ones.
//
//===----------------------------------------------------------------------===//
#include "InFlightGemms.h"
#include "WgmmaOperands.h"
#include "tl/Conversion/Passes.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include <limits>

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_PLANSHAREDMEMORY
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

struct Tile {
  AllocSharedOp alloc;
  int64_t first, last, bytes, align;
};

/// The kernel's shared tiles with their lives (positions of the body's
/// top-level ops) and bytes, all rotating copies included.
SmallVector<Tile> sharedTiles(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(i);
  TLDialect &tl = tlDialect(kernel);
  SmallVector<Tile> tiles;
  kernel.walk([&](AllocSharedOp alloc) {
    int64_t first = std::numeric_limits<int64_t>::max(), last = -1;
    for (Operation *user : alloc->getUsers())
      if (Operation *top = body.findAncestorOpInBlock(*user); top && !isa<AnnotateLayoutOp>(user)) {
        first = std::min(first, position.lookup(top));
        last = std::max(last, position.lookup(top));
      }
    if (last < 0) // never used: still placed, alone where it stands
      first = last = position.lookup(body.findAncestorOpInBlock(*alloc));
    // Element stores and atomics outside parallel loops are not fenced by
    // barriers: such a tile keeps its bytes for the whole kernel.
    for (Operation *user : alloc->getUsers())
      if (isa<memref::StoreOp, AtomicAddOp>(user) && !user->getParentOfType<ParallelOp>())
        first = 0, last = std::numeric_limits<int64_t>::max();
    // TMA reduce-add boxes may still read the tile after its last op, until
    // the kernel's end: none of its bytes go to a later tile.
    for (Operation *user : alloc->getUsers())
      if (isa<AtomicAddTileOp>(user) && tl.getTmaCopyAttrHelper().isAttrPresent(user))
        last = std::numeric_limits<int64_t>::max();
    // A gemm left in flight (wg_wait = -1) reads its tiles until the
    // wait_wgmma that completes it (in a loop the tile lives through the
    // loop anyway).
    for (Operation *user : alloc->getUsers())
      if (auto gemm = dyn_cast<GemmOp>(user))
        if (WaitWgmmaOp wait = completingWait(gemm))
          if (Operation *top = body.findAncestorOpInBlock(*wait))
            last = std::max(last, position.lookup(top));
    // A warp-specialised loop's producer fills its tiles from the start.
    for (Operation *user : alloc->getUsers())
      if (auto loop = user->getParentOfType<PipelinedOp>();
          loop && isa<CopyOp>(user) && cast<CopyOp>(user).getDst() == alloc.getResult() &&
          tl.getWarpSpecializedAttrHelper().isAttrPresent(loop))
        first = 0;
    MemRefType type = alloc.getType();
    IntegerAttr copies = tl.getRotatingCopiesAttrHelper().getAttr(alloc);
    int64_t bytes =
        type.getNumElements() * type.getElementTypeBitWidth() / 8 * (copies ? copies.getInt() : 1);
    tiles.push_back({alloc, first, last, bytes, takesAtomLayout(alloc) ? 1024 : 128});
  });
  return tiles;
}

struct PlanSharedMemoryPass : public tl::impl::PlanSharedMemoryBase<PlanSharedMemoryPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      SmallVector<Tile> tiles = sharedTiles(kernel);
      llvm::stable_sort(tiles, [](const Tile &a, const Tile &b) { return a.bytes > b.bytes; });
      SmallVector<std::pair<const Tile *, int64_t>> placed;
      Builder b(kernel.getContext());
      for (const Tile &tile : tiles) {
        int64_t offset = 0;
        auto aligned = [&](int64_t at) { return (at + tile.align - 1) / tile.align * tile.align; };
        for (bool moved = true; moved;) {
          moved = false;
          for (auto [other, at] : placed) {
            bool livesOverlap = tile.first <= other->last && other->first <= tile.last;
            bool bytesOverlap = offset < at + other->bytes && at < offset + tile.bytes;
            if (livesOverlap && bytesOverlap) {
              offset = aligned(at + other->bytes);
              moved = true;
            }
          }
        }
        placed.push_back({&tile, offset});
        tlDialect(kernel).getOffsetAttrHelper().setAttr(tile.alloc, b.getI64IntegerAttr(offset));
      }
    });
  }
};

} // namespace
} // namespace tl::gpu_lowering
