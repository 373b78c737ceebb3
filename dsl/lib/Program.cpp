//===- Program.cpp - a tl program: parameters, the kernel, printing --------===//
#include "BuildState.h"

#include "tl/Dialect/TL/TLDialect.h"

#include <fmt/format.h>

using namespace mlir;

namespace tl::dsl {
using namespace detail;

namespace {

Buffer addParameter(ProgramImpl &p, const std::string &name, std::vector<std::int64_t> shape,
                    DType dtype, bool output, SourceLoc loc) {
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
  MemRefType type =
      tl::getBufferType(shape, toMLIR(p.context.get(), dtype), tl::MemoryScope::global);
  SmallVector<NamedAttribute> attrs = {p.builder.getNamedAttr(
      tlDialect(p.func).getNameAttrHelper().getName(), p.builder.getStringAttr(name))};
  if (output)
    attrs.push_back(p.builder.getNamedAttr(tlDialect(p.func).getOutputAttrHelper().getName(),
                                           p.builder.getUnitAttr()));
  unsigned position = p.func.getNumArguments();
  if (failed(p.func.insertArgument(position, type, p.builder.getDictionaryAttr(attrs), location)))
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

Buffer Program::tensor(const std::string &name, std::vector<std::int64_t> shape, DType dtype,
                       SourceLoc loc) {
  return addParameter(*impl_, name, std::move(shape), dtype, false, loc);
}

Buffer Program::output(const std::string &name, std::vector<std::int64_t> shape, DType dtype,
                       SourceLoc loc) {
  return addParameter(*impl_, name, std::move(shape), dtype, true, loc);
}

void Program::buildKernel(std::vector<std::int64_t> grid, std::int64_t threads, int arity,
                          const Body &body, SourceLoc loc) {
  ProgramImpl &p = *impl_;
  if (p.hasKernel)
    fail(loc, "a program has one kernel; this is the second");
  p.hasKernel = true;
  Location location = toLocation(p, loc);
  auto op = KernelOp::create(p.builder, location, grid, static_cast<uint64_t>(threads));
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

Program::Program(std::unique_ptr<ProgramImpl> impl) : impl_(std::move(impl)) {}

Program Program::parse(const std::string &text, const std::string &sourceName) {
  return Program(std::make_unique<ProgramImpl>(ModuleHandle::parse(text, sourceName)));
}

const ModuleHandle &Program::module() const { return impl_->handle; }

const std::string &Program::name() const { return impl_->name; }
const std::vector<Param> &Program::params() const { return impl_->params; }

std::vector<int> Program::outputIndices() const {
  std::vector<int> indices;
  for (auto [i, param] : llvm::enumerate(impl_->params))
    if (param.output)
      indices.push_back(static_cast<int>(i));
  return indices;
}

std::string Program::str(bool withLocations) const { return impl_->handle.str(withLocations); }

void Program::verify() const { impl_->handle.verify(); }

} // namespace tl::dsl
