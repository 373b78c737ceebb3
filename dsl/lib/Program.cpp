//===- Program.cpp - a tl program: parameters, the kernel, printing --------===//
#include "BuildState.h"

#include "tl/Dialect/TL/TLDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"

#include <fmt/format.h>

using namespace mlir;

namespace tl::dsl {
using namespace detail;

namespace {

Buffer addParameter(ProgramImpl &p, const std::string &name,
                    std::vector<std::int64_t> shape, DType dtype, bool output,
                    SourceLoc loc) {
  if (p.hasKernel)
    fail(loc, fmt::format("parameter '{}' is declared after the kernel; "
                          "declare every tensor first",
                          name));
  for (const Param &param : p.params)
    if (param.name == name)
      fail(loc, fmt::format("a parameter named '{}' already exists", name));
  for (auto [d, extent] : llvm::enumerate(shape))
    if (extent <= 0)
      fail(loc, fmt::format("tensor '{}' has extent {} in dimension {}; "
                            "extents must be positive",
                            name, extent, d));
  Location location = toLocation(p, loc);
  MemRefType type = tl::getBufferType(shape, toMLIR(p.context.get(), dtype),
                                      tl::MemoryScope::global);
  SmallVector<NamedAttribute> attrs = {
      p.builder.getNamedAttr("tl.name", p.builder.getStringAttr(name))};
  if (output)
    attrs.push_back(p.builder.getNamedAttr("tl.output", p.builder.getUnitAttr()));
  unsigned position = p.func.getNumArguments();
  if (failed(p.func.insertArgument(position, type,
                                   p.builder.getDictionaryAttr(attrs),
                                   location)))
    fail(loc, "could not add the parameter");
  p.params.push_back({name, shape, dtype, output});
  return wrapBuffer(p.func.getArgument(position), name);
}

} // namespace

Program::Program(const std::string &name, SourceLoc loc)
    : impl_(std::make_unique<ProgramImpl>(name, loc)) {
  if (name.empty())
    fail(loc, "a program needs a name");
}
Program::~Program() = default;
Program::Program(Program &&) noexcept = default;
Program &Program::operator=(Program &&) noexcept = default;

Buffer Program::tensor(const std::string &name, std::vector<std::int64_t> shape,
                       DType dtype, SourceLoc loc) {
  return addParameter(*impl_, name, std::move(shape), dtype, false, loc);
}

Buffer Program::output(const std::string &name, std::vector<std::int64_t> shape,
                       DType dtype, SourceLoc loc) {
  return addParameter(*impl_, name, std::move(shape), dtype, true, loc);
}

void Program::buildKernel(std::vector<std::int64_t> grid, std::int64_t threads,
                          int arity, const Body &body, SourceLoc loc) {
  ProgramImpl &p = *impl_;
  if (p.hasKernel)
    fail(loc, "a program has one kernel; this is the second");
  p.hasKernel = true;
  Location location = toLocation(p, loc);
  auto op = KernelOp::create(
      p.builder, location, TypeRange{}, ValueRange{},
      {p.builder.getNamedAttr("grid", p.builder.getDenseI64ArrayAttr(grid)),
       p.builder.getNamedAttr("threads", p.builder.getI64IntegerAttr(threads))});
  try {
    ActiveProgramScope active(p);
    buildBody(p, op.getBody(), grid.size(), arity, body, "kernel", loc);
  } catch (...) {
    p.broken = true;
    throw;
  }
  verifyOrThrow(p, op, false);
  verifyOrThrow(p, p.func, true);
}

Program Program::parse(const std::string &text, const std::string &sourceName) {
  Program program("parsed");
  ProgramImpl &p = *program.impl_;
  MLIRContext *context = p.context.get();
  std::optional<Location> where;
  std::string message;
  OwningOpRef<ModuleOp> module;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && !where) {
        where = diag.getLocation();
        message = diag.str();
      }
      return success();
    });
    module = parseSourceString<ModuleOp>(text, ParserConfig(context), sourceName);
  }
  if (!module)
    failAt(where.value_or(FileLineColLoc::get(context, sourceName, 1, 1)), message);
  SmallVector<func::FuncOp> kernels;
  module->walk([&](func::FuncOp func) {
    if (!func.getOps<KernelOp>().empty())
      kernels.push_back(func);
  });
  if (kernels.size() != 1)
    failAt(module->getLoc(), fmt::format("{} holds {} functions with a tl.kernel; tlc takes "
                                         "exactly one",
                                         sourceName, kernels.size()));
  func::FuncOp func = kernels.front();
  p.params.clear();
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type || !type.hasStaticShape())
      failAt(arg.getLoc(), fmt::format("parameter {} of '{}' must be a memref of static shape",
                                       i, func.getSymName().str()));
    auto name = func.getArgAttrOfType<StringAttr>(i, "tl.name");
    p.params.push_back({name ? name.str() : fmt::format("arg{}", i),
                        std::vector<std::int64_t>(type.getShape().begin(), type.getShape().end()),
                        fromMLIR(type.getElementType(), arg.getLoc()),
                        static_cast<bool>(func.getArgAttr(i, "tl.output"))});
  }
  p.name = func.getSymName().str();
  p.builder.clearInsertionPoint(); // it pointed into the module replaced here
  p.module = std::move(module);
  p.func = func;
  p.hasKernel = true;
  program.verify();
  return program;
}

const std::string &Program::name() const { return impl_->name; }
const std::vector<Param> &Program::params() const { return impl_->params; }

std::vector<int> Program::outputIndices() const {
  std::vector<int> indices;
  for (auto [i, param] : llvm::enumerate(impl_->params))
    if (param.output)
      indices.push_back(static_cast<int>(i));
  return indices;
}

std::string Program::str(bool withLocations) const {
  OpPrintingFlags flags;
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (impl_->broken)
    flags.printGenericOpForm();
  std::string text;
  llvm::raw_string_ostream os(text);
  impl_->module->print(os, flags);
  return text;
}

void Program::verify() const {
  ProgramImpl &p = *impl_;
  if (p.broken)
    failAt(p.func.getLoc(), fmt::format("program '{}' is incomplete: an error "
                                        "was raised while it was built",
                                        p.name));
  if (!p.hasKernel)
    failAt(p.func.getLoc(), fmt::format("program '{}' has no kernel", p.name));
  verifyOrThrow(p, *p.module, true);
}

} // namespace tl::dsl
