//===- ModuleHandle.cpp - a tl program as the compiler takes it -----------===//
//
// Parsing `tl` text into a handle, printing and verifying one. The eDSL makes
// its handles itself (dsl/lib/BuildState.cpp) and fills the same State.
//
//===----------------------------------------------------------------------===//
#include "tl/Compiler/ModuleState.h"
#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"

#include <fmt/format.h>

using namespace mlir;

namespace tl {

ModuleHandle::ModuleHandle(std::shared_ptr<State> state) : state_(std::move(state)) {}

const std::string &ModuleHandle::name() const { return state_->name; }
const std::vector<Param> &ModuleHandle::params() const { return state_->params; }

ModuleHandle ModuleHandle::parse(const std::string &text, const std::string &sourceName) {
  auto state = std::make_shared<State>();
  state->context = makeContext();
  MLIRContext *context = state->context.get();
  {
    FirstError error(context);
    state->module = parseSourceString<ModuleOp>(text, ParserConfig(context), sourceName);
    if (!state->module)
      error.raise(FileLineColLoc::get(context, sourceName, 1, 1), "");
  }
  SmallVector<func::FuncOp> kernels;
  state->module->walk([&](func::FuncOp func) {
    if (!func.getOps<KernelOp>().empty())
      kernels.push_back(func);
  });
  if (kernels.size() != 1)
    failAt(state->module->getLoc(),
           fmt::format("{} holds {} functions with a tl.kernel; tlc takes exactly one", sourceName,
                       kernels.size()));
  func::FuncOp func = kernels.front();
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type || !type.hasStaticShape())
      failAt(arg.getLoc(), fmt::format("parameter {} of '{}' must be a memref of static shape", i,
                                       func.getSymName().str()));
    std::optional<DType> dtype = dtypeOf(type.getElementType());
    if (!dtype)
      failAt(arg.getLoc(), fmt::format("parameter {} of '{}' has an element type tl does not "
                                       "take",
                                       i, func.getSymName().str()));
    TLDialect &tl = tlDialect(func);
    auto name = func.getArgAttrOfType<StringAttr>(i, tl.getNameAttrHelper().getName());
    state->params.push_back(
        {name ? name.str() : fmt::format("arg{}", i),
         std::vector<std::int64_t>(type.getShape().begin(), type.getShape().end()), *dtype,
         static_cast<bool>(func.getArgAttr(i, tl.getOutputAttrHelper().getName()))});
  }
  state->name = func.getSymName().str();
  ModuleHandle handle(std::move(state));
  handle.verify();
  return handle;
}

std::string ModuleHandle::str(bool withLocations) const {
  OpPrintingFlags flags;
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (state_->incomplete)
    flags.printGenericOpForm();
  std::string text;
  llvm::raw_string_ostream os(text);
  state_->module->print(os, flags);
  return text;
}

void ModuleHandle::verify() const {
  ModuleOp module = *state_->module;
  func::FuncOp program;
  for (auto func : module.getOps<func::FuncOp>())
    if (!program || func.getSymName() == state_->name)
      program = func;
  Location loc = program ? program.getLoc() : module.getLoc();
  if (state_->incomplete)
    failAt(loc, fmt::format("program '{}' is incomplete: an error was raised while it was built",
                            state_->name));
  if (!program || program.getOps<KernelOp>().empty())
    failAt(loc, fmt::format("program '{}' has no kernel", state_->name));
  verifyOrThrow(module, true);
}

} // namespace tl
