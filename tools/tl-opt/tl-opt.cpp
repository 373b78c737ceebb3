//===- tl-opt.cpp - mlir-opt with the tl dialect and our passes -----------===//
//
// Crashes: MlirOptMain sets up llvm::InitLLVM (the stack and the program's
// arguments on a fatal signal), and registerTLDialects makes the report name
// the pass and pattern that were running (tl/Compiler/CrashHandler.h).
//
//===----------------------------------------------------------------------===//
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "tl/Conversion/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tl::registerTLDialects(registry);
  mlir::registerTransformsPasses();
  tl::registerTLConversionPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "tl optimizer driver\n", registry));
}
