//===- Diagnostics.cpp - MLIR diagnostics as errors at the author's line --===//
//
// Every error the compiler reports reaches the user as a tl::Error at the
// first file:line:col of the diagnostic's location: the kernel author's C++
// line for eDSL programs, the `tl` text's for parsed ones.
//
//===----------------------------------------------------------------------===//
#include "tl/Compiler/ModuleState.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <cstdlib>
#include <string_view>

using namespace mlir;

namespace tl {
namespace {

/// The first file:line:col location inside `loc` (fused, call-site, named).
std::optional<FileLineColLoc> findFileLocation(Location loc) {
  std::optional<FileLineColLoc> found;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      found = file;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

} // namespace

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registerTLDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

Type mlirType(MLIRContext *context, DType type) {
  Builder b(context);
  switch (type) {
  case DType::f16:
    return b.getF16Type();
  case DType::bf16:
    return b.getBF16Type();
  case DType::f32:
    return b.getF32Type();
  case DType::f64:
    return b.getF64Type();
  case DType::i1:
    return b.getI1Type();
  case DType::i8:
    return b.getI8Type();
  case DType::i16:
    return b.getI16Type();
  case DType::i32:
    return b.getI32Type();
  case DType::i64:
    return b.getI64Type();
  case DType::index:
    return b.getIndexType();
  }
  return {};
}

std::optional<DType> dtypeOf(Type type) {
  if (type.isF16())
    return DType::f16;
  if (type.isBF16())
    return DType::bf16;
  if (type.isF32())
    return DType::f32;
  if (type.isF64())
    return DType::f64;
  if (type.isIndex())
    return DType::index;
  if (type.isInteger(1))
    return DType::i1;
  if (type.isInteger(8))
    return DType::i8;
  if (type.isInteger(16))
    return DType::i16;
  if (type.isInteger(32))
    return DType::i32;
  if (type.isInteger(64))
    return DType::i64;
  return std::nullopt;
}

void failAt(Location loc, const std::string &message) {
  if (std::optional<FileLineColLoc> file = findFileLocation(loc))
    throw Error(message, file->getFilename().str(), file->getLine(), file->getColumn());
  throw Error(message, "<unknown>", 0, 0);
}

FirstError::FirstError(MLIRContext *context)
    : handler_(context, [this](Diagnostic &diag) {
        if (diag.getSeverity() != DiagnosticSeverity::Error || where_)
          return success();
        where_ = diag.getLocation();
        message_ = diag.str();
        for (Diagnostic &note : diag.getNotes())
          if (!StringRef(note.str()).starts_with("see current operation"))
            message_ += "; " + note.str();
        return success();
      }) {}

void FirstError::raise(Location fallback, const std::string &prefix,
                       const std::string &whenSilent) const {
  failAt(where_.value_or(fallback), prefix + (message_.empty() ? whenSilent : message_));
}

void verifyOrThrow(Operation *op, bool recursive) {
  FirstError error(op->getContext());
  if (failed(verify(op, recursive)))
    error.raise(op->getLoc(), "", "verification failed");
}

namespace {
bool verifyEachPass(const PipelineRun &run) {
  const char *flag = std::getenv("TLC_VERIFY_PASSES");
  return run.printIRAfterAll || (flag && *flag && std::string_view(flag) != "0");
}
} // namespace

void runPipelineOrThrow(ModuleOp module, llvm::function_ref<void(OpPassManager &)> build,
                        const std::string &what, const PipelineRun &run) {
  FirstError error(module.getContext());
  PassManager pm(module.getContext());
  const bool eachPass = verifyEachPass(run);
  pm.enableVerifier(eachPass);
  if (run.printIRAfterAll)
    pm.enableIRPrinting();
  if (run.timing)
    pm.enableTiming(*run.timing);
  build(pm);
  if (failed(pm.run(module)))
    error.raise(module.getLoc(), what + ": ");
  if (!eachPass && failed(verify(module)))
    error.raise(module.getLoc(), what + ": ",
                "the passes left invalid IR (a compiler bug; TLC_VERIFY_PASSES=1 names the pass)");
}

} // namespace tl
