//===- ModuleState.h - the MLIR behind a ModuleHandle ---------------------===//
//
// For the compiler's own sources and the eDSL's implementation (it includes
// MLIR): the context and module a ModuleHandle shares, and the helpers that
// turn MLIR diagnostics into tl::Error at the author's line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Compiler/ModuleHandle.h"
#include "tl/Support/Error.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

namespace tl {

struct ModuleHandle::State {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string name;
  std::vector<Param> params;
  /// An error was raised while the eDSL built the module: it is not whole.
  bool incomplete = false;
};

/// A context with the tl dialect and those it builds on loaded, single
/// threaded (programs are small; a thread pool per context costs more).
std::unique_ptr<mlir::MLIRContext> makeContext();

/// The MLIR type of an element type, and back (nullopt: none of ours).
mlir::Type mlirType(mlir::MLIRContext *context, DType type);
std::optional<DType> dtypeOf(mlir::Type type);

/// Throws tl::Error with `message` at the first file:line:col inside `loc`.
[[noreturn]] void failAt(mlir::Location loc, const std::string &message);

/// Catches the first error diagnostic of a context while it lives (with its
/// notes), to be raised as a tl::Error at its location.
class FirstError {
public:
  explicit FirstError(mlir::MLIRContext *context);
  /// Throws the caught error after `prefix` (at `fallback`, saying
  /// `whenSilent`, when none came).
  [[noreturn]] void raise(mlir::Location fallback, const std::string &prefix,
                          const std::string &whenSilent = "failed") const;

private:
  std::optional<mlir::Location> where_;
  std::string message_;
  mlir::ScopedDiagnosticHandler handler_;
};

/// Verifies `op` (and what it holds when `recursive`); a failure becomes a
/// tl::Error at the op's location, with the verifier's message and notes.
void verifyOrThrow(mlir::Operation *op, bool recursive);

/// How runPipelineOrThrow runs its passes.
struct PipelineRun {
  /// Every pass's output goes to stderr (and is verified).
  bool printIRAfterAll = false;
  /// The scope the passes' times go under (nullptr: not timed).
  mlir::TimingScope *timing = nullptr;
};

/// Runs the passes `build` adds on `module`; the first error becomes a
/// tl::Error at its location, prefixed with `what` ("GPU lowering failed").
/// The module is verified once, after the last pass: verifying it after
/// every pass, as MLIR does by default, took a fifth of a kernel's compile
/// (callgrind). TLC_VERIFY_PASSES=1 (set for the test suite) or
/// printIRAfterAll verifies after every pass, so a broken pass is named.
void runPipelineOrThrow(mlir::ModuleOp module,
                        llvm::function_ref<void(mlir::OpPassManager &)> build,
                        const std::string &what, const PipelineRun &run = {});

} // namespace tl
