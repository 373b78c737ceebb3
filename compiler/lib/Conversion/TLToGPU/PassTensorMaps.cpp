//===- PassTensorMaps.cpp - tl-pass-tensor-maps: TMA descriptors by value -===//
//
// TMA reads its tensor map (a 128-byte CUtensorMap the runtime encodes) from
// the kernel's parameter space: the PTX parameter is `.param .align 64 .b8
// p[128]`, which LLVM's NVPTX backend emits for a `byval([128 x i8]) align 64`
// pointer argument marked `nvvm.grid_constant` (its address then stays in the
// parameter space instead of a local copy). The GPU lowering appends one such
// parameter per tensor map and lists them on the kernel (`tl.tensor_maps`);
// this pass, after convert-gpu-to-nvvm, gives the llvm.func's trailing
// arguments those attributes: the gpu.func cannot carry them, the NVVM
// dialect allowing grid constants on kernels only and the conversion
// dropping by-value attributes.
//
//===----------------------------------------------------------------------===//
#include "tl/Conversion/Passes.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace tl {
#define GEN_PASS_DEF_PASSTENSORMAPS
#include "tl/Conversion/Passes.h.inc"
} // namespace tl

namespace tl::gpu_lowering {
namespace {

struct PassTensorMapsPass : public tl::impl::PassTensorMapsBase<PassTensorMapsPass> {
  void runOnOperation() override {
    getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      ArrayAttr maps = tlDialect(func).getTensorMapsAttrHelper().getAttr(func);
      if (!maps)
        return;
      unsigned count = maps.size(), params = func.getNumArguments();
      if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) || count > params) {
        func.emitOpError("lists ") << count << " tensor maps but is not a kernel with as many "
                                   << "trailing parameters";
        return signalPassFailure();
      }
      Builder b(func.getContext());
      for (unsigned i = params - count; i < params; ++i) {
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(64));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
      }
    });
  }
};

} // namespace
} // namespace tl::gpu_lowering
