//===- ApproximateMath.cpp - tl-approximate-math: exp2/log2 as PTX does ---===//
//
// In GPU kernels, math.exp2 and math.log2 (exp and log through them) become
// the PTX approximations ex2.approx.ftz / lg2.approx.ftz, as the fastest
// attention kernels use them (2 ulp; subnormal results flush to zero); abs,
// sqrt and rsqrt become LLVM intrinsics. Not optional on the GPU path:
// convert-gpu-to-nvvm would otherwise call libdevice, which tlc does not link.
// 16-bit operands go through f32.
//
//===----------------------------------------------------------------------===//
#include "../LoweringHelpers.h"

#include "tl/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

void approximateTranscendentals(gpu::GPUFuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<math::Exp2Op, math::Log2Op, math::ExpOp, math::LogOp, math::AbsFOp, math::SqrtOp,
            math::RsqrtOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    Type type = x.getType(), f32 = rewriter.getF32Type();
    Value x32 = lowering::convertFloat(rewriter, loc, x, f32);
    bool exponential = isa<math::Exp2Op, math::ExpOp>(op);
    StringRef name = exponential ? "llvm.nvvm.ex2.approx.ftz.f" : "llvm.nvvm.lg2.approx.ftz.f";
    if (isa<math::AbsFOp>(op))
      name = "llvm.fabs.f32";
    else if (isa<math::SqrtOp>(op))
      name = "llvm.sqrt.f32";
    else if (isa<math::RsqrtOp>(op))
      name = "llvm.nvvm.rsqrt.approx.ftz.f";
    if (isa<math::ExpOp>(op)) // e^x = 2^(x log2 e)
      x32 = arith::MulFOp::create(
          rewriter, loc, x32,
          arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(1.4426950408889634f)));
    Value y = LLVM::CallIntrinsicOp::create(rewriter, loc, f32, rewriter.getStringAttr(name),
                                            ValueRange{x32})
                  .getResult(0);
    if (isa<math::LogOp>(op)) // ln x = log2 x * ln 2
      y = arith::MulFOp::create(
          rewriter, loc, y,
          arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.6931471805599453f)));
    rewriter.replaceOp(op, lowering::convertFloat(rewriter, loc, y, type));
  }
}

struct ApproximateMathPass : public tl::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override { getOperation().walk(approximateTranscendentals); }
};

} // namespace
} // namespace tl::gpu_lowering
