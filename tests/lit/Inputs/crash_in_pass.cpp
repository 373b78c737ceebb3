// Runs an MLIR pass that crashes on purpose, to show what the crash handler
// reports (crash-handler.test): `crash_in_pass tool` installs it as tlc does,
// `crash_in_pass library` as the JIT does (TLC_CRASH_HANDLER=0 turns it off).
#include "tl/Dialect/TL/TLDialect.h"
#include "tl/Compiler/CrashHandler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <csignal>
#include <cstring>

namespace {

struct CrashOnPurpose
    : mlir::PassWrapper<CrashOnPurpose, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CrashOnPurpose)
  llvm::StringRef getArgument() const override { return "crash-on-purpose"; }
  void runOnOperation() override { std::raise(SIGSEGV); }
};

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "library") == 0)
    tl::installCrashHandlerUnlessDisabled();
  else
    tl::installCrashHandler(argc, argv);
  mlir::DialectRegistry registry;
  tl::registerTLDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>("module {}", &context);
  mlir::PassManager pm(&context);
  pm.addPass(std::make_unique<CrashOnPurpose>());
  (void)pm.run(*module);
  return 0;
}
