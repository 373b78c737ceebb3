//===- TLToGPU.cpp - lower tl programs to per-thread GPU code -------------===//
//
// The first GPU lowering: correct for every program the eDSL builds, with one
// simple fragment layout (see the pass description in Passes.td). Thread t of
// T owns rows t, t+T, ... of every fragment and keeps them in a per-thread
// array indexed by r = (row - t) / T; tile ops on fragments iterate a thread's
// own rows, tile ops without fragments spread their elements over all
// threads, and shared memory is fenced by barriers around every write.
//
// The lowering walks each kernel body in program order: fragment accesses
// must be rewritten together with the loops that own them, which a set of
// independent rewrite patterns cannot see.
//
//===----------------------------------------------------------------------===//
#include "../LoweringHelpers.h"

#include "tl/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

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

/// i1: every index lies inside the buffer's extents.
Value insideBuffer(OpBuilder &b, Location loc, Value buffer, ValueRange indices) {
  auto type = cast<MemRefType>(buffer.getType());
  Value inside;
  for (auto [d, idx] : llvm::enumerate(indices)) {
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, idx,
                                     index(b, loc, type.getDimSize(d)));
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok).getResult() : ok;
  }
  return inside;
}

/// Indices of a region side from its squeezed coordinates (one per non-unit
/// extent, in order).
SmallVector<Value> regionIndices(OpBuilder &b, Location loc, ValueRange offsets,
                                 ArrayRef<int64_t> sizes, ValueRange squeezed) {
  SmallVector<Value> indices;
  unsigned next = 0;
  for (auto [offset, size] : llvm::zip(offsets, sizes))
    indices.push_back(size == 1 ? offset
                                : arith::AddIOp::create(b, loc, offset, squeezed[next++])
                                      .getResult());
  return indices;
}

struct Fragment {
  Value storage; // memref<R x rest...>, per thread
  int64_t rows;  // extent of dimension 0
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
    if (failed(lowerBlock(entry)))
      return failure();
    for (auto &[old, fragment] : fragments) {
      if (!old.use_empty())
        return emitError(old.getLoc(), "fragment still used after lowering");
      rewriter.eraseOp(old.getDefiningOp());
    }
    replaceTranscendentals();
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

