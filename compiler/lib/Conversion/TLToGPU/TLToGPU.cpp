//===- TLToGPU.cpp - lower tl programs to per-thread GPU code -------------===//
//
// Fragments take the layouts FragmentLayout.h infers: the mma.sync layout
// (gemm on tensor cores, row reductions by quad shuffles) where the kernel
// allows, else the Row layout (thread t owns rows t, t+T, ...), which works
// for every program. Tile ops on fragments iterate the elements a thread owns;
// tile ops without fragments spread their elements over all threads; shared
// memory is fenced by barriers around every write, and the barriers that end
// up ordering nothing are removed afterwards (BarrierElision.h).
//
// Before lowering, shared tiles are placed (planShared: tiles whose lives do
// not overlap share bytes) and the copies of pipelined loops that can go
// asynchronous are chosen (PipelinePlan.h); lowerPipelined then emits them as
// cp.async groups into rotating copies of their tiles.
//
// The lowering walks each kernel body in program order: fragment accesses
// must be rewritten together with the loops that own them, which a set of
// independent rewrite patterns cannot see.
//
//===----------------------------------------------------------------------===//
#include "../LoweringHelpers.h"
#include "BarrierElision.h"
#include "FragmentLayout.h"
#include "PairedStores.h"
#include "PipelinePlan.h"

#include "tl/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <array>
#include <limits>

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_CONVERTTLTOGPU
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
using namespace tl::lowering;
namespace {

int64_t product(ArrayRef<int64_t> values) {
  int64_t n = 1;
  for (int64_t v : values)
    n *= v;
  return n;
}

Value index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

struct Fragment {
  Value storage;         // per thread: Row memref<R x rest...>, Mma memref<count>
  FragmentLayout layout;
};

/// Which element of its driving fragment a thread is at, inside a loop over
/// the elements it owns: Row: local row `r`; Mma/MmaRow: element `slot`.
struct Owned {
  FragmentLayout layout;
  Value r;
  int64_t slot = 0;
};

class KernelLowering {
public:
  KernelLowering(gpu::GPUFuncOp func, int64_t threads, const LayoutMap &layouts)
      : func(func), funcOp(func.getOperation()), rewriter(func.getContext()), threads(threads),
        layouts(layouts) {}

  LogicalResult run() {
    Block &entry = func.getBody().front();
    rewriter.setInsertionPointToStart(&entry);
    Location loc = func.getLoc();
    tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    sharedBase = gpu::DynamicSharedMemoryOp::create(
        rewriter, loc,
        MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type(),
                        MemRefLayoutAttrInterface(),
                        gpu::AddressSpaceAttr::get(func.getContext(),
                                                   gpu::AddressSpace::Workgroup)));
    std::string why;
    layouts_ = inferFragmentLayouts(func, threads, why);
    pipelines = planPipelines(func, layouts);
    planShared();
    bool mma = llvm::any_of(layouts_, [](auto &entry) {
      return entry.second.kind != FragmentLayout::Kind::Row;
    });
    func->setAttr("tl.fragment_layout", rewriter.getStringAttr(mma ? "mma" : "row: " + why));
    // Shared tiles to swizzle: the ones annotated so and, in an Mma kernel, the
    // gemm operands (ldmatrix then reads 8 rows from 8 bank groups; the
    // address math costs a lane address per operand, see ldmatrixAddress).
    func.walk([&](Operation *op) {
      if (auto annotate = dyn_cast<AnnotateLayoutOp>(op);
          annotate && isa<SwizzleLayoutAttr>(annotate.getLayout()))
        swizzleRequests.insert(annotate.getBuffer());
      if (auto gemm = dyn_cast<GemmOp>(op); gemm && mma) {
        swizzleRequests.insert(gemm.getA());
        swizzleRequests.insert(gemm.getB());
      }
    });
    if (mma) {
      Value warp = arith::DivUIOp::create(rewriter, loc, tid, index(rewriter, loc, 32));
      lane = arith::RemUIOp::create(rewriter, loc, tid, index(rewriter, loc, 32));
      warpId = warp;
    }
    if (failed(lowerBlock(entry)))
      return failure();
    for (auto &[old, fragment] : fragments) {
      if (!old.use_empty())
        return emitError(old.getLoc(), "fragment still used after lowering");
      rewriter.eraseOp(old.getDefiningOp());
    }
    // Elements the author reads or writes directly of a tensor with an
    // index-map layout: through the layout (copies and atomics already are).
    resolveElementAccesses(rewriter, func, layouts);
    if (failed(swizzleAccesses()))
      return failure();
    replaceTranscendentals();
    elideRedundantBarriers(func);
    func->setAttr("tl.shared_bytes", rewriter.getI64IntegerAttr(sharedBytes));
    return success();
  }

private:
  bool isFragment(Value v) const { return fragments.count(v); }
  bool isShared(Value v) const { return shared.count(v); }
  bool isLocal(Value v) const { return locals.count(v); }
  bool isGlobal(Value v) const {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner()->getParentOp() == funcOp;
  }

  void barrier(Location loc) { gpu::BarrierOp::create(rewriter, loc); }

