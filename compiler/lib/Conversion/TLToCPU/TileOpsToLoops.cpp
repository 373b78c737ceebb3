//===- TileOpsToLoops.cpp - copy, gemm, reduce, atomic_add on the host ----===//
//
// Each tile op becomes a scalar loop nest over its whole tile. Regions of
// global tensors are bounds-checked per element (a tile may run past the
// tensor's end: reads there give zero, writes there are dropped, as the GPU
// lowering's predicated copies do), and go through index-map layouts.
//
//===----------------------------------------------------------------------===//
#include "../LoweringHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tl::cpu {
using namespace tl::lowering;
namespace {

/// Global tensors are the function's arguments (on-chip buffers may already
/// have lost their memory space to AllocToAlloca).
bool isGlobal(Value buffer) {
  auto arg = dyn_cast<BlockArgument>(buffer);
  return arg && isa<func::FuncOp>(arg.getOwner()->getParentOp());
}

struct CopyToLoops : OpRewritePattern<CopyOp> {
  CopyToLoops(MLIRContext *context, const LayoutMap &layouts)
      : OpRewritePattern(context), layouts(layouts) {}

  LogicalResult matchAndRewrite(CopyOp op, PatternRewriter &rewriter) const override {
    Value src = op.getSrc(), dst = op.getDst();
    Type dstElement = cast<MemRefType>(dst.getType()).getElementType();
    SmallVector<int64_t> extents = nonUnitExtents(op.getSrcSizes());
    auto body = [&](OpBuilder &b, Location loc, ValueRange ivs) {
      auto [from, to] = regionPairIndices(b, loc, op, ivs);
      auto load = [&](OpBuilder &b, Location loc) {
        ElementRef ref = resolveElement(b, loc, layouts, src, from);
        Value value = memref::LoadOp::create(b, loc, ref.memref, ref.indices);
        return value.getType() == dstElement ? value : convertFloat(b, loc, value, dstElement);
      };
      auto copyElement = [&](OpBuilder &b, Location loc) {
        Value value;
        if (isGlobal(src)) {
          auto guarded = scf::IfOp::create(
              b, loc, insideBuffer(b, loc, src, from),
              [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, load(b, loc)); },
              [&](OpBuilder &b, Location loc) {
                scf::YieldOp::create(b, loc, zeroOf(b, loc, dstElement));
              });
          value = guarded.getResult(0);
        } else {
          value = load(b, loc);
        }
        ElementRef ref = resolveElement(b, loc, layouts, dst, to);
        memref::StoreOp::create(b, loc, value, ref.memref, ref.indices);
      };
      if (!isGlobal(dst)) {
        copyElement(b, loc);
        return;
      }
      scf::IfOp::create(b, loc, insideBuffer(b, loc, dst, to), [&](OpBuilder &b, Location loc) {
        copyElement(b, loc);
        scf::YieldOp::create(b, loc);
      });
    };
    buildLoops(rewriter, op.getLoc(), extents, body);
    rewriter.eraseOp(op);
    return success();
  }

  const LayoutMap &layouts;
};

