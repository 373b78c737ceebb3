//===- BuildState.h - the IR a DSL program is building ---------------------===//
//
// Internal to the tlc library: the MLIR behind the eDSL's opaque handles, the
// program under construction, and the helpers every DSL entry point uses to
// turn its arguments into IR and its mistakes into tl::dsl::Error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tl/Compiler/ModuleState.h"
#include "tl/dsl/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace tl::dsl::detail {

struct ProgramImpl {
  /// What the compiler takes (tl/Compiler/ModuleState.h); the fields below
  /// name its state's parts (the handle shares the state, which outlives them).
  ModuleHandle handle;
  std::string &name;
  std::unique_ptr<mlir::MLIRContext> &context;
  mlir::OwningOpRef<mlir::ModuleOp> &module;
  std::vector<Param> &params;
  bool &broken; // an error was raised while building
  mlir::func::FuncOp func;
  mlir::OpBuilder builder;
  bool hasKernel = false;

  /// An empty program: a module with one function, no parameters yet.
  ProgramImpl(const std::string &name, SourceLoc loc);
  /// A parsed program (ModuleHandle::parse): complete, its kernel built.
  explicit ProgramImpl(ModuleHandle parsed);
};

/// The program whose kernel body is being built on this thread; raises an
/// error naming `what` when there is none.
ProgramImpl &activeProgram(const char *what, SourceLoc loc);
/// The same, for operators that cannot take a location: errors point at the
/// author's line of the last DSL call.
ProgramImpl &activeProgram(const char *what);
SourceLoc lastSourceLoc();

/// Sets the program whose kernel body is being built, for one scope.
class ActiveProgramScope {
public:
  explicit ActiveProgramScope(ProgramImpl &program);
  ~ActiveProgramScope();

private:
  ProgramImpl *previous_;
};

/// Keeps the builder's insertion point for one scope (bodies restore it even
/// when the author's lambda throws).
class InsertionScope {
public:
  explicit InsertionScope(ProgramImpl &program)
      : program_(program), saved_(program.builder.saveInsertionPoint()) {}
  ~InsertionScope() { program_.builder.restoreInsertionPoint(saved_); }

private:
  ProgramImpl &program_;
  mlir::OpBuilder::InsertPoint saved_;
};

/// Location of the author's code; also remembered as the location of the
/// operators (+, *, ...) that cannot take one.
mlir::Location toLocation(ProgramImpl &program, SourceLoc loc);
mlir::Location lastLocation(ProgramImpl &program);

[[noreturn]] void fail(SourceLoc loc, const std::string &message);
using tl::failAt;

/// Verifies `op` (and what it holds when `recursive`); a failure becomes an
/// Error at the op's location, with the verifier's message, and marks the
/// program broken.
void verifyOrThrow(ProgramImpl &program, mlir::Operation *op, bool recursive);

mlir::Type toMLIR(mlir::MLIRContext *context, DType type);
DType fromMLIR(mlir::Type type, mlir::Location loc);

mlir::Value unwrap(const Buffer &buffer);
Buffer wrapBuffer(mlir::Value value, std::string name);
Expr wrap(mlir::Value value);

/// The IR value of `expr` as type `type`: literals become constants, values
/// are converted (float <-> float, int <-> float, int <-> index).
mlir::Value materialize(ProgramImpl &program, const Expr &expr, mlir::Type type,
                        mlir::Location loc);
mlir::Value convert(ProgramImpl &program, mlir::Value value, mlir::Type type, mlir::Location loc);
/// The IR value of `expr` in its own type (literals: index, f32 or i1).
mlir::Value materialize(ProgramImpl &program, const Expr &expr, mlir::Location loc);

/// Builds a single-block region body: block arguments of index type, one per
/// index, then the author's body with the insertion point inside it.
void buildBody(ProgramImpl &program, mlir::Region &region, unsigned numIndices, int arity,
               const Body &body, const char *what, SourceLoc loc);

} // namespace tl::dsl::detail