  /// Places every tl.alloc_shared of the kernel in dynamic shared memory
  /// before lowering: a tile is live from the first to the last op of the
  /// kernel body that uses it (a use inside a loop keeps it live for the whole
  /// loop), and tiles whose lives do not overlap share bytes (first fit,
  /// 128-byte aligned, largest first). Reuse needs no extra barrier: every
  /// shared write the lowering emits is preceded by one (pipelined loads: by
  /// the one before their prologue). Tiles made during lowering (staged
  /// operands) go after the planned ones.
  void planShared() {
    Block &body = func.getBody().front();
    DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = static_cast<int64_t>(i);
    struct Tile {
      Value alloc;
      int64_t first, last, bytes;
    };
    SmallVector<Tile> tiles;
    func.walk([&](AllocSharedOp alloc) {
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
      auto type = alloc.getType();
      auto copies = pipelines.buffers.find(alloc.getResult());
      int64_t bytes = product(type.getShape()) * type.getElementTypeBitWidth() / 8 *
                      (copies == pipelines.buffers.end() ? 1 : copies->second);
      tiles.push_back({alloc.getResult(), first, last, bytes});
    });
    llvm::stable_sort(tiles, [](const Tile &a, const Tile &b) { return a.bytes > b.bytes; });
    SmallVector<std::pair<const Tile *, int64_t>> placed;
    for (const Tile &tile : tiles) {
      int64_t offset = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (auto [other, at] : placed) {
          bool livesOverlap = tile.first <= other->last && other->first <= tile.last;
          bool bytesOverlap = offset < at + other->bytes && at < offset + tile.bytes;
          if (livesOverlap && bytesOverlap) {
            offset = (at + other->bytes + 127) / 128 * 128;
            moved = true;
          }
        }
      }
      placed.push_back({&tile, offset});
      plannedOffsets[tile.alloc] = offset;
      sharedBytes = std::max(sharedBytes, offset + tile.bytes);
    }
  }

  /// A view of dynamic shared memory for a tile, created at the kernel's
  /// entry: at its planned offset (planShared), or for a tile the lowering
  /// makes, at the next free bytes. A tile that a pipelined loop fills
  /// asynchronously has `copies` rotating copies back to back; the view is
  /// the first (stageView gives the others).
  Value allocateShared(Location loc, MemRefType type, bool swizzle = false, int64_t copies = 1,
                       std::optional<int64_t> planned = std::nullopt) {
    int64_t bytes = product(type.getShape()) * type.getElementTypeBitWidth() / 8;
    int64_t offset;
    if (planned) {
      offset = *planned;
    } else {
      offset = sharedBytes = (sharedBytes + 127) / 128 * 128;
      sharedBytes += bytes * copies;
    }
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfter(sharedBase.getDefiningOp());
    swizzle = swizzle && swizzlable(type);
    Value view = sharedView(loc, type, index(rewriter, loc, offset), swizzle,
                            {offset, offset + bytes * copies});
    if (copies > 1)
      rotating[view] = {offset, bytes, copies, swizzle};
    return view;
  }

  /// Swizzled 16-bit tiles whose rows span whole 128-byte lines are stored so:
  /// the 16-byte chunk c of row r lives at chunk c ^ (r % 8), so the 8 rows an
  /// ldmatrix reads hit 8 different bank groups.
  static bool swizzlable(MemRefType type) {
    return type.getRank() == 2 && type.getElementTypeBitWidth() == 16 &&
           (type.getDimSize(1) * 2) % 128 == 0 && type.getDimSize(0) % 8 == 0;
  }

  /// A shared tile of `type` at `byteOffset` of dynamic shared memory, within
  /// the bytes `range` (all copies of a rotating tile; see BarrierElision.h).
  Value sharedView(Location loc, MemRefType type, Value byteOffset, bool swizzle,
                   std::array<int64_t, 2> range) {
    auto viewType = MemRefType::get(
        type.getShape(), type.getElementType(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(func.getContext(), gpu::AddressSpace::Workgroup));
    Value view = memref::ViewOp::create(rewriter, loc, viewType, sharedBase, byteOffset,
                                        ValueRange{});
    view.getDefiningOp()->setAttr(kSharedRangeAttr, rewriter.getDenseI64ArrayAttr(range));
    shared.insert(view);
    if (swizzle)
      swizzled.insert(view);
    return view;
  }

  /// The rotating copy of `tile` that iteration `k` of its pipelined loop
  /// uses: (k - start) % copies (k >= start, whatever the sign of start).
  Value stageView(Location loc, Value tile, Value k, Value start) {
    const Rotating &r = rotating.find(tile)->second;
    Value stage = arith::RemUIOp::create(rewriter, loc,
                                         arith::SubIOp::create(rewriter, loc, k, start),
                                         index(rewriter, loc, r.copies));
    Value offset = arith::AddIOp::create(
        rewriter, loc, index(rewriter, loc, r.offset),
        arith::MulIOp::create(rewriter, loc, stage, index(rewriter, loc, r.bytes)));
    return sharedView(loc, cast<MemRefType>(tile.getType()), offset, r.swizzle,
                      {r.offset, r.offset + r.bytes * r.copies});
  }

  /// The stored column of logical (row, col) in a swizzled tile.
  Value swizzleColumn(OpBuilder &b, Location loc, Value row, Value col) {
    Value phase = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, row, index(b, loc, 8)), index(b, loc, 8));
    return arith::XOrIOp::create(b, loc, col, phase);
  }

  /// Every access to a swizzled tile, generated as if it were plain, gets its
  /// column swizzled (ldmatrix addresses are swizzled where they are made).
  LogicalResult swizzleAccesses() {
    for (Value tile : swizzled) {
      SmallVector<std::pair<Operation *, unsigned>> accesses; // op, column operand
      for (OpOperand &use : tile.getUses()) {
        Operation *user = use.getOwner();
        if (isa<memref::LoadOp, vector::LoadOp>(user))
          accesses.push_back({user, 2});
        else if (isa<memref::StoreOp, vector::StoreOp>(user) && use.getOperandNumber() == 1)
          accesses.push_back({user, 3});
        else if (!isa<memref::ExtractAlignedPointerAsIndexOp>(user))
          return user->emitOpError("uses a swizzled shared tile in a way the GPU "
                                   "lowering cannot swizzle");
      }
      for (auto [user, column] : accesses) {
        rewriter.setInsertionPoint(user);
        user->setOperand(column, swizzleColumn(rewriter, user->getLoc(),
                                               user->getOperand(column - 1),
                                               user->getOperand(column)));
      }
    }
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Loops
  //===--------------------------------------------------------------------===//

  /// for r in [0, ceil(rows/G)): row = tid/split + r*G; if row < rows:
  /// body(r, row), with G = T/split row groups.
  void forOwnedRows(Location loc, int64_t rows,
                    function_ref<void(OpBuilder &, Location, Value, Value)> body,
                    int64_t split = 1) {
    int64_t groups = threads / split;
    int64_t perThread = (rows + groups - 1) / groups;
    auto loop = scf::ForOp::create(rewriter, loc, index(rewriter, loc, 0),
                                   index(rewriter, loc, perThread),
                                   index(rewriter, loc, 1));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    Value r = loop.getInductionVar();
    Value first = split == 1 ? tid : arith::DivUIOp::create(rewriter, loc, tid, index(rewriter, loc, split)).getResult();
    Value row = arith::AddIOp::create(
        rewriter, loc, first,
        arith::MulIOp::create(rewriter, loc, r, index(rewriter, loc, groups)));
    if (rows % groups == 0) {
      body(rewriter, loc, r, row);
      return;
    }
    Value inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                         row, index(rewriter, loc, rows));
    scf::IfOp::create(rewriter, loc, inside, [&](OpBuilder &b, Location loc) {
      body(b, loc, r, row);
      scf::YieldOp::create(b, loc);
    });
  }

  /// for flat in [tid, total) step T: body(coordinates of flat in `extents`).
  /// Unrolled when every thread takes the same few steps (the address math
  /// then folds into constants).
  void forSpread(Location loc, ArrayRef<int64_t> extents,
                 function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    int64_t total = product(extents);
    auto visit = [&](Value flat) {
      SmallVector<Value> coords(extents.size());
      Value rest = flat;
      for (int d = static_cast<int>(extents.size()) - 1; d >= 0; --d) {
        Value extent = index(rewriter, loc, extents[d]);
        coords[d] = arith::RemUIOp::create(rewriter, loc, rest, extent);
        rest = arith::DivUIOp::create(rewriter, loc, rest, extent);
      }
      body(rewriter, loc, coords);
    };
    if (total % threads == 0 && total / threads <= kUnrolledSteps) {
      for (int64_t step = 0; step < total / threads; ++step)
        visit(add(loc, tid, step * threads));
      return;
    }
    auto loop = scf::ForOp::create(rewriter, loc, tid, index(rewriter, loc, total),
                                   index(rewriter, loc, threads));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    visit(loop.getInductionVar());
  }

  //===--------------------------------------------------------------------===//
  // Element access
  //===--------------------------------------------------------------------===//

  /// Storage indices of `fragment`'s element `indices` at the thread's
  /// current element `owned` (see Owned).
  SmallVector<Value> localIndices(OpBuilder &b, Location loc, Value fragment,
                                  ValueRange indices, const Owned &owned) {
    const Fragment &f = fragments.find(fragment)->second;
    if (f.layout.kind == FragmentLayout::Kind::Row) {
      SmallVector<Value> local(indices);
      local[0] = owned.r;
      if (Value colStart = local.size() > 1 ? rowSegmentStart(b, loc, f.layout) : Value())
        local[1] = arith::SubIOp::create(b, loc, local[1], colStart);
      return local;
    }
    int64_t slot = owned.slot;
    if (owned.layout.kind == FragmentLayout::Kind::Mma &&
        f.layout.kind == FragmentLayout::Kind::MmaRow)
      slot = owned.layout.rowSlot(owned.slot);
    return {index(b, loc, slot)};
  }

  /// Loads element `indices` of `buffer` (a fragment: the thread's own
  /// element; a global tensor: through its layout, zero past the end).
  Value load(OpBuilder &b, Location loc, Value buffer, ValueRange indices,
             const Owned *owned) {
    if (isFragment(buffer))
      return memref::LoadOp::create(b, loc, fragments.lookup(buffer).storage,
                                    localIndices(b, loc, buffer, indices, *owned));
    if (!isGlobal(buffer))
      return memref::LoadOp::create(b, loc, buffer, indices);
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    auto guarded = scf::IfOp::create(
        b, loc, insideBuffer(b, loc, buffer, indices),
        [&](OpBuilder &b, Location loc) {
          ElementRef ref = resolveElement(b, loc, layouts, buffer, indices);
          scf::YieldOp::create(
              b, loc, memref::LoadOp::create(b, loc, ref.memref, ref.indices).getResult());
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, zeroOf(b, loc, element));
        });
    return guarded.getResult(0);
  }

  void store(OpBuilder &b, Location loc, Value value, Value buffer,
             ValueRange indices, const Owned *owned) {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    if (value.getType() != element)
      value = convertFloat(b, loc, value, element);
    if (isFragment(buffer)) {
      memref::StoreOp::create(b, loc, value, fragments.lookup(buffer).storage,
                              localIndices(b, loc, buffer, indices, *owned));
      return;
    }
    if (!isGlobal(buffer)) {
      memref::StoreOp::create(b, loc, value, buffer, indices);
      return;
    }
    scf::IfOp::create(b, loc, insideBuffer(b, loc, buffer, indices),
                      [&](OpBuilder &b, Location loc) {
                        ElementRef ref = resolveElement(b, loc, layouts, buffer, indices);
                        memref::StoreOp::create(b, loc, value, ref.memref, ref.indices);
                        scf::YieldOp::create(b, loc);
                      });
  }

  /// Runs `body` for every element of a fragment of `layout` and `shape` that
  /// this thread owns, with the element's logical indices. Mma layouts unroll
  /// (constant storage indices keep fragments in registers).
  void forOwned(Location loc, const FragmentLayout &layout, ArrayRef<int64_t> shape,
                function_ref<void(OpBuilder &, Location, const Owned &, ValueRange)> body) {
    if (layout.kind == FragmentLayout::Kind::Row) {
      SmallVector<int64_t> rest(shape.drop_front());
      if (!rest.empty())
        rest[0] /= layout.split;
      Value colStart = rowSegmentStart(rewriter, loc, layout);
      forOwnedRows(loc, shape[0], [&](OpBuilder &b, Location loc, Value r, Value row) {
        buildLoops(b, loc, rest, [&](OpBuilder &b, Location loc, ValueRange at) {
          SmallVector<Value> full = {row};
          full.append(at.begin(), at.end());
          if (colStart)
            full[1] = arith::AddIOp::create(b, loc, full[1], colStart);
          body(b, loc, Owned{layout, r, 0}, full);
        });
      }, layout.split);
      return;
    }
    auto [rowBase, colBase] = mmaBases(loc, layout);
    for (int64_t slot = 0; slot < layout.count(); ++slot) {
      Owned owned{layout, Value(), slot};
      if (layout.kind == FragmentLayout::Kind::MmaRow) {
        int64_t offset = (slot / 2) * 16 + (slot % 2) * 8;
        body(rewriter, loc, owned, {add(loc, rowBase, offset)});
        continue;
      }
      auto [row, col] = mmaSlotOffset(layout, slot);
      body(rewriter, loc, owned, {add(loc, rowBase, row), add(loc, colBase, col)});
    }
  }

  Value add(Location loc, Value v, int64_t c) {
    return c ? arith::AddIOp::create(rewriter, loc, v, index(rewriter, loc, c)).getResult() : v;
  }

  /// Where slot `slot` of an Mma accumulator lies from the thread's bases
  /// (mmaBases): slots 4t..4t+3 of m16n8 tile t are (r, c), (r, c+1),
  /// (r+8, c), (r+8, c+1).
  static std::pair<int64_t, int64_t> mmaSlotOffset(const FragmentLayout &layout, int64_t slot) {
    int64_t tile = slot / 4, e = slot % 4;
    return {(tile / layout.tilesN()) * 16 + (e / 2) * 8, (tile % layout.tilesN()) * 8 + e % 2};
  }

  /// Row of this thread's first element in an Mma tile, and its column.
  std::pair<Value, Value> mmaBases(Location loc, const FragmentLayout &layout) {
    auto &b = rewriter;
    Value wm = arith::DivUIOp::create(b, loc, warpId, index(b, loc, layout.warpsN));
    Value wn = arith::RemUIOp::create(b, loc, warpId, index(b, loc, layout.warpsN));
    Value quad = arith::DivUIOp::create(b, loc, lane, index(b, loc, 4));
    Value pair = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, lane, index(b, loc, 4)), index(b, loc, 2));
    Value rowBase = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, wm, index(b, loc, layout.rows / layout.warpsM)), quad);
    Value colBase = layout.kind == FragmentLayout::Kind::MmaRow
                        ? Value()
                        : arith::AddIOp::create(
                              b, loc,
                              arith::MulIOp::create(b, loc, wn,
                                                    index(b, loc, layout.cols / layout.warpsN)),
                              pair).getResult();
    return {rowBase, colBase};
  }

  /// The first column this thread holds of each row of a split Row fragment
  /// (null when the fragment has no column split).
  Value rowSegmentStart(OpBuilder &b, Location loc, const FragmentLayout &layout) {
    if (layout.kind != FragmentLayout::Kind::Row || layout.split == 1 || layout.cols == 0)
      return Value();
    return arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, tid, index(b, loc, layout.split)),
        index(b, loc, layout.colsPerThread()));
  }

  /// i1: this thread is the one that writes out a replicated element (of an
  /// MmaRow fragment, or a 1-D split Row one); null where elements have one
  /// holder.
  Value rowWriter(Location loc, const FragmentLayout &layout) {
    auto &b = rewriter;
    if (layout.kind == FragmentLayout::Kind::Row)
      return layout.split > 1 && layout.cols == 0
                 ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         arith::RemUIOp::create(b, loc, tid, index(b, loc, layout.split)),
                                         index(b, loc, 0)).getResult()
                 : Value();
    if (layout.kind != FragmentLayout::Kind::MmaRow)
      return Value();
    Value firstOfQuad = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, arith::RemUIOp::create(b, loc, lane, index(b, loc, 4)),
        index(b, loc, 0));
    Value firstColumnWarp = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, warpId, index(b, loc, layout.warpsN)), index(b, loc, 0));
    return arith::AndIOp::create(b, loc, firstOfQuad, firstColumnWarp);
  }

  //===--------------------------------------------------------------------===//
  // Ops
  //===--------------------------------------------------------------------===//

  LogicalResult lowerBlock(Block &block) {
    return block.empty() ? success() : lowerBlockFrom(block, &block.front());
  }

  LogicalResult lowerOp(Operation *op) {
    rewriter.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<AllocSharedOp>(op)) {
      auto copies = pipelines.buffers.find(alloc.getResult());
      rewriter.replaceOp(alloc, allocateShared(loc, alloc.getType(),
                                               swizzleRequests.count(alloc.getResult()),
                                               copies == pipelines.buffers.end() ? 1 : copies->second,
                                               plannedOffsets.lookup(alloc.getResult())));
      return success();
    }
    if (auto alloc = dyn_cast<AllocFragmentOp>(op)) {
      MemRefType type = alloc.getType();
      FragmentLayout layout = layouts_.lookup(alloc.getResult());
      SmallVector<int64_t> shape(type.getShape());
      if (layout.kind == FragmentLayout::Kind::Row) {
        int64_t groups = layout.rowGroups(threads);
        shape[0] = (shape[0] + groups - 1) / groups;
        if (shape.size() > 1)
          shape[1] /= layout.split;
      } else
        shape = {layout.count()};
      Value storage = memref::AllocaOp::create(
          rewriter, loc, MemRefType::get(shape, type.getElementType()));
      fragments[alloc.getResult()] = {storage, layout};
      return success();
    }
    if (auto alloc = dyn_cast<AllocLocalOp>(op)) {
      MemRefType type = alloc.getType();
      Value storage = memref::AllocaOp::create(
          rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
      rewriter.replaceOp(alloc, storage);
      locals.insert(storage);
      return success();
    }
    if (isa<AnnotateLayoutOp>(op)) {
      rewriter.eraseOp(op);
      return success();
    }
    if (auto fill = dyn_cast<FillOp>(op))
      return lowerFill(fill);
    if (auto copy = dyn_cast<CopyOp>(op))
      return lowerCopy(copy);
    if (auto gemm = dyn_cast<GemmOp>(op))
      return lowerGemm(gemm);
    if (auto reduce = dyn_cast<ReduceOp>(op))
      return lowerReduce(reduce);
    if (auto parallel = dyn_cast<ParallelOp>(op))
      return lowerParallel(parallel);
    if (auto pipelined = dyn_cast<PipelinedOp>(op))
      return lowerPipelined(pipelined);
    if (auto atomic = dyn_cast<AtomicAddOp>(op)) {
      // Outside a parallel loop: one thread does it.
      Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                          tid, index(rewriter, loc, 0));
      auto guard = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
      rewriter.moveOpBefore(atomic, guard.thenBlock()->getTerminator());
      return lowerElementOps(atomic, nullptr, {});
    }
    if (isa<memref::LoadOp, memref::StoreOp>(op)) {
      Value buffer = isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getMemRef()
                                             : cast<memref::StoreOp>(op).getMemRef();
      if (isFragment(buffer))
        return op->emitError("a fragment element is accessed outside a parallel "
                             "loop; the GPU lowering needs the loop to know "
                             "which thread owns it");
      return success();
    }
    if (isa<TLDialect>(op->getDialect()))
      return op->emitOpError("has no GPU lowering yet");
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (failed(lowerBlock(block)))
          return failure();
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Pipelined loops
  //===--------------------------------------------------------------------===//

  /// num_stages = s with planned copies: each planned copy of iteration k is
  /// issued in iteration k - s (the first s in a prologue) as its own
  /// cp.async group into rotating copy (k - start) % (s+1) of its tile; where
  /// the copy stood, the thread waits for that group and a barrier publishes
  /// the tile. Iteration k issues right after its first wait's barrier: every
  /// thread has then finished iteration k-1, the last reader of the rotating
  /// copies it overwrites (planned tiles are read only after their copy), so
  /// that barrier also guards the overwrite and the loop needs no other.
  LogicalResult lowerPipelined(PipelinedOp op) {
    Location loc = op.getLoc();
    Block &body = op.getBody().front();
    auto loop = scf::ForOp::create(rewriter, loc, op.getStart(), op.getEnd(),
                                   index(rewriter, loc, 1));
    auto planned = pipelines.loops.find(op.getOperation());
    if (planned == pipelines.loops.end()) {
      rewriter.inlineBlockBefore(&body, loop.getBody()->getTerminator(), loop.getInductionVar());
      rewriter.eraseOp(op);
      return lowerBlock(*loop.getBody());
    }
    PipelinePlan plan = planned->second;
    int64_t stages = plan.stages, groups = static_cast<int64_t>(plan.copies.size());
    rewriter.setInsertionPoint(loop);
    barrier(loc); // the rotating tiles may reuse bytes that earlier ops read
    for (int64_t i = 0; i < stages; ++i)
      issueIteration(loc, plan, body, add(loc, op.getStart(), i), op.getEnd(), op.getStart());
    if (plan.afterEntryCopies) { // all but the prologue's groups: the entry copies
      NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, static_cast<int32_t>(groups * stages));
      barrier(loc);
    }

    rewriter.inlineBlockBefore(&body, loop.getBody()->getTerminator(), loop.getInductionVar());
    rewriter.eraseOp(op);
    Block &loopBody = *loop.getBody();
    Value k = loop.getInductionVar(), start = loop.getLowerBound();
    // The loop's header: the views of this iteration's rotating copies. The
    // body's own ops follow; the planned copies among them are replaced below
    // by waits, and the first wait is followed by the issue of iteration
    // k + stages.
    rewriter.setInsertionPointToStart(&loopBody);
    SmallVector<Value> views;
    for (CopyOp copy : plan.copies)
      views.push_back(stageView(loc, copy.getDst(), k, start));
    Operation *headerEnd = views.back().getDefiningOp();
    bool issued = false;
    for (auto [j, copyRef] : llvm::enumerate(plan.copies)) {
      CopyOp copy = copyRef;
      Value tile = copy.getDst();
      tile.replaceUsesWithIf(views[j], [&](OpOperand &use) {
        return loop->isAncestor(use.getOwner()) && use.getOwner() != copy.getOperation();
      });
      // Groups committed after this copy's group of iteration k: the later
      // copies of iteration k and every group of the iterations after it
      // issued so far (k+1 .. k+stages-1 before the first wait, up to
      // k+stages after it). A copy followed by the next planned one, with
      // only pure ops (index math) between them, needs no wait of its own:
      // groups complete in order, so the next one's wait covers it (and its
      // barrier publishes both tiles).
      if (!(j + 1 < plan.copies.size() && onlyPureOpsBetween(copy, plan.copies[j + 1]))) {
        rewriter.setInsertionPoint(copy);
        int64_t ahead = issued ? stages : stages - 1;
        NVVM::CpAsyncWaitGroupOp::create(rewriter, copy.getLoc(),
                                         static_cast<int32_t>(groups - 1 - j + groups * ahead));
        barrier(copy.getLoc());
        if (!issued) {
          issueIteration(loc, plan, loopBody, add(loc, k, stages), loop.getUpperBound(), start);
          issued = true;
        }
      }
    }
    for (CopyOp copy : plan.copies) // after the issue, which reads them
      rewriter.eraseOp(copy);
    rewriter.setInsertionPointAfter(loop);
    NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);
    // The header is already thread-level.
    return lowerBlockFrom(loopBody, headerEnd->getNextNode());
  }

  /// `later` follows `earlier` in its block with nothing but pure ops between.
  static bool onlyPureOpsBetween(Operation *earlier, Operation *later) {
    if (earlier->getBlock() != later->getBlock())
      return false;
    for (Operation *op = earlier->getNextNode(); op; op = op->getNextNode()) {
      if (op == later)
        return true;
      if (!isPure(op))
        return false;
    }
    return false;
  }

  LogicalResult lowerBlockFrom(Block &block, Operation *first) {
    for (Operation &op : llvm::make_early_inc_range(
             llvm::make_range(first->getIterator(), block.end())))
      if (failed(lowerOp(&op)))
        return failure();
    return success();
  }

  /// Issues the planned copies of iteration `k` (when k < end), one cp.async
  /// group per copy; the groups are committed even when empty, so that every
  /// iteration commits the same number.
  void issueIteration(Location loc, const PipelinePlan &plan, Block &body, Value k, Value end,
                      Value start) {
    Value live = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, k, end);
    for (auto [copy, bytes] : llvm::zip(plan.copies, plan.pieceBytes)) {
      auto guard = scf::IfOp::create(rewriter, loc, live, /*withElse=*/false);
      {
        OpBuilder::InsertionGuard inside(rewriter);
        rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
        issueCopy(copy, bytes, body, k, start);
      }
      NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
    }
  }

  /// `value` as iteration `k` computes it: the pure ops of `body` between the
  /// induction variable and `value` are cloned with k in its place.
  Value atIteration(Value value, Block &body, IRMapping &map) {
    if (Value known = map.lookupOrNull(value))
      return known;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &body)
      return value;
    for (Value operand : def->getOperands())
      atIteration(operand, body, map);
    return rewriter.clone(*def, map)->getResult(cast<OpResult>(value).getResultNumber());
  }

  /// cp.async of iteration k's region of `copy` into its rotating copy:
  /// pieces of `bytes` spread over the threads; pieces past the tensor's end
  /// are zero-filled (source size 0).
  void issueCopy(CopyOp copy, int64_t bytes, Block &body, Value k, Value start) {
    Location loc = copy.getLoc();
    IRMapping map;
    map.map(body.getArgument(0), k);
    SmallVector<Value> srcOffsets;
    for (Value offset : copy.getSrcOffsets())
      srcOffsets.push_back(atIteration(offset, body, map));
    issuePieces(copy, srcOffsets, stageView(loc, copy.getDst(), k, start), bytes);
  }

  /// cp.async of `copy`'s source region at `srcOffsets` into the whole of
  /// `tile`, in pieces of `bytes` spread over the threads; pieces past the
  /// tensor's end are zero-filled (source size 0).
  void issuePieces(CopyOp copy, ValueRange srcOffsets, Value tile, int64_t bytes) {
    Location loc = copy.getLoc();
    Value src = copy.getSrc();
    auto srcType = cast<MemRefType>(src.getType());
    SmallVector<Value> dstOffsets;
    for (size_t d = 0; d < copy.getDstOffsets().size(); ++d)
      dstOffsets.push_back(index(rewriter, loc, 0));
    SmallVector<int64_t> pieces;
    for (int64_t size : copy.getSrcSizes())
      if (size != 1)
        pieces.push_back(size);
    int64_t width = bytes / (srcType.getElementTypeBitWidth() / 8);
    pieces.back() /= width;
    auto &ctx = *rewriter.getContext();
    auto sharedPtr = LLVM::LLVMPointerType::get(&ctx, 3);
    auto globalPtr = LLVM::LLVMPointerType::get(&ctx, 1);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, src);
    forSpread(loc, pieces, [&](OpBuilder &b, Location loc, ValueRange at) {
      SmallVector<Value> s(at);
      s.back() = arith::MulIOp::create(b, loc, s.back(), index(b, loc, width));
      SmallVector<Value> from = regionIndices(b, loc, srcOffsets, copy.getSrcSizes(), s);
      SmallVector<Value> to = regionIndices(b, loc, dstOffsets, copy.getDstSizes(), s);
      Value linear = linearIndex(b, loc, srcType.getShape(), from);
      Value inside = insideBuffer(b, loc, src, from);
      Value offset = arith::MulIOp::create(b, loc, linear,
                                           index(b, loc, srcType.getElementTypeBitWidth() / 8));
      offset = arith::SelectOp::create(b, loc, inside, offset, index(b, loc, 0));
      Value address = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                                 arith::AddIOp::create(b, loc, base, offset));
      Value generic = LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(&ctx), address);
      Value from_ = LLVM::AddrSpaceCastOp::create(b, loc, globalPtr, generic);
      Value to_ = LLVM::IntToPtrOp::create(b, loc, sharedPtr, sharedAddress(loc, tile, to));
      Value size = arith::SelectOp::create(
          b, loc, inside, arith::ConstantIntOp::create(b, loc, bytes, 32),
          arith::ConstantIntOp::create(b, loc, 0, 32));
      NVVM::CpAsyncOp::create(b, loc, to_, from_, static_cast<uint32_t>(bytes),
                              bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                          : NVVM::LoadCacheModifierKind::CA,
                              size);
    });
  }

  LogicalResult lowerFill(FillOp op) {
    Location loc = op.getLoc();
    Value buffer = op.getBuffer(), value = op.getValue();
    if (isFragment(buffer)) {
      const Fragment &fragment = fragments.find(buffer)->second;
      auto type = cast<MemRefType>(fragment.storage.getType());
      if (fragment.layout.kind == FragmentLayout::Kind::Row) {
        buildLoops(rewriter, loc, type.getShape(), [&](OpBuilder &b, Location loc, ValueRange ivs) {
          memref::StoreOp::create(b, loc, value, fragment.storage, ivs);
        });
      } else {
        // One store per slot: constant indices keep Mma storage in registers
        // (a loop LLVM only partly unrolls would leave it in local memory).
        for (int64_t slot = 0; slot < type.getNumElements(); ++slot)
          memref::StoreOp::create(rewriter, loc, value, fragment.storage,
                                  ValueRange{index(rewriter, loc, slot)});
      }
    } else if (isShared(buffer)) {
      barrier(loc);
      forSpread(loc, cast<MemRefType>(buffer.getType()).getShape(),
                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                  memref::StoreOp::create(b, loc, value, buffer, ivs);
                });
      barrier(loc);
    } else {
      buildLoops(rewriter, loc, cast<MemRefType>(buffer.getType()).getShape(),
                 [&](OpBuilder &b, Location loc, ValueRange ivs) {
                   memref::StoreOp::create(b, loc, value, buffer, ivs);
                 });
    }
    rewriter.eraseOp(op);
    return success();
  }

  /// Elements per 16-byte access when a copy between a split Row fragment and
  /// memory can move whole 16-byte pieces of each thread's row segment (see
  /// vectorWidth); 0 otherwise.
  int64_t rowVectorWidth(CopyOp op, Value fragment) {
    const FragmentLayout &layout = fragments.find(fragment)->second.layout;
    if (layout.kind != FragmentLayout::Kind::Row || layout.split == 1 || layout.cols == 0 ||
        isFragment(op.getSrc()) == isFragment(op.getDst()))
      return 0;
    int64_t width = vectorWidth(op);
    return width && layout.colsPerThread() % width == 0 ? width : 0;
  }

  /// The copy of rowVectorWidth: per owned row, the thread's segment in
  /// `width`-element vectors (a global piece past the tensor's end reads as
  /// zeros and is not written).
  void copyRowVectors(CopyOp op, Value fragment, int64_t width) {
    Location loc = op.getLoc();
    Value src = op.getSrc(), dst = op.getDst();
    Value memory = fragment == src ? dst : src;
    const Fragment &f = fragments.find(fragment)->second;
    auto vectorType = VectorType::get({width}, cast<MemRefType>(src.getType()).getElementType());
    Value colStart = rowSegmentStart(rewriter, loc, f.layout);
    forOwnedRows(loc, f.layout.rows, [&](OpBuilder &b, Location loc, Value r, Value row) {
      for (int64_t v = 0; v < f.layout.colsPerThread() / width; ++v) {
        Value col = arith::AddIOp::create(b, loc, colStart, index(b, loc, v * width));
        bool toMemory = memory == dst;
        SmallVector<Value> at = regionIndices(b, loc, toMemory ? op.getDstOffsets() : op.getSrcOffsets(),
                                              toMemory ? op.getDstSizes() : op.getSrcSizes(),
                                              ValueRange{row, col});
        auto slot = [&](int64_t e) {
          return SmallVector<Value>{r, index(b, loc, v * width + e)};
        };
        Value inside = isGlobal(memory) ? insideBuffer(b, loc, memory, at) : Value();
        if (toMemory) {
          SmallVector<Value> elements;
          for (int64_t e = 0; e < width; ++e)
            elements.push_back(memref::LoadOp::create(b, loc, f.storage, slot(e)));
          Value vector = vector::FromElementsOp::create(b, loc, vectorType, elements);
          auto storeTo = [&](OpBuilder &b, Location loc) {
            vector::StoreOp::create(b, loc, vector, memory, at, false, llvm::MaybeAlign(16));
          };
          if (!inside) {
            storeTo(b, loc);
            continue;
          }
          scf::IfOp::create(b, loc, inside, [&](OpBuilder &b, Location loc) {
            storeTo(b, loc);
            scf::YieldOp::create(b, loc);
          });
          continue;
        }
        auto loadFrom = [&](OpBuilder &b, Location loc) -> Value {
          return vector::LoadOp::create(b, loc, vectorType, memory, at, false, llvm::MaybeAlign(16));
        };
        Value vector =
            inside ? scf::IfOp::create(
                         b, loc, inside,
                         [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, loadFrom(b, loc)); },
                         [&](OpBuilder &b, Location loc) {
                           scf::YieldOp::create(b, loc, arith::ConstantOp::create(
                                                            b, loc, b.getZeroAttr(vectorType)).getResult());
                         })
                         .getResult(0)
                   : loadFrom(b, loc);
        for (int64_t e = 0; e < width; ++e)
          memref::StoreOp::create(b, loc,
                                  vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{e}),
                                  f.storage, slot(e));
      }
    }, f.layout.split);
  }

  /// A copy of an Mma accumulator to shared or global memory can store each
  /// thread's column pairs (slots 2i, 2i+1: adjacent columns of one row) as
  /// one access: the fragment's columns run along the destination's last,
  /// contiguous dimension, which has an even extent and an even offset (a
  /// pair is then wholly inside a ragged tensor or wholly past its end). A
  /// swizzled tile keeps pairs together (it moves 16-byte chunks).
  bool mmaPairs(CopyOp op, Value fragment) {
    Value dst = op.getDst();
    if (fragment != op.getSrc() || isFragment(dst) || isLocal(dst) || layouts.count(dst) ||
        fragments.find(fragment)->second.layout.kind != FragmentLayout::Kind::Mma)
      return false;
    auto type = cast<MemRefType>(dst.getType());
    auto fragmentType = cast<MemRefType>(fragment.getType());
    return fragmentType.getRank() == 2 && op.getDstSizes().back() == fragmentType.getDimSize(1) &&
           type.getDimSize(type.getRank() - 1) % 2 == 0 &&
           knownDivisor(op.getDstOffsets().back()) % 2 == 0;
  }

  /// The copy of mmaPairs: one 2-element store per column pair.
  void copyMmaPairs(CopyOp op, Value fragment) {
    Location loc = op.getLoc();
    Value dst = op.getDst();
    const Fragment &f = fragments.find(fragment)->second;
    Type element = cast<MemRefType>(dst.getType()).getElementType();
    auto pairType = VectorType::get({2}, element);
    auto alignment = llvm::MaybeAlign(2 * cast<MemRefType>(dst.getType()).getElementTypeBitWidth() / 8);
    auto [rowBase, colBase] = mmaBases(loc, f.layout);
    for (int64_t slot = 0; slot < f.layout.count(); slot += 2) {
      auto [row, col] = mmaSlotOffset(f.layout, slot);
      SmallVector<Value> at = regionIndices(rewriter, loc, op.getDstOffsets(), op.getDstSizes(),
                                            ValueRange{add(loc, rowBase, row), add(loc, colBase, col)});
      SmallVector<Value> elements;
      for (int64_t e : {slot, slot + 1})
        elements.push_back(convertFloat(
            rewriter, loc,
            memref::LoadOp::create(rewriter, loc, f.storage, ValueRange{index(rewriter, loc, e)}),
            element));
      Value pair = vector::FromElementsOp::create(rewriter, loc, pairType, elements);
      if (!isGlobal(dst)) {
        vector::StoreOp::create(rewriter, loc, pair, dst, at, false, alignment);
        continue;
      }
      scf::IfOp::create(rewriter, loc, insideBuffer(rewriter, loc, dst, at),
                        [&](OpBuilder &b, Location loc) {
                          vector::StoreOp::create(b, loc, pair, dst, at, false, alignment);
                          scf::YieldOp::create(b, loc);
                        });
    }
  }

  /// A fragment side of a copy must be the whole fragment.
  LogicalResult checkWholeFragment(CopyOp op, Value buffer, OperandRange offsets,
                                   ArrayRef<int64_t> sizes) {
    auto type = cast<MemRefType>(buffer.getType());
    for (auto [offset, size, dim] : llvm::zip(offsets, sizes, type.getShape())) {
      std::optional<int64_t> c = getConstantIntValue(offset);
      if (!c || *c != 0 || size != dim)
        return op.emitOpError("copies part of a fragment; the GPU lowering "
                              "copies whole fragments only");
    }
    if (type.getRank() > 1 && type.getDimSize(0) == 1)
      return op.emitOpError("copies a fragment whose first extent is 1; the GPU "
                            "lowering distributes fragments by their first "
                            "dimension");
    return success();
  }

  /// Elements per 16-byte access when a copy between global and shared
  /// buffers can move whole 16-byte pieces of its last dimension: same element
  /// type, no index-map layout, last dimension contiguous on both sides,
  /// 16-byte aligned and (for global tensors) inside the tensor. 0 otherwise.
  int64_t vectorWidth(CopyOp op) {
    Value src = op.getSrc(), dst = op.getDst();
    auto srcType = cast<MemRefType>(src.getType()), dstType = cast<MemRefType>(dst.getType());
    if (srcType.getElementType() != dstType.getElementType() || layouts.count(src) ||
        layouts.count(dst) || isLocal(src) || isLocal(dst))
      return 0;
    int64_t bytes = srcType.getElementTypeBitWidth() / 8;
    if (bytes == 0 || 16 % bytes)
      return 0;
    int64_t width = 16 / bytes;
    // A piece that starts inside the tensor then ends inside it: each piece
    // is guarded by its first element.
    auto aligned = [&](MemRefType type, OperandRange offsets, ArrayRef<int64_t> sizes) {
      int64_t last = type.getRank() - 1;
      return sizes[last] != 1 && sizes[last] % width == 0 && type.getDimSize(last) % width == 0 &&
             knownDivisor(offsets[last]) % width == 0;
    };
    if (!aligned(srcType, op.getSrcOffsets(), op.getSrcSizes()) ||
        !aligned(dstType, op.getDstOffsets(), op.getDstSizes()))
      return 0;
    return width;
  }

  LogicalResult lowerCopy(CopyOp op) {
    Location loc = op.getLoc();
    Value src = op.getSrc(), dst = op.getDst();
    SmallVector<int64_t> extents;
    for (int64_t size : op.getSrcSizes())
      if (size != 1)
        extents.push_back(size);
    bool writesShared = isShared(dst);
    if (writesShared)
      barrier(loc);
    if (auto entry = pipelines.entryCopies.find(op.getOperation());
        entry != pipelines.entryCopies.end()) {
      // Waited for after the prologue of the loop it precedes (PipelinePlan.h).
      issuePieces(op, op.getSrcOffsets(), dst, entry->second);
      NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
      rewriter.eraseOp(op);
      return success();
    }
    if (isFragment(src) || isFragment(dst)) {
      Value fragment = isFragment(dst) ? dst : src;
      for (Value side : {src, dst})
        if (isFragment(side) &&
            failed(checkWholeFragment(op, side,
                                      side == src ? op.getSrcOffsets() : op.getDstOffsets(),
                                      side == src ? op.getSrcSizes() : op.getDstSizes())))
          return failure();
      ArrayRef<int64_t> shape = cast<MemRefType>(fragment.getType()).getShape();
      const FragmentLayout &layout = fragments.find(fragment)->second.layout;
      if (int64_t width = rowVectorWidth(op, fragment)) {
        copyRowVectors(op, fragment, width);
        if (writesShared)
          barrier(loc);
        rewriter.eraseOp(op);
        return success();
      }
      if (mmaPairs(op, fragment)) {
        copyMmaPairs(op, fragment);
        if (writesShared)
          barrier(loc);
        rewriter.eraseOp(op);
        return success();
      }
      // A replicated row vector is written out by one of its holders only.
      Value writer = isFragment(dst) ? Value() : rowWriter(loc, layout);
      forOwned(loc, layout, shape, [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange full) {
        SmallVector<Value> squeezed;
        for (auto [d, extent] : llvm::enumerate(shape))
          if (extent != 1)
            squeezed.push_back(full[d]);
        SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), squeezed);
        SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), squeezed);
        Value value = load(b, loc, src, from, &owned);
        if (!writer) {
          store(b, loc, value, dst, to, &owned);
          return;
        }
        scf::IfOp::create(b, loc, writer, [&](OpBuilder &b, Location loc) {
          store(b, loc, value, dst, to, &owned);
          scf::YieldOp::create(b, loc);
        });
      });
    } else if (isLocal(src) || isLocal(dst)) {
      buildLoops(rewriter, loc, extents, [&](OpBuilder &b, Location loc, ValueRange s) {
        SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s);
        SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s);
        store(b, loc, load(b, loc, src, from, nullptr), dst, to, nullptr);
      });
    } else if (int64_t width = vectorWidth(op)) {
      // 16-byte accesses along the contiguous last dimension.
      SmallVector<int64_t> vectors(extents);
      vectors.back() /= width;
      Type element = cast<MemRefType>(src.getType()).getElementType();
      auto vectorType = VectorType::get({width}, element);
      forSpread(loc, vectors, [&](OpBuilder &b, Location loc, ValueRange v) {
        SmallVector<Value> s(v);
        s.back() = arith::MulIOp::create(b, loc, s.back(), index(b, loc, width));
        SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s);
        SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s);
        auto load = [&](OpBuilder &b, Location loc) -> Value {
          return vector::LoadOp::create(b, loc, vectorType, src, ValueRange(from), false, llvm::MaybeAlign(16));
        };
        auto storeTo = [&](OpBuilder &b, Location loc, Value value) {
          vector::StoreOp::create(b, loc, value, dst, ValueRange(to), false, llvm::MaybeAlign(16));
        };
        Value value;
        if (isGlobal(src))
          value = scf::IfOp::create(
                      b, loc, insideBuffer(b, loc, src, from),
                      [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, load(b, loc)); },
                      [&](OpBuilder &b, Location loc) {
                        scf::YieldOp::create(b, loc, arith::ConstantOp::create(
                                                         b, loc, b.getZeroAttr(vectorType)).getResult());
                      })
                      .getResult(0);
        else
          value = load(b, loc);
        if (!isGlobal(dst)) {
          storeTo(b, loc, value);
          return;
        }
        scf::IfOp::create(b, loc, insideBuffer(b, loc, dst, to), [&](OpBuilder &b, Location loc) {
          storeTo(b, loc, value);
          scf::YieldOp::create(b, loc);
        });
      });
    } else {
      forSpread(loc, extents, [&](OpBuilder &b, Location loc, ValueRange s) {
        SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s);
        SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s);
        store(b, loc, load(b, loc, src, from, nullptr), dst, to, nullptr);
      });
    }
    if (writesShared)
      barrier(loc);
    rewriter.eraseOp(op);
    return success();
  }

  LogicalResult lowerGemm(GemmOp op) {
    Location loc = op.getLoc();
    Value a = op.getA(), bBuf = op.getB(), c = op.getC();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    bool mma = fragments.find(c)->second.layout.kind == FragmentLayout::Kind::Mma;
    // Operands a thread cannot read from its own registers: through shared.
    if (isFragment(bBuf))
      op->setOperand(1, bBuf = stageThroughShared(loc, bBuf));
    if (isFragment(a) && (ta || (mma && !aFromRegisters(op))))
      op->setOperand(0, a = stageThroughShared(loc, a));
    if (mma)
      return lowerGemmMma(op);
    auto aType = cast<MemRefType>(a.getType());
    auto cType = cast<MemRefType>(c.getType());
    int64_t k = ta ? aType.getDimSize(0) : aType.getDimSize(1);
    Type acc = cType.getElementType();
    Value cStorage = fragments.lookup(c).storage;
    forOwnedRows(loc, cType.getDimSize(0), [&](OpBuilder &b, Location loc, Value r, Value row) {
      buildLoops(b, loc, {cType.getDimSize(1)}, [&](OpBuilder &b, Location loc, ValueRange j) {
        Value init = op.getClearAccum()
                         ? zeroOf(b, loc, acc)
                         : memref::LoadOp::create(b, loc, cStorage, ValueRange{r, j[0]}).getResult();
        auto loop = scf::ForOp::create(
            b, loc, index(b, loc, 0), index(b, loc, k), index(b, loc, 1), ValueRange{init},
            [&](OpBuilder &b, Location loc, Value kk, ValueRange sum) {
              Value av = isFragment(a)
                             ? memref::LoadOp::create(b, loc, fragments.lookup(a).storage,
                                                      ValueRange{r, kk}).getResult()
                             : memref::LoadOp::create(b, loc, a,
                                                      ta ? ValueRange{kk, row} : ValueRange{row, kk})
                                   .getResult();
              Value bv = memref::LoadOp::create(b, loc, bBuf,
                                                tb ? ValueRange{j[0], kk} : ValueRange{kk, j[0]});
              Value product = arith::MulFOp::create(b, loc, convertFloat(b, loc, av, acc),
                                                    convertFloat(b, loc, bv, acc));
              scf::YieldOp::create(b, loc, arith::AddFOp::create(b, loc, sum[0], product).getResult());
            });
        memref::StoreOp::create(b, loc, loop.getResult(0), cStorage, ValueRange{r, j[0]});
      });
    });
    rewriter.eraseOp(op);
    return success();
  }

  /// The A fragment of an Mma gemm holds, in each thread, the elements mma.sync
  /// wants from it: its layout is the accumulator's, over whole rows per warp.
  bool aFromRegisters(GemmOp op) {
    const FragmentLayout &a = fragments.find(op.getA())->second.layout;
    const FragmentLayout &c = fragments.find(op.getC())->second.layout;
    int64_t k = cast<MemRefType>(op.getA().getType()).getDimSize(1);
    return a.kind == FragmentLayout::Kind::Mma && c.warpsN == 1 && a.rows == c.rows &&
           a.cols == k && a.warpsM == c.warpsM && a.warpsN == 1;
  }

  /// A shared copy of a fragment for an op whose threads need elements other
  /// threads hold: each thread stores the elements it owns, and barriers
  /// order the copy after earlier readers of the tile and before the reads.
  Value stageThroughShared(Location loc, Value fragment) {
    auto type = cast<MemRefType>(fragment.getType());
    Value tile = allocateShared(loc, MemRefType::get(type.getShape(), type.getElementType()));
    const FragmentLayout &layout = fragments.find(fragment)->second.layout;
    barrier(loc);
    forOwned(loc, layout, type.getShape(),
             [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange full) {
               memref::StoreOp::create(b, loc, load(b, loc, fragment, full, &owned), tile, full);
             });
    barrier(loc);
    return tile;
  }

  //===--------------------------------------------------------------------===//
  // Tensor cores
  //===--------------------------------------------------------------------===//

  /// Two f16/bf16 values packed into the i32 an mma.sync register holds.
  /// As a 2-element vector bitcast to i32: NVPTX makes it one mov (or one
  /// cvt.rn.f16x2.f32 with the conversion), not a shift-and-or per pair.
  Value pack(Location loc, Value lo, Value hi, Type half) {
    auto &b = rewriter;
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, half),
        ValueRange{convertFloat(b, loc, lo, half), convertFloat(b, loc, hi, half)});
    Value word = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), pair);
    return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
  }

  /// mma.sync m16n8k16 row.col with f32 accumulators, through inline PTX.
  SmallVector<Value> mma(Location loc, ArrayRef<Value> a, ArrayRef<Value> b,
                         ArrayRef<Value> c, bool bf16) {
    auto &rw = rewriter;
    Type f32 = rw.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(rw.getContext(), {f32, f32, f32, f32});
    SmallVector<Value> operands(a.begin(), a.end());
    operands.append(b.begin(), b.end());
    operands.append(c.begin(), c.end());
    std::string text = std::string("mma.sync.aligned.m16n8k16.row.col.f32.") +
                       (bf16 ? "bf16.bf16" : "f16.f16") +
                       ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
    Value result = inlineAsm(loc, resultType, operands, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f");
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(rw, loc, result, i));
    return d;
  }

  /// Inline PTX without side effects (LLVM may move, merge or drop it, but
  /// cannot see through it).
  Value inlineAsm(Location loc, Type resultType, ValueRange operands, const std::string &text,
                  StringRef constraints) {
    return LLVM::InlineAsmOp::create(
               rewriter, loc, resultType, operands, text, constraints,
               /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
               LLVM::AsmDialectAttr::get(rewriter.getContext(), LLVM::AsmDialect::AD_ATT),
               /*operand_attrs=*/ArrayAttr())
        .getResult(0);
  }

  /// The row-major position of `indices` in a tile of `shape`.
  Value linearIndex(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange indices) {
    Value linear = index(b, loc, 0);
    for (auto [d, i] : llvm::enumerate(indices))
      linear = arith::AddIOp::create(
          b, loc, linear,
          arith::MulIOp::create(b, loc, i, index(b, loc, product(shape.drop_front(d + 1)))));
    return linear;
  }

  /// The 32-bit shared-memory address of buffer[indices] (the last two
  /// indices swizzled where the tile is).
  Value sharedAddress(Location loc, Value buffer, ValueRange indices) {
    auto &b = rewriter;
    auto type = cast<MemRefType>(buffer.getType());
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    SmallVector<Value> at(indices);
    if (swizzled.count(buffer))
      at.back() = swizzleColumn(b, loc, at[at.size() - 2], at.back());
    Value linear = linearIndex(b, loc, type.getShape(), at);
    Value bytes = arith::MulIOp::create(b, loc, linear,
                                        index(b, loc, type.getElementTypeBitWidth() / 8));
    return arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                      arith::AddIOp::create(b, loc, base, bytes));
  }
  Value sharedAddress(Location loc, Value buffer, Value row, Value col) {
    return sharedAddress(loc, buffer, ValueRange{row, col});
  }

  /// ldmatrix.x4: four 8x8 b16 matrices whose rows this lane's `address`
  /// names (lanes 8i..8i+7 give matrix i's rows); register i holds matrix i.
  /// Through the NVVM intrinsic, which reads shared memory only: it stays
  /// after the barrier that publishes the tile yet schedules freely.
  SmallVector<Value> ldmatrix(Location loc, Value address, bool transpose) {
    auto &b = rewriter;
    Type i32 = b.getI32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
    Value pointer = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*addressSpace=*/3), address);
    std::string name = std::string("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4") +
                       (transpose ? ".trans" : "") + ".b16";
    auto call = LLVM::CallIntrinsicOp::create(b, loc, resultType, b.getStringAttr(name),
                                              ValueRange{pointer});
    SmallVector<Value> regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(LLVM::ExtractValueOp::create(b, loc, call.getResult(0), i));
    return regs;
  }

  /// The shared address of ldmatrix row (row + rowStep, col + colStep) of
  /// `buffer`, where row and col are this lane's (runtime) coordinates and
  /// the steps compile-time ones. In a swizzled tile the swizzle commutes with
  /// steps of 8 rows and of 16-element column pairs when the lane's column is
  /// its 8-element half (0 or 8) plus a warp offset that is a multiple of
  /// `warpStride` (0: none), a power of two, at least 16 and above every step: the step's bits
  /// are then disjoint from the lane's, and
  ///   address = (laneAddress ^ (step's bytes within the 128-byte line)) + constant.
  /// Every ldmatrix of an operand then shares a few lane addresses, instead of
  /// a register per (step, tile) that lives through the loop. (The tile and
  /// every row start 128-byte aligned, so the XOR only touches chunk bits.)
  Value ldmatrixAddress(Location loc, Value buffer, Value row, Value col, int64_t rowStep,
                        int64_t colStep, int64_t warpStride) {
    auto &b = rewriter;
    bool disjoint = warpStride == 0 || (llvm::isPowerOf2_64(warpStride) && warpStride >= 16 &&
                                        colStep < warpStride);
    if (!swizzled.count(buffer) || !disjoint || rowStep % 8 || colStep % 16)
      return sharedAddress(loc, buffer, add(loc, row, rowStep), add(loc, col, colStep));
    auto type = cast<MemRefType>(buffer.getType());
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    int64_t lineElements = 128 / elementBytes; // the swizzle's reach
    int64_t low = (colStep % lineElements) * elementBytes;
    // Cached per gemm: every step that shares the xor shares its register.
    auto cached = [&](int64_t bits, function_ref<Value()> make) {
      auto key = std::make_tuple(buffer, row, col, bits);
      if (Value known = laneAddresses.lookup(key))
        return known;
      return laneAddresses[key] = make();
    };
    Value lane = cached(0, [&] { return sharedAddress(loc, buffer, row, col); });
    // An opaque xor: LLVM would otherwise fold each step's constant into its
    // own loop-invariant register (one per ldmatrix, live throughout).
    Value address = low == 0 ? lane : cached(low, [&] {
      return inlineAsm(loc, b.getI32Type(), lane, "xor.b32 $0, $1, " + std::to_string(low) + ";",
                       "=r,r");
    });
    int64_t offset = rowStep * type.getDimSize(1) * elementBytes +
                     (colStep - colStep % lineElements) * elementBytes;
    if (!offset)
      return address;
    return arith::AddIOp::create(
        b, loc, address,
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(offset))));
  }
  /// The gemm being lowered's lane addresses, per (tile, row, column, xor).
  llvm::DenseMap<std::tuple<Value, Value, Value, int64_t>, Value> laneAddresses;

  /// ldmatrix can feed mma from this shared operand: 16-bit rows whose length
  /// keeps every 8-element row segment 16-byte aligned.
  bool ldmatrixReady(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    return isShared(buffer) && type.getElementTypeBitWidth() == 16 &&
           type.getDimSize(1) % 8 == 0;
  }

  /// gemm with an Mma accumulator: per warp, per 16-deep K step, A and B
  /// fragments gathered from shared memory (or A from an Mma fragment, whose
  /// accumulator layout is mma's A layout) and one mma.sync per 16x8 tile.
  LogicalResult lowerGemmMma(GemmOp op) {
    Location loc = op.getLoc();
    laneAddresses.clear();
    Value a = op.getA(), bBuf = op.getB(), c = op.getC();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    const FragmentLayout &cl = fragments.find(c)->second.layout;
    auto aType = cast<MemRefType>(a.getType());
    int64_t k = ta ? aType.getDimSize(0) : aType.getDimSize(1);
    Type half = aType.getElementType();
    bool bf16 = half.isBF16();
    Value cStorage = fragments.lookup(c).storage;
    auto [rowBase, colBase] = mmaBases(loc, cl);
    // Lane's column pair inside a 16-deep K step: 2 * (lane % 4).
    Value kPair = arith::MulIOp::create(
        rewriter, loc, arith::RemUIOp::create(rewriter, loc, lane, index(rewriter, loc, 4)),
        index(rewriter, loc, 2));
    Value quad = arith::DivUIOp::create(rewriter, loc, lane, index(rewriter, loc, 4));
    Value colWarp = arith::SubIOp::create(rewriter, loc, colBase, kPair); // wn * nW
    Value rowWarp = arith::SubIOp::create(rewriter, loc, rowBase, quad);  // wm * mW
    // For ldmatrix: lane l names row l%8 of matrix l/8.
    Value matrix = arith::DivUIOp::create(rewriter, loc, lane, index(rewriter, loc, 8));
    Value eighthRow = arith::RemUIOp::create(rewriter, loc, lane, index(rewriter, loc, 8));
    auto times8 = [&](Value v) {
      return arith::MulIOp::create(rewriter, loc, v, index(rewriter, loc, 8)).getResult();
    };
    Value mBlock = times8(arith::RemUIOp::create(rewriter, loc, matrix, index(rewriter, loc, 2)));
    Value kBlock = times8(arith::DivUIOp::create(rewriter, loc, matrix, index(rewriter, loc, 2)));
    Value kBlock2 = mBlock; // B: k block (i%2)*8
    Value nBlock = kBlock;  // B: n block (i/2)*8
    // This lane's ldmatrix row and column, before the K step and tile:
    // A [M][K] at (mRow, kBlock), transposed A [K][M] at (kRow, mCol),
    // B^T [N][K] at (nRow, kBlock2), B [K][N] at (kRow2, nCol).
    auto sum = [&](Value x, Value y) { return arith::AddIOp::create(rewriter, loc, x, y).getResult(); };
    Value mRow = sum(sum(rowWarp, eighthRow), mBlock);
    Value kRow = sum(eighthRow, kBlock), mCol = sum(rowWarp, mBlock);
    Value nRow = sum(sum(colWarp, eighthRow), nBlock);
    Value kRow2 = sum(eighthRow, kBlock2), nCol = sum(colWarp, nBlock);
    if (op.getClearAccum())
      for (int64_t l = 0; l < cl.count(); ++l)
        memref::StoreOp::create(rewriter, loc, zeroOf(rewriter, loc, rewriter.getF32Type()),
                                cStorage, ValueRange{index(rewriter, loc, l)});
    auto loadA = [&](Value m, Value kk) -> Value {
      return memref::LoadOp::create(rewriter, loc, a, ta ? ValueRange{kk, m} : ValueRange{m, kk});
    };
    auto loadB = [&](Value kk, Value n) -> Value {
      return memref::LoadOp::create(rewriter, loc, bBuf, tb ? ValueRange{n, kk} : ValueRange{kk, n});
    };
    auto slot = [&](Value storage, int64_t l) -> Value {
      return memref::LoadOp::create(rewriter, loc, storage, ValueRange{index(rewriter, loc, l)});
    };
    for (int64_t kt = 0; kt < k / 16; ++kt) {
      Value k0 = add(loc, kPair, kt * 16), k8 = add(loc, kPair, kt * 16 + 8);
      Value k1 = add(loc, kPair, kt * 16 + 1), k9 = add(loc, kPair, kt * 16 + 9);
      SmallVector<SmallVector<Value>> aRegs;
      for (int64_t tm = 0; tm < cl.tilesM(); ++tm) {
        if (isFragment(a)) {
          const Fragment &af = fragments.find(a)->second;
          int64_t tiles = af.layout.tilesN();
          int64_t t0 = (tm * tiles + 2 * kt) * 4, t1 = (tm * tiles + 2 * kt + 1) * 4;
          aRegs.push_back({pack(loc, slot(af.storage, t0), slot(af.storage, t0 + 1), half),
                           pack(loc, slot(af.storage, t0 + 2), slot(af.storage, t0 + 3), half),
                           pack(loc, slot(af.storage, t1), slot(af.storage, t1 + 1), half),
                           pack(loc, slot(af.storage, t1 + 2), slot(af.storage, t1 + 3), half)});
          continue;
        }
        if (ldmatrixReady(a)) {
          // Lane l names row l%8 of 8x8 matrix l/8: (m, k) blocks (0,0),
          // (8,0), (0,8), (8,8) of the 16x16 A tile.
          // Transposed (stored [K][M]): row k0 + (i/2)*8 + l%8, column
          // m0 + (i%2)*8; the column has a warp offset unless warpsM == 1.
          Value address =
              ta ? ldmatrixAddress(loc, a, kRow, mCol, kt * 16, tm * 16,
                                   cl.warpsM == 1 ? 0 : cl.rows / cl.warpsM)
                 : ldmatrixAddress(loc, a, mRow, kBlock, tm * 16, kt * 16, 0);
          aRegs.push_back(ldmatrix(loc, address, ta));
          continue;
        }
        Value r0 = add(loc, rowBase, tm * 16), r8 = add(loc, rowBase, tm * 16 + 8);
        aRegs.push_back({pack(loc, loadA(r0, k0), loadA(r0, k1), half),
                         pack(loc, loadA(r8, k0), loadA(r8, k1), half),
                         pack(loc, loadA(r0, k8), loadA(r0, k9), half),
                         pack(loc, loadA(r8, k8), loadA(r8, k9), half)});
      }
      SmallVector<Value> bPair; // ldmatrix.x4 gives two n-tiles' B registers
      for (int64_t tn = 0; tn < cl.tilesN(); ++tn) {
        SmallVector<Value> bRegs;
        if (ldmatrixReady(bBuf)) {
          if (tn % 2 == 0) {
            // Matrix i: k block (i%2)*8, n block (i/2)*8. An odd last tile
            // has no neighbour: matrices 2 and 3 then repeat 0 and 1 (every
            // address stays inside the tile; the repeat goes unused).
            bool alone = tn + 1 == cl.tilesN();
            Value n = alone ? sum(colWarp, eighthRow) : nRow;
            Value nc = alone ? colWarp : nCol;
            bPair = tb ? ldmatrix(loc, ldmatrixAddress(loc, bBuf, n, kBlock2, tn * 8, kt * 16, 0),
                                  false)
                       : ldmatrix(loc, ldmatrixAddress(loc, bBuf, kRow2, nc, kt * 16, tn * 8,
                                                       cl.warpsN == 1 ? 0 : cl.cols / cl.warpsN),
                                  true);
          }
          bRegs = tn % 2 == 0 ? SmallVector<Value>{bPair[0], bPair[1]}
                              : SmallVector<Value>{bPair[2], bPair[3]};
        } else {
          Value n = arith::AddIOp::create(rewriter, loc, colWarp, add(loc, quad, tn * 8));
          bRegs = {pack(loc, loadB(k0, n), loadB(k1, n), half),
                   pack(loc, loadB(k8, n), loadB(k9, n), half)};
        }
        for (int64_t tm = 0; tm < cl.tilesM(); ++tm) {
          int64_t base = (tm * cl.tilesN() + tn) * 4;
          SmallVector<Value> acc;
          for (int64_t e = 0; e < 4; ++e)
            acc.push_back(slot(cStorage, base + e));
          SmallVector<Value> d = mma(loc, aRegs[tm], bRegs, acc, bf16);
          for (int64_t e = 0; e < 4; ++e)
            memref::StoreOp::create(rewriter, loc, d[e], cStorage,
                                    ValueRange{index(rewriter, loc, base + e)});
        }
      }
    }
    rewriter.eraseOp(op);
    return success();
  }

  /// Row reduction of an Mma fragment: each thread combines the columns it
  /// holds, then the four lanes of a row combine by shuffles.
  /// Row reductions of an Mma fragment: each thread combines its elements of
  /// a row, the four lanes of a quad combine by shuffles; where several warps
  /// share the rows (warpsN > 1), each warp's partial goes through shared
  /// memory and every thread combines the warps' partials in warp order.
  LogicalResult lowerReduceMma(ReduceOp op) {
    Location loc = op.getLoc();
    const Fragment &src = fragments.find(op.getSrc())->second;
    const Fragment &dst = fragments.find(op.getDst())->second;
    const FragmentLayout &l = src.layout;
    auto &b = rewriter;
    auto slot = [&](Value storage, int64_t i) -> Value {
      return memref::LoadOp::create(b, loc, storage, ValueRange{index(b, loc, i)});
    };
    Type f32 = cast<MemRefType>(src.storage.getType()).getElementType();
    ReduceKind across = op.getKind() == ReduceKind::abssum ? ReduceKind::sum : op.getKind();
    SmallVector<Value> partial;
    for (int64_t q = 0; q < l.tilesM() * 2; ++q) {
      int64_t tm = q / 2, h = q % 2;
      Value acc = reductionIdentity(b, loc, op.getKind(), f32);
      for (int64_t tn = 0; tn < l.tilesN(); ++tn)
        for (int64_t e = 0; e < 2; ++e)
          acc = combineReduction(b, loc, op.getKind(), acc,
                        slot(src.storage, (tm * l.tilesN() + tn) * 4 + h * 2 + e));
      for (int32_t offset : {1, 2}) {
        Value other = gpu::ShuffleOp::create(b, loc, acc, offset, 32, gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        acc = combineReduction(b, loc, across, acc, other);
      }
      partial.push_back(acc);
    }
    if (l.warpsN > 1) {
      Value scratch = allocateShared(loc, MemRefType::get({l.warpsN, l.rows}, f32));
      Value rowBase = mmaBases(loc, l).first;
      Value wn = arith::RemUIOp::create(b, loc, warpId, index(b, loc, l.warpsN));
      Value writer = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, lane, index(b, loc, 4)), index(b, loc, 0));
      auto rowOf = [&](int64_t q) { return add(loc, rowBase, (q / 2) * 16 + (q % 2) * 8); };
      barrier(loc);
      for (auto [q, acc] : llvm::enumerate(partial)) {
        Value row = rowOf(static_cast<int64_t>(q));
        scf::IfOp::create(b, loc, writer, [&](OpBuilder &b, Location loc) {
          memref::StoreOp::create(b, loc, acc, scratch, ValueRange{wn, row});
          scf::YieldOp::create(b, loc);
        });
      }
      barrier(loc);
      for (size_t q = 0; q < partial.size(); ++q) {
        Value row = rowOf(static_cast<int64_t>(q));
        Value acc = reductionIdentity(b, loc, across, f32);
        for (int64_t w = 0; w < l.warpsN; ++w)
          acc = combineReduction(
              b, loc, across, acc,
              memref::LoadOp::create(b, loc, scratch, ValueRange{index(b, loc, w), row}));
        partial[q] = acc;
      }
    }
    for (auto [q, acc] : llvm::enumerate(partial)) {
      Value result = acc;
      if (!op.getClear())
        result = combineReduction(b, loc, across, result, slot(dst.storage, q));
      memref::StoreOp::create(b, loc, result, dst.storage, ValueRange{index(b, loc, q)});
    }
    rewriter.eraseOp(op);
    return success();
  }

  /// Row reduction of a split Row fragment into a (replicated) 1-D one: each
  /// thread combines its segment of the row, then the row's threads (adjacent
  /// lanes) combine by xor shuffles, so that each of them holds the result.
  LogicalResult lowerReduceSplitRows(ReduceOp op) {
    Location loc = op.getLoc();
    const Fragment &src = fragments.find(op.getSrc())->second;
    const Fragment &dst = fragments.find(op.getDst())->second;
    Type element = cast<MemRefType>(src.storage.getType()).getElementType();
    ReduceKind across = op.getKind() == ReduceKind::abssum ? ReduceKind::sum : op.getKind();
    forOwnedRows(loc, src.layout.rows, [&](OpBuilder &b, Location loc, Value r, Value) {
      Value acc = reductionIdentity(b, loc, op.getKind(), element);
      for (int64_t c = 0; c < src.layout.colsPerThread(); ++c)
        acc = combineReduction(
            b, loc, op.getKind(), acc,
            memref::LoadOp::create(b, loc, src.storage, ValueRange{r, index(b, loc, c)}));
      for (int64_t offset = src.layout.split / 2; offset >= 1; offset /= 2) {
        Value other = gpu::ShuffleOp::create(b, loc, acc, static_cast<int32_t>(offset), 32,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        acc = combineReduction(b, loc, across, acc, other);
      }
      if (!op.getClear())
        acc = combineReduction(b, loc, across, acc,
                               memref::LoadOp::create(b, loc, dst.storage, ValueRange{r}));
      memref::StoreOp::create(b, loc, acc, dst.storage, ValueRange{r});
    }, src.layout.split);
    rewriter.eraseOp(op);
    return success();
  }

  LogicalResult lowerReduce(ReduceOp op) {
    Location loc = op.getLoc();
    Value src = op.getSrc(), dst = op.getDst();
    auto srcType = cast<MemRefType>(src.getType());
    auto dstType = cast<MemRefType>(dst.getType());
    auto dim = static_cast<int64_t>(op.getDim());
    if (!isa<FloatType>(srcType.getElementType()))
      return op.emitOpError("reduces integers; the GPU lowering reduces floats only");
    if (isFragment(src) && fragments.find(src)->second.layout.kind == FragmentLayout::Kind::Mma)
      return lowerReduceMma(op);
    if (isFragment(src) && fragments.find(src)->second.layout.split > 1)
      return lowerReduceSplitRows(op);
    if (isFragment(src) && (dim == 0 || !isFragment(dst))) {
      // The rows to combine belong to other threads: stage the source in
      // shared memory and reduce from there.
      Value staged = allocateShared(loc, srcType);
      barrier(loc);
      forOwned(loc, fragments.find(src)->second.layout, srcType.getShape(),
               [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange full) {
                 memref::StoreOp::create(b, loc, load(b, loc, src, full, &owned), staged, full);
               });
      barrier(loc);
      src = staged;
    }
    auto reduceOne = [&](OpBuilder &b, Location loc, ValueRange dstIndices,
                         ValueRange outer, const Owned *r) {
      Value init = op.getClear() ? reductionIdentity(b, loc, op.getKind(), srcType.getElementType())
                                 : load(b, loc, dst, dstIndices, r);
      auto loop = scf::ForOp::create(
          b, loc, index(b, loc, 0), index(b, loc, srcType.getDimSize(dim)),
          index(b, loc, 1), ValueRange{init},
          [&](OpBuilder &b, Location loc, Value red, ValueRange acc) {
            SmallVector<Value> srcIndices(outer);
            srcIndices.insert(srcIndices.begin() + dim, red);
            scf::YieldOp::create(
                b, loc, combineReduction(b, loc, op.getKind(), acc[0], load(b, loc, src, srcIndices, r)));
          });
      store(b, loc, loop.getResult(0), dst, dstIndices, r);
    };
    SmallVector<int64_t> outerShape(srcType.getShape());
    outerShape.erase(outerShape.begin() + dim);
    if (isFragment(dst)) {
      forOwned(loc, fragments.find(dst)->second.layout, dstType.getShape(),
               [&](OpBuilder &b, Location loc, const Owned &owned, ValueRange outer) {
                 reduceOne(b, loc, outer, outer, &owned);
               });
    } else {
      bool toShared = isShared(dst);
      if (toShared)
        barrier(loc);
      auto body = [&](OpBuilder &b, Location loc, ValueRange outer) {
        SmallVector<Value> dstIndices(outer);
        if (dstIndices.empty())
          dstIndices.push_back(index(b, loc, 0));
        reduceOne(b, loc, dstIndices, outer, nullptr);
      };
      if (toShared)
        forSpread(loc, outerShape.empty() ? SmallVector<int64_t>{1} : outerShape,
                  [&](OpBuilder &b, Location loc, ValueRange outer) {
                    body(b, loc, outerShape.empty() ? ValueRange{} : outer);
                  });
      else
        buildLoops(rewriter, loc, outerShape, body);
      if (toShared)
        barrier(loc);
    }
    rewriter.eraseOp(op);
    return success();
  }

  /// True when `op`'s body accesses a fragment / writes shared memory.
  bool bodyTouches(Operation *op, bool fragmentsNotShared) {
    bool found = false;
    op->walk([&](Operation *inner) {
      Value buffer;
      bool write = false;
      if (auto l = dyn_cast<memref::LoadOp>(inner))
        buffer = l.getMemRef();
      else if (auto s = dyn_cast<memref::StoreOp>(inner))
        buffer = s.getMemRef(), write = true;
      else if (auto a = dyn_cast<AtomicAddOp>(inner))
        buffer = a.getDst(), write = true;
      if (!buffer)
        return;
      found |= fragmentsNotShared ? isFragment(buffer) : (write && isShared(buffer));
    });
    return found;
  }

  /// The fragment whose layout decides which thread runs which iteration of a
  /// parallel loop: one indexed by all the loop's indices if there is one.
  Value drivingFragment(ParallelOp op) {
    Value driver;
    size_t rank = op.getExtents().size();
    op.walk([&](Operation *inner) {
      Value buffer;
      if (auto l = dyn_cast<memref::LoadOp>(inner))
        buffer = l.getMemRef();
      else if (auto s = dyn_cast<memref::StoreOp>(inner))
        buffer = s.getMemRef();
      if (!buffer || !isFragment(buffer))
        return;
      if (!driver || cast<MemRefType>(buffer.getType()).getRank() == static_cast<int64_t>(rank))
        driver = buffer;
    });
    return driver;
  }

  /// The row factor s of a rescale loop `X(i, j) = X(i, j) * s(i)` (either
  /// operand order; f32), with X an Mma accumulator and s a row fragment of
  /// it; null for any other loop. Online softmax rescales its output so each
  /// iteration, by exp2(old max - new max): 1 for every row whose max held.
  Value rowScaleFactor(ParallelOp op) {
    Block &body = op.getBody().front();
    if (body.getNumArguments() != 2)
      return Value();
    SmallVector<Operation *> ops;
    for (Operation &inner : body)
      if (!inner.hasTrait<OpTrait::IsTerminator>())
        ops.push_back(&inner);
    if (ops.size() != 4)
      return Value();
    Value i = body.getArgument(0), j = body.getArgument(1);
    auto store = dyn_cast<memref::StoreOp>(ops[3]);
    auto mul = dyn_cast<arith::MulFOp>(ops[2]);
    if (!store || !mul || store.getValue() != mul.getResult() || !mul.getType().isF32() ||
        store.getIndices() != ValueRange{i, j} || !isFragment(store.getMemRef()))
      return Value();
    Value target = store.getMemRef(), scale;
    for (Value operand : {mul.getLhs(), mul.getRhs()}) {
      auto load = operand.getDefiningOp<memref::LoadOp>();
      if (!load || !llvm::is_contained(ops, load.getOperation()) || !isFragment(load.getMemRef()))
        return Value();
      if (load.getMemRef() == target && load.getIndices() == ValueRange{i, j})
        continue;
      if (load.getIndices() != ValueRange{i})
        return Value();
      scale = load.getMemRef();
    }
    if (!scale || fragments.find(target)->second.layout.kind != FragmentLayout::Kind::Mma ||
        fragments.find(scale)->second.layout.kind != FragmentLayout::Kind::MmaRow)
      return Value();
    return scale;
  }

  /// For a rescale loop (rowScaleFactor): a guard that skips the multiplies
  /// when every factor the warp holds is exactly 1 (x * 1 == x), decided by a
  /// warp vote so that the branch stays uniform. Returns the guard; the
  /// caller emits the loop in its then-block.
  scf::IfOp skipUnitScale(Location loc, Value scale) {
    const Fragment &f = fragments.find(scale)->second;
    auto &b = rewriter;
    Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
    Value needed = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    for (int64_t slot = 0; slot < f.layout.count(); ++slot) {
      Value factor = memref::LoadOp::create(b, loc, f.storage, ValueRange{index(b, loc, slot)});
      needed = arith::OrIOp::create(
          b, loc, needed, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, factor, one));
    }
    Value everyLane = arith::ConstantIntOp::create(b, loc, -1, 32);
    Value anyLane = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), everyLane, needed,
                                             NVVM::VoteSyncKind::any);
    return scf::IfOp::create(b, loc, anyLane, /*withElse=*/false);
  }

  LogicalResult lowerParallel(ParallelOp op) {
    Location loc = op.getLoc();
    ArrayRef<int64_t> extents = op.getExtents();
    Block &body = op.getBody().front();
    bool writesShared = bodyTouches(op, /*fragmentsNotShared=*/false);
    if (writesShared)
      barrier(loc);
    LogicalResult result = success();
    // One copy of the body per iteration point this thread runs (a loop body
    // for Row and spread iterations, an unrolled copy per Mma element).
    auto emitBody = [&](OpBuilder &b, ValueRange ivs, const Owned *owned) {
      IRMapping mapping;
      mapping.map(body.getArguments(), ivs);
      SmallVector<Operation *> copies;
      for (Operation &inner : body)
        copies.push_back(b.clone(inner, mapping));
      for (Operation *copy : copies) // after cloning: lowering replaces ops
        if (failed(lowerElementOps(copy, owned, ivs)))
          result = failure();
    };
    if (Value driver = drivingFragment(op)) {
      const FragmentLayout &layout = fragments.find(driver)->second.layout;
      std::optional<OpBuilder::InsertionGuard> afterSkip;
      if (Value scale = rowScaleFactor(op)) {
        scf::IfOp skip = skipUnitScale(loc, scale);
        afterSkip.emplace(rewriter);
        rewriter.setInsertionPoint(skip.thenBlock()->getTerminator());
      }
      Block *block = rewriter.getInsertionBlock();
      Operation *before = rewriter.getInsertionPoint() == block->begin()
                              ? nullptr
                              : &*std::prev(rewriter.getInsertionPoint());
      SmallVector<UnrolledStores> unrolled; // Mma: the stores of each copy of the body
      forOwned(loc, layout, extents, [&](OpBuilder &b, Location, const Owned &owned, ValueRange ivs) {
        Block::iterator end = rewriter.getInsertionPoint();
        bool atStart = end == block->begin();
        Block::iterator last = atStart ? end : std::prev(end);
        emitBody(b, ivs, &owned);
        if (layout.kind != FragmentLayout::Kind::Mma)
          return;
        UnrolledStores copy{SmallVector<Value, 2>(ivs.begin(), ivs.end()), {}};
        for (auto it = atStart ? block->begin() : std::next(last); it != rewriter.getInsertionPoint(); ++it)
          if (auto store = dyn_cast<memref::StoreOp>(&*it))
            copy.stores.push_back(store);
        unrolled.push_back(std::move(copy));
      });
      if (layout.kind != FragmentLayout::Kind::Row) { // unrolled: straight-line code
        shareDivisors(before ? before->getNextNode() : &block->front(), op);
        OpBuilder::InsertionGuard guard(rewriter);
        pairColumnStores(rewriter, unrolled,
                         [&](Value tile) { return isShared(tile) && !layouts.count(tile); });
      }
    } else {
      forSpread(loc, extents, [&](OpBuilder &b, Location, ValueRange ivs) {
        emitBody(b, ivs, nullptr);
      });
    }
    if (writesShared)
      barrier(loc);
    rewriter.eraseOp(op);
    return result;
  }

  /// In the straight-line code [begin, end) of an unrolled parallel loop,
  /// divisions by one value become multiplications by its reciprocal,
  /// computed once (`acc_o /= logsum` in attention: one division per row, not
  /// per element; the result may differ from the quotient in the last bit).
  /// f32 only: a 16-bit reciprocal overflows long before the quotient does.
  /// Repeated loads of one fragment slot are merged first, so that the
  /// elements of a row see one divisor.
  void shareDivisors(Operation *begin, Operation *end) {
    // Only fragment storage (a thread's own registers) is tracked: nothing
    // but this code reads or writes it.
    llvm::DenseSet<Value> storages;
    for (auto &entry : fragments)
      storages.insert(entry.second.storage);
    DenseMap<std::pair<Value, int64_t>, Value> loaded; // (storage, slot) -> value
    llvm::MapVector<Value, SmallVector<arith::DivFOp>> byDivisor;
    for (Operation *op = begin; op && op != end; op = op->getNextNode()) {
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && storages.count(load.getMemRef()) && load.getIndices().size() == 1) {
        if (std::optional<int64_t> slot = getConstantIntValue(load.getIndices()[0])) {
          auto [it, fresh] = loaded.try_emplace({load.getMemRef(), *slot}, load.getResult());
          if (!fresh)
            load.getResult().replaceAllUsesWith(it->second);
          continue;
        }
      }
      if (auto store = dyn_cast<memref::StoreOp>(op); store && storages.count(store.getMemRef())) {
        std::optional<int64_t> slot = store.getIndices().size() == 1
                                          ? getConstantIntValue(store.getIndices()[0])
                                          : std::nullopt;
        if (slot)
          loaded[{store.getMemRef(), *slot}] = store.getValue();
        else // an unknown slot: forget the buffer
          for (auto it = loaded.begin(); it != loaded.end();)
            it = it->first.first == store.getMemRef() ? (loaded.erase(it), loaded.begin()) : std::next(it);
        continue;
      }
      if (auto div = dyn_cast<arith::DivFOp>(op); div && div.getType().isF32())
        byDivisor[div.getRhs()].push_back(div);
      if (op->getNumRegions() != 0 &&
          op->walk([](memref::StoreOp) { return WalkResult::interrupt(); }).wasInterrupted())
        loaded.clear(); // a conditional store: known slots may change
    }
    for (auto &entry : byDivisor) {
      // The key may be a division an earlier group replaced: the divisions
      // themselves hold the current value.
      SmallVector<arith::DivFOp> &divisions = entry.second;
      if (divisions.size() < 2)
        continue;
      Value divisor = divisions.front().getRhs();
      rewriter.setInsertionPoint(divisions.front());
      Location loc = divisions.front().getLoc();
      Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(divisor.getType(), 1.0));
      Value reciprocal = arith::DivFOp::create(rewriter, loc, one, divisor);
      for (arith::DivFOp div : divisions) {
        rewriter.setInsertionPoint(div);
        rewriter.replaceOpWithNewOp<arith::MulFOp>(div, div.getLhs(), reciprocal);
      }
    }
    rewriter.setInsertionPoint(end);
  }

  /// Rewrites the element-level ops of a parallel body: fragment accesses go
  /// to the thread's own element (they must use the loop's own indices),
  /// atomic_add becomes atomic_rmw.
  LogicalResult lowerElementOps(Operation *root, const Owned *owned, ValueRange ivs) {
    LogicalResult result = success();
    root->walk([&](Operation *op) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(op);
      auto own = [&](Value buffer, ValueRange indices) -> std::optional<SmallVector<Value>> {
        bool matches = owned && !indices.empty() && indices[0] == ivs[0];
        if (matches && owned->layout.kind != FragmentLayout::Kind::Row)
          for (auto [index, iv] : llvm::zip(indices, ivs))
            matches = matches && index == iv;
        if (!matches) {
          op->emitError("a fragment is indexed by something other than the "
                        "parallel loop's own indices; the thread that holds the "
                        "element may not be the one running the iteration");
          result = failure();
          return std::nullopt;
        }
        return localIndices(rewriter, op->getLoc(), buffer, indices, *owned);
      };
      if (auto l = dyn_cast<memref::LoadOp>(op); l && isFragment(l.getMemRef())) {
        if (auto local = own(l.getMemRef(), l.getIndices()))
          rewriter.replaceOpWithNewOp<memref::LoadOp>(
              l, fragments.lookup(l.getMemRef()).storage, *local);
      } else if (auto s = dyn_cast<memref::StoreOp>(op); s && isFragment(s.getMemRef())) {
        if (auto local = own(s.getMemRef(), s.getIndices()))
          rewriter.replaceOpWithNewOp<memref::StoreOp>(
              s, s.getValue(), fragments.lookup(s.getMemRef()).storage, *local);
      } else if (auto a = dyn_cast<AtomicAddOp>(op)) {
        ElementRef ref = resolveElement(rewriter, a.getLoc(), layouts, a.getDst(), a.getIndices());
        auto kind = isa<FloatType>(a.getValue().getType()) ? arith::AtomicRMWKind::addf
                                                           : arith::AtomicRMWKind::addi;
        memref::AtomicRMWOp::create(rewriter, a.getLoc(), kind, a.getValue(), ref.memref,
                                    ref.indices);
        rewriter.eraseOp(a);
      } else if (isa<TLDialect>(op->getDialect())) {
        op->emitOpError("cannot appear inside a parallel loop");
        result = failure();
      }
    });
    return result;
  }

  /// exp2/log2 (and exp/log through them) as the PTX approximations
  /// (ex2.approx / lg2.approx), as the fastest attention kernels use them;
  /// abs and sqrt as LLVM intrinsics. convert-gpu-to-nvvm would otherwise
  /// call libdevice, which we do not link.
  void replaceTranscendentals() {
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (isa<math::Exp2Op, math::Log2Op, math::ExpOp, math::LogOp, math::AbsFOp,
              math::SqrtOp, math::RsqrtOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      Value x = op->getOperand(0);
      Type type = x.getType(), f32 = rewriter.getF32Type();
      Value x32 = convertFloat(rewriter, loc, x, f32);
      bool exponential = isa<math::Exp2Op, math::ExpOp>(op);
      StringRef name = exponential ? "llvm.nvvm.ex2.approx.ftz.f" : "llvm.nvvm.lg2.approx.ftz.f";
      if (isa<math::AbsFOp>(op))
        name = "llvm.fabs.f32";
      else if (isa<math::SqrtOp>(op))
        name = "llvm.sqrt.f32";
      else if (isa<math::RsqrtOp>(op))
        name = "llvm.nvvm.rsqrt.approx.ftz.f";
      if (isa<math::ExpOp>(op)) // e^x = 2^(x log2 e)
        x32 = arith::MulFOp::create(rewriter, loc, x32,
                                    arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(1.4426950408889634f)));
      Value y = LLVM::CallIntrinsicOp::create(rewriter, loc, f32,
                                              rewriter.getStringAttr(name), ValueRange{x32})
                    .getResult(0);
      if (isa<math::LogOp>(op)) // ln x = log2 x * ln 2
        y = arith::MulFOp::create(rewriter, loc, y,
                                  arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.6931471805599453f)));
      rewriter.replaceOp(op, convertFloat(rewriter, loc, y, type));
    }
  }

  gpu::GPUFuncOp func;
  Operation *funcOp;
  IRRewriter rewriter;
  int64_t threads;
  const LayoutMap &layouts;
  Value tid, sharedBase, lane, warpId;
  FragmentLayouts layouts_;
  int64_t sharedBytes = 0;
  llvm::MapVector<Value, Fragment> fragments;
  llvm::DenseSet<Value> shared, locals, swizzled, swizzleRequests;
  /// Shared tiles with rotating copies for a pipelined loop (see PipelinePlan.h).
  struct Rotating {
    int64_t offset, bytes, copies;
    bool swizzle;
  };
  llvm::DenseMap<Value, Rotating> rotating;
  llvm::DenseMap<Value, int64_t> plannedOffsets; // alloc_shared -> byte offset
  PipelinePlans pipelines;
  /// Steps per thread up to which forSpread unrolls.
  static constexpr int64_t kUnrolledSteps = 4;
};

