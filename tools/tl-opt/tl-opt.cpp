//===- tl-opt.cpp - mlir-opt with the tl dialect and our passes -----------===//
//
// Crashes: MlirOptMain sets up llvm::InitLLVM (the stack and the program's
// arguments on a fatal signal), and registerTLDialects makes the report name
// the pass and pattern that were running (tl/Compiler/CrashHandler.h).
//
//===----------------------------------------------------------------------===//
#include "tl/Compiler/Pipeline.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "tl/Conversion/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tl::registerTLDialects(registry);
  mlir::registerTransformsPasses();
  tl::registerTLConversionPasses();
  tl::registerTLPipelines();
  // Thread-level IR (what convert-tl-to-gpu makes) parses too, so that the
  // passes after the lowering (tl-approximate-math, tl-elide-barriers) can be
  // run and tested alone.
  registry.insert<mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect, mlir::LLVM::LLVMDialect,
                  mlir::vector::VectorDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "tl optimizer driver\n", registry));
}