  /// A view of the next free bytes of dynamic shared memory (16-byte aligned;
  /// no reuse yet). The view is created at the kernel's entry.
  Value allocateShared(Location loc, MemRefType type) {
    int64_t bytes = product(type.getShape()) * type.getElementTypeBitWidth() / 8;
    sharedBytes = (sharedBytes + 15) / 16 * 16;
    auto viewType = MemRefType::get(
        type.getShape(), type.getElementType(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(func.getContext(), gpu::AddressSpace::Workgroup));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfter(sharedBase.getDefiningOp());
    Value view = memref::ViewOp::create(rewriter, loc, viewType, sharedBase,
                                        index(rewriter, loc, sharedBytes), ValueRange{});
    sharedBytes += bytes;
    shared.insert(view);
    return view;
  }

  //===--------------------------------------------------------------------===//
  // Loops
  //===--------------------------------------------------------------------===//

  /// for r in [0, ceil(rows/T)): row = tid + r*T; if row < rows: body(r, row)
  void forOwnedRows(Location loc, int64_t rows,
                    function_ref<void(OpBuilder &, Location, Value, Value)> body) {
    int64_t perThread = (rows + threads - 1) / threads;
    auto loop = scf::ForOp::create(rewriter, loc, index(rewriter, loc, 0),
                                   index(rewriter, loc, perThread),
                                   index(rewriter, loc, 1));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    Value r = loop.getInductionVar();
    Value row = arith::AddIOp::create(
        rewriter, loc, tid,
        arith::MulIOp::create(rewriter, loc, r, index(rewriter, loc, threads)));
    if (rows % threads == 0) {
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

  /// for flat in [tid, total) step T: body(coordinates of flat in `extents`)
  void forSpread(Location loc, ArrayRef<int64_t> extents,
                 function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    int64_t total = product(extents);
    auto loop = scf::ForOp::create(rewriter, loc, tid, index(rewriter, loc, total),
                                   index(rewriter, loc, threads));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    SmallVector<Value> coords(extents.size());
    Value rest = loop.getInductionVar();
    for (int d = static_cast<int>(extents.size()) - 1; d >= 0; --d) {
      Value extent = index(rewriter, loc, extents[d]);
      coords[d] = arith::RemUIOp::create(rewriter, loc, rest, extent);
      rest = arith::DivUIOp::create(rewriter, loc, rest, extent);
    }
    body(rewriter, loc, coords);
  }

  //===--------------------------------------------------------------------===//
  // Element access
  //===--------------------------------------------------------------------===//

  /// Loads element `indices` of `buffer` (a fragment: at local row `r`; a
  /// global tensor: through its layout, zero past the end).
  Value load(OpBuilder &b, Location loc, Value buffer, ValueRange indices, Value r) {
    if (isFragment(buffer)) {
      SmallVector<Value> local(indices);
      local[0] = r;
      return memref::LoadOp::create(b, loc, fragments.lookup(buffer).storage, local);
    }
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
             ValueRange indices, Value r) {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    if (value.getType() != element)
      value = convertFloat(b, loc, value, element);
    if (isFragment(buffer)) {
      SmallVector<Value> local(indices);
      local[0] = r;
      memref::StoreOp::create(b, loc, value, fragments.lookup(buffer).storage, local);
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

  //===--------------------------------------------------------------------===//
  // Ops
  //===--------------------------------------------------------------------===//

  LogicalResult lowerBlock(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block))
      if (failed(lowerOp(&op)))
        return failure();
    return success();
  }

  LogicalResult lowerOp(Operation *op) {
    rewriter.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<AllocSharedOp>(op)) {
      rewriter.replaceOp(alloc, allocateShared(loc, alloc.getType()));
      return success();
    }
    if (auto alloc = dyn_cast<AllocFragmentOp>(op)) {
      MemRefType type = alloc.getType();
      SmallVector<int64_t> shape(type.getShape());
      int64_t rows = shape[0];
      shape[0] = (rows + threads - 1) / threads;
      Value storage = memref::AllocaOp::create(
          rewriter, loc, MemRefType::get(shape, type.getElementType()));
      fragments[alloc.getResult()] = {storage, rows};
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
    if (auto pipelined = dyn_cast<PipelinedOp>(op)) {
      auto loop = scf::ForOp::create(rewriter, loc, pipelined.getStart(),
                                     pipelined.getEnd(), index(rewriter, loc, 1));
      rewriter.inlineBlockBefore(&pipelined.getBody().front(),
                                 loop.getBody()->getTerminator(),
                                 loop.getInductionVar());
      rewriter.eraseOp(pipelined);
      return lowerBlock(*loop.getBody());
    }
    if (auto atomic = dyn_cast<AtomicAddOp>(op)) {
      // Outside a parallel loop: one thread does it.
      Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                          tid, index(rewriter, loc, 0));
      auto guard = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
      rewriter.moveOpBefore(atomic, guard.thenBlock()->getTerminator());
      return lowerElementOps(atomic, Value(), Value());
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

  LogicalResult lowerFill(FillOp op) {
    Location loc = op.getLoc();
    Value buffer = op.getBuffer(), value = op.getValue();
    if (isFragment(buffer)) {
      auto type = cast<MemRefType>(fragments.lookup(buffer).storage.getType());
      buildLoops(rewriter, loc, type.getShape(), [&](OpBuilder &b, Location loc, ValueRange ivs) {
        memref::StoreOp::create(b, loc, value, fragments.lookup(buffer).storage, ivs);
      });
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
    if (isFragment(src) || isFragment(dst)) {
      Value fragment = isFragment(dst) ? dst : src;
      for (Value side : {src, dst})
        if (isFragment(side) &&
            failed(checkWholeFragment(op, side,
                                      side == src ? op.getSrcOffsets() : op.getDstOffsets(),
                                      side == src ? op.getSrcSizes() : op.getDstSizes())))
          return failure();
      ArrayRef<int64_t> shape = cast<MemRefType>(fragment.getType()).getShape();
      forOwnedRows(loc, shape[0], [&](OpBuilder &b, Location loc, Value r, Value row) {
        buildLoops(b, loc, shape.drop_front(), [&](OpBuilder &b, Location loc, ValueRange rest) {
          SmallVector<Value> full = {row};
          full.append(rest.begin(), rest.end());
          SmallVector<Value> squeezed;
          for (auto [d, extent] : llvm::enumerate(shape))
            if (extent != 1)
              squeezed.push_back(full[d]);
          SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), squeezed);
          SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), squeezed);
          store(b, loc, load(b, loc, src, from, r), dst, to, r);
        });
      });
    } else if (isLocal(src) || isLocal(dst)) {
      buildLoops(rewriter, loc, extents, [&](OpBuilder &b, Location loc, ValueRange s) {
        SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s);
        SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s);
        store(b, loc, load(b, loc, src, from, {}), dst, to, {});
      });
    } else {
      forSpread(loc, extents, [&](OpBuilder &b, Location loc, ValueRange s) {
        SmallVector<Value> from = regionIndices(b, loc, op.getSrcOffsets(), op.getSrcSizes(), s);
        SmallVector<Value> to = regionIndices(b, loc, op.getDstOffsets(), op.getDstSizes(), s);
        store(b, loc, load(b, loc, src, from, {}), dst, to, {});
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
    if (isFragment(bBuf))
      return op.emitOpError("takes B from a fragment; the GPU lowering needs B "
                            "in shared memory");
    if (isFragment(a) && ta)
      return op.emitOpError("takes a transposed A from a fragment; the GPU "
                            "lowering needs it in shared memory");
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

  static Value identity(OpBuilder &b, Location loc, ReduceKind kind, Type type) {
    if (kind == ReduceKind::sum || kind == ReduceKind::abssum)
      return zeroOf(b, loc, type);
    double inf = std::numeric_limits<double>::infinity();
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(type, kind == ReduceKind::max ? -inf : inf));
  }

  static Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value x) {
    switch (kind) {
    case ReduceKind::max: return arith::MaximumFOp::create(b, loc, acc, x);
    case ReduceKind::min: return arith::MinimumFOp::create(b, loc, acc, x);
    case ReduceKind::abssum: x = math::AbsFOp::create(b, loc, x); [[fallthrough]];
    case ReduceKind::sum: return arith::AddFOp::create(b, loc, acc, x);
    }
    return acc;
  }

  LogicalResult lowerReduce(ReduceOp op) {
    Location loc = op.getLoc();
    Value src = op.getSrc(), dst = op.getDst();
    auto srcType = cast<MemRefType>(src.getType());
    auto dstType = cast<MemRefType>(dst.getType());
    auto dim = static_cast<int64_t>(op.getDim());
    if (!isa<FloatType>(srcType.getElementType()))
      return op.emitOpError("reduces integers; the GPU lowering reduces floats only");
    if (isFragment(src) && (dim == 0 || !isFragment(dst))) {
      // The rows to combine belong to other threads: stage the source in
      // shared memory and reduce from there.
      Value staged = allocateShared(loc, srcType);
      ArrayRef<int64_t> shape = srcType.getShape();
      barrier(loc);
      forOwnedRows(loc, shape[0], [&](OpBuilder &b, Location loc, Value r, Value row) {
        buildLoops(b, loc, shape.drop_front(), [&](OpBuilder &b, Location loc, ValueRange rest) {
          SmallVector<Value> full = {row};
          full.append(rest.begin(), rest.end());
          memref::StoreOp::create(b, loc, load(b, loc, src, full, r), staged, full);
        });
      });
      barrier(loc);
      src = staged;
    }
    auto reduceOne = [&](OpBuilder &b, Location loc, ValueRange dstIndices,
                         ValueRange outer, Value r) {
      Value init = op.getClear() ? identity(b, loc, op.getKind(), srcType.getElementType())
                                 : load(b, loc, dst, dstIndices, r);
      auto loop = scf::ForOp::create(
          b, loc, index(b, loc, 0), index(b, loc, srcType.getDimSize(dim)),
          index(b, loc, 1), ValueRange{init},
          [&](OpBuilder &b, Location loc, Value red, ValueRange acc) {
            SmallVector<Value> srcIndices(outer);
            srcIndices.insert(srcIndices.begin() + dim, red);
            scf::YieldOp::create(
                b, loc, combine(b, loc, op.getKind(), acc[0], load(b, loc, src, srcIndices, r)));
          });
      store(b, loc, loop.getResult(0), dst, dstIndices, r);
    };
    SmallVector<int64_t> outerShape(srcType.getShape());
    outerShape.erase(outerShape.begin() + dim);
    if (isFragment(dst)) {
      forOwnedRows(loc, dstType.getDimSize(0), [&](OpBuilder &b, Location loc, Value r, Value row) {
        buildLoops(b, loc, ArrayRef<int64_t>(outerShape).drop_front(),
                   [&](OpBuilder &b, Location loc, ValueRange rest) {
          SmallVector<Value> outer = {row};
          outer.append(rest.begin(), rest.end());
          reduceOne(b, loc, outer, outer, r);
        });
      });
    } else {
      bool toShared = isShared(dst);
      if (toShared)
        barrier(loc);
      auto body = [&](OpBuilder &b, Location loc, ValueRange outer) {
        SmallVector<Value> dstIndices(outer);
        if (dstIndices.empty())
          dstIndices.push_back(index(b, loc, 0));
        reduceOne(b, loc, dstIndices, outer, {});
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

  LogicalResult lowerParallel(ParallelOp op) {
    Location loc = op.getLoc();
    ArrayRef<int64_t> extents = op.getExtents();
    Block &body = op.getBody().front();
    bool ownsRows = bodyTouches(op, /*fragmentsNotShared=*/true);
    bool writesShared = bodyTouches(op, /*fragmentsNotShared=*/false);
    if (writesShared)
      barrier(loc);
    LogicalResult result = success();
    auto inlineBody = [&](OpBuilder &b, ValueRange ivs, Value r, Value row) {
      Operation *marker = scf::YieldOp::create(b, loc); // inline before it
      rewriter.inlineBlockBefore(&body, marker, ivs);
      Block *block = marker->getBlock();
      for (Operation &inner : llvm::make_early_inc_range(*block))
        if (&inner != marker && failed(lowerElementOps(&inner, r, row)))
          result = failure();
      rewriter.eraseOp(marker);
    };
    if (ownsRows) {
      forOwnedRows(loc, extents[0], [&](OpBuilder &b, Location loc, Value r, Value row) {
        buildLoops(b, loc, extents.drop_front(), [&](OpBuilder &b, Location loc, ValueRange rest) {
          SmallVector<Value> ivs = {row};
          ivs.append(rest.begin(), rest.end());
          inlineBody(b, ivs, r, row);
        });
      });
    } else {
      forSpread(loc, extents, [&](OpBuilder &b, Location loc, ValueRange ivs) {
        inlineBody(b, ivs, Value(), Value());
      });
    }
    if (writesShared)
      barrier(loc);
    rewriter.eraseOp(op);
    return result;
  }

  /// Rewrites the element-level ops of a parallel body: fragment accesses go
  /// to the thread's own row `r` (their first index must be the loop's row),
  /// atomic_add becomes atomic_rmw.
  LogicalResult lowerElementOps(Operation *root, Value r, Value row) {
    LogicalResult result = success();
    root->walk([&](Operation *op) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(op);
      auto ownRow = [&](Value buffer, ValueRange indices) -> std::optional<SmallVector<Value>> {
        if (!row || indices.empty() || indices[0] != row) {
          op->emitError("a fragment is indexed by something other than the "
                        "parallel loop's first index; the GPU lowering gives "
                        "each thread whole rows of every fragment");
          result = failure();
          return std::nullopt;
        }
        SmallVector<Value> local(indices);
        local[0] = r;
        return local;
      };
      if (auto l = dyn_cast<memref::LoadOp>(op); l && isFragment(l.getMemRef())) {
        if (auto local = ownRow(l.getMemRef(), l.getIndices()))
          rewriter.replaceOpWithNewOp<memref::LoadOp>(
              l, fragments.lookup(l.getMemRef()).storage, *local);
      } else if (auto s = dyn_cast<memref::StoreOp>(op); s && isFragment(s.getMemRef())) {
        if (auto local = ownRow(s.getMemRef(), s.getIndices()))
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
  Value tid, sharedBase;
  int64_t sharedBytes = 0;
  llvm::MapVector<Value, Fragment> fragments;
  llvm::DenseSet<Value> shared, locals;
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