/// Moves a func.func holding a tl.kernel into a gpu.module as a gpu.func
/// kernel; block indices become gpu.block_id.
gpu::GPUFuncOp outlineKernel(ModuleOp module, func::FuncOp func, KernelOp kernel) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = func.getLoc();
  auto gpuModule = gpu::GPUModuleOp::create(b, loc, (func.getName() + "_kernels").str());
  b.setInsertionPointToStart(gpuModule.getBody());
  auto gpuFunc = gpu::GPUFuncOp::create(b, loc, func.getName(), func.getFunctionType());
  gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  gpuFunc->setAttr("tl.grid", kernel.getGridAttr());
  gpuFunc->setAttr("tl.threads", kernel.getThreadsAttr());
  Block &entry = gpuFunc.getBody().front();
  b.setInsertionPointToStart(&entry);
  const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
  Block &body = kernel.getBody().front();
  for (auto [d, arg] : llvm::enumerate(body.getArguments()))
    arg.replaceAllUsesWith(gpu::BlockIdOp::create(b, loc, dims[d]));
  for (auto [from, to] : llvm::zip(func.getArguments(), entry.getArguments()))
    from.replaceAllUsesWith(to);
  entry.getOperations().splice(entry.end(), body.getOperations());
  b.setInsertionPointToEnd(&entry);
  gpu::ReturnOp::create(b, loc);
  func.erase();
  return gpuFunc;
}

struct ConvertTLToGPUPass : public tl::impl::ConvertTLToGPUBase<ConvertTLToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, KernelOp>> kernels;
    module.walk([&](KernelOp kernel) {
      kernels.push_back({kernel->getParentOfType<func::FuncOp>(), kernel});
    });
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
    for (auto [func, kernel] : kernels) {
      if (!func) {
        kernel.emitOpError("must be inside a func.func");
        return signalPassFailure();
      }
      int64_t threads = static_cast<int64_t>(kernel.getThreads());
      gpu::GPUFuncOp gpuFunc = outlineKernel(module, func, kernel);
      LayoutMap layouts;
      gpuFunc.walk([&](AnnotateLayoutOp op) {
        if (auto map = dyn_cast<IndexMapLayoutAttr>(op.getLayout()))
          layouts[op.getBuffer()] = map;
      });
      if (failed(KernelLowering(gpuFunc, threads, layouts).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace tl::gpu_lowering