struct GemmToLoops : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op, PatternRewriter &rewriter) const override {
    auto aType = cast<MemRefType>(op.getA().getType());
    auto cType = cast<MemRefType>(op.getC().getType());
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    int64_t k = ta ? aType.getDimSize(0) : aType.getDimSize(1);
    Type acc = cType.getElementType();
    auto body = [&](OpBuilder &b, Location loc, ValueRange ij) {
      Value i = ij[0], j = ij[1];
      Value init = op.getClearAccum() ? zeroOf(b, loc, acc)
                                      : memref::LoadOp::create(b, loc, op.getC(), ij).getResult();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value upper = arith::ConstantIndexOp::create(b, loc, k);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop = scf::ForOp::create(
          b, loc, zero, upper, one, ValueRange{init},
          [&](OpBuilder &b, Location loc, Value kk, ValueRange sum) {
            Value a = memref::LoadOp::create(b, loc, op.getA(),
                                             ta ? ValueRange{kk, i} : ValueRange{i, kk});
            Value bv = memref::LoadOp::create(b, loc, op.getB(),
                                              tb ? ValueRange{j, kk} : ValueRange{kk, j});
            Value product = arith::MulFOp::create(b, loc, convertFloat(b, loc, a, acc),
                                                  convertFloat(b, loc, bv, acc));
            scf::YieldOp::create(b, loc,
                                 arith::AddFOp::create(b, loc, sum[0], product).getResult());
          });
      memref::StoreOp::create(b, loc, loop.getResult(0), op.getC(), ij);
    };
    buildLoops(rewriter, op.getLoc(), cType.getShape(), body);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ReduceToLoops : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op, PatternRewriter &rewriter) const override {
    auto srcType = cast<MemRefType>(op.getSrc().getType());
    auto dim = static_cast<int64_t>(op.getDim());
    SmallVector<int64_t> outer(srcType.getShape());
    outer.erase(outer.begin() + dim);
    Type element = srcType.getElementType();
    auto body = [&](OpBuilder &b, Location loc, ValueRange ivs) {
      SmallVector<Value> dstIndices(ivs);
      if (dstIndices.empty())
        dstIndices.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      Value init = op.getClear()
                       ? reductionIdentity(b, loc, op.getKind(), element)
                       : memref::LoadOp::create(b, loc, op.getDst(), dstIndices).getResult();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value upper = arith::ConstantIndexOp::create(b, loc, srcType.getDimSize(dim));
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop = scf::ForOp::create(
          b, loc, zero, upper, one, ValueRange{init},
          [&](OpBuilder &b, Location loc, Value r, ValueRange acc) {
            SmallVector<Value> srcIndices(ivs);
            srcIndices.insert(srcIndices.begin() + dim, r);
            Value x = memref::LoadOp::create(b, loc, op.getSrc(), srcIndices);
            scf::YieldOp::create(b, loc, combineReduction(b, loc, op.getKind(), acc[0], x));
          });
      memref::StoreOp::create(b, loc, loop.getResult(0), op.getDst(), dstIndices);
    };
    buildLoops(rewriter, op.getLoc(), outer, body);
    rewriter.eraseOp(op);
    return success();
  }
};

struct AtomicAddToRMW : OpRewritePattern<AtomicAddOp> {
  AtomicAddToRMW(MLIRContext *context, const LayoutMap &layouts)
      : OpRewritePattern(context), layouts(layouts) {}
  LogicalResult matchAndRewrite(AtomicAddOp op, PatternRewriter &rewriter) const override {
    ElementRef ref = resolveElement(rewriter, op.getLoc(), layouts, op.getDst(), op.getIndices());
    auto kind = isa<FloatType>(op.getValue().getType()) ? arith::AtomicRMWKind::addf
                                                        : arith::AtomicRMWKind::addi;
    memref::AtomicRMWOp::create(rewriter, op.getLoc(), kind, op.getValue(), ref.memref,
                                ref.indices);
    rewriter.eraseOp(op);
    return success();
  }
  const LayoutMap &layouts;
};

/// dst[region] += src[region], element by element (atomically: blocks may
/// run on several threads), past the destination's end nothing.
struct AtomicAddTileToLoops : OpRewritePattern<AtomicAddTileOp> {
  AtomicAddTileToLoops(MLIRContext *context, const LayoutMap &layouts)
      : OpRewritePattern(context), layouts(layouts) {}
  LogicalResult matchAndRewrite(AtomicAddTileOp op, PatternRewriter &rewriter) const override {
    SmallVector<int64_t> extents = nonUnitExtents(op.getSrcSizes());
    auto body = [&](OpBuilder &b, Location loc, ValueRange ivs) {
      auto [from, to] = regionPairIndices(b, loc, op, ivs);
      scf::IfOp::create(
          b, loc, insideBuffer(b, loc, op.getDst(), to), [&](OpBuilder &b, Location loc) {
            ElementRef source = resolveElement(b, loc, layouts, op.getSrc(), from);
            Value value = memref::LoadOp::create(b, loc, source.memref, source.indices);
            ElementRef ref = resolveElement(b, loc, layouts, op.getDst(), to);
            memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, value, ref.memref,
                                        ref.indices);
            scf::YieldOp::create(b, loc);
          });
    };
    buildLoops(rewriter, op.getLoc(), extents, body);
    rewriter.eraseOp(op);
    return success();
  }
  const LayoutMap &layouts;
};

} // namespace

void populateTileOpsToLoopsPatterns(RewritePatternSet &patterns, const LayoutMap &layouts) {
  MLIRContext *context = patterns.getContext();
  patterns.add<CopyToLoops, AtomicAddToRMW, AtomicAddTileToLoops>(context, layouts);
  patterns.add<GemmToLoops, ReduceToLoops>(context);
}

} // namespace tl::cpu
