//===- CrashHandler.cpp - LLVM's crash handler, with the running pass -----===//
//
// LLVM's signal handler prints the stack, then the "pretty stack trace":
// entries that code pushes while it works (the legacy pass manager of the
// NVPTX backend pushes one per pass). MLIR's pass manager pushes none, but it
// runs every pass, and the greedy driver every pattern, as a tracing action
// of the context; an action handler that wraps each action in an entry puts
// the running pass and pattern into the report. Entries live on the thread
// that runs the action, so this holds with threading on.
//
//===----------------------------------------------------------------------===//
#include "tl/Compiler/CrashHandler.h"

#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/IR/Action.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/Signals.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir;

namespace tl {
namespace {

const char *const kBugReportMessage =
    "tlc crashed (or a library in this process did): please report it with the\n"
    "program or input that caused it and the stack below.\n";

/// "convert-tl-to-gpu": how the pass is named on a command line, else its
/// class.
StringRef passName(const Pass &pass) {
  return pass.getArgument().empty() ? pass.getName() : pass.getArgument();
}

/// "while running MLIR pass 'convert-tl-to-gpu' on 'builtin.module'", or the
/// action (a rewrite pattern, say) as MLIR prints it.
class RunningActionEntry : public llvm::PrettyStackTraceEntry {
public:
  explicit RunningActionEntry(const tracing::Action &action) : action_(action) {}
  void print(llvm::raw_ostream &os) const override {
    if (auto *pass = dyn_cast<PassExecutionAction>(&action_)) {
      os << "while running MLIR pass '" << passName(pass->getPass()) << "'";
      if (Operation *op = pass->getOp())
        os << " on '" << op->getName() << "'";
      os << "\n";
      return;
    }
    os << "while executing MLIR action: ";
    action_.print(os);
    os << "\n";
  }

private:
  const tracing::Action &action_;
};

/// Pass managers run their nested pipelines as a pass too (an adaptor):
/// what it runs has entries of its own.
bool isPipelineAdaptor(const tracing::Action &action) {
  auto *pass = dyn_cast<PassExecutionAction>(&action);
  return pass && pass->getPass().getArgument().empty() &&
         pass->getPass().getName().contains("OpToOpPassAdaptor");
}

void reportActionsInCrashes(MLIRContext *context, TLDialect *) {
  // A handler someone installed on purpose (--log-actions-to, a debugger)
  // stays.
  if (context->hasActionHandler())
    return;
  context->registerActionHandler(
      [](llvm::function_ref<void()> transform, const tracing::Action &action) {
        if (isPipelineAdaptor(action))
          return transform();
        RunningActionEntry entry(action);
        transform();
      });
}

/// Once per process, whoever asks first: a second registration would print
/// the stack twice.
void installSignalHandlers(const char *argv0) {
  static std::once_flag once;
  std::call_once(once, [argv0] {
    llvm::setBugReportMsg(kBugReportMessage);
    llvm::sys::PrintStackTraceOnErrorSignal(argv0);
    llvm::EnablePrettyStackTrace();
  });
}

} // namespace

void installCrashHandler(int argc, const char *const *argv) {
  installSignalHandlers(argc > 0 ? argv[0] : "");
  static std::once_flag once;
  std::call_once(once, [&] {
    // The bottom entry of the main thread's report for the rest of the
    // process: deliberately never destroyed.
    new llvm::PrettyStackTraceProgram(argc, argv);
  });
}

void installCrashHandlerUnlessDisabled() {
  const char *setting = std::getenv("TLC_CRASH_HANDLER");
  if (setting && std::strcmp(setting, "0") == 0)
    return;
  installSignalHandlers("");
}

void registerCrashReportContext(DialectRegistry &registry) {
  registry.addExtension(&reportActionsInCrashes);
}

} // namespace tl
